package console

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"html"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
	qr "github.com/piglig/go-qr"
)

// The account's security and linked-accounts pages (/account/security,
// /account/linked): who may see and post them, TOTP enrolment with the
// server-drawn QR code, backup codes shown once, passkeys registered,
// renamed and removed through the pages, providers linked and unlinked,
// and hostile input, all through the framework's use cases (their audit
// entries are read back).

// accountSecurityPosts are the security and linked pages' forms.
var accountSecurityPosts = []string{
	"/account/security/totp/enable", "/account/security/totp/confirm", "/account/security/totp/disable",
	"/account/security/backup-codes", "/account/security/passkeys/new", "/account/security/passkeys/verify",
	"/account/security/passkeys/rename", "/account/security/passkeys/delete",
	"/account/linked/link", "/account/linked/unlink",
}

var (
	// accountQR is the enrolment's QR code, a PNG data URI.
	accountQR = regexp.MustCompile(`<img id="totp-qr" src="data:image/png;base64,([^"]+)"[^>]* alt="[^"]+"`)
	// accountSecret is the key shown as text.
	accountSecret = regexp.MustCompile(`<code id="totp-secret">([A-Z2-7 ]+)</code>`)
	// accountCodes are backup codes shown.
	accountCodes = regexp.MustCompile(`<li><code>([A-Za-z0-9]{5}-[A-Za-z0-9]{5})</code></li>`)
	// accountOptions are a passkey registration's options.
	accountOptions = regexp.MustCompile(`id="passkey-register" data-options="([^"]+)"`)
)

// formTokens are the tokens of the forms on page, by action.
func formTokens(page string) map[string]string {
	out := map[string]string{}
	for _, m := range consoleForm.FindAllStringSubmatch(page, -1) {
		out[html.UnescapeString(m[1])] = html.UnescapeString(m[2])
	}
	return out
}

// mustAccountPage is MustConsolePage for a page whose form-action may also
// allow identity providers (the linked accounts page).
func mustAccountPage(t testing.TB, r *harness.Response, status int) string {
	t.Helper()
	if csp := r.Header.Get("Content-Security-Policy"); strings.Contains(csp, "form-action 'self' ") {
		before, rest, _ := strings.Cut(csp, "form-action 'self' ")
		_, after, _ := strings.Cut(rest, ";")
		if got := before + "form-action 'self';" + after; got != harness.ConsoleCSP {
			t.Fatalf("CSP %q is not the console's with providers added", csp)
		}
		r.Header.Set("Content-Security-Policy", harness.ConsoleCSP)
	}
	return harness.MustConsolePage(t, r, status)
}

// mustAccountPasskey registers a new device's passkey as name through c's
// security page and returns the device.
func mustAccountPasskey(t testing.TB, c *harness.Client, name string) *harness.PkDevice {
	t.Helper()
	d := harness.NewDevice()
	page := harness.MustConsolePage(t, consoleFormPost(t, c, "/account/security", "/account/security/passkeys/new", url.Values{"name": {name}}), http.StatusOK)
	m := accountOptions.FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, `<script src="/account/assets/passkey.js?v=`) {
		t.Fatalf("no registration on the page: %s", page)
	}
	att := d.Attest(t, &harness.Response{Status: http.StatusOK, Body: []byte(html.UnescapeString(m[1]))})
	r := consolePost(c, "/account/security/passkeys/verify", url.Values{"_token": {formTokens(page)["/account/security/passkeys/verify"]}, "name": {name}, "response": {att}})
	mustAccountDone(t, r, "/account/security", "passkey-added")
	return d
}

