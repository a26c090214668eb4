package test

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// How the user signed in, as relying parties see it (docs/multi-factor.md,
// "Relying parties"): amr and acr in ID tokens verified by go-oidc and in
// userinfo, the hosted second-factor page finishing a two-factor sign-in
// (a plain cookie-jar browser posting the forms the pages render),
// acr_values stepping a password-only session up, and max_age and
// prompt=login asking for the password (and the second factor) again.

// The authentication context classes.
const (
	acrPwd = "urn:gatehouse:acr:pwd"
	acrMFA = "urn:gatehouse:acr:mfa"
	acrPHR = "urn:gatehouse:acr:phr"
)

// strictAuthClaims are the ID token's claims about the sign-in.
type strictAuthClaims struct {
	AMR      []string `json:"amr"`
	ACR      string   `json:"acr"`
	AuthTime int64    `json:"auth_time"`
}

func strictAuthOf(t testing.TB, idt *oidc.IDToken) strictAuthClaims {
	t.Helper()
	var c strictAuthClaims
	if err := idt.Claims(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// mustAuthClaims fails unless c says amr and acr.
func mustAuthClaims(t testing.TB, what string, c strictAuthClaims, amr []string, acr string) {
	t.Helper()
	if !slices.Equal(c.AMR, amr) || c.ACR != acr {
		t.Fatalf("%s: amr %v, acr %q; want %v, %q", what, c.AMR, c.ACR, amr, acr)
	}
}

// newStrictFlowWith is newStrictFlow with more authorization parameters.
func newStrictFlowWith(conf *oauth2.Config, params map[string]string) strictFlow {
	f := strictFlow{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier()}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce)}
	for k, v := range params {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	f.AuthURL = conf.AuthCodeURL(f.State, opts...)
	return f
}

// strictFormTo returns the page's form that posts to action.
func strictFormTo(t testing.TB, page *strictPage, action string) strictForm {
	t.Helper()
	for _, f := range parseStrictForms(t, page.Body) {
		if f.Action == action {
			return f
		}
	}
	t.Fatalf("no form posting to %s on %s:\n%s", action, page.URL, page.Body)
	return strictForm{}
}

// strictMustSecondFactorPage fails unless page is the second-factor page.
func strictMustSecondFactorPage(t testing.TB, b *strictBrowser, page *strictPage) {
	t.Helper()
	if page.Status != http.StatusOK || page.URL.Path != "/two-factor" {
		t.Fatalf("ended at %d %s, want the second-factor page (visited %v):\n%s", page.Status, page.URL, b.seen, page.Body)
	}
	strictMustHTML(t, page)
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Fatalf("second-factor page CSP = %q, want no script", csp)
	}
}

// strictAnswer posts code with the second-factor page's form to action.
func strictAnswer(t testing.TB, b *strictBrowser, page *strictPage, action, code string) *strictPage {
	t.Helper()
	f := strictFormTo(t, page, action)
	f.set(t, "code", code)
	return b.submit(page, f, nil)
}

// strictCallback checks that page redirects to c's redirect URI with a code
// for flow, and returns that URL.
func (w *strictWorld) strictCallback(t testing.TB, b *strictBrowser, page *strictPage, c strictClient, flow strictFlow) *url.URL {
	t.Helper()
	if page.Status < 300 || page.Status > 399 {
		t.Fatalf("authorization ended at %d %s, not a redirect to %s (visited %v):\n%s", page.Status, page.URL, c.RedirectURI, b.seen, page.Body)
	}
	loc, err := page.URL.Parse(page.Header.Get("Location"))
	if err != nil || strictWithoutQuery(loc) != c.RedirectURI {
		t.Fatalf("redirected to %q, want %s", page.Header.Get("Location"), c.RedirectURI)
	}
	if q := loc.Query(); q.Get("error") != "" || q.Get("code") == "" || q.Get("state") != flow.State {
		t.Fatalf("callback %s: want a code and state %s", loc, flow.State)
	}
	return loc
}

// strictSignInPage submits the hosted sign-in form of page.
func (w *strictWorld) strictSignInPage(t testing.TB, b *strictBrowser, page *strictPage) *strictPage {
	t.Helper()
	if page.Status != http.StatusOK || page.URL.Path != "/sign-in" {
		t.Fatalf("ended at %d %s, want the sign-in page (visited %v):\n%s", page.Status, page.URL, b.seen, page.Body)
	}
	f := strictSignInForm(t, page)
	f.set(t, "email", w.email)
	f.set(t, "password", strictPassword)
	return b.submit(page, f, nil)
}

