package httpapi

import (
	"strings"
	"testing"
)

// Test files may test paths.
func TestIsAdmin(t *testing.T) {
	if !strings.HasPrefix("/api/admin/x", "/api/admin") {
		t.Fatal("no")
	}
}
