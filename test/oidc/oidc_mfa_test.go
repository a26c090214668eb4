package oidc

import (
	"crypto/rand"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gatehouse/gatehouse/test/harness"
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

func strictAuthOf(t testing.TB, idt *oidc.IDToken) harness.StrictAuthClaims {
	t.Helper()
	var c harness.StrictAuthClaims
	if err := idt.Claims(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// mustAuthClaims fails unless c says amr and acr.
func mustAuthClaims(t testing.TB, what string, c harness.StrictAuthClaims, amr []string, acr string) {
	t.Helper()
	if !slices.Equal(c.AMR, amr) || c.ACR != acr {
		t.Fatalf("%s: amr %v, acr %q; want %v, %q", what, c.AMR, c.ACR, amr, acr)
	}
}

// newStrictFlowWith is NewStrictFlow with more authorization parameters.
func newStrictFlowWith(conf *oauth2.Config, params map[string]string) harness.StrictFlow {
	f := harness.StrictFlow{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier()}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce)}
	for k, v := range params {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	f.AuthURL = conf.AuthCodeURL(f.State, opts...)
	return f
}

// strictFormTo returns the page's form that posts to action.
func strictFormTo(t testing.TB, page *harness.StrictPage, action string) harness.StrictForm {
	t.Helper()
	for _, f := range harness.ParseStrictForms(t, page.Body) {
		if f.Action == action {
			return f
		}
	}
	t.Fatalf("no form posting to %s on %s:\n%s", action, page.URL, page.Body)
	return harness.StrictForm{}
}

// strictMustSecondFactorPage fails unless page is the second-factor page.
func strictMustSecondFactorPage(t testing.TB, b *harness.StrictBrowser, page *harness.StrictPage) {
	t.Helper()
	if page.Status != http.StatusOK || page.URL.Path != "/two-factor" {
		t.Fatalf("ended at %d %s, want the second-factor page (visited %v):\n%s", page.Status, page.URL, b.Seen, page.Body)
	}
	harness.StrictMustHTML(t, page)
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Fatalf("second-factor page CSP = %q, want no script", csp)
	}
}

// strictAnswer posts code with the second-factor page's form to action.
func strictAnswer(t testing.TB, b *harness.StrictBrowser, page *harness.StrictPage, action, code string) *harness.StrictPage {
	t.Helper()
	f := strictFormTo(t, page, action)
	f.Set(t, "code", code)
	return b.Submit(page, f, nil)
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
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := mustStrictWorld(t, app)
		provider, err := oidc.NewProvider(t.Context(), w.Issuer)
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
		conf := w.Public.OauthConfig(provider)
		pwd, mfa := []string{"pwd"}, []string{"pwd", "otp", "mfa"}

		// A password-only user: amr [pwd], acr pwd, in the ID token, the
		// refreshed one and userinfo. The browser keeps this session.
		b := harness.NewStrictBrowser(t, app)
		flow := harness.NewStrictFlow(conf)
		toks := w.ExchangeAndVerify(t, provider, conf, flow, w.Authorize(t, b, w.Public, flow, true, false))
		first := strictAuthOf(t, toks.IDToken)
		mustAuthClaims(t, "password sign-in", first, pwd, acrPwd)
		mustAuthClaims(t, "password sign-in userinfo", w.StrictUserInfoAuth(t, toks.Token), pwd, acrPwd)
		next := w.MustRefresh(t, provider, conf, toks.Token)
		raw, _ := next.Extra("id_token").(string)
		mustAuthClaims(t, "refreshed ID token", strictAuthOf(t, w.MustVerifyIDToken(t, provider, conf.ClientID, raw, "")), pwd, acrPwd)

		secret, backups := w.MustEnableTwoFactor(t)

		// acr_values asks for mfa: the password-only session of the user,
		// who now has a second factor, is stepped up on the second-factor
		// page before the code is issued; a wrong code is refused there.
		b.StopAt = w.Public.RedirectURI
		flow = newStrictFlowWith(conf, map[string]string{"acr_values": "urn:example:unknown " + acrMFA})
		page := b.Get(flow.AuthURL)
		strictMustSecondFactorPage(t, b, page)
		page = strictAnswer(t, b, page, "/api/auth/two-factor/verify-totp", "000000")
		strictMustSecondFactorPage(t, b, page)
		if page.URL.Query().Get("error") != "INVALID_CODE" || !strings.Contains(page.Body, "not right") {
			t.Fatalf("a wrong code answered %s:\n%s", page.URL, page.Body)
		}
		page = strictAnswer(t, b, page, "/api/auth/two-factor/verify-totp", harness.TOTPAt(app.Clock, secret, 0))
		toks = w.ExchangeAndVerify(t, provider, conf, flow, w.StrictCallback(t, b, page, w.Public, flow))
		stepped := strictAuthOf(t, toks.IDToken)
		mustAuthClaims(t, "stepped-up session", stepped, mfa, acrMFA)
		if stepped.AuthTime != first.AuthTime {
			t.Fatalf("step-up moved auth_time from %d to %d; it is the sign-in's", first.AuthTime, stepped.AuthTime)
		}
		mustAuthClaims(t, "stepped-up userinfo", w.StrictUserInfoAuth(t, toks.Token), mfa, acrMFA)

		// The hosted sign-in of the two-factor user ends on the
		// second-factor page; a backup code finishes it.
		b2 := harness.NewStrictBrowser(t, app)
		b2.StopAt = w.Public.RedirectURI
		flow = harness.NewStrictFlow(conf)
		page = w.StrictSignInPage(t, b2, b2.Get(flow.AuthURL))
		strictMustSecondFactorPage(t, b2, page)
		page = strictAnswer(t, b2, page, "/api/auth/two-factor/verify-backup-code", "not-a-backup-code")
		if page.URL.Query().Get("error") != "INVALID_BACKUP_CODE" {
			t.Fatalf("a wrong backup code answered %s", page.URL)
		}
		page = strictAnswer(t, b2, page, "/api/auth/two-factor/verify-backup-code", backups[0])
		toks = w.ExchangeAndVerify(t, provider, conf, flow, w.StrictCallback(t, b2, page, w.Public, flow))
		signedIn := strictAuthOf(t, toks.IDToken)
		mustAuthClaims(t, "two-factor sign-in", signedIn, mfa, acrMFA)

		// max_age=0 and prompt=login: the password again, then the second
		// factor; auth_time moves.
		for i, params := range []map[string]string{{"max_age": "0"}, {"prompt": "login"}} {
			// auth_time counts seconds. Only the server's clock moves, by
			// seconds, as the shared application allows: the tokens it then
			// issues are a second or two ahead of the wall clock, which
			// go-oidc allows (it checks exp, not iat).
			app.Clock.Advance(1100 * time.Millisecond)
			flow = newStrictFlowWith(conf, params)
			page = w.StrictSignInPage(t, b2, b2.Get(flow.AuthURL))
			strictMustSecondFactorPage(t, b2, page)
			page = strictAnswer(t, b2, page, "/api/auth/two-factor/verify-backup-code", backups[1+i])
			toks = w.ExchangeAndVerify(t, provider, conf, flow, w.StrictCallback(t, b2, page, w.Public, flow))
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
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := mustStrictWorld(t, app)
		provider, err := oidc.NewProvider(t.Context(), w.Issuer)
		if err != nil {
			t.Fatalf("discovery: %v", err)
		}
		conf := w.Public.OauthConfig(provider)
		b := harness.NewStrictBrowser(t, app)
		flow := newStrictFlowWith(conf, map[string]string{"acr_values": acrMFA})
		toks := w.ExchangeAndVerify(t, provider, conf, flow, w.Authorize(t, b, w.Public, flow, true, false))
		mustAuthClaims(t, "mfa asked of a password-only user", strictAuthOf(t, toks.IDToken), []string{"pwd"}, acrPwd)

		w.MustEnableTwoFactor(t)
		flow = newStrictFlowWith(conf, map[string]string{"acr_values": acrMFA, "prompt": "none"})
		b.StopAt = w.Public.RedirectURI
		page := b.Get(flow.AuthURL)
		loc, err := page.URL.Parse(page.Header.Get("Location"))
		if err != nil || harness.StrictWithoutQuery(loc) != w.Public.RedirectURI || loc.Query().Get("error") != "interaction_required" {
			t.Fatalf("prompt=none needing a step-up ended at %d %s, Location %q", page.Status, page.URL, page.Header.Get("Location"))
		}

		// Without prompt=none the session steps up on the second-factor
		// page, here with an e-mailed code.
		flow = newStrictFlowWith(conf, map[string]string{"acr_values": acrMFA})
		page = b.Get(flow.AuthURL)
		strictMustSecondFactorPage(t, b, page)
		page = b.Submit(page, strictFormTo(t, page, "/api/auth/two-factor/send-otp"), nil)
		strictMustSecondFactorPage(t, b, page)
		m := app.Mail.WaitFor(t, w.Email, "code", harness.MailWait)
		found := harness.OTPPattern.FindStringSubmatch(m.Text)
		if found == nil {
			t.Fatalf("no code in mail %q: %s", m.Subject, m.Text)
		}
		page = strictAnswer(t, b, page, "/api/auth/two-factor/verify-otp", found[1])
		toks = w.ExchangeAndVerify(t, provider, conf, flow, w.StrictCallback(t, b, page, w.Public, flow))
		mustAuthClaims(t, "stepped up with an e-mailed code", strictAuthOf(t, toks.IDToken), []string{"pwd", "otp", "mfa"}, acrMFA)
	})
}

