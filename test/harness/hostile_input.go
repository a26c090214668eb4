package harness

import (
	"net/http"
	"strings"
	"testing"
)

// HostileCase is one request carrying a hostile string, and the part the
// 400 must name.
type HostileCase struct {
	Name, Method, Path, Body string
	Headers                  []string
	Shape                    string // "framework", "problem" or "oauth"
	Location                 string
}

// MustNameHostile fails unless r is a 400 in the shape that names location
// and repeats nothing of the hostile input.
func MustNameHostile(t *testing.T, r *Response, tt HostileCase) {
	t.Helper()
	switch tt.Shape {
	case "framework":
		msg := MustCode(t, r, http.StatusBadRequest, "VALIDATION_ERROR")
		if !strings.Contains(msg, "["+tt.Location+"] ") {
			t.Fatalf("message %q does not name %s", msg, tt.Location)
		}
	case "oauth":
		MustStatus(t, r, http.StatusBadRequest)
		body := r.JSON(t)
		desc, _ := body["error_description"].(string)
		if body["error"] != "invalid_request" || !strings.Contains(desc, "["+tt.Location+"] ") {
			t.Fatalf("body = %s, want invalid_request naming %s", r.Body, tt.Location)
		}
	default:
		p := MustProblem(t, r, http.StatusBadRequest, "request.invalid")
		MustNamed(t, p, tt.Location)
	}
	for _, echo := range []string{`\u0000`, "\x00", "\xff", `\ufffd`, "\ufffd", "hostile"} {
		if strings.Contains(string(r.Body), echo) {
			t.Fatalf("answer echoes the input (%q): %s", echo, r.Body)
		}
	}
}
