package edge

import (
	"net/http"
	"testing"
)

// TestImpersonation_allows: by default an impersonation session reads and
// writes nothing; a route may open every method to it, or close even its
// reads.
func TestImpersonation_allows(t *testing.T) {
	for _, tt := range []struct {
		name   string
		i      Impersonation
		method string
		want   bool
	}{
		{"read_only_get", ImpersonationReadOnly, http.MethodGet, true},
		{"read_only_head", ImpersonationReadOnly, http.MethodHead, true},
		{"read_only_post", ImpersonationReadOnly, http.MethodPost, false},
		{"read_only_patch", ImpersonationReadOnly, http.MethodPatch, false},
		{"read_only_delete", ImpersonationReadOnly, http.MethodDelete, false},
		{"allowed_post", ImpersonationAllowed, http.MethodPost, true},
		{"refused_get", ImpersonationRefused, http.MethodGet, false},
	} {
		if got := tt.i.allows(tt.method); got != tt.want {
			t.Errorf("%s: allows(%s) = %v, want %v", tt.name, tt.method, got, tt.want)
		}
	}
	var p Policy
	if p.WhileImpersonating != ImpersonationReadOnly {
		t.Fatal("a policy that declares nothing is not read-only while impersonating")
	}
}
