package browser

import (
	"context"
	"crypto/rand"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gatehouse/gatehouse/test/harness"
	"golang.org/x/oauth2"
)

// oidcBrowserStepTimeout bounds one page of the browser flow; it only turns a
// hang into a failure.
const oidcBrowserStepTimeout = 30 * time.Second

// oidcRP is a tiny relying party: /login?client=NAME starts the
// authorization code flow with PKCE, state and nonce; /callback exchanges the
// code with x/oauth2, verifies the ID token with go-oidc and says who signed
// in.
type oidcRP struct {
	*httptest.Server
	issuer   string
	provider *oidc.Provider
	clients  map[string]*oauth2.Config
	// showAuth adds the ID token's amr and acr to the result.
	showAuth bool

	mu      sync.Mutex
	pending map[string]oidcRPRequest // by state
}

type oidcRPRequest struct {
	client, nonce, verifier string
}

var oidcRPPage = template.Must(template.New("rp").Parse(
	`<!doctype html><html><head><title>Relying party</title></head><body><p id="result">{{.}}</p></body></html>`))

func newOIDCRP(t *testing.T, issuer string) *oidcRP {
	t.Helper()
	rp := &oidcRP{issuer: issuer, clients: map[string]*oauth2.Config{}, pending: map[string]oidcRPRequest{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("client")
		conf, ok := rp.clients[name]
		if !ok {
			http.Error(w, "unknown client", http.StatusBadRequest)
			return
		}
		req := oidcRPRequest{client: name, nonce: rand.Text(), verifier: oauth2.GenerateVerifier()}
		state := rand.Text()
		rp.mu.Lock()
		rp.pending[state] = req
		rp.mu.Unlock()
		http.Redirect(w, r, conf.AuthCodeURL(state, oauth2.S256ChallengeOption(req.verifier), oidc.Nonce(req.nonce)), http.StatusFound)
	})
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		// Errors are rendered (with 200) so that the test reads them.
		result, err := rp.callback(r)
		if err != nil {
			result = "error: " + err.Error()
		}
		_ = oidcRPPage.Execute(w, result)
	})
	rp.Server = httptest.NewServer(mux)
	t.Cleanup(rp.Close)
	return rp
}

func (rp *oidcRP) callback(r *http.Request) (string, error) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return "", fmt.Errorf("authorization failed: %s: %s", e, q.Get("error_description"))
	}
	rp.mu.Lock()
	req, ok := rp.pending[q.Get("state")]
	delete(rp.pending, q.Get("state"))
	rp.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("unknown state %q", q.Get("state"))
	}
	if q.Get("iss") != rp.issuer {
		return "", fmt.Errorf("iss = %q, want %q", q.Get("iss"), rp.issuer)
	}
	conf := rp.clients[req.client]
	tok, err := conf.Exchange(r.Context(), q.Get("code"), oauth2.VerifierOption(req.verifier))
	if err != nil {
		return "", fmt.Errorf("exchange: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := rp.provider.Verifier(&oidc.Config{ClientID: conf.ClientID}).Verify(r.Context(), raw)
	if err != nil {
		return "", fmt.Errorf("verify the ID token: %w", err)
	}
	if idt.Nonce != req.nonce {
		return "", fmt.Errorf("nonce = %q, want %q", idt.Nonce, req.nonce)
	}
	if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
		return "", fmt.Errorf("at_hash: %w", err)
	}
	var claims struct {
		Email string   `json:"email"`
		AMR   []string `json:"amr"`
		ACR   string   `json:"acr"`
	}
	if err := idt.Claims(&claims); err != nil {
		return "", err
	}
	result := "signed in as " + claims.Email + " through " + req.client
	if rp.showAuth {
		result += fmt.Sprintf(" (amr %s, acr %s)", strings.Join(claims.AMR, " "), claims.ACR)
	}
	return result, nil
}

