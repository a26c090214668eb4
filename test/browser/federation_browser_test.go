package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure a real browser signs in to Gatehouse A through Gatehouse B (a
// second Gatehouse as the upstream OpenID provider) on the hosted pages
// under their strict CSP. A lives on localhost and B on 127.0.0.1, so the
// browser keeps their cookies apart as it would for two real sites.
//
// A's sign-in page offers "Continue with Gatehouse B"; its form post ends,
// through the edge's 303, at B's authorization endpoint (A's form-action
// must allow B's origin, as Chromium applies it to the redirects after a
// form post), which sends the browser to B's sign-in page; signed in there,
// B redirects to A's callback, whose state cookie (SameSite=Lax, set by the
// form post's answer) must come along on that cross-site top-level GET; A
// signs the new user in and lands on its account page, as its password form
// does without a callbackURL, naming the user B vouched for. The state
// cookie is gone afterwards. Then, signed out at A but still signed in at
// B, A's /sign-in?callbackURL=/ goes through B without a stop and lands on
// A's home page, signed in. No page may violate its CSP, log an error or
// fail a request.
func TestFederationBrowser_sign_in_through_a_second_gatehouse(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := chromiumPath(t)
	const (
		provider = "gatehouse-b"
		name     = "Uma Upstream"
		email    = "uma@upstream.example"
	)
	a := harness.MustStart(t, harness.StoreSQLite, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_BASE_URL": "http://localhost:{port}"}))
	b := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_COOKIE_PREFIX": "upstream"}))
	aBase, bBase := a.Cfg.HTTP.BaseURL, b.Cfg.HTTP.BaseURL
	if au, bu := mustParseURL(t, aBase), mustParseURL(t, bBase); au.Hostname() != "localhost" || bu.Hostname() != "127.0.0.1" {
		t.Fatalf("A is %s and B %s: want A on localhost and B on 127.0.0.1", aBase, bBase)
	}

	// A is B's first-party confidential client; B is A's provider.
	adminB, _ := harness.MustAdmin(t, b)
	client := harness.MustRegisterStrictClient(t, adminB, "Gatehouse A", "confidential", true, aBase+"/api/auth/callback/"+provider)
	adminA, _ := harness.MustAdmin(t, a)
	r := adminA.Post("/api/admin/identity-providers", harness.MustJSON(t, map[string]any{"id": provider, "preset": "oidc", "name": "Gatehouse B",
		"issuer": bBase + "/api/auth", "clientId": client.ID, "clientSecret": client.Secret, "scopes": []string{"openid", "email", "profile"}}))
	harness.MustStatus(t, r, http.StatusCreated)
	harness.MustVerifiedUser(t, b, name, email, harness.StrictPassword)

	ctx := newTabContext(t, chromium)
	report := watchPage(t, ctx)
	shots := t.TempDir()

	// A's sign-in page offers B.
	oidcBrowserNavigate(t, ctx, aBase+"/sign-in")
	oidcBrowserWaitPath(t, ctx, aBase, "/sign-in")
	// Without a callbackURL the button ends where the password form does.
	fedBrowserProviderButton(t, ctx, provider, "Continue with Gatehouse B", "/account")
	oidcBrowserNoCSPViolations(t, ctx, "A's sign-in page")
	fedBrowserScreenshot(t, ctx, shots, "1-a-sign-in")
	fedBrowserContinueWith(t, ctx, provider)

	// B's sign-in page, on B's origin, serving A's authorization request.
	fedBrowserWaitPath(t, ctx, bBase, "/sign-in")
	if cb := fedBrowserQuery(t, ctx, "callbackURL"); !strings.HasPrefix(cb, "/api/auth/oauth2/authorize?") || !strings.Contains(cb, "client_id="+url.QueryEscape(client.ID)) {
		t.Fatalf("B's sign-in page carries callbackURL %q, want A's authorization request", cb)
	}
	if state := fedBrowserCookies(t, ctx, aBase, "gatehouse.state"); len(state) != 1 || state[0].Domain != "localhost" || !state[0].HTTPOnly || state[0].SameSite != network.CookieSameSiteLax {
		t.Fatalf("A's state cookie after the form post: %s, want one HttpOnly SameSite=Lax cookie of localhost", fedCookies(state))
	}
	fedBrowserScreenshot(t, ctx, shots, "2-b-sign-in")
	oidcBrowserSignIn(t, ctx, b, email)

	// Back at A: the new user's account page.
	fedBrowserWaitPath(t, ctx, aBase, "/account")
	account := pageText(t, ctx, "main")
	for _, want := range []string{name, email, "Address confirmed\nYes"} {
		if !strings.Contains(account, want) {
			t.Fatalf("A's account page lacks %q; it shows:\n%s", want, account)
		}
	}
	oidcBrowserNoCSPViolations(t, ctx, "A's account page")
	fedBrowserScreenshot(t, ctx, shots, "3-a-account")
	if state := fedBrowserCookies(t, ctx, aBase, "gatehouse.state"); len(state) != 0 {
		t.Fatalf("A's state cookie outlived the callback: %s", fedCookies(state))
	}
	// Each site has its own session, under its own host and prefix.
	if s := fedBrowserCookies(t, ctx, aBase, "gatehouse.session_token"); len(s) != 1 || s[0].Domain != "localhost" {
		t.Fatalf("A's session cookie: %s, want one of localhost", fedCookies(s))
	}
	if s := fedBrowserCookies(t, ctx, bBase, "upstream.session_token"); len(s) != 1 || s[0].Domain != "127.0.0.1" {
		t.Fatalf("B's session cookie: %s, want one of 127.0.0.1", fedCookies(s))
	}

	// Signed out at A, still signed in at B: callbackURL=/ is honoured, and
	// B lets the browser through without its sign-in page.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form[action="/api/auth/oauth2/end-session"] [type="submit"]`))); err != nil {
		t.Fatalf("press sign out on A's account page: %v", err)
	}
	oidcBrowserWaitPath(t, ctx, aBase, "/sign-out")
	if s := fedBrowserCookies(t, ctx, aBase, "gatehouse.session_token"); len(s) != 0 {
		t.Fatalf("A's session cookie outlived signing out: %s", fedCookies(s))
	}
	oidcBrowserNavigate(t, ctx, aBase+"/sign-in?callbackURL=/")
	oidcBrowserWaitPath(t, ctx, aBase, "/sign-in")
	fedBrowserProviderButton(t, ctx, provider, "Continue with Gatehouse B", "/")
	oidcBrowserNoCSPViolations(t, ctx, "A's sign-in page with callbackURL=/")
	fedBrowserScreenshot(t, ctx, shots, "4-a-sign-in-callback")
	fedBrowserContinueWith(t, ctx, provider)
	fedBrowserWaitPath(t, ctx, aBase, "/")
	if links := pageText(t, ctx, "main ul.links"); !strings.Contains(links, "Your account") {
		t.Fatalf("A's home page after the sign-in does not offer the account; its links:\n%s", links)
	}
	oidcBrowserNoCSPViolations(t, ctx, "A's home page")
	fedBrowserScreenshot(t, ctx, shots, "5-a-home")
	oidcBrowserNavigate(t, ctx, aBase+"/account")
	oidcBrowserWaitPath(t, ctx, aBase, "/account")
	if account := pageText(t, ctx, "main"); !strings.Contains(account, name) || !strings.Contains(account, email) {
		t.Fatalf("A's account page after the second sign-in shows:\n%s", account)
	}
	report()
}

// fedBrowserProviderButton fails unless the sign-in page has exactly one
// form for provider, posting to sign-in/social with the given callbackURL
// and a button labelled label.
func fedBrowserProviderButton(t *testing.T, ctx context.Context, provider, label, callback string) {
	t.Helper()
	type button struct {
		Forms    int    `json:"forms"`
		Label    string `json:"label"`
		Callback string `json:"callback"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[button](`(p => {
		const forms = Array.from(document.querySelectorAll('form[action="/api/auth/sign-in/social"][method="post"]'))
			.filter(f => f.querySelector('input[name="provider"]')?.value === p);
		const f = forms[0];
		return {forms: forms.length, label: f?.querySelector('[type="submit"]')?.textContent.trim() ?? "",
			callback: f?.querySelector('input[name="callbackURL"]')?.value ?? ""};
	})(`+jsString(provider)+`)`))
	if err != nil {
		t.Fatalf("read the provider buttons: %v", err)
	}
	if want := (button{Forms: 1, Label: label, Callback: callback}); got != want {
		t.Fatalf("the sign-in page's form for %s: %+v, want %+v", provider, got, want)
	}
}

// fedBrowserContinueWith presses the sign-in page's button for provider.
func fedBrowserContinueWith(t *testing.T, ctx context.Context, provider string) {
	t.Helper()
	sel := `form[action="/api/auth/sign-in/social"]:has(input[name="provider"][value=` + jsString(provider) + `]) [type="submit"]`
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatalf("press continue with %s: %v", provider, err)
	}
}

// fedBrowserQuery is a query parameter of the tab's URL.
func fedBrowserQuery(t *testing.T, ctx context.Context, key string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new URL(location.href).searchParams.get(`+jsString(key)+`) ?? ""`))
	if err != nil {
		t.Fatalf("read ?%s: %v", key, err)
	}
	return v
}

