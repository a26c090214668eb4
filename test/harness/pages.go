package harness

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
)

// FormBrowser is a client without JavaScript: a cookie jar, forms posted as
// application/x-www-form-urlencoded with the headers a browser sends, and
// redirects not followed, so each step can be checked.
type FormBrowser struct {
	t   testing.TB
	app *App
	hc  *http.Client
}

func NewFormBrowser(t testing.TB, app *App) *FormBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Jar: jar, Transport: app.Client().Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &FormBrowser{t: t, app: app, hc: hc}
}

func (b *FormBrowser) send(req *http.Request) *Response {
	b.t.Helper()
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	res, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: body}
}

// get loads a page: path is relative to the app, or absolute.
func (b *FormBrowser) Get(path string) *Response {
	b.t.Helper()
	target := path
	if strings.HasPrefix(path, "/") {
		target = b.app.URL + path
	}
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodGet, target, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.send(req)
}

// submit posts a form from one of the app's pages to action.
func (b *FormBrowser) Submit(action string, form url.Values, headers ...string) *Response {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodPost, b.app.URL+action, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.app.Cfg.HTTP.BaseURL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	req.Header.Set("Sec-Fetch-Dest", "document")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return b.send(req)
}

// signedIn reports whether the browser holds a session.
func (b *FormBrowser) SignedIn() bool {
	b.t.Helper()
	r := b.Get("/api/auth/get-session")
	MustStatus(b.t, r, http.StatusOK)
	return strings.TrimSpace(string(r.Body)) != "null"
}

// MustSeeOther fails unless r is a 303 to path on the app, and returns the
// target's query.
func MustSeeOther(t testing.TB, app *App, r *Response, path string) url.Values {
	t.Helper()
	if r.Status != http.StatusSeeOther {
		t.Fatalf("status = %d, want 303 to %s; body %s", r.Status, path, r.Body)
	}
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil || loc.Path != path || loc.Scheme+"://"+loc.Host != app.URL {
		t.Fatalf("Location = %q, want %s on %s", r.Header.Get("Location"), path, app.URL)
	}
	if r.Header.Get("Content-Type") != "" || len(r.Body) != 0 {
		t.Fatalf("303 carries a body: %q %s", r.Header.Get("Content-Type"), r.Body)
	}
	return loc.Query()
}

// PKCEChallenge is the S256 challenge of verifier (RFC 7636 §4.2).
func PKCEChallenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
