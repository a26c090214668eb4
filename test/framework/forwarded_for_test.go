package framework

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure a trusted proxy that adds its own X-Forwarded-For line below the
// client's (HAProxy's option forwardfor) is believed, not the client's
// line: a client forging the header gets no fresh sign-in budget.
// It keeps a fresh application: it counts its address's rate-limit budget, with a trusted proxy of its own.
func TestFramework_forwarded_for_lines_added_by_a_proxy(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_TRUSTED_PROXIES": "127.0.0.1/32"})
	signIn := func(forged string) *harness.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, app.URL+"/api/auth/sign-in/email",
			strings.NewReader(harness.MustCredentials(t, "nobody@example.com", "correct horse battery")))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", app.Cfg.HTTP.BaseURL)
		req.Header.Add("X-Forwarded-For", forged)         // the client's own line
		req.Header.Add("X-Forwarded-For", "198.51.100.7") // the line the proxy added: the client as it saw it
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return &harness.Response{Status: res.StatusCode, Header: res.Header, Body: b}
	}
	for _, forged := range []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"} {
		harness.MustCode(t, signIn(forged), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
	}
	harness.MustRateLimited(t, signIn("203.0.113.4"), 10)
}