// fedBrowserCookies are the browser's cookies named name that it would
// send to base.
func fedBrowserCookies(t *testing.T, ctx context.Context, base, name string) []*network.Cookie {
	t.Helper()
	all, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/"}})
	if err != nil {
		t.Fatalf("read the cookies of %s: %v", base, err)
	}
	return slices.DeleteFunc(all.Cookies, func(c *network.Cookie) bool { return c.Name != name })
}

// fedCookies describes cookies for a failure message.
func fedCookies(cs []*network.Cookie) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s (domain %s, path %s, HttpOnly %t, SameSite %q)", c.Name, c.Domain, c.Path, c.HTTPOnly, c.SameSite))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// fedBrowserWaitPath is oidcBrowserWaitPath after a form post: it fails at
// once when the page that posted recorded a CSP violation (a form-action
// that blocks the post or a redirect after it leaves the tab there).
func fedBrowserWaitPath(t *testing.T, ctx context.Context, base, path string) {
	t.Helper()
	cond := fmt.Sprintf(`(() => {
		const v = window.__cspViolations || [];
		if (v.length) return "CSP violation on " + location.href + ": " + v.join("; ");
		const u = new URL(location.href);
		return u.origin === %s && u.pathname === %s && document.readyState === "complete" ? "ok" : "";
	})()`, jsString(base), jsString(path))
	deadline := time.Now().Add(oidcBrowserStepTimeout)
	for {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](cond))
		switch {
		case err == nil && got == "ok":
			return
		case err == nil && got != "":
			t.Fatalf("waiting for %s%s: %s", base, path, got)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
			t.Fatalf("waiting for %s%s: last error %v; the tab shows %s", base, path, err, href)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fedBrowserScreenshot keeps a picture of the page as dir/name.png (the
// test's temporary directory, as saveScreenshot does; -v logs the path).
func fedBrowserScreenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o600); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// mustParseURL parses an absolute URL.
func mustParseURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		t.Fatalf("not an absolute URL: %q (%v)", raw, err)
	}
	return u
}