// mustEnableTwoFactor turns two-factor on for the world's user and returns
// the TOTP secret and the backup codes; the enrolment used the previous
// step's code.
func (w *strictWorld) mustEnableTwoFactor(t *testing.T) ([]byte, []string) {
	t.Helper()
	c := w.app.client(t)
	mustSignIn(t, c, w.email, strictPassword)
	en := mustOK(t, c.post("/api/auth/two-factor/enable", mustJSON(t, map[string]any{"password": strictPassword})))
	uri, _ := en["totpURI"].(string)
	secret := totpSecretOf(t, uri)
	var backups []string
	for _, b := range en["backupCodes"].([]any) {
		backups = append(backups, b.(string))
	}
	mustOK(t, c.post("/api/auth/two-factor/verify-totp", mustJSON(t, map[string]any{"code": totpAt(secret, -1)})))
	return secret, backups
}

// strictUserInfoAuth reads amr and acr from userinfo.
func (w *strictWorld) strictUserInfoAuth(t testing.TB, tok *oauth2.Token) strictAuthClaims {
	t.Helper()
	r := w.userinfo(t, tok.AccessToken)
	mustStatus(t, r, http.StatusOK)
	var c strictAuthClaims
	if err := json.Unmarshal([]byte(r.Body), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// Ensure ID tokens (verified by go-oidc), refreshed ID tokens and userinfo
// say how the user signed in, that discovery lists the classes, that the
// hosted second-factor page finishes a two-factor sign-in (a wrong code
// refused, a backup code accepted), that acr_values steps a password-only
// session up before the code is issued, and that max_age=0 and
// prompt=login ask for the password and the second factor again, moving
// auth_time.
func TestOIDCMFA_amr_and_acr_reach_relying_parties(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		w := mustStrictWorld(t, app)
		provider, err := oidc.NewProvider(t.Context(), w.issuer)
		if err != nil {
			t.Fatalf("discovery: %v", err)
		}
		var disc struct {
			ACRValues []string `json:"acr_values_supported"`
			Claims    []string `json:"claims_supported"`
		}
		if err := provider.Claims(&disc); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(disc.ACRValues, []string{acrPwd, acrMFA, acrPHR}) || !slices.Contains(disc.Claims, "amr") || !slices.Contains(disc.Claims, "acr") {
			t.Fatalf("discovery acr_values_supported %v, claims_supported %v", disc.ACRValues, disc.Claims)
		}
		conf := w.public.oauthConfig(provider)
		pwd, mfa := []string{"pwd"}, []string{"pwd", "otp", "mfa"}

		// A password-only user: amr [pwd], acr pwd, in the ID token, the
		// refreshed one and userinfo. The browser keeps this session.
		b := newStrictBrowser(t, app)
		flow := newStrictFlow(conf)
		toks := w.exchangeAndVerify(t, provider, conf, flow, w.authorize(t, b, w.public, flow, true, false))
		first := strictAuthOf(t, toks.IDToken)
		mustAuthClaims(t, "password sign-in", first, pwd, acrPwd)
		mustAuthClaims(t, "password sign-in userinfo", w.strictUserInfoAuth(t, toks.Token), pwd, acrPwd)
		next := w.mustRefresh(t, provider, conf, toks.Token)
		raw, _ := next.Extra("id_token").(string)
		mustAuthClaims(t, "refreshed ID token", strictAuthOf(t, w.mustVerifyIDToken(t, provider, conf.ClientID, raw, "")), pwd, acrPwd)

		secret, backups := w.mustEnableTwoFactor(t)

		// acr_values asks for mfa: the password-only session of the user,
		// who now has a second factor, is stepped up on the second-factor
		// page before the code is issued; a wrong code is refused there.
		b.stopAt = w.public.RedirectURI
		flow = newStrictFlowWith(conf, map[string]string{"acr_values": "urn:example:unknown " + acrMFA})
		page := b.get(flow.AuthURL)
		strictMustSecondFactorPage(t, b, page)
		page = strictAnswer(t, b, page, "/api/auth/two-factor/verify-totp", "000000")
		strictMustSecondFactorPage(t, b, page)
		if page.URL.Query().Get("error") != "INVALID_CODE" || !strings.Contains(page.Body, "not right") {
			t.Fatalf("a wrong code answered %s:\n%s", page.URL, page.Body)
		}
		page = strictAnswer(t, b, page, "/api/auth/two-factor/verify-totp", totpAt(secret, 0))
		toks = w.exchangeAndVerify(t, provider, conf, flow, w.strictCallback(t, b, page, w.public, flow))
		stepped := strictAuthOf(t, toks.IDToken)
		mustAuthClaims(t, "stepped-up session", stepped, mfa, acrMFA)
		if stepped.AuthTime != first.AuthTime {
			t.Fatalf("step-up moved auth_time from %d to %d; it is the sign-in's", first.AuthTime, stepped.AuthTime)
		}
		mustAuthClaims(t, "stepped-up userinfo", w.strictUserInfoAuth(t, toks.Token), mfa, acrMFA)

		// The hosted sign-in of the two-factor user ends on the
		// second-factor page; a backup code finishes it.
		b2 := newStrictBrowser(t, app)
		b2.stopAt = w.public.RedirectURI
		flow = newStrictFlow(conf)
		page = w.strictSignInPage(t, b2, b2.get(flow.AuthURL))
		strictMustSecondFactorPage(t, b2, page)
		page = strictAnswer(t, b2, page, "/api/auth/two-factor/verify-backup-code", "not-a-backup-code")
		if page.URL.Query().Get("error") != "INVALID_BACKUP_CODE" {
			t.Fatalf("a wrong backup code answered %s", page.URL)
		}
		page = strictAnswer(t, b2, page, "/api/auth/two-factor/verify-backup-code", backups[0])
		toks = w.exchangeAndVerify(t, provider, conf, flow, w.strictCallback(t, b2, page, w.public, flow))
		signedIn := strictAuthOf(t, toks.IDToken)
		mustAuthClaims(t, "two-factor sign-in", signedIn, mfa, acrMFA)

		// max_age=0 and prompt=login: the password again, then the second
		// factor; auth_time moves.
		for i, params := range []map[string]string{{"max_age": "0"}, {"prompt": "login"}} {
			time.Sleep(1100 * time.Millisecond) // auth_time counts seconds
			flow = newStrictFlowWith(conf, params)
			page = w.strictSignInPage(t, b2, b2.get(flow.AuthURL))
			strictMustSecondFactorPage(t, b2, page)
			page = strictAnswer(t, b2, page, "/api/auth/two-factor/verify-backup-code", backups[1+i])
			toks = w.exchangeAndVerify(t, provider, conf, flow, w.strictCallback(t, b2, page, w.public, flow))
			again := strictAuthOf(t, toks.IDToken)
			mustAuthClaims(t, "re-authentication", again, mfa, acrMFA)
			if again.AuthTime <= signedIn.AuthTime {
				t.Fatalf("%v: auth_time %d, want later than %d", params, again.AuthTime, signedIn.AuthTime)
			}
			signedIn = again
		}
	})
}

