package oidc

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/test/harness"
)

var hrefAttr = regexp.MustCompile(`\shref="([^"]*)"`)

// pageLinks returns the targets of a page's links, stylesheet excluded.
func pageLinks(page string) []string {
	var out []string
	for _, m := range hrefAttr.FindAllStringSubmatch(page, -1) {
		if u := html.UnescapeString(m[1]); !strings.HasPrefix(u, "/assets/") {
			out = append(out, u)
		}
	}
	return out
}

// mustRedirect fails unless r answers status with Location exactly want.
func mustRedirect(t testing.TB, r *harness.Response, status int, want string) {
	t.Helper()
	if r.Status != status || r.Header.Get("Location") != want {
		t.Fatalf("got %d to %q, want %d to %q; body %s", r.Status, r.Header.Get("Location"), status, want, r.Body)
	}
}

// Ensure / is a page that says what runs and links to the hosted sign-in,
// the explorer, the three contracts and discovery, each of which answers;
// it gives away no configuration and no data; HEAD answers alike without a
// body; and a signed-in browser is offered its account instead of sign-in.
func TestHome_page(t *testing.T) {
	t.Parallel()
	var email, pw = harness.Email(t, "ada@example.com"), "correct horse battery"
	app := harness.Shared(t, harness.StoreSQLite, harness.Env(harness.FwQuick, map[string]string{
		"GATEHOUSE_ADMIN_EMAILS": harness.AdminEmail, "GATEHOUSE_TRUSTED_ORIGINS": "https://app.example.com"}))
	harness.MustSignUp(t, app.NewClient(t), "Ada", email, pw)
	b := harness.NewFormBrowser(t, app)

	r := b.Get("/")
	mustPage(t, app, r, http.StatusOK, pagesCSP)
	page := string(r.Body)
	links := pageLinks(page)
	for _, want := range []string{"/sign-in", "/api/docs", "/api/auth-openapi.json", "/api/auth/open-api/generate-schema",
		"/api/backend-openapi.json", "/api/auth/.well-known/openid-configuration"} {
		if !slices.Contains(links, want) {
			t.Fatalf("home page lacks a link to %s; links %v", want, links)
		}
	}
	if slices.Contains(links, "/account") {
		t.Fatalf("home page offers an account to a signed-out browser: %v", links)
	}
	for _, l := range links {
		if got := b.Get(l); got.Status != http.StatusOK {
			t.Fatalf("the home page's link %s answers %d", l, got.Status)
		}
	}
	for _, want := range []string{"<h1>Gatehouse</h1>", "<title>Gatehouse</title>", "version " + bootstrap.Version, app.Cfg.HTTP.BaseURL + "/api/auth"} {
		if !strings.Contains(page, want) {
			t.Fatalf("home page lacks %q:\n%s", want, page)
		}
	}
	for _, secret := range append([]string{app.Cfg.Database.URL, app.Cfg.DataDir, harness.AdminEmail, email, "app.example.com", app.Cfg.SessionCookieName()},
		app.Cfg.Secrets...) {
		if strings.Contains(page, secret) {
			t.Fatalf("home page gives away %q:\n%s", secret, page)
		}
	}
	if strings.Contains(strings.ToLower(page), "smtp") {
		t.Fatalf("home page names the mail server:\n%s", page)
	}

	h := b.Head("/")
	harness.MustStatus(t, h, http.StatusOK)
	if len(h.Body) != 0 || h.Header.Get("Content-Type") != "text/html; charset=utf-8" || h.Header.Get("Content-Length") != strconv.Itoa(len(r.Body)) {
		t.Fatalf("HEAD /: %q, Content-Length %q (GET sends %d bytes), body %q", h.Header.Get("Content-Type"), h.Header.Get("Content-Length"), len(r.Body), h.Body)
	}

	// Signed in: the account instead of sign-in.
	harness.MustSeeOther(t, app, b.Submit("/api/auth/sign-in/email", url.Values{"email": {email}, "password": {pw}}), "/account")
	r = b.Get("/")
	mustPage(t, app, r, http.StatusOK, pagesCSP)
	if links := pageLinks(string(r.Body)); !slices.Contains(links, "/account") || slices.Contains(links, "/sign-in") {
		t.Fatalf("home page for a signed-in browser links %v", links)
	}
	if strings.Contains(string(r.Body), email) {
		t.Fatalf("home page shows the user's address:\n%s", r.Body)
	}
}

// Ensure a configured home URL takes / over, for GET and HEAD, while the
// pages and the explorer stay where they are.
func TestHome_redirects_to_the_configured_home_url(t *testing.T) {
	t.Parallel()
	const home = "https://www.example.com/welcome?from=id"
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_HOME_URL": home}))
	b := harness.NewFormBrowser(t, app)
	mustRedirect(t, b.Get("/"), http.StatusFound, home)
	mustRedirect(t, b.Head("/"), http.StatusFound, home)
	mustPageAnd(t, app, b.Get("/sign-in"), http.StatusOK)
	harness.MustStatus(t, b.Get("/api/docs"), http.StatusOK)
}