// mustAccountEnrol enrols TOTP through the security page and returns the
// secret: the key shown as text must be the one the QR code holds.
func mustAccountEnrol(t testing.TB, c *harness.Client, password string) []byte {
	t.Helper()
	page := harness.MustConsolePage(t, consoleFormPost(t, c, "/account/security", "/account/security/totp/enable", url.Values{"password": {password}}), http.StatusOK)
	m := accountQR.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no QR code on the enrolment page: %s", page)
	}
	raw, err := base64.StdEncoding.DecodeString(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the QR code is not a PNG: %v", err)
	}
	uri, err := qr.Decode(img)
	if err != nil {
		t.Fatalf("the QR code does not decode: %v", err)
	}
	s := accountSecret.FindStringSubmatch(page)
	if s == nil {
		t.Fatalf("no key as text on the enrolment page: %s", page)
	}
	key := strings.ReplaceAll(s[1], " ", "")
	if u, err := url.Parse(uri); err != nil || u.Scheme != "otpauth" || u.Query().Get("secret") != key {
		t.Fatalf("the QR code holds %q, the page's key is %q", uri, key)
	}
	if n := len(accountCodes.FindAllString(page, -1)); n != 10 {
		t.Fatalf("the enrolment page shows %d backup codes, want 10: %s", n, page)
	}
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(key)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// Ensure every security and linked-accounts route sends a signed-out
// browser to sign in and back, serves any signed-in user (an
// administrator or not), and that every form refuses a post without a
// token, a cross-origin post, a reused token and another form's token,
// changing nothing.
func TestAccountSecurity_authorization_matrix(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		anon := app.NewClient(t)
		for _, path := range []string{"/account/security", "/account/linked", "/account/security?done=totp-on", "/account/linked?error=state_mismatch"} {
			harness.MustSignInRedirect(t, anon.Get(path), path)
			for _, c := range []*harness.Client{w.plain, w.admin} {
				if body := harness.MustConsolePage(t, c.Get(path), http.StatusOK); !strings.Contains(body, `aria-label="Account"`) {
					t.Fatalf("GET %s: not the account shell: %s", path, body)
				}
			}
		}
		for _, path := range accountSecurityPosts {
			harness.MustSignInRedirect(t, consolePost(anon, path, nil), "/account")
			for _, c := range []*harness.Client{w.plain, w.admin} {
				if body := harness.MustConsolePage(t, consolePost(c, path, url.Values{"password": {harness.UserPassword}}), http.StatusForbidden); !strings.Contains(body, "Form refused") {
					t.Fatalf("POST %s without a token: %s", path, body)
				}
			}
		}
		enable := "/account/security/totp/enable"
		tokens := mustConsoleTokens(t, w.plain, "/account/security")
		evil := w.plain.Clone()
		evil.Origin = "https://evil.example"
		harness.MustConsolePage(t, consolePost(evil, enable, url.Values{"_token": {tokens[enable]}, "password": {harness.UserPassword}}), http.StatusForbidden)
		noOrigin := w.plain.Clone()
		noOrigin.Origin = ""
		harness.MustConsolePage(t, consolePost(noOrigin, enable, url.Values{"_token": {tokens[enable]}, "password": {harness.UserPassword}}), http.StatusForbidden)
		harness.MustConsolePage(t, consolePost(w.plain, "/account/security/passkeys/new", url.Values{"_token": {tokens[enable]}, "name": {"x"}}), http.StatusForbidden)
		// Another user's token.
		adminTokens := mustConsoleTokens(t, w.admin, "/account/security")
		harness.MustConsolePage(t, consolePost(w.plain, enable, url.Values{"_token": {adminTokens[enable]}, "password": {harness.UserPassword}}), http.StatusForbidden)
		// The right token works once.
		harness.MustConsolePage(t, consolePost(w.plain, enable, url.Values{"_token": {tokens[enable]}, "password": {harness.UserPassword}}), http.StatusOK)
		if body := harness.MustConsolePage(t, consolePost(w.plain, enable, url.Values{"_token": {tokens[enable]}, "password": {harness.UserPassword}}), http.StatusForbidden); !strings.Contains(body, "Form refused") {
			t.Fatalf("reused token: %s", body)
		}
		harness.MustStatus(t, anon.Get("/account/assets/passkey.js"), http.StatusOK)
		harness.MustStatus(t, anon.Get("/assets/webauthn.js"), http.StatusOK)
		// An impersonation looks but changes nothing.
		tok := mustConsoleTokens(t, w.admin, w.userPath())[w.userPath()+"/impersonate"]
		harness.MustStatus(t, consolePost(w.admin, w.userPath()+"/impersonate", url.Values{"_token": {tok}}), http.StatusSeeOther)
		page := harness.MustConsolePage(t, w.admin.Get("/account/security"), http.StatusOK)
		if !strings.Contains(page, "You are impersonating") {
			t.Fatalf("the security page while impersonating: %s", page)
		}
		if body := harness.MustConsolePage(t, consoleFormPost(t, w.admin, "/account/security", enable, url.Values{"password": {harness.UserPassword}}), http.StatusForbidden); !strings.Contains(body, "Impersonating") {
			t.Fatalf("an impersonation enrolled a factor: %s", body)
		}
	})
}

