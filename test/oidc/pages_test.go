package oidc

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

const pagesCSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

var (
	inputTag     = regexp.MustCompile(`<input\b[^>]*>`)
	attrPattern  = regexp.MustCompile(`(\w[\w-]*)="([^"]*)"`)
	labelFor     = regexp.MustCompile(`<label for="([^"]+)"`)
	anyURL       = regexp.MustCompile(`(?i)(https?:)?//[^\s"'<>]+`)
	stylesheetIn = regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)">`)
	eventHandler = regexp.MustCompile(`(?i)\son[a-z]+=`)
	hiddenInput  = regexp.MustCompile(`<input type="hidden"[^>]*>`)
	linkAttr     = regexp.MustCompile(`\s(href|src|srcset|action|formaction|poster|data)="([^"]*)"`)
	// passkeyScript is the sign-in page's script tags: the shell's passkey
	// helpers, then its own.
	passkeyScript = regexp.MustCompile(`<script src="/assets/webauthn\.js\?v=[0-9a-f]{12}" defer></script>\n<script src="/assets/passkey\.js\?v=[0-9a-f]{12}" defer></script>`)
)

// mustPage fails unless r is a hosted page: HTML with the pages' headers,
// a language, a title and a heading, no script, no URL of another origin,
// every visible input labelled and with autocomplete where it is personal
// data; it returns the page's inputs by name. Everything the page loads,
// links or posts to is a path here (a hidden field may hold a client's URL).
func mustPage(t testing.TB, app *harness.App, r *harness.Response, status int, csp string) map[string]map[string]string {
	t.Helper()
	harness.MustStatus(t, r, status)
	// The sign-in page runs one script of its own, the passkey button,
	// and may call this origin; nothing else changes.
	if strings.Contains(string(r.Body), "<h1>Sign in</h1>") {
		csp += "; script-src 'self'; connect-src 'self'"
	}
	for h, want := range map[string]string{
		"Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": csp, "Cache-Control": "no-store",
		"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
	} {
		if got := r.Header.Get(h); got != want {
			t.Fatalf("%s = %q, want %q", h, got, want)
		}
	}
	page := passkeyScript.ReplaceAllString(string(r.Body), "")
	for _, want := range []string{`<html lang="en">`, "<title>", "<h1>", `<meta name="viewport"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(strings.ToLower(page), "<script") || eventHandler.MatchString(page) || strings.Contains(page, "javascript:") {
		t.Fatalf("page has script:\n%s", page)
	}
	for _, m := range linkAttr.FindAllStringSubmatch(page, -1) {
		if u := html.UnescapeString(m[2]); !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") {
			t.Fatalf("page loads or links %s=%q, not a path here:\n%s", m[1], u, page)
		}
	}
	visible := hiddenInput.ReplaceAllString(page, "")
	for _, u := range anyURL.FindAllString(visible, -1) {
		if !strings.HasPrefix(u, app.Cfg.HTTP.BaseURL+"/") {
			t.Fatalf("page names another origin's URL %q:\n%s", u, page)
		}
	}
	if strings.Contains(page, "url(") || strings.Contains(page, "@import") || strings.Contains(page, "style=") {
		t.Fatalf("page has inline style:\n%s", page)
	}
	labels := map[string]bool{}
	for _, m := range labelFor.FindAllStringSubmatch(page, -1) {
		labels[m[1]] = true
	}
	inputs := map[string]map[string]string{}
	for _, tag := range inputTag.FindAllString(page, -1) {
		attrs := map[string]string{}
		for _, m := range attrPattern.FindAllStringSubmatch(tag, -1) {
			attrs[m[1]] = html.UnescapeString(m[2])
		}
		if attrs["type"] != "hidden" {
			if attrs["id"] == "" || !labels[attrs["id"]] {
				t.Fatalf("input without a label: %s", tag)
			}
			if (attrs["type"] == "email" || attrs["type"] == "password" || attrs["name"] == "name") && attrs["autocomplete"] == "" {
				t.Fatalf("input without autocomplete: %s", tag)
			}
		}
		if _, seen := inputs[attrs["name"]]; !seen || attrs["type"] != "hidden" {
			inputs[attrs["name"]] = attrs
		}
	}
	m := stylesheetIn.FindStringSubmatch(page)
	if m == nil || !strings.HasPrefix(m[1], "/assets/") {
		t.Fatalf("page without its stylesheet:\n%s", page)
	}
	return inputs
}

// Ensure every hosted page is plain, accessible HTML under a strict policy:
// no script, nothing from elsewhere, labelled inputs with autocomplete,
// errors announced and linked to the inputs, and its own stylesheet, which
// is cached long.
func TestPages_render(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_TRUSTED_ORIGINS": "https://app.example.com"}))
	b := harness.NewFormBrowser(t, app)

	in := mustPage(t, app, b.Get("/sign-in?callbackURL="+url.QueryEscape("/after?x=1")), http.StatusOK, pagesCSP)
	if in["email"]["autocomplete"] != "email" || in["password"]["autocomplete"] != "current-password" || in["password"]["type"] != "password" ||
		in["callbackURL"]["value"] != "/after?x=1" || in["rememberMe"]["type"] != "checkbox" {
		t.Fatalf("sign-in inputs = %v", in)
	}
	page := string(b.Get("/sign-in?callbackURL=" + url.QueryEscape("/after?x=1")).Body)
	for _, want := range []string{`action="/api/auth/sign-in/email"`, `method="post"`,
		`href="/sign-up?callbackURL=%2Fafter%3Fx%3D1"`, `href="/forgot-password?callbackURL=%2Fafter%3Fx%3D1"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("sign-in lacks %s:\n%s", want, page)
		}
	}
	up := mustPage(t, app, b.Get("/sign-up"), http.StatusOK, pagesCSP)
	if up["name"]["autocomplete"] != "name" || up["email"]["autocomplete"] != "email" || up["password"]["autocomplete"] != "new-password" {
		t.Fatalf("sign-up inputs = %v", up)
	}
	forgot := mustPage(t, app, b.Get("/forgot-password"), http.StatusOK, pagesCSP)
	if forgot["redirectTo"]["value"] != app.Cfg.HTTP.BaseURL+"/reset-password" {
		t.Fatalf("forgot-password inputs = %v", forgot)
	}
	reset := mustPage(t, app, b.Get("/reset-password?token=abc"), http.StatusOK, pagesCSP)
	if reset["token"]["value"] != "abc" || reset["newPassword"]["autocomplete"] != "new-password" {
		t.Fatalf("reset-password inputs = %v", reset)
	}
	mustPage(t, app, b.Get("/sign-out?done=1"), http.StatusOK, pagesCSP)

	// Errors: announced, linked from the inputs, in words (never the raw
	// parameter, which is not echoed).
	r := b.Get("/sign-in?error=INVALID_EMAIL_OR_PASSWORD")
	in = mustPage(t, app, r, http.StatusOK, pagesCSP)
	if !strings.Contains(string(r.Body), `role="alert" id="form-error"`) || in["password"]["aria-describedby"] != "form-error" || in["email"]["aria-invalid"] != "true" {
		t.Fatalf("error not announced or linked:\n%s", r.Body)
	}
	r = b.Get("/sign-in?error=" + url.QueryEscape(`<script>alert(1)</script>`) + "&callbackURL=" + url.QueryEscape(`/x?"><script>`))
	mustPage(t, app, r, http.StatusOK, pagesCSP)
	r = mustPageAnd(t, app, b.Get("/reset-password"), http.StatusBadRequest)
	if !strings.Contains(string(r.Body), `role="alert"`) || strings.Contains(string(r.Body), "<form") {
		t.Fatalf("reset-password without a token:\n%s", r.Body)
	}
	r = mustPageAnd(t, app, b.Get("/reset-password?token=abc&error=INVALID_TOKEN"), http.StatusOK)
	if !strings.Contains(string(r.Body), "not valid any more") {
		t.Fatalf("reset-password with INVALID_TOKEN:\n%s", r.Body)
	}

	// A foreign callback is refused on arrival; a trusted origin's may be
	// posted to, so the policy lets the form lead there.
	r = mustPageAnd(t, app, b.Get("/sign-in?callbackURL="+url.QueryEscape("https://evil.example.com/x")), http.StatusBadRequest)
	if strings.Contains(string(r.Body), "<form") || strings.Contains(string(r.Body), "evil") {
		t.Fatalf("foreign callbackURL accepted:\n%s", r.Body)
	}
	mustPage(t, app, b.Get("/sign-in?callbackURL="+url.QueryEscape("https://app.example.com/after")), http.StatusOK,
		strings.Replace(pagesCSP, "form-action 'self'", "form-action 'self' https://app.example.com", 1))

	// The consent page needs a session: the browser is sent to sign in
	// first, and comes back to the same request.
	authorize := "client_id=abc&redirect_uri=" + url.QueryEscape("https://app.example.com/cb") + "&response_type=code&scope=openid"
	r = b.Get("/consent?" + authorize)
	harness.MustStatus(t, r, http.StatusFound)
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil || loc.Path != "/sign-in" || loc.Query().Get("callbackURL") != "/consent?"+authorize {
		t.Fatalf("consent without a session: Location %q", r.Header.Get("Location"))
	}
	// …and the sign-in page takes that callback.
	in = mustPage(t, app, b.Get(loc.RequestURI()), http.StatusOK, pagesCSP)
	if in["callbackURL"]["value"] != "/consent?"+authorize {
		t.Fatalf("sign-in lost the consent callback: %v", in["callbackURL"])
	}

	// The stylesheet: CSS, cached for long (its URL changes with it).
	m := stylesheetIn.FindStringSubmatch(page)
	r = b.Get(strings.ReplaceAll(m[1], "&amp;", "&"))
	harness.MustStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "text/css; charset=utf-8" || !strings.Contains(r.Header.Get("Cache-Control"), "max-age=31536000") ||
		!strings.Contains(string(r.Body), ":focus-visible") || anyURL.MatchString(string(r.Body)) {
		t.Fatalf("stylesheet: %q %q", ct, r.Header.Get("Cache-Control"))
	}
}

