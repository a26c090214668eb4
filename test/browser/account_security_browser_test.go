package browser

import (
	"encoding/base32"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure a user manages their account's security in a real browser under
// the console's strict CSP, on the stores of the store policy (a tab
// each, in parallel): signed out, /account/security sends them to the
// hosted sign-in and back; they enrol TOTP from the key the page shows
// (the test computes the code from it, as an authenticator app would) and
// two-factor is on; they register a passkey with Chromium's virtual
// authenticator through the page's own script, see it listed, and remove
// it; on /account/linked they link their account at a second Gatehouse
// (the upstream identity provider of the federation browser test: A on
// localhost, B on 127.0.0.1), coming back to the page, and unlink it. No
// page may raise an exception, log an error, violate its CSP or fail a
// request. Every page's screenshot goes to GATEHOUSE_TEST_ARTIFACTS (a
// temporary directory when unset); the test logs their paths.
func TestAccountSecurity_browser(t *testing.T) {
	forBrowserStores(t, harness.StoresOnce, "account-security", func(t *testing.T, s harness.Store, chromium, dir string) {
		accountSecurityBrowser(t, s, chromium, dir)
	})
}

func accountSecurityBrowser(t *testing.T, s harness.Store, chromium, dir string) {
	const (
		provider = "gatehouse-b"
		email    = "uma@example.com"
	)
	a := harness.MustStart(t, s, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_BASE_URL": "http://localhost:{port}",
		"GATEHOUSE_PASSKEY_ORIGINS": "http://localhost:{port}"}))
	b := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_COOKIE_PREFIX": "upstream"}))
	aBase := a.Cfg.HTTP.BaseURL
	adminB, _ := harness.MustAdmin(t, b)
	client := harness.MustRegisterStrictClient(t, adminB, "Gatehouse A", "confidential", true, aBase+"/api/auth/callback/"+provider)
	adminA, _ := harness.MustAdmin(t, a)
	r := adminA.Post("/api/admin/identity-providers", harness.MustJSON(t, map[string]any{"id": provider, "preset": "oidc", "name": "Gatehouse B",
		"issuer": b.URL + "/api/auth", "clientId": client.ID, "clientSecret": client.Secret, "scopes": []string{"openid", "email", "profile"}}))
	harness.MustStatus(t, r, http.StatusCreated)
	harness.MustVerifiedUser(t, a, "Uma User", email, harness.StrictPassword)
	harness.MustVerifiedUser(t, b, "Uma Upstream", email, harness.StrictPassword)

	tb := newTab(t, chromium, dir)
	ctx, report, shot, do := tb.ctx, tb.report, tb.shot, tb.do
	mustShow := tb.mustShow
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	if _, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
	}}); err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}

	// Signed out: to the hosted sign-in, and back.
	oidcBrowserNavigate(t, ctx, aBase+"/account/security")
	fedBrowserWaitPath(t, ctx, aBase, "/sign-in")
	const signIn = `form:has(input[type="password"])`
	do("sign in", chromedp.SendKeys(chromedp.CSS(signIn+` input[name="email"]`), email),
		chromedp.SendKeys(chromedp.CSS(signIn+` input[name="password"]`), harness.StrictPassword),
		chromedp.Click(chromedp.CSS(signIn+` [type="submit"]`)))
	fedBrowserWaitPath(t, ctx, aBase, "/account/security")
	mustShow("the security page", "Set up an authenticator app")
	shot("01-security")
	oidcBrowserNoCSPViolations(t, ctx, "the security page")

	// TOTP: the password, then the key the page shows, then its code.
	do("start the enrolment", chromedp.SendKeys(chromedp.CSS(`#totp-password`), harness.StrictPassword),
		chromedp.Click(chromedp.CSS(`form[action="/account/security/totp/enable"] [type="submit"]`)))
	consoleWait(t, ctx, "the enrolment", `document.getElementById("totp-secret") !== null`)
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const i = document.getElementById("totp-qr"); return i.complete && i.naturalWidth > 100 && i.alt.length > 0; })()`)); err != nil || !ok {
		t.Fatalf("the QR code is not shown (%v)", err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#backup-codes li").length`)); err != nil || n != 10 {
		t.Fatalf("the enrolment shows %d backup codes (%v), want 10", n, err)
	}
	shot("02-enrol")
	oidcBrowserNoCSPViolations(t, ctx, "the enrolment")
	key := pageText(t, ctx, "#totp-secret")
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ReplaceAll(strings.TrimSpace(key), " ", ""))
	if err != nil {
		t.Fatalf("the key %q: %v", key, err)
	}
	do("confirm the code", chromedp.SendKeys(chromedp.CSS(`#totp-code`), harness.TOTPAt(a.Clock, secret, 0)),
		chromedp.Click(chromedp.CSS(`form[action="/account/security/totp/confirm"] [type="submit"]`)))
	consoleWait(t, ctx, "two-factor on", `location.search === "?done=totp-on"`)
	mustShow("after the confirmation", "Two-factor authentication is on")
	mustShow("after the confirmation", "Turn off two-factor authentication")
	if text := pageText(t, ctx, "body"); strings.Contains(text, strings.TrimSpace(key)) {
		t.Fatal("the key is shown again after the confirmation")
	}
	shot("03-totp-on")
	oidcBrowserNoCSPViolations(t, ctx, "the security page with two-factor on")

	// A passkey, through the page's script and the virtual authenticator.
	do("name the passkey", chromedp.SendKeys(chromedp.CSS(`#passkey-name`), "Test laptop"),
		chromedp.Click(chromedp.CSS(`form[action="/account/security/passkeys/new"] [type="submit"]`)))
	consoleWait(t, ctx, "the registration", `(() => { const b = document.getElementById("passkey-create"); return b !== null && !b.disabled; })()`)
	shot("04-passkey-register")
	oidcBrowserNoCSPViolations(t, ctx, "the passkey registration")
	do("create the passkey", chromedp.Click(chromedp.CSS(`#passkey-create`)))
	consoleWait(t, ctx, "the passkey", `location.search === "?done=passkey-added"`)
	if rows := pageText(t, ctx, "tbody"); !strings.Contains(rows, "Test laptop") {
		t.Fatalf("the passkey is not listed:\n%s", rows)
	}
	shot("05-passkey-added")
	oidcBrowserNoCSPViolations(t, ctx, "the security page with a passkey")
	do("open the removal", chromedp.Click(chromedp.CSS(`details:has(form[action="/account/security/passkeys/delete"]) summary`)))
	do("remove the passkey", chromedp.Click(chromedp.CSS(`form[action="/account/security/passkeys/delete"] [type="submit"]`)))
	consoleWait(t, ctx, "the removal", `location.search === "?done=passkey-removed"`)
	mustShow("after the removal", "No passkey yet.")
	shot("06-passkey-removed")
	oidcBrowserNoCSPViolations(t, ctx, "the security page after the removal")

	// Link the account at Gatehouse B, through B's sign-in, and back.
	oidcBrowserNavigate(t, ctx, aBase+"/account/linked")
	fedBrowserWaitPath(t, ctx, aBase, "/account/linked")
	mustShow("the linked page", "No linked account.")
	shot("07-linked")
	oidcBrowserNoCSPViolations(t, ctx, "the linked page")
	do("link Gatehouse B", chromedp.Click(chromedp.CSS(`form[action="/account/linked/link"]:has(input[value="`+provider+`"]) [type="submit"]`)))
	oidcBrowserSignIn(t, ctx, b, email)
	fedBrowserWaitPath(t, ctx, aBase, "/account/linked")
	consoleWait(t, ctx, "the link", `location.search === "?done=linked"`)
	if rows := pageText(t, ctx, "tbody"); !strings.Contains(rows, "Gatehouse B") || !strings.Contains(rows, email) {
		t.Fatalf("the linked account is not listed:\n%s", rows)
	}
	shot("08-linked-b")
	oidcBrowserNoCSPViolations(t, ctx, "the linked page after linking")
	do("open the unlink", chromedp.Click(chromedp.CSS(`details:has(form[action="/account/linked/unlink"]) summary`)))
	do("unlink", chromedp.Click(chromedp.CSS(`form[action="/account/linked/unlink"] [type="submit"]`)))
	consoleWait(t, ctx, "the unlink", `location.search === "?done=unlinked"`)
	mustShow("after unlinking", "No linked account.")
	shot("09-unlinked")
	oidcBrowserNoCSPViolations(t, ctx, "the linked page after unlinking")
	report()

	// Two-factor is on for the user, from outside.
	c := a.NewClient(t)
	r = c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, email, harness.StrictPassword))
	if body := harness.MustOK(t, r); body["twoFactorRedirect"] != true {
		t.Fatalf("sign-in after the enrolment = %v, want the second factor asked", body)
	}
}