// Ensure a user enrols TOTP end to end over HTTP: the password is asked
// (a wrong one names the field), the QR code and the key as text hold the
// same secret, the code computed from it turns two-factor on (audited,
// the session replaced), and the key and backup codes are never shown
// again; new backup codes are shown once, a used backup code proves the
// step-up, and turning it off needs the password.
func TestAccountSecurity_totp_enrolment(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		tess := harness.Email(t, "tess@example.com")
		c, id := harness.MustPlainUser(t, app, "Tess", tess, harness.UserPassword)
		before := c.Cookies["gatehouse.session_token"]

		page := harness.MustConsolePage(t, consoleFormPost(t, c, "/account/security", "/account/security/totp/enable", url.Values{"password": {"not the password"}}), http.StatusBadRequest)
		if !strings.Contains(page, `id="totp-password" name="password" type="password" autocomplete="current-password" required aria-invalid="true"`) || strings.Contains(page, "totp-qr") {
			t.Fatalf("a wrong password: %s", page)
		}
		mustAccountEnrol(t, c, harness.UserPassword)
		// Enrolling again before the first code replaces the key; a wrong
		// code keeps the confirmation, never the key.
		page = harness.MustConsolePage(t, consoleFormPost(t, c, "/account/security", "/account/security/totp/enable", url.Values{"password": {harness.UserPassword}}), http.StatusOK)
		key := accountSecret.FindStringSubmatch(page)[1]
		secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ReplaceAll(key, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		tokens := consoleForm.FindAllStringSubmatch(page, -1)
		confirm := ""
		for _, m := range tokens {
			if html.UnescapeString(m[1]) == "/account/security/totp/confirm" {
				confirm = html.UnescapeString(m[2])
			}
		}
		if confirm == "" {
			t.Fatalf("no confirmation form on the enrolment page: %s", page)
		}
		page = harness.MustConsolePage(t, consolePost(c, "/account/security/totp/confirm", url.Values{"_token": {confirm}, "code": {"000000"}}), http.StatusBadRequest)
		if !strings.Contains(page, `id="totp-code"`) || strings.Contains(page, key) || strings.Contains(page, "totp-qr") {
			t.Fatalf("a wrong code: %s", page)
		}
		r := consolePost(c, "/account/security/totp/confirm", url.Values{"_token": {formTokens(page)["/account/security/totp/confirm"]}, "code": {harness.TOTPAt(app.Clock, secret, 0)}})
		mustAccountDone(t, r, "/account/security", "totp-on")
		mustAuditEntry(t, admin, r, id, "two-factor.enable", "user", id)
		if after := c.Cookies["gatehouse.session_token"]; after == "" || after == before {
			t.Fatal("turning two-factor on did not replace the session cookie")
		}
		page = harness.MustConsolePage(t, c.Get("/account/security?done=totp-on"), http.StatusOK)
		if !strings.Contains(page, "Two-factor authentication is on") || strings.Contains(page, key) || accountCodes.MatchString(page) || strings.Contains(page, "totp-qr") {
			t.Fatalf("after enrolment the page shows: %s", page)
		}
		if u := harness.MustUser(t, harness.MustSession(t, c)); u["twoFactorEnabled"] != true {
			t.Fatalf("two-factor is off after the confirmation: %v", u)
		}

		// New backup codes: shown once, with a copy button.
		r = consoleFormPost(t, c, "/account/security", "/account/security/backup-codes", url.Values{"password": {harness.UserPassword}})
		page = harness.MustConsolePage(t, r, http.StatusOK)
		codes := accountCodes.FindAllStringSubmatch(page, -1)
		if len(codes) != 10 || !strings.Contains(page, `data-copy="backup-codes"`) {
			t.Fatalf("new backup codes: %s", page)
		}
		mustAuditEntry(t, admin, r, id, "two-factor.backup-codes", "user", id)
		if page := harness.MustConsolePage(t, c.Get("/account/security"), http.StatusOK); strings.Contains(page, codes[0][1]) {
			t.Fatal("a backup code was shown twice")
		}

		// Step-up: a session signed in through a trusted browser has proven
		// nothing, so turning the factor off asks for a code; a backup code
		// in the form proves it.
		other := app.NewClient(t)
		harness.MustStatus(t, other.Post("/api/auth/sign-in/email", harness.MustCredentials(t, tess, harness.UserPassword)), http.StatusOK)
		harness.MustOK(t, other.Post("/api/auth/two-factor/verify-totp", harness.MustJSON(t, map[string]any{"code": harness.TOTPAt(app.Clock, secret, 1), "trustDevice": true})))
		trusted := app.NewClient(t)
		trusted.Cookies["gatehouse.trust_device"] = other.Cookies["gatehouse.trust_device"]
		harness.MustStatus(t, trusted.Post("/api/auth/sign-in/email", harness.MustCredentials(t, tess, harness.UserPassword)), http.StatusOK)
		harness.MustSession(t, trusted)
		page = harness.MustConsolePage(t, consoleFormPost(t, trusted, "/account/security", "/account/security/totp/disable", url.Values{"password": {harness.UserPassword}}), http.StatusBadRequest)
		if !strings.Contains(page, `id="disable-code" name="code" autocomplete="one-time-code" inputmode="text" aria-invalid="true"`) {
			t.Fatalf("turning off without a step-up: %s", page)
		}
		page = harness.MustConsolePage(t, consoleFormPost(t, trusted, "/account/security", "/account/security/totp/disable", url.Values{"password": {"wrong"}, "code": {codes[0][1]}}), http.StatusBadRequest)
		if !strings.Contains(page, `id="disable-password" name="password" type="password" autocomplete="current-password" required aria-invalid="true"`) {
			t.Fatalf("turning off with a wrong password: %s", page)
		}
		r = consoleFormPost(t, trusted, "/account/security", "/account/security/totp/disable", url.Values{"password": {harness.UserPassword}, "code": {codes[1][1]}})
		mustAccountDone(t, r, "/account/security", "totp-off")
		mustAuditEntry(t, admin, r, id, "two-factor.disable", "user", id)
		if u := harness.MustUser(t, harness.MustSession(t, trusted)); u["twoFactorEnabled"] != false {
			t.Fatalf("two-factor is on after turning it off: %v", u)
		}
	})
}