// mustPageAnd checks a page with the default policy and returns it.
func mustPageAnd(t testing.TB, app *harness.App, r *harness.Response, status int) *harness.Response {
	t.Helper()
	mustPage(t, app, r, status, pagesCSP)
	return r
}

// Ensure signing up and in through the pages' forms works without
// JavaScript: each post answers 303 to the next page, errors come back to
// the form with ?error=CODE (never the password), a foreign callback is
// refused, cross-site posts are still refused, and JSON callers see no
// change.
func TestPages_sign_up_and_in_without_javascript(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		var email, pw = harness.Email(t, "ada@example.com"), "correct horse battery"
		b := harness.NewFormBrowser(t, app)
		r := b.Submit("/api/auth/sign-up/email", url.Values{"name": {"Ada"}, "email": {email}, "password": {pw}, "callbackURL": {"/welcome"}})
		harness.MustSeeOther(t, app, r, "/welcome")
		if !b.SignedIn() {
			t.Fatal("sign-up did not sign in")
		}

		// Wrong password: back to the form, the callback kept.
		b = harness.NewFormBrowser(t, app)
		r = b.Submit("/api/auth/sign-in/email", url.Values{"email": {email}, "password": {"wrong password!"}, "rememberMe": {"false", "true"}, "callbackURL": {"/after?x=1"}})
		q := harness.MustSeeOther(t, app, r, "/sign-in")
		if q.Get("error") != "INVALID_EMAIL_OR_PASSWORD" || q.Get("callbackURL") != "/after?x=1" || strings.Contains(r.Header.Get("Location"), "wrong") {
			t.Fatalf("wrong password: Location %q", r.Header.Get("Location"))
		}
		if b.SignedIn() {
			t.Fatal("a wrong password signed in")
		}
		page := mustPageAnd(t, app, b.Get(r.Header.Get("Location")), http.StatusOK)
		if !strings.Contains(string(page.Body), "password is wrong") {
			t.Fatalf("error not shown:\n%s", page.Body)
		}

		// Right password: on to the callback, signed in.
		r = b.Submit("/api/auth/sign-in/email", url.Values{"email": {email}, "password": {pw}, "rememberMe": {"false", "true"}, "callbackURL": {"/after?x=1"}})
		if q := harness.MustSeeOther(t, app, r, "/after"); q.Get("x") != "1" {
			t.Fatalf("Location = %q", r.Header.Get("Location"))
		}
		if harness.RawSetCookie(r, "gatehouse.session_token") == "" || r.Header.Get("set-auth-token") != "" {
			t.Fatalf("cookies %q, set-auth-token %q", r.Header.Values("Set-Cookie"), r.Header.Get("set-auth-token"))
		}
		if !strings.Contains(harness.RawSetCookie(r, "gatehouse.session_token"), "Max-Age") {
			t.Fatal("checked rememberMe gave a browser-session cookie")
		}
		if !b.SignedIn() {
			t.Fatal("not signed in")
		}

		// Unchecked "keep me signed in" (only the hidden false): a
		// browser-session cookie. Without a callback: the account page.
		b = harness.NewFormBrowser(t, app)
		r = b.Submit("/api/auth/sign-in/email", url.Values{"email": {email}, "password": {pw}, "rememberMe": {"false"}, "callbackURL": {""}})
		if q := harness.MustSeeOther(t, app, r, "/account"); len(q) != 0 {
			t.Fatalf("Location = %q", r.Header.Get("Location"))
		}
		if c := harness.RawSetCookie(r, "gatehouse.session_token"); c == "" || strings.Contains(c, "Max-Age") {
			t.Fatalf("unchecked rememberMe: %q", c)
		}

		// A foreign callback: refused, not signed in, not carried back.
		b = harness.NewFormBrowser(t, app)
		r = b.Submit("/api/auth/sign-in/email", url.Values{"email": {email}, "password": {pw}, "callbackURL": {"https://evil.example.com/"}})
		if q := harness.MustSeeOther(t, app, r, "/sign-in"); q.Get("error") != "INVALID_CALLBACK_URL" || q.Has("callbackURL") {
			t.Fatalf("foreign callback: Location %q", r.Header.Get("Location"))
		}
		if b.SignedIn() {
			t.Fatal("a refused callback signed in")
		}

		// Sign-up errors come back to the sign-up page.
		r = b.Submit("/api/auth/sign-up/email", url.Values{"name": {"Bob"}, "email": {harness.Email(t, "bob@example.com")}, "password": {"short"}, "callbackURL": {"/welcome"}})
		if q := harness.MustSeeOther(t, app, r, "/sign-up"); q.Get("error") != "PASSWORD_TOO_SHORT" || q.Get("callbackURL") != "/welcome" || q.Has("password") {
			t.Fatalf("short password: Location %q", r.Header.Get("Location"))
		}

		// A cross-site form post is refused as before: 403, no redirect.
		r = b.Submit("/api/auth/sign-in/email", url.Values{"email": {email}, "password": {pw}},
			"Origin", "https://evil.example.com", "Sec-Fetch-Site", "cross-site")
		harness.MustCode(t, r, http.StatusForbidden, "CROSS_SITE_NAVIGATION_LOGIN_BLOCKED")

		// JSON callers see what they always saw.
		c := app.NewClient(t)
		r = c.Post("/api/auth/sign-in/email", harness.MustJSON(t, map[string]any{"email": email, "password": pw, "callbackURL": "/after"}))
		body := harness.MustOK(t, r)
		if body["redirect"] != true || body["url"] != "/after" || r.Header.Get("Location") != app.URL+"/after" || r.Header.Get("set-auth-token") == "" {
			t.Fatalf("JSON sign-in: %s, Location %q", r.Body, r.Header.Get("Location"))
		}
		harness.MustCode(t, c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, email, "wrong password!")), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		harness.MustCode(t, c.Post("/api/auth/reset-password", harness.MustJSON(t, map[string]any{"token": "nope", "newPassword": "another good password"})),
			http.StatusBadRequest, "INVALID_TOKEN")
	})
}

