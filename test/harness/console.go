package harness

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// ConsoleCSP is the policy every console page must carry.
const ConsoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// MustConsoleHeaders fails unless r carries the console's headers.
func MustConsoleHeaders(t testing.TB, r *Response) {
	t.Helper()
	for name, want := range map[string]string{"Content-Security-Policy": ConsoleCSP, "X-Frame-Options": "DENY",
		"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
		if got := r.Header.Get(name); got != want && !(name == "Content-Security-Policy" && r.Status == http.StatusFound && strings.Contains(got, "frame-ancestors 'none'")) {
			t.Fatalf("%s = %q, want %q (status %d)", name, got, want, r.Status)
		}
	}
}

// MustConsolePage fails unless r is an HTML console page with status.
func MustConsolePage(t testing.TB, r *Response, status int) string {
	t.Helper()
	MustStatus(t, r, status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("Content-Type = %q, want HTML; body: %s", ct, r.Body)
	}
	MustConsoleHeaders(t, r)
	body := string(r.Body)
	if strings.Contains(body, "style=") || strings.Contains(body, "<script>") {
		t.Fatalf("inline style or script in the page: %s", body)
	}
	return body
}

// MustSignInRedirect fails unless r sends the browser to sign in and come
// back to callback.
func MustSignInRedirect(t testing.TB, r *Response, callback string) {
	t.Helper()
	MustStatus(t, r, http.StatusFound)
	if got, want := r.Header.Get("Location"), "/sign-in?callbackURL="+url.QueryEscape(callback); got != want {
		t.Fatalf("Location = %q, want %q", got, want)
	}
}