// Ensure a user registers a passkey through the security page (the
// options on the page, the authenticator's answer posted in the form),
// sees it listed, renames it and removes it with the confirmation, each
// audited as the framework's routes are; removing the last one needs a
// recent second factor.
func TestAccountSecurity_passkeys(t *testing.T) {
	t.Parallel()
	// A fresh application: no other test shares its settings
	// (TestAccountSecurity_hostile_input registers a provider).
	harness.ForStores(t, harness.StoresOnce, harness.Env(harness.PkEnv, map[string]string{"GATEHOUSE_ADMIN_EMAILS": harness.AdminEmail}), func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		c, id := harness.MustPlainUser(t, app, "Pia", "pia@example.com", harness.UserPassword)
		d := harness.NewDevice()
		page := harness.MustConsolePage(t, consoleFormPost(t, c, "/account/security", "/account/security/passkeys/new", url.Values{"name": {"  "}}), http.StatusBadRequest)
		if !strings.Contains(page, `id="passkey-name" name="name" maxlength="255" required value="  " aria-invalid="true"`) {
			t.Fatalf("an empty name: %s", page)
		}
		page = harness.MustConsolePage(t, consoleFormPost(t, c, "/account/security", "/account/security/passkeys/new", url.Values{"name": {"Laptop"}}), http.StatusOK)
		m := accountOptions.FindStringSubmatch(page)
		if m == nil || !strings.Contains(page, `<script src="/account/assets/passkey.js?v=`) {
			t.Fatalf("no registration on the page: %s", page)
		}
		att := d.Attest(t, &harness.Response{Status: http.StatusOK, Body: []byte(html.UnescapeString(m[1]))})
		tokens := map[string]string{}
		for _, f := range consoleForm.FindAllStringSubmatch(page, -1) {
			tokens[html.UnescapeString(f[1])] = html.UnescapeString(f[2])
		}
		r := consolePost(c, "/account/security/passkeys/verify", url.Values{"_token": {tokens["/account/security/passkeys/verify"]}, "name": {"Laptop"}, "response": {att}})
		mustAccountDone(t, r, "/account/security", "passkey-added")
		cred := d.CredentialID()
		mustAuditEntry(t, admin, r, id, "passkey.register", "passkey", cred)
		page = harness.MustConsolePage(t, c.Get("/account/security"), http.StatusOK)
		if rows := consoleRows(page); !strings.Contains(rows, "Laptop") || !strings.Contains(rows, "never") || !strings.Contains(rows, `value="`+cred+`"`) {
			t.Fatalf("the passkey is not listed: %s", rows)
		}
		// The same answer again: the challenge was used.
		again := formTokens(harness.MustConsolePage(t, consoleFormPost(t, c, "/account/security", "/account/security/passkeys/new", url.Values{"name": {"Again"}}), http.StatusOK))
		page = harness.MustConsolePage(t, consolePost(c, "/account/security/passkeys/verify", url.Values{"_token": {again["/account/security/passkeys/verify"]}, "name": {"Again"}, "response": {att}}), http.StatusBadRequest)
		if !strings.Contains(page, "not accepted") {
			t.Fatalf("a replayed registration: %s", page)
		}

		// Rename: an empty name keeps the input and names the field.
		page = harness.MustConsolePage(t, consoleFormPost(t, c, "/account/security", "/account/security/passkeys/rename", url.Values{"id": {cred}, "name": {""}}), http.StatusBadRequest)
		if !strings.Contains(page, `aria-invalid="true"`) || !strings.Contains(page, "rename-name") {
			t.Fatalf("an empty new name: %s", page)
		}
		r = consoleFormPost(t, c, "/account/security", "/account/security/passkeys/rename", url.Values{"id": {cred}, "name": {"Work laptop"}})
		mustAccountDone(t, r, "/account/security", "passkey-renamed")
		mustAuditEntry(t, admin, r, id, "passkey.rename", "passkey", cred)
		if rows := consoleRows(harness.MustConsolePage(t, c.Get("/account/security"), http.StatusOK)); !strings.Contains(rows, "Work laptop") {
			t.Fatalf("after renaming: %s", rows)
		}
		// Another user's passkey, or none: not found, nothing changes.
		other, _ := harness.MustPlainUser(t, app, "Oz", "oz@example.com", harness.UserPassword)
		mustAccountPasskey(t, other, "Oz's key")
		harness.MustConsolePage(t, consoleFormPost(t, other, "/account/security", "/account/security/passkeys/delete", url.Values{"id": {cred}}), http.StatusNotFound)
		harness.MustConsolePage(t, consoleFormPost(t, other, "/account/security", "/account/security/passkeys/rename", url.Values{"id": {cred}, "name": {"Mine"}}), http.StatusNotFound)

		// The last passkey of a session that proved no second factor since
		// the passkey came: a fresh password sign-in is refused, a passkey
		// sign-in in that session lets it through.
		pw := app.NewClient(t)
		harness.MustSignIn(t, pw, "pia@example.com", harness.UserPassword)
		page = harness.MustConsolePage(t, consoleFormPost(t, pw, "/account/security", "/account/security/passkeys/delete", url.Values{"id": {cred}}), http.StatusForbidden)
		if !strings.Contains(page, "last passkey") {
			t.Fatalf("removing the last passkey without a step-up: %s", page)
		}
		harness.MustOK(t, harness.PasskeySignIn(t, pw, d))
		r = consoleFormPost(t, pw, "/account/security", "/account/security/passkeys/delete", url.Values{"id": {cred}})
		mustAccountDone(t, r, "/account/security", "passkey-removed")
		mustAuditEntry(t, admin, r, id, "passkey.delete", "passkey", cred)
		if rows := consoleRows(harness.MustConsolePage(t, c.Get("/account/security"), http.StatusOK)); !strings.Contains(rows, "No passkey yet.") {
			t.Fatalf("after removing: %s", rows)
		}
	})
}

