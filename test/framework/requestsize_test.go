package framework

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure an over-long request-target answers 414 and oversized headers 431,
// in the shape of the contract the path belongs to, before the rate limiter
// counts them: the flood sent 60 KB paths.
// It keeps a fresh application: it needs the rate limiter's exact state (none of its requests counted).
func TestRequestSize_long_targets_and_large_headers_are_refused(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, nil)
	c := app.NewClient(t)
	long := strings.Repeat("x", 60_000)
	for range 150 { // more than the unmatched budget: none of them is counted
		harness.MustCode(t, c.Get("/api/auth/"+long), http.StatusRequestURITooLong, "URI_TOO_LONG")
	}
	r := c.Get("/api/users/" + long)
	harness.MustStatus(t, r, http.StatusRequestURITooLong)
	if got, want := r.JSON(t)["code"], "request.uri_too_long"; got != want {
		t.Fatalf("code = %v, want %v", got, want)
	}
	harness.MustCode(t, c.Get("/api/auth/get-session?q="+strings.Repeat("y", 9000)), http.StatusRequestURITooLong, "URI_TOO_LONG")
	// Just under the cap: routed as usual.
	harness.MustStatus(t, c.Get("/api/auth/"+strings.Repeat("x", 8000)), http.StatusNotFound)

	big := strings.Repeat("z", 40_000)
	harness.MustCode(t, c.Get("/api/auth/get-session", "X-Padding", big), http.StatusRequestHeaderFieldsTooLarge, "HEADERS_TOO_LARGE")
	r = c.Get("/api/health/ready", "X-Padding", big)
	harness.MustStatus(t, r, http.StatusRequestHeaderFieldsTooLarge)
	if got, want := r.JSON(t)["code"], "request.headers_too_large"; got != want {
		t.Fatalf("code = %v, want %v", got, want)
	}
	harness.MustStatus(t, c.Get("/api/auth/get-session", "X-Padding", strings.Repeat("z", 20_000)), http.StatusOK)
}
