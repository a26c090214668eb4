package edge

import (
	"reflect"
	"testing"
)

// TestInputLocations: register declares each query, path and header
// parameter of the operation's input, embedded structs included, so a bare
// field of a domain error is rendered where the caller sent it.
func TestInputLocations(t *testing.T) {
	type paging struct {
		Limit int `query:"limit"`
	}
	type input struct {
		paging
		ID   string `path:"id"`
		Key  string `header:"x-api-key"`
		Body struct {
			Email string `json:"email"`
		}
	}
	got := inputLocations(reflect.TypeFor[input]())
	want := map[string]string{"limit": "query", "id": "path", "x-api-key": "header"}
	if len(got) != len(want) {
		t.Fatalf("inputLocations = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("inputLocations[%q] = %q, want %q", k, got[k], v)
		}
	}
}