// Ensure hostile input in the security and linked forms is a 400 page
// naming the field, never a 500, and changes nothing.
func TestAccountSecurity_hostile_input(t *testing.T) {
	t.Parallel()
	// A fresh application: it registers an identity provider, which every
	// user's linked-accounts page offers.
	harness.ForStores(t, harness.StoresThatMatter, harness.Env(harness.PkEnv, map[string]string{"GATEHOUSE_ADMIN_EMAILS": harness.AdminEmail}), func(t *testing.T, app *harness.App) {
		c, _ := harness.MustPlainUser(t, app, "Hal", "hal@example.com", harness.UserPassword)
		mustAccountPasskey(t, c, "Key")
		admin, _ := harness.MustAdmin(t, app)
		fw := &harness.FuWorld{A: app, Admin: admin, Fake: harness.NewFuFake(t, app)}
		fw.Register(t, fw.Fake, map[string]any{"id": "acme", "name": "Acme ID"})
		// The forms that only an earlier form's answer shows.
		enrolment := func() map[string]string {
			return formTokens(harness.MustConsolePage(t, consoleFormPost(t, c, "/account/security", "/account/security/totp/enable", url.Values{"password": {harness.UserPassword}}), http.StatusOK))
		}
		registration := func() map[string]string {
			return formTokens(harness.MustConsolePage(t, consoleFormPost(t, c, "/account/security", "/account/security/passkeys/new", url.Values{"name": {"Key"}}), http.StatusOK))
		}
		page := func(path string) func() map[string]string {
			return func() map[string]string { return formTokens(mustAccountPage(t, c.Get(path), http.StatusOK)) }
		}
		for _, tt := range []struct {
			tokens func() map[string]string
			path   string
			fields url.Values
			status int
			field  string
		}{
			{page("/account/security"), "/account/security/totp/enable", url.Values{"password": {"a\x00b"}}, http.StatusBadRequest, "body.password"},
			{page("/account/security"), "/account/security/totp/enable", url.Values{"password": {"\xff\xfe"}}, http.StatusBadRequest, "body.password"},
			{page("/account/security"), "/account/security/totp/enable", url.Values{"password": {strings.Repeat("p", 5000)}}, http.StatusBadRequest, "totp-password"},
			{enrolment, "/account/security/totp/confirm", url.Values{"code": {strings.Repeat("1", 100)}}, http.StatusBadRequest, "totp-code"},
			{enrolment, "/account/security/totp/confirm", url.Values{"code": {"12\x0034"}}, http.StatusBadRequest, "body.code"},
			{page("/account/security"), "/account/security/passkeys/new", url.Values{"name": {strings.Repeat("n", 300)}}, http.StatusBadRequest, "passkey-name"},
			{page("/account/security"), "/account/security/passkeys/new", url.Values{"name": {"a\x00b"}}, http.StatusBadRequest, "body.name"},
			{registration, "/account/security/passkeys/verify", url.Values{"name": {"x"}, "response": {"{not json"}}, http.StatusBadRequest, "passkey-response"},
			{registration, "/account/security/passkeys/verify", url.Values{"name": {"x"}, "response": {`{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{}}`}}, http.StatusBadRequest, "passkey-response"},
			{registration, "/account/security/passkeys/verify", url.Values{"name": {"x"}, "response": {strings.Repeat("[", 70000)}}, http.StatusBadRequest, "passkey-response"},
			{page("/account/security"), "/account/security/passkeys/rename", url.Values{"id": {"!!!"}, "name": {"x"}}, http.StatusBadRequest, "passkey-id"},
			{page("/account/security"), "/account/security/passkeys/delete", url.Values{"id": {strings.Repeat("A", 2000)}}, http.StatusBadRequest, "passkey-id"},
			{page("/account/security"), "/account/security/passkeys/delete", url.Values{"id": {"AAAA"}, "code": {strings.Repeat("9", 100)}}, http.StatusBadRequest, "delete-code"},
			{page("/account/linked"), "/account/linked/link", url.Values{"provider": {strings.Repeat("p", 100)}}, http.StatusBadRequest, "provider"},
			{page("/account/linked"), "/account/linked/link", url.Values{"provider": {"nope"}}, http.StatusBadRequest, "provider"},
			{page("/account/security"), "/account/security/totp/enable", url.Values{"password": {strings.Repeat("p", 2<<20)}}, http.StatusRequestEntityTooLarge, "larger than"},
		} {
			tok := tt.tokens()[tt.path]
			if tok == "" {
				t.Fatalf("no form for %s", tt.path)
			}
			tt.fields.Set("_token", tok)
			page := mustAccountPage(t, consolePost(c, tt.path, tt.fields), tt.status)
			if !strings.Contains(page, tt.field) {
				t.Fatalf("%s with %.80v: the page does not name %s: %.3000s", tt.path, tt.fields, tt.field, page)
			}
		}
		if u := harness.MustUser(t, harness.MustSession(t, c)); u["twoFactorEnabled"] != false {
			t.Fatalf("hostile input changed two-factor: %v", u)
		}
		if page := mustAccountPage(t, c.Get("/account/linked?error=%3Cscript%3E"), http.StatusOK); strings.Contains(page, "<script>") {
			t.Fatalf("the error code was echoed: %s", page)
		}
		mustAccountPage(t, c.Get("/account/linked?error=a%00b"), http.StatusBadRequest)
	})
}