// Ensure a page's path with a trailing slash redirects permanently to the
// page, its query kept, while the API keeps Better Auth's 404 there.
func TestPages_trailing_slash_redirects(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, harness.FwQuick)
	b := harness.NewFormBrowser(t, app)
	mustRedirect(t, b.Get("/api/docs/"), http.StatusMovedPermanently, app.URL+"/api/docs")
	mustRedirect(t, b.Get("/account/"), http.StatusMovedPermanently, app.URL+"/account")
	mustRedirect(t, b.Get("/sign-in/?callbackURL=%2Fafter%3Fx%3D1"), http.StatusMovedPermanently, app.URL+"/sign-in?callbackURL=%2Fafter%3Fx%3D1")
	mustRedirect(t, b.Get("/reset-password/?token=abc"), http.StatusMovedPermanently, app.URL+"/reset-password?token=abc")
	harness.MustStatus(t, b.Get("/api/auth/ok/"), http.StatusNotFound)
	harness.MustStatus(t, b.Get("/api/docs/assets/"), http.StatusNotFound)
	harness.MustStatus(t, b.Get("/nowhere/"), http.StatusNotFound)
}

// Ensure the account page: without a session it sends the browser to sign
// in and back; a form sign-in or sign-up without a callback lands on it; it
// shows who is signed in (escaped) and whether the address is confirmed;
// the sign-in page offers it to a signed-in browser; and its sign-out form
// ends the session, refused from another origin.
func TestAccount_page(t *testing.T) {
	t.Parallel()
	var name, email, pw = "Ada <Lovelace>", harness.Email(t, "ada@example.com"), "correct horse battery"
	app := harness.Shared(t, harness.StoreSQLite, harness.FwQuick)

	// Sign-up without a callback lands on the account.
	b := harness.NewFormBrowser(t, app)
	harness.MustSeeOther(t, app, b.Submit("/api/auth/sign-up/email", url.Values{"name": {name}, "email": {email}, "password": {pw}}), "/account")
	r := b.Get("/account")
	page := harness.MustConsolePage(t, r, http.StatusOK) // the account pages (console), under the console's policy
	for _, want := range []string{"Ada &lt;Lovelace&gt;", email, "Not yet", `action="/api/auth/oauth2/end-session"`, `method="post"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("account page lacks %s:\n%s", want, page)
		}
	}

	// Signed out: to sign-in and back to the account.
	b = harness.NewFormBrowser(t, app)
	r = b.Get("/account")
	harness.MustSignInRedirect(t, r, "/account")
	in := mustPage(t, app, b.Get("/sign-in?callbackURL=%2Faccount"), http.StatusOK, pagesCSP)
	if in["callbackURL"]["value"] != "/account" {
		t.Fatalf("sign-in lost the account callback: %v", in["callbackURL"])
	}
	harness.MustSeeOther(t, app, b.Submit("/api/auth/sign-in/email", url.Values{"email": {email}, "password": {pw}, "callbackURL": {"/account"}}), "/account")
	harness.MustConsolePage(t, b.Get("/account"), http.StatusOK)

	// The sign-in page, visited while signed in, offers the account; with
	// a callback it is a plain sign-in form.
	r = mustPageAnd(t, app, b.Get("/sign-in"), http.StatusOK)
	if links := pageLinks(string(r.Body)); !slices.Contains(links, "/account") || !strings.Contains(string(r.Body), "signed in as "+email) {
		t.Fatalf("sign-in page for a signed-in browser:\n%s", r.Body)
	}
	r = mustPageAnd(t, app, b.Get("/sign-in?callbackURL=%2Fafter"), http.StatusOK)
	if slices.Contains(pageLinks(string(r.Body)), "/account") {
		t.Fatalf("sign-in page with a callback offers the account:\n%s", r.Body)
	}

	// Verified, the page says so.
	harness.MustOK(t, app.NewClient(t).Get(harness.MustLink(t, app, email, "Verify your email address")))
	if page := harness.MustConsolePage(t, b.Get("/account"), http.StatusOK); !strings.Contains(page, "<dd>Yes</dd>") {
		t.Fatalf("account page of a verified address:\n%s", r.Body)
	}

	// Sign-out from another origin is refused; from the page it works.
	r = b.Submit("/api/auth/oauth2/end-session", url.Values{}, "Origin", "https://evil.example.com", "Sec-Fetch-Site", "cross-site")
	harness.MustStatus(t, r, http.StatusForbidden)
	if !b.SignedIn() {
		t.Fatal("a cross-site sign-out ended the session")
	}
	r = b.Submit("/api/auth/oauth2/end-session", url.Values{})
	if q := harness.MustSeeOther(t, app, r, "/sign-out"); q.Get("done") != "1" {
		t.Fatalf("sign-out: Location %q", r.Header.Get("Location"))
	}
	if b.SignedIn() {
		t.Fatal("still signed in after signing out from the account page")
	}
	r = mustPageAnd(t, app, b.Get("/sign-out?done=1"), http.StatusOK)
	if !slices.Contains(pageLinks(string(r.Body)), "/sign-in") {
		t.Fatalf("the signed-out page offers no way back in:\n%s", r.Body)
	}
	harness.MustSignInRedirect(t, b.Get("/account"), "/account")
}