// Ensure a sign-up that must verify its address ends on the sign-in page
// with a "check your mail" notice, signed out, and the mail goes out.
func TestPages_sign_up_needs_verification(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreSQLite, map[string]string{"GATEHOUSE_RATE_LIMIT": "off"})
	b := harness.NewFormBrowser(t, app)
	r := b.Submit("/api/auth/sign-up/email", url.Values{"name": {"Ada"}, "email": {harness.Email(t, "ada@example.com")}, "password": {"correct horse battery"}, "callbackURL": {"/welcome"}})
	q := harness.MustSeeOther(t, app, r, "/sign-in")
	if q.Get("notice") != "check-email" || q.Get("callbackURL") != "/welcome" {
		t.Fatalf("Location = %q", r.Header.Get("Location"))
	}
	if b.SignedIn() {
		t.Fatal("signed in before verifying")
	}
	page := mustPageAnd(t, app, b.Get(r.Header.Get("Location")), http.StatusOK)
	if !strings.Contains(string(page.Body), `role="status"`) || !strings.Contains(string(page.Body), "We mailed you a link") {
		t.Fatalf("no notice:\n%s", page.Body)
	}
	harness.MustLink(t, app, harness.Email(t, "ada@example.com"), "Verify your email address")

	// Signing in before verifying comes back with the reason.
	r = b.Submit("/api/auth/sign-in/email", url.Values{"email": {harness.Email(t, "ada@example.com")}, "password": {"correct horse battery"}})
	if q := harness.MustSeeOther(t, app, r, "/sign-in"); q.Get("error") != "EMAIL_NOT_VERIFIED" {
		t.Fatalf("Location = %q", r.Header.Get("Location"))
	}
}