// Ensure acr_values that the user cannot reach (no second factor) still
// issue a code whose ID token says what was met, that prompt=none with a
// step-up needed answers interaction_required, and that without it an
// e-mailed code on the second-factor page steps the session up.
func TestOIDCMFA_acr_values_without_a_second_factor_and_prompt_none(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		w := mustStrictWorld(t, app)
		provider, err := oidc.NewProvider(t.Context(), w.issuer)
		if err != nil {
			t.Fatalf("discovery: %v", err)
		}
		conf := w.public.oauthConfig(provider)
		b := newStrictBrowser(t, app)
		flow := newStrictFlowWith(conf, map[string]string{"acr_values": acrMFA})
		toks := w.exchangeAndVerify(t, provider, conf, flow, w.authorize(t, b, w.public, flow, true, false))
		mustAuthClaims(t, "mfa asked of a password-only user", strictAuthOf(t, toks.IDToken), []string{"pwd"}, acrPwd)

		w.mustEnableTwoFactor(t)
		flow = newStrictFlowWith(conf, map[string]string{"acr_values": acrMFA, "prompt": "none"})
		b.stopAt = w.public.RedirectURI
		page := b.get(flow.AuthURL)
		loc, err := page.URL.Parse(page.Header.Get("Location"))
		if err != nil || strictWithoutQuery(loc) != w.public.RedirectURI || loc.Query().Get("error") != "interaction_required" {
			t.Fatalf("prompt=none needing a step-up ended at %d %s, Location %q", page.Status, page.URL, page.Header.Get("Location"))
		}

		// Without prompt=none the session steps up on the second-factor
		// page, here with an e-mailed code.
		flow = newStrictFlowWith(conf, map[string]string{"acr_values": acrMFA})
		page = b.get(flow.AuthURL)
		strictMustSecondFactorPage(t, b, page)
		page = b.submit(page, strictFormTo(t, page, "/api/auth/two-factor/send-otp"), nil)
		strictMustSecondFactorPage(t, b, page)
		m := app.Mail.WaitFor(t, w.email, "code", mailWait)
		found := otpPattern.FindStringSubmatch(m.Text)
		if found == nil {
			t.Fatalf("no code in mail %q: %s", m.Subject, m.Text)
		}
		page = strictAnswer(t, b, page, "/api/auth/two-factor/verify-otp", found[1])
		toks = w.exchangeAndVerify(t, provider, conf, flow, w.strictCallback(t, b, page, w.public, flow))
		mustAuthClaims(t, "stepped up with an e-mailed code", strictAuthOf(t, toks.IDToken), []string{"pwd", "otp", "mfa"}, acrMFA)
	})
}

