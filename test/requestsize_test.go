package test

import (
	"net/http"
	"strings"
	"testing"
)

// Ensure an over-long request-target answers 414 and oversized headers 431,
// in the shape of the contract the path belongs to, before the rate limiter
// counts them: the flood sent 60 KB paths.
func TestRequestSize_long_targets_and_large_headers_are_refused(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeMemory, nil)
	c := app.client(t)
	long := strings.Repeat("x", 60_000)
	for range 150 { // more than the unmatched budget: none of them is counted
		mustCode(t, c.get("/api/auth/"+long), http.StatusRequestURITooLong, "URI_TOO_LONG")
	}
	r := c.get("/api/users/" + long)
	mustStatus(t, r, http.StatusRequestURITooLong)
	if got, want := r.JSON(t)["code"], "request.uri_too_long"; got != want {
		t.Fatalf("code = %v, want %v", got, want)
	}
	mustCode(t, c.get("/api/auth/get-session?q="+strings.Repeat("y", 9000)), http.StatusRequestURITooLong, "URI_TOO_LONG")
	// Just under the cap: routed as usual.
	mustStatus(t, c.get("/api/auth/"+strings.Repeat("x", 8000)), http.StatusNotFound)

	big := strings.Repeat("z", 40_000)
	mustCode(t, c.get("/api/auth/get-session", "X-Padding", big), http.StatusRequestHeaderFieldsTooLarge, "HEADERS_TOO_LARGE")
	r = c.get("/api/health/ready", "X-Padding", big)
	mustStatus(t, r, http.StatusRequestHeaderFieldsTooLarge)
	if got, want := r.JSON(t)["code"], "request.headers_too_large"; got != want {
		t.Fatalf("code = %v, want %v", got, want)
	}
	mustStatus(t, c.get("/api/auth/get-session", "X-Padding", strings.Repeat("z", 20_000)), http.StatusOK)
}
