package framework

import "testing"

// Ensure every code a federation callback sends to the error page has
// Gatehouse's words there, so that a new code does not fall back on the
// generic message unnoticed.
func TestErrorPageMessages(t *testing.T) {
	for neutral, code := range callbackErrors {
		if errorPageMessages[code] == "" {
			t.Errorf("callback code %q (for %s) has no error page message", code, neutral)
		}
	}
	for _, code := range []string{"internal_server_error", "upstream_error"} {
		if errorPageMessages[code] == "" {
			t.Errorf("%q has no error page message", code)
		}
	}
}