// Ensure a real browser completes the code flow on the hosted pages under
// their strict CSP: a relying party sends it to authorize; it lands on the
// sign-in page, the user types email and password and submits, approves the
// consent page of a third-party client, and the relying party's callback
// (x/oauth2 exchange with PKCE, go-oidc ID token verification) says who
// signed in. Then, signed out, a first-party client's flow goes from the
// sign-in page straight back to the relying party (the sign-in page's
// form-action must allow the client's origin, as Chromium applies it to the
// redirects after a form post). No page may violate its CSP, log an error or
// fail a request.
func TestOIDCBrowser_signs_in_on_the_hosted_pages(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := chromiumPath(t)
	app := harness.MustStart(t, harness.StoreSQLite, harness.AdminEnv)
	issuer := app.URL + "/api/auth"
	rp := newOIDCRP(t, issuer)
	redirect := rp.URL + "/callback"

	admin, _ := harness.MustAdmin(t, app)
	third := harness.MustRegisterStrictClient(t, admin, "Browser RP", "confidential", false, redirect)
	first := harness.MustRegisterStrictClient(t, admin, "Browser SPA", "public", true, redirect)
	email := "bruno.browser@example.com"
	harness.MustVerifiedUser(t, app, "Bruno Browser", email, harness.StrictPassword)

	provider, err := oidc.NewProvider(t.Context(), issuer)
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	rp.provider = provider
	rp.clients["third"] = third.OauthConfig(provider)
	rp.clients["first"] = first.OauthConfig(provider)

	ctx := newTabContext(t, chromium)
	report := watchPage(t, ctx)

	// Third-party client: sign-in page, consent page, callback.
	oidcBrowserNavigate(t, ctx, rp.URL+"/login?client=third")
	oidcBrowserSignIn(t, ctx, app, email)
	oidcBrowserWaitPath(t, ctx, app.URL, "/consent")
	oidcBrowserNoCSPViolations(t, ctx, "the consent page")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(
		`button[name="accept"][value="true"], input[type="submit"][name="accept"][value="true"], form:has(input[name="accept"][value="true"]) [type="submit"]`))); err != nil {
		t.Fatalf("approve on the consent page: %v", err)
	}
	oidcBrowserWaitResult(t, ctx, rp.URL, "signed in as "+email+" through third")

	// Signed out, the first-party client: sign-in page, then straight back.
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	oidcBrowserNavigate(t, ctx, rp.URL+"/login?client=first")
	oidcBrowserSignIn(t, ctx, app, email)
	oidcBrowserWaitResult(t, ctx, rp.URL, "signed in as "+email+" through first")

	report()
}

// oidcBrowserNavigate opens target in the tab.
func oidcBrowserNavigate(t *testing.T, ctx context.Context, target string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(target)); err != nil {
		t.Fatalf("open %s: %v", target, err)
	}
}

// oidcBrowserWaitPath waits until the tab shows base+path (any query) and its
// document has loaded. A navigation while it polls is retried.
func oidcBrowserWaitPath(t *testing.T, ctx context.Context, base, path string) {
	t.Helper()
	cond := fmt.Sprintf(`(() => { const u = new URL(location.href); return u.origin === %s && u.pathname === %s && document.readyState === "complete"; })()`,
		jsString(base), jsString(path))
	deadline := time.Now().Add(oidcBrowserStepTimeout)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
			t.Fatalf("waiting for %s%s: last error %v; the tab shows %s", base, path, err, href)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// oidcBrowserSignIn waits for the hosted sign-in page, types the user's email
// and password into its form and submits it with its button.
func oidcBrowserSignIn(t *testing.T, ctx context.Context, app *harness.App, email string) {
	t.Helper()
	oidcBrowserWaitPath(t, ctx, app.URL, "/sign-in")
	oidcBrowserNoCSPViolations(t, ctx, "the sign-in page")
	const form = `form:has(input[type="password"])`
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(form+` input[name="email"]`), email),
		chromedp.SendKeys(chromedp.CSS(form+` input[name="password"]`), harness.StrictPassword),
		chromedp.Click(chromedp.CSS(form+` [type="submit"]`)),
	); err != nil {
		t.Fatalf("sign in on the hosted page: %v", err)
	}
}