// Ensure the forgotten-password flow without JavaScript: the request
// answers alike for any address, the mailed link leads to the reset page,
// a refused password comes back with the token kept, the new password
// works once, and a used link says so.
func TestPages_forgot_and_reset_password(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		var email, pw, newPW = harness.Email(t, "ada@example.com"), "correct horse battery", "a brand new passphrase"
		harness.MustSignUp(t, app.NewClient(t), "Ada", email, pw)
		b := harness.NewFormBrowser(t, app)
		forgot := mustPage(t, app, b.Get("/forgot-password"), http.StatusOK, pagesCSP)
		redirectTo := forgot["redirectTo"]["value"]
		for _, addr := range []string{"nobody@example.com", email} {
			r := b.Submit("/api/auth/request-password-reset", url.Values{"email": {addr}, "redirectTo": {redirectTo}})
			if q := harness.MustSeeOther(t, app, r, "/forgot-password"); q.Get("sent") != "1" {
				t.Fatalf("Location = %q", r.Header.Get("Location"))
			}
		}
		page := mustPageAnd(t, app, b.Get("/forgot-password?sent=1"), http.StatusOK)
		if !strings.Contains(string(page.Body), "If an account exists") {
			t.Fatalf("no neutral notice:\n%s", page.Body)
		}
		harness.MustNoMail(t, app, harness.Email(t, "nobody@example.com"), "Reset your")

		// The link from the mail leads to the reset page with the token.
		r := b.Get(harness.MustLink(t, app, email, "Reset your"))
		harness.MustStatus(t, r, http.StatusFound)
		loc, err := url.Parse(r.Header.Get("Location"))
		if err != nil || loc.Scheme+"://"+loc.Host != app.URL || loc.Path != "/reset-password" || loc.Query().Get("token") == "" {
			t.Fatalf("reset link leads to %q", r.Header.Get("Location"))
		}
		token := loc.Query().Get("token")
		reset := mustPage(t, app, b.Get(loc.RequestURI()), http.StatusOK, pagesCSP)
		if reset["token"]["value"] != token {
			t.Fatalf("reset page lost the token: %v", reset)
		}

		r = b.Submit("/api/auth/reset-password", url.Values{"token": {token}, "newPassword": {"short"}})
		if q := harness.MustSeeOther(t, app, r, "/reset-password"); q.Get("error") != "PASSWORD_TOO_SHORT" || q.Get("token") != token || q.Has("newPassword") {
			t.Fatalf("short password: Location %q", r.Header.Get("Location"))
		}
		r = b.Submit("/api/auth/reset-password", url.Values{"token": {token}, "newPassword": {newPW}})
		if q := harness.MustSeeOther(t, app, r, "/sign-in"); q.Get("notice") != "password-reset" {
			t.Fatalf("Location = %q", r.Header.Get("Location"))
		}
		harness.MustSignInFails(t, app, email, pw)
		harness.MustSignIn(t, app.NewClient(t), email, newPW)

		r = b.Submit("/api/auth/reset-password", url.Values{"token": {token}, "newPassword": {"yet another passphrase"}})
		q := harness.MustSeeOther(t, app, r, "/reset-password")
		if q.Get("error") != "INVALID_TOKEN" {
			t.Fatalf("used link: Location %q", r.Header.Get("Location"))
		}
		page = mustPageAnd(t, app, b.Get(r.Header.Get("Location")), http.StatusOK)
		if !strings.Contains(string(page.Body), "not valid any more") {
			t.Fatalf("used link not explained:\n%s", page.Body)
		}

		// JSON callers see what they always saw.
		body := harness.MustOK(t, app.NewClient(t).Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]any{"email": email})))
		if body["status"] != true {
			t.Fatalf("JSON request-password-reset: %v", body)
		}
	})
}