// Ensure a user links a provider through the linked-accounts page (the
// framework's linking flow, through the provider and back, under a CSP
// whose form-action allows the provider), sees it, unlinks it (audited),
// and that the last way to sign in is never unlinked.
func TestAccountSecurity_linked_accounts(t *testing.T) {
	t.Parallel()
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			// A world of its own: it registers an identity provider.
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "acme", "name": "Acme ID"})
			b := harness.NewFuBrowser(t, w.A)
			harness.MustVerifiedUser(t, w.A, "Lin", "lin@example.com", harness.UserPassword)
			b.SignInWithPassword("lin@example.com", harness.UserPassword)
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "lin-1", Email: "lin@example.com", EmailVerified: true, Name: "Lin"}
			})

			r := b.Do(http.MethodGet, "/account/linked", "")
			csp := r.Header.Get("Content-Security-Policy")
			page := mustAccountPage(t, r, http.StatusOK)
			if !strings.Contains(page, "Link Acme ID") || !strings.Contains(consoleRows(page), "No linked account.") {
				t.Fatalf("the linked page before linking: %s", page)
			}
			if !strings.Contains(csp, "form-action 'self' "+w.Fake.URL+";") {
				t.Fatalf("CSP %q does not let the link form reach the provider %s", csp, w.Fake.URL)
			}
			tokens := map[string]string{}
			for _, m := range consoleForm.FindAllStringSubmatch(page, -1) {
				tokens[html.UnescapeString(m[1])] = html.UnescapeString(m[2])
			}
			r = b.Do(http.MethodPost, "/account/linked/link", url.Values{"_token": {tokens["/account/linked/link"]}, "provider": {"acme"}}.Encode(),
				"Content-Type", "application/x-www-form-urlencoded")
			harness.MustStatus(t, r, http.StatusSeeOther)
			if loc := r.Header.Get("Location"); !strings.HasPrefix(loc, w.Fake.URL+"/authorize?") {
				t.Fatalf("the link form goes to %q", loc)
			}
			cb := w.Authorize(t, b, r.Header.Get("Location"))
			r = b.Do(http.MethodGet, cb, "")
			harness.MustStatus(t, r, http.StatusFound)
			if loc := r.Header.Get("Location"); strings.TrimPrefix(loc, w.A.URL) != "/account/linked?done=linked" {
				t.Fatalf("the callback goes to %q", loc)
			}
			page = mustAccountPage(t, b.Do(http.MethodGet, "/account/linked?done=linked", ""), http.StatusOK)
			rows := consoleRows(page)
			if !strings.Contains(page, "The account is linked") || !strings.Contains(rows, "Acme ID") || !strings.Contains(rows, "lin@example.com") {
				t.Fatalf("the linked page after linking: %s", page)
			}
			accounts, list := b.Accounts()
			if len(accounts) != 2 || accounts[1] != "acme:lin-1" {
				t.Fatalf("list-accounts after linking: %v", accounts)
			}
			linkedID, _ := list[1]["id"].(string)
			// Hostile or unknown accounts: a page naming the field, nothing unlinked.
			for _, tt := range []struct {
				account string
				status  int
				want    string
			}{
				{"a\x00b", http.StatusBadRequest, "body.account"},
				{strings.Repeat("a", 200), http.StatusBadRequest, "Field: <code>account</code>"},
				{"someone-elses", http.StatusNotFound, "no such linked account"},
			} {
				tok := formTokens(mustAccountPage(t, b.Do(http.MethodGet, "/account/linked", ""), http.StatusOK))["/account/linked/unlink"]
				r := b.Do(http.MethodPost, "/account/linked/unlink", url.Values{"_token": {tok}, "account": {tt.account}}.Encode(),
					"Content-Type", "application/x-www-form-urlencoded")
				if page := mustAccountPage(t, r, tt.status); !strings.Contains(page, tt.want) {
					t.Fatalf("unlink %.40q: the page does not say %q: %s", tt.account, tt.want, page)
				}
			}
			page = mustAccountPage(t, b.Do(http.MethodGet, "/account/linked", ""), http.StatusOK)
			tokens = map[string]string{}
			for _, m := range consoleForm.FindAllStringSubmatch(page, -1) {
				tokens[html.UnescapeString(m[1])] = html.UnescapeString(m[2])
			}
			r = b.Do(http.MethodPost, "/account/linked/unlink", url.Values{"_token": {tokens["/account/linked/unlink"]}, "account": {linkedID}}.Encode(),
				"Content-Type", "application/x-www-form-urlencoded")
			mustAccountDone(t, r, "/account/linked", "unlinked")
			mustAuditEntry(t, w.Admin, r, b.Session()["id"].(string), "account.unlink", "linked_account", linkedID)
			if accounts, _ := b.Accounts(); len(accounts) != 1 {
				t.Fatalf("list-accounts after unlinking: %v", accounts)
			}

			// A user whom the provider signed up has no password: their
			// one linked account is the last way in.
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "neo-1", Email: "neo@example.com", EmailVerified: true, Name: "Neo"}
			})
			nb := harness.NewFuBrowser(t, w.A)
			auth := w.Start(t, nb, "/api/auth/sign-in/social", map[string]any{"provider": "acme", "callbackURL": "/account/linked"})
			harness.MustStatus(t, nb.Do(http.MethodGet, w.Authorize(t, nb, auth), ""), http.StatusFound)
			_, list = nb.Accounts()
			if len(list) != 1 {
				t.Fatalf("the provider's new user has accounts %v", list)
			}
			last, _ := list[0]["id"].(string)
			page = mustAccountPage(t, nb.Do(http.MethodGet, "/account/linked", ""), http.StatusOK)
			tokens = map[string]string{}
			for _, m := range consoleForm.FindAllStringSubmatch(page, -1) {
				tokens[html.UnescapeString(m[1])] = html.UnescapeString(m[2])
			}
			r = nb.Do(http.MethodPost, "/account/linked/unlink", url.Values{"_token": {tokens["/account/linked/unlink"]}, "account": {last}}.Encode(),
				"Content-Type", "application/x-www-form-urlencoded")
			if page := mustAccountPage(t, r, http.StatusBadRequest); !strings.Contains(page, "last way to sign in") {
				t.Fatalf("unlinking the last way in: %s", page)
			}
			if _, list := nb.Accounts(); len(list) != 1 {
				t.Fatalf("the last account was unlinked: %v", list)
			}
		})
	}
}