// oidcBrowserWaitResult waits for the relying party's callback page and fails
// unless it says want.
func oidcBrowserWaitResult(t *testing.T, ctx context.Context, rpURL, want string) {
	t.Helper()
	oidcBrowserWaitPath(t, ctx, rpURL, "/callback")
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("result")?.textContent ?? document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(got) != want {
		t.Fatalf("the relying party's callback says %q, want %q", got, want)
	}
}

// oidcBrowserNoCSPViolations fails if the current document recorded a CSP
// violation (watchPage's recorder; it sees only the current document, so
// each hosted page is checked before it is left), or if axe-core finds a
// serious or critical accessibility violation on it (mustAccessible): every
// page a browser test checks is checked for both.
func oidcBrowserNoCSPViolations(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__cspViolations || []`))
	if err != nil {
		t.Fatalf("read the CSP violations of %s: %v", what, err)
	}
	if len(v) > 0 {
		t.Fatalf("%s violated its CSP:\n  %s", what, strings.Join(v, "\n  "))
	}
	mustAccessible(t, ctx, what)
}

// Ensure a real browser finishes a two-factor user's sign-in on the hosted
// second-factor page under its strict CSP: after the password it lands on
// the page, a wrong authenticator code is refused there with an error
// announced, the right one leads back to the relying party, whose go-oidc
// verified ID token says amr [pwd otp mfa] and acr mfa.
func TestOIDCBrowser_second_factor_page(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := chromiumPath(t)
	app := harness.MustStart(t, harness.StoreSQLite, harness.AdminEnv)
	issuer := app.URL + "/api/auth"
	rp := newOIDCRP(t, issuer)
	rp.showAuth = true

	admin, _ := harness.MustAdmin(t, app)
	client := harness.MustRegisterStrictClient(t, admin, "Browser SPA", "public", true, rp.URL+"/callback")
	email := "tess.twofactor@example.com"
	harness.MustVerifiedUser(t, app, "Tess Twofactor", email, harness.StrictPassword)
	secret, _ := (&harness.StrictWorld{App: app, Email: email}).MustEnableTwoFactor(t)

	provider, err := oidc.NewProvider(t.Context(), issuer)
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	rp.provider = provider
	rp.clients["first"] = client.OauthConfig(provider)

	ctx := newTabContext(t, chromium)
	report := watchPage(t, ctx)

	oidcBrowserNavigate(t, ctx, rp.URL+"/login?client=first")
	oidcBrowserSignIn(t, ctx, app, email)
	oidcBrowserWaitPath(t, ctx, app.URL, "/two-factor")
	oidcBrowserNoCSPViolations(t, ctx, "the second-factor page")
	const form = `form[action="/api/auth/two-factor/verify-totp"]`
	answer := func(code string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS(form+` input[name="code"]`), code),
			chromedp.Click(chromedp.CSS(form+` [type="submit"]`)),
		); err != nil {
			t.Fatalf("answer on the second-factor page: %v", err)
		}
	}
	answer("000000")
	deadline := time.Now().Add(oidcBrowserStepTimeout)
	for {
		shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](
			`new URL(location.href).searchParams.get("error") === "INVALID_CODE" && document.readyState === "complete" ? (document.querySelector('[role="alert"]')?.textContent ?? "") : ""`))
		if err == nil && strings.Contains(shown, "not right") {
			break
		}
		if time.Now().After(deadline) {
			href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
			t.Fatalf("a wrong code did not come back with its error; the tab shows %s", href)
		}
		time.Sleep(50 * time.Millisecond)
	}
	oidcBrowserNoCSPViolations(t, ctx, "the second-factor page with an error")
	answer(harness.TOTPAt(app.Clock, secret, 0))
	oidcBrowserWaitResult(t, ctx, rp.URL, "signed in as "+email+" through first (amr pwd otp mfa, acr urn:gatehouse:acr:mfa)")
	report()
}
