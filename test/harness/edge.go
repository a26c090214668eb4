package harness

import (
	"net/http"
	"testing"
)

// MustProblem checks an RFC 9457 body with code and request id.
func MustProblem(t *testing.T, r *Response, status int, code string) map[string]any {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json", ct)
	}
	p := r.JSON(t)
	if p["status"] != float64(status) || p["code"] != code || p["title"] != http.StatusText(status) || p["type"] == nil {
		t.Fatalf("problem = %s, want status %d code %s", r.Body, status, code)
	}
	if p["requestId"] != r.Header.Get("X-Request-Id") || p["requestId"] == "" {
		t.Fatalf("requestId %v does not match header %q", p["requestId"], r.Header.Get("X-Request-Id"))
	}
	return p
}
