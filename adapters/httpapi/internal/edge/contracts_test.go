package edge

import (
	"net/http"
	"reflect"
	"testing"
	"time"
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

// Ensure JSDate writes what time.Format writes with its layout, for times
// of any zone, across the year range it writes by hand and beyond it.
func TestJSDate_matches_format(t *testing.T) {
	zone := time.FixedZone("far", -(13*3600 + 45*60))
	times := []time.Time{
		{}, time.Unix(0, 0), time.Unix(0, 999_999_999), time.Unix(1, 1_000_000),
		time.Date(2026, 11, 26, 23, 59, 59, 999_999_999, zone),
		time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for i := range 2000 {
		times = append(times, time.Unix(int64(i)*7_777_777_777, int64(i)*123_457).In(zone))
	}
	for _, tm := range times {
		if got, want := JSDate(tm), tm.UTC().Format("2006-01-02T15:04:05.000Z"); got != want {
			t.Fatalf("JSDate(%v) = %s, want %s", tm, got, want)
		}
	}
}

// Ensure the security headers are named in canonical form: they are
// assigned to the header map directly, where a later Set of the same
// header must find them.
func TestSecurityHeaders_names_are_canonical(t *testing.T) {
	for _, h := range securityHeaders {
		if h.name != http.CanonicalHeaderKey(h.name) || len(h.value) != 1 {
			t.Errorf("security header %q %v", h.name, h.value)
		}
	}
}