// Ensure registering a passkey from a session older than
// GATEHOUSE_SESSION_FRESH_AGE is refused as the framework refuses it, with
// the name kept and a way to sign in again and come back.
func TestAccountSecurity_passkey_needs_a_fresh_session(t *testing.T) {
	t.Parallel()
	// A fresh application: a setting of its own, and the clock moves by a minute.
	harness.ForStores(t, harness.StoresOnce, harness.Env(harness.PkEnv, map[string]string{"GATEHOUSE_SESSION_FRESH_AGE": "1m"}), func(t *testing.T, app *harness.App) {
		c, _ := harness.MustPlainUser(t, app, "Sam", "sam@example.com", harness.UserPassword)
		tok := mustConsoleTokens(t, c, "/account/security")["/account/security/passkeys/new"]
		app.Clock.Advance(time.Minute + time.Second)
		page := harness.MustConsolePage(t, consolePost(c, "/account/security/passkeys/new", url.Values{"_token": {tok}, "name": {"Old laptop"}}), http.StatusForbidden)
		if !strings.Contains(page, "sign in again") || !strings.Contains(page, `value="Old laptop"`) ||
			!strings.Contains(page, `href="/sign-in?callbackURL=%2Faccount%2Fsecurity%3Fdone%3Dstepped-up"`) || strings.Contains(page, "data-options") {
			t.Fatalf("a stale session's registration: %s", page)
		}
	})
}