// Ensure the hosted sign-in of a two-factor user without a callback ends on
// the account page after the second-factor page's e-mailed code, and that
// five wrong codes end the challenge: the page then asks for a new sign-in
// and holds no form.
func TestOIDCMFA_second_factor_page_email_code_and_attempt_cap(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada.pages@example.com"))
		w := &harness.StrictWorld{App: app, Email: u.Email}
		signIn := func(b *harness.StrictBrowser) *harness.StrictPage {
			t.Helper()
			page := b.Get(app.URL + "/sign-in")
			f := harness.StrictSignInForm(t, page)
			f.Set(t, "email", w.Email)
			f.Set(t, "password", harness.TfPassword)
			page = b.Submit(page, f, nil)
			strictMustSecondFactorPage(t, b, page)
			return page
		}

		b := harness.NewStrictBrowser(t, app)
		page := signIn(b)
		if strings.Contains(page.Body, `action="/api/auth/two-factor/verify-otp"`) {
			t.Fatal("the e-mailed code's form is shown before a code was sent")
		}
		page = b.Submit(page, strictFormTo(t, page, "/api/auth/two-factor/send-otp"), nil)
		strictMustSecondFactorPage(t, b, page)
		m := app.Mail.WaitFor(t, u.Email, "sign-in code", harness.MailWait)
		found := harness.OTPPattern.FindStringSubmatch(m.Text)
		if found == nil {
			t.Fatalf("no code in mail %q: %s", m.Subject, m.Text)
		}
		page = strictAnswer(t, b, page, "/api/auth/two-factor/verify-otp", found[1])
		if page.Status != http.StatusOK || page.URL.Path != "/account" || !strings.Contains(page.Body, u.Email) {
			t.Fatalf("the e-mailed code ended at %d %s (visited %v), want the account page", page.Status, page.URL, b.Seen)
		}

		b2 := harness.NewStrictBrowser(t, app)
		page = signIn(b2)
		// A cross-site post of the page's form is refused, as every hosted
		// form's is (the origin check), and counts nothing.
		forged := mustFormRequest(t, app.URL+"/api/auth/two-factor/verify-totp", url.Values{"code": {harness.TOTPAt(app.Clock, u.Secret, 0)}})
		forged.Header.Set("Origin", "https://evil.example.test")
		if r := b2.Send(forged); r.Status != http.StatusForbidden {
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
		if forms := harness.ParseStrictForms(t, page.Body); len(forms) != 0 || !strings.Contains(page.Body, "Sign in again") {
			t.Fatalf("after five wrong codes the page shows %d forms:\n%s", len(forms), page.Body)
		}
		// The right code no longer helps: the challenge is gone.
		r := b2.Send(mustFormRequest(t, app.URL+"/api/auth/two-factor/verify-totp", url.Values{"code": {harness.TOTPAt(app.Clock, u.Secret, 0)}}))
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