// Ensure a throttled sign-in comes back to the form with the reason.
func TestPages_sign_in_rate_limited(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "false"})
	b := harness.NewFormBrowser(t, app)
	var last *harness.Response
	for range 6 {
		last = b.Submit("/api/auth/sign-in/email", url.Values{"email": {harness.Email(t, "ada@example.com")}, "password": {"wrong password!"}, "callbackURL": {"/after"}})
	}
	q := harness.MustSeeOther(t, app, last, "/sign-in")
	if q.Get("error") != "TOO_MANY_REQUESTS" || q.Get("callbackURL") != "/after" || last.Header.Get("Retry-After") == "" {
		t.Fatalf("throttled sign-in: Location %q, Retry-After %q", last.Header.Get("Location"), last.Header.Get("Retry-After"))
	}
}

// Ensure the consent and sign-out pages carry an OpenID Connect flow
// without JavaScript: authorize sends a signed-out browser to sign in, the
// sign-in form returns to authorize, consent shows the client and the
// scopes in words and its answer lands on the client's redirect URI (whose
// origin the pages' policies let the forms reach), a tampered request comes
// back to the page with the error, and the sign-out page confirms an
// end-session request and returns to the client.
func TestPages_consent_and_sign_out(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		const rp = "https://rp.example.net"
		admin, _ := harness.MustAdmin(t, app)
		r := admin.Post("/api/admin/oauth-clients", harness.MustJSON(t, map[string]any{"name": "Example <app>", "type": "public",
			"redirectUris": []string{rp + "/cb"}, "postLogoutRedirectUris": []string{rp + "/bye"}}))
		harness.MustStatus(t, r, http.StatusCreated)
		clientID, _ := r.JSON(t)["clientId"].(string)
		var email, pw = harness.Email(t, "ada@example.com"), "correct horse battery"
		harness.MustSignUp(t, app.NewClient(t), "Ada", email, pw)
		formCSP := strings.Replace(pagesCSP, "form-action 'self'", "form-action 'self' "+rp, 1)

		b := harness.NewFormBrowser(t, app)
		authorize := "/api/auth/oauth2/authorize?" + url.Values{"client_id": {clientID}, "redirect_uri": {rp + "/cb"}, "response_type": {"code"},
			"scope": {"openid profile email"}, "state": {"st-1"}, "code_challenge": {harness.PKCEChallenge("a-verifier-of-forty-three-characters-at-least")},
			"code_challenge_method": {"S256"}}.Encode()
		r = b.Get(authorize)
		harness.MustStatus(t, r, http.StatusFound)
		signIn, err := url.Parse(r.Header.Get("Location"))
		if err != nil || signIn.Path != "/sign-in" {
			t.Fatalf("authorize without a session: Location %q", r.Header.Get("Location"))
		}
		in := mustPage(t, app, b.Get(signIn.RequestURI()), http.StatusOK, formCSP)
		r = b.Submit("/api/auth/sign-in/email", url.Values{"email": {email}, "password": {pw}, "rememberMe": {"false", "true"}, "callbackURL": {in["callbackURL"]["value"]}})
		harness.MustSeeOther(t, app, r, "/api/auth/oauth2/authorize")

		r = b.Get(r.Header.Get("Location"))
		harness.MustStatus(t, r, http.StatusFound)
		consent, err := url.Parse(r.Header.Get("Location"))
		if err != nil || consent.Path != "/consent" {
			t.Fatalf("authorize for a third-party client: Location %q", r.Header.Get("Location"))
		}
		r = b.Get(consent.RequestURI())
		in = mustPage(t, app, r, http.StatusOK, formCSP)
		page := string(r.Body)
		for _, want := range []string{"Example &lt;app&gt;", email, "See your name and profile picture", "See your e-mail address",
			`action="/api/auth/oauth2/consent"`, `name="accept" value="true"`, `name="accept" value="false"`} {
			if !strings.Contains(page, want) {
				t.Fatalf("consent page lacks %s:\n%s", want, page)
			}
		}
		if in["oauth_query"]["value"] != consent.RawQuery {
			t.Fatalf("oauth_query = %q, want %q", in["oauth_query"]["value"], consent.RawQuery)
		}

		// A tampered request comes back to the page with the error.
		tampered, _ := url.ParseQuery(consent.RawQuery)
		tampered.Set("redirect_uri", rp+"/other")
		r = b.Submit("/api/auth/oauth2/consent", url.Values{"oauth_query": {tampered.Encode()}, "accept": {"true"}})
		q := harness.MustSeeOther(t, app, r, "/consent")
		if q.Get("error") == "" || q.Get("client_id") != clientID {
			t.Fatalf("tampered consent: Location %q", r.Header.Get("Location"))
		}
		r = b.Get(r.Header.Get("Location"))
		harness.MustStatus(t, r, http.StatusBadRequest)

		// Allowing lands on the client with a code.
		r = b.Submit("/api/auth/oauth2/consent", url.Values{"oauth_query": {in["oauth_query"]["value"]}, "accept": {"true"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("consent: %d %s", r.Status, r.Body)
		}
		back, err := url.Parse(r.Header.Get("Location"))
		if err != nil || back.Scheme+"://"+back.Host+back.Path != rp+"/cb" || back.Query().Get("code") == "" || back.Query().Get("state") != "st-1" ||
			back.Query().Get("iss") != app.Cfg.HTTP.BaseURL+"/api/auth" {
			t.Fatalf("consent accepted: Location %q", r.Header.Get("Location"))
		}

		// Sign-out: without an ID token the page asks, then returns to the client.
		r = b.Get("/api/auth/oauth2/end-session?" + url.Values{"client_id": {clientID}, "post_logout_redirect_uri": {rp + "/bye"}, "state": {"st-2"}}.Encode())
		harness.MustStatus(t, r, http.StatusFound)
		signOut, err := url.Parse(r.Header.Get("Location"))
		if err != nil || signOut.Path != "/sign-out" {
			t.Fatalf("end-session without id_token_hint: Location %q", r.Header.Get("Location"))
		}
		if !b.SignedIn() {
			t.Fatal("end-session signed out before the user confirmed")
		}
		r = b.Get(signOut.RequestURI())
		in = mustPage(t, app, r, http.StatusOK, formCSP)
		if in["client_id"]["value"] != clientID || in["post_logout_redirect_uri"]["value"] != rp+"/bye" || in["state"]["value"] != "st-2" ||
			!strings.Contains(string(r.Body), `action="/api/auth/oauth2/end-session"`) {
			t.Fatalf("sign-out page inputs %v:\n%s", in, r.Body)
		}
		form := url.Values{}
		for name, attrs := range in {
			form.Set(name, attrs["value"])
		}
		r = b.Submit("/api/auth/oauth2/end-session", form)
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), rp+"/bye") {
			t.Fatalf("sign-out: %d Location %q %s", r.Status, r.Header.Get("Location"), r.Body)
		}
		if b.SignedIn() {
			t.Fatal("still signed in after sign-out")
		}
		mustPage(t, app, b.Get("/sign-out?done=1"), http.StatusOK, pagesCSP)

		// An end-session request for another client's URI is refused on arrival.
		mustPageAnd(t, app, b.Get("/sign-out?"+url.Values{"client_id": {clientID}, "post_logout_redirect_uri": {"https://evil.example.com/"}}.Encode()), http.StatusBadRequest)
	})
}
