package harness

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// MustLocation fails unless r is a 302 to path on the app, and returns the
// target's query.
func MustLocation(t testing.TB, app *App, r *Response, path string) url.Values {
	t.Helper()
	MustStatus(t, r, http.StatusFound)
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil || loc.Path != path || (loc.Host != "" && "http://"+loc.Host != app.URL) {
		t.Fatalf("Location = %q, want %s on %s", r.Header.Get("Location"), path, app.URL)
	}
	return loc.Query()
}

// MailsTo returns the subjects of mails received for to about subject.
func MailsTo(app *App, to, subject string) []string {
	var out []string
	for _, m := range app.Mail.Messages() {
		if m.IsTo(to) && strings.Contains(m.Subject, subject) {
			out = append(out, m.Subject)
		}
	}
	return out
}
