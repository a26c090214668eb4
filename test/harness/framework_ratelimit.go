package harness

import (
	"net/http"
	"strconv"
	"testing"
)

// MustRateLimited fails unless r is Better Auth's 429 with a retry delay of
// at least one second and at most max.
func MustRateLimited(t testing.TB, r *Response, max int) {
	t.Helper()
	MustStatus(t, r, http.StatusTooManyRequests)
	if msg := r.JSON(t)["message"]; msg != "Too many requests. Please try again later." {
		t.Fatalf("429 message = %v", msg)
	}
	for _, h := range []string{"X-Retry-After", "Retry-After"} {
		n, err := strconv.Atoi(r.Header.Get(h))
		if err != nil || n < 1 || n > max {
			t.Fatalf("%s = %q, want whole seconds in [1, %d]", h, r.Header.Get(h), max)
		}
	}
}