// Ensure the hosted sign-in of a two-factor user without a callback ends on
// the account page after the second-factor page's e-mailed code, and that
// five wrong codes end the challenge: the page then asks for a new sign-in
// and holds no form.
func TestOIDCMFA_second_factor_page_email_code_and_attempt_cap(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		u := mustTwoFactorUser(t, app, "ada.pages@example.com")
		w := &strictWorld{app: app, email: u.email}
		signIn := func(b *strictBrowser) *strictPage {
			t.Helper()
			page := b.get(app.URL + "/sign-in")
			f := strictSignInForm(t, page)
			f.set(t, "email", w.email)
			f.set(t, "password", tfPassword)
			page = b.submit(page, f, nil)
			strictMustSecondFactorPage(t, b, page)
			return page
		}

		b := newStrictBrowser(t, app)
		page := signIn(b)
		if strings.Contains(page.Body, `action="/api/auth/two-factor/verify-otp"`) {
			t.Fatal("the e-mailed code's form is shown before a code was sent")
		}
		page = b.submit(page, strictFormTo(t, page, "/api/auth/two-factor/send-otp"), nil)
		strictMustSecondFactorPage(t, b, page)
		m := app.Mail.WaitFor(t, u.email, "sign-in code", mailWait)
		found := otpPattern.FindStringSubmatch(m.Text)
		if found == nil {
			t.Fatalf("no code in mail %q: %s", m.Subject, m.Text)
		}
		page = strictAnswer(t, b, page, "/api/auth/two-factor/verify-otp", found[1])
		if page.Status != http.StatusOK || page.URL.Path != "/account" || !strings.Contains(page.Body, u.email) {
			t.Fatalf("the e-mailed code ended at %d %s (visited %v), want the account page", page.Status, page.URL, b.seen)
		}

		b2 := newStrictBrowser(t, app)
		page = signIn(b2)
		// A cross-site post of the page's form is refused, as every hosted
		// form's is (the origin check), and counts nothing.
		forged := mustFormRequest(t, app.URL+"/api/auth/two-factor/verify-totp", url.Values{"code": {totpAt(u.secret, 0)}})
		forged.Header.Set("Origin", "https://evil.example.test")
		if r := b2.send(forged); r.Status != http.StatusForbidden {
			t.Fatalf("a cross-site post of the second-factor form answered %d %s", r.Status, r.URL)
		}
		for i := range 5 {
			page = strictAnswer(t, b2, page, "/api/auth/two-factor/verify-totp", "000000")
			strictMustSecondFactorPage(t, b2, page)
			want := "INVALID_CODE"
			if i == 4 {
				want = "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE"
			}
			if got := page.URL.Query().Get("error"); got != want {
				t.Fatalf("wrong code %d answered %q, want %q", i+1, got, want)
			}
		}
		if forms := parseStrictForms(t, page.Body); len(forms) != 0 || !strings.Contains(page.Body, "Sign in again") {
			t.Fatalf("after five wrong codes the page shows %d forms:\n%s", len(forms), page.Body)
		}
		// The right code no longer helps: the challenge is gone.
		r := b2.send(mustFormRequest(t, app.URL+"/api/auth/two-factor/verify-totp", url.Values{"code": {totpAt(u.secret, 0)}}))
		if r.URL.Path == "/account" {
			t.Fatal("the right code after five wrong ones opened a session")
		}
	})
}

// mustFormRequest is a form post from the service's own origin.
func mustFormRequest(t testing.TB, target string, form url.Values) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(target)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", u.Scheme+"://"+u.Host)
	return req
}
