package test

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Federation: Gatehouse A signs users in through Gatehouse B, a second
// Gatehouse serving as the upstream OpenID provider, with B's hosted
// sign-in page in between, as a browser would walk it. A is the service
// under test; B is a real OpenID provider nobody configured for A's sake
// beyond registering A as its client.

// fedPassword is the password of the users at the upstream.
const fedPassword = "upstream passphrase 7 stars"

// fedWorld is A, B, A's client at B, and A's provider for B.
type fedWorld struct {
	a, b     *fwApp
	adminA   *fwClient
	provider string
	client   strictClient
}

// mustFedWorld starts A on s and B on memory, registers A at B as a
// first-party confidential client, and registers B at A as provider
// "upstream" with the given fields (trustedForLinking and the like). B's
// cookies have another prefix: both apps live on 127.0.0.1, where a
// browser keeps one cookie jar for every port.
func mustFedWorld(t *testing.T, s store, fields map[string]any) *fedWorld {
	t.Helper()
	w := mustFedWorldOn(t, s, adminEnv, "upstream")
	w.register(t, fields)
	return w
}

// mustFedWorldOn is mustFedWorld with A's environment and the provider's
// id, without registering the provider at A yet (register does).
func mustFedWorldOn(t *testing.T, s store, env map[string]string, provider string) *fedWorld {
	t.Helper()
	w := &fedWorld{provider: provider}
	w.a = mustStartFramework(t, s, env)
	w.b = mustStartFramework(t, storeMemory, fwEnv(adminEnv, map[string]string{"GATEHOUSE_COOKIE_PREFIX": "upstream"}))
	adminB, _ := mustAdmin(t, w.b)
	w.client = mustRegisterStrictClient(t, adminB, "Gatehouse A", "confidential", true, w.a.URL+"/api/auth/callback/"+w.provider)
	w.adminA, _ = mustAdmin(t, w.a)
	return w
}

// register registers B at A as the world's provider, with fields added.
func (w *fedWorld) register(t *testing.T, fields map[string]any) {
	t.Helper()
	body := map[string]any{"id": w.provider, "preset": "oidc", "name": "Upstream", "issuer": w.b.URL + "/api/auth",
		"clientId": w.client.ID, "clientSecret": w.client.Secret, "scopes": []string{"openid", "email", "profile", "offline_access"}}
	for k, v := range fields {
		body[k] = v
	}
	r := w.adminA.post("/api/admin/identity-providers", mustJSON(t, body))
	mustStatus(t, r, http.StatusCreated)
	if strings.Contains(string(r.Body), w.client.Secret) {
		t.Fatalf("the provider's answer shows its client secret: %s", r.Body)
	}
}

// start posts sign-in/social (or link-social with a session) at A from
// browser br and returns the provider's authorization URL.
func (w *fedWorld) start(t testing.TB, br *strictBrowser, path string, body map[string]any) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, w.a.URL+path, strings.NewReader(mustJSON(t, body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", w.a.URL)
	br.stopAt = "-" // do not follow the Location header
	page := br.send(req)
	br.stopAt = ""
	if page.Status != http.StatusOK {
		t.Fatalf("%s: %d %s", path, page.Status, page.Body)
	}
	var out struct {
		URL      string `json:"url"`
		Redirect bool   `json:"redirect"`
	}
	if err := json.Unmarshal([]byte(page.Body), &out); err != nil || out.URL == "" || !out.Redirect {
		t.Fatalf("%s answered %s, want {url, redirect:true}", path, page.Body)
	}
	if page.Header.Get("Location") != out.URL {
		t.Fatalf("Location = %q, want the url %q", page.Header.Get("Location"), out.URL)
	}
	return out.URL
}

// authorizeAtB follows the authorization URL in br: B's sign-in page when
// br has no session there (signing in as email), then back to A's
// callback. It stops before the callback and returns its URL.
func (w *fedWorld) authorizeAtB(t testing.TB, br *strictBrowser, authURL, email string) *url.URL {
	t.Helper()
	callback := w.a.URL + "/api/auth/callback/" + w.provider
	br.stopAt = callback
	page := br.get(authURL)
	if page.Status == http.StatusOK && page.URL.Path == "/sign-in" {
		f := strictSignInForm(t, page)
		f.set(t, "email", email)
		f.set(t, "password", fedPassword)
		page = br.submit(page, f, nil)
	}
	if page.Status != http.StatusFound && page.Status != http.StatusSeeOther {
		t.Fatalf("authorization at B ended at %d %s (visited %v):\n%s", page.Status, page.URL, br.seen, page.Body)
	}
	loc, err := page.URL.Parse(page.Header.Get("Location"))
	if err != nil || strictWithoutQuery(loc) != callback {
		t.Fatalf("B redirected to %q, want A's callback %s", page.Header.Get("Location"), callback)
	}
	return loc
}

// finish follows the callback in br and returns the first answer that is
// not a redirect within A, with the URL it came from.
func (w *fedWorld) finish(t testing.TB, br *strictBrowser, callback *url.URL) *strictPage {
	t.Helper()
	br.stopAt = ""
	return br.get(callback.String())
}

// signInThroughB runs a whole sign-in at A through B and returns the
// page the browser lands on.
func (w *fedWorld) signInThroughB(t testing.TB, br *strictBrowser, email string, body map[string]any) *strictPage {
	t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	body["provider"] = w.provider
	return w.finish(t, br, w.authorizeAtB(t, br, w.start(t, br, "/api/auth/sign-in/social", body), email))
}

// sessionAtA returns the user of br's session at A, or nil.
func (w *fedWorld) sessionAtA(t testing.TB, br *strictBrowser) map[string]any {
	t.Helper()
	page := br.get(w.a.URL + "/api/auth/get-session")
	if page.Status != http.StatusOK {
		t.Fatalf("get-session: %d %s", page.Status, page.Body)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(page.Body), &s); err != nil {
		t.Fatalf("get-session: %v: %s", err, page.Body)
	}
	if s == nil {
		return nil
	}
	return mustObject(t, s["user"])
}

// apiAtA calls A's framework with br's cookies (JSON body, A's Origin).
func (w *fedWorld) apiAtA(t testing.TB, br *strictBrowser, method, path string, body any) *strictPage {
	t.Helper()
	var rd *strings.Reader
	if body != nil {
		rd = strings.NewReader(mustJSON(t, body))
	} else {
		rd = strings.NewReader("")
	}
	req, err := http.NewRequestWithContext(t.Context(), method, w.a.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Origin", w.a.URL)
	br.stopAt = "-"
	defer func() { br.stopAt = "" }()
	return br.send(req)
}

// errorOf returns the ?error= of a page's URL (after redirects).
func errorOf(page *strictPage) string { return page.URL.Query().Get("error") }

func TestFederation_sign_in_through_a_second_gatehouse(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFedWorld(t, s, nil)
			mustVerifiedUser(t, w.b, "Uma Upstream", "uma@upstream.example", fedPassword)

			br := newStrictBrowser(t, w.a)
			page := w.signInThroughB(t, br, "uma@upstream.example", map[string]any{"callbackURL": "/account", "newUserCallbackURL": "/welcome"})
			if page.URL.Path != "/welcome" || !strings.HasPrefix(page.URL.String(), w.a.URL) {
				t.Fatalf("a new user landed at %s, want A's newUserCallbackURL /welcome (visited %v)", page.URL, br.seen)
			}
			u := w.sessionAtA(t, br)
			if u == nil || u["email"] != "uma@upstream.example" || u["name"] != "Uma Upstream" || u["emailVerified"] != true {
				t.Fatalf("A's session user = %v, want Uma, verified by B", u)
			}

			// list-accounts: the linked account, no password, no token.
			page = w.apiAtA(t, br, http.MethodGet, "/api/auth/list-accounts", nil)
			var accounts []map[string]any
			mustUnmarshal(t, []byte(page.Body), &accounts)
			if len(accounts) != 1 || accounts[0]["providerId"] != w.provider || accounts[0]["accountId"] == "" || accounts[0]["id"] == "" {
				t.Fatalf("list-accounts = %s, want the one upstream account", page.Body)
			}
			for _, secret := range []string{"accessToken", "refreshToken", "idToken"} {
				if _, ok := accounts[0][secret]; ok {
					t.Fatalf("list-accounts shows %s: %s", secret, page.Body)
				}
			}
			accountID := accounts[0]["id"].(string)

			// The upstream access token works at B's userinfo.
			page = w.apiAtA(t, br, http.MethodPost, "/api/auth/get-access-token", map[string]any{"accountId": accountID})
			if page.Status != http.StatusOK {
				t.Fatalf("get-access-token: %d %s", page.Status, page.Body)
			}
			var tok struct {
				AccessToken string `json:"accessToken"`
			}
			mustUnmarshal(t, []byte(page.Body), &tok)
			ui := (&fwClient{t: t, app: w.b, Cookies: map[string]string{}, http: w.b.Client()}).get("/api/auth/oauth2/userinfo", "Authorization", "Bearer "+tok.AccessToken)
			if ui.Status != http.StatusOK || !strings.Contains(string(ui.Body), "uma@upstream.example") {
				t.Fatalf("B's userinfo with A's upstream token: %d %s", ui.Status, ui.Body)
			}
			page = w.apiAtA(t, br, http.MethodGet, "/api/auth/account-info?accountId="+url.QueryEscape(accountID), nil)
			if page.Status != http.StatusOK || !strings.Contains(page.Body, `"email":"uma@upstream.example"`) || !strings.Contains(page.Body, `"providerId":"upstream"`) {
				t.Fatalf("account-info: %d %s", page.Status, page.Body)
			}
			// refresh-token: new upstream tokens, the refresh token kept inside.
			page = w.apiAtA(t, br, http.MethodPost, "/api/auth/refresh-token", map[string]any{"accountId": accountID})
			if page.Status != http.StatusOK || !strings.Contains(page.Body, `"refreshToken":null`) || !strings.Contains(page.Body, `"accessToken":"`) {
				t.Fatalf("refresh-token: %d %s", page.Status, page.Body)
			}

			// The only way in cannot be unlinked.
			page = w.apiAtA(t, br, http.MethodPost, "/api/auth/unlink-account", map[string]any{"accountId": accountID})
			if page.Status != http.StatusBadRequest || !strings.Contains(page.Body, "FAILED_TO_UNLINK_LAST_ACCOUNT") {
				t.Fatalf("unlinking the last account: %d %s", page.Status, page.Body)
			}

			// A second sign-in finds the same user through (provider, subject):
			// a fresh browser, already signed in at B, lands on callbackURL.
			br2 := newStrictBrowser(t, w.a)
			br2.hc.Jar = br.hc.Jar
			page = w.signInThroughB(t, br2, "uma@upstream.example", map[string]any{"callbackURL": "/account", "newUserCallbackURL": "/welcome"})
			if page.URL.Path != "/account" {
				t.Fatalf("a returning user landed at %s, want /account", page.URL)
			}
			if again := w.sessionAtA(t, br2); again == nil || again["id"] != u["id"] {
				t.Fatalf("second sign-in is user %v, want the same %v", again, u["id"])
			}

			// The audit log has the link.
			r := w.adminA.get("/api/admin/audit-log?action=account.link")
			if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"account.link"`) {
				t.Fatalf("audit of the link: %d %s", r.Status, r.Body)
			}
		})
	}
}

// Ensure a user with a second factor who signs in through a provider that
// asserted none is sent to the hosted second-factor page without a session
// (Better Auth asks for nothing), and that the code answered there starts
// the session. The upstream identity joins the existing user because the
// provider is trusted for linking and both sides verified the address.
func TestFederation_second_factor_after_the_provider(t *testing.T) {
	t.Parallel()
	w := mustFedWorld(t, storeSQLite, map[string]any{"trustedForLinking": true})
	mustVerifiedUser(t, w.b, "Tess Totp", "tess@upstream.example", fedPassword)
	local, localID := mustVerifiedUser(t, w.a, "Tess Totp", "tess@upstream.example", fedPassword)
	secret := mustEnrolTOTP(t, local, fedPassword)

	br := newStrictBrowser(t, w.a)
	page := w.signInThroughB(t, br, "tess@upstream.example", map[string]any{"callbackURL": "/account"})
	if page.URL.Path != "/two-factor" || page.URL.Query().Get("callbackURL") != "/account" {
		t.Fatalf("a two-factor user landed at %s, want the second-factor page (visited %v)", page.URL, br.seen)
	}
	if w.sessionAtA(t, br) != nil {
		t.Fatal("a session exists before the second factor")
	}
	r := w.apiAtA(t, br, http.MethodPost, "/api/auth/two-factor/verify-totp", map[string]any{"code": totpAt(secret, 0)})
	if r.Status != http.StatusOK {
		t.Fatalf("verify-totp after the provider: %d %s", r.Status, r.Body)
	}
	u := w.sessionAtA(t, br)
	if u == nil || u["id"] != localID {
		t.Fatalf("session after the code = %v, want the local user %s", u, localID)
	}
}

// Ensure Gatehouse brokers: an OpenID Connect application of A (go-oidc and
// x/oauth2, strict clients nobody here wrote) signs a user in whom A signs
// in through B, by the hosted sign-in page's "Continue with" button, and
// gets an ID token of A for that user, whose amr carries B's methods.
func TestFederation_broker_for_an_oidc_client(t *testing.T) {
	t.Parallel()
	w := mustFedWorld(t, storeSQLite, nil)
	mustVerifiedUser(t, w.b, "Bea Broker", "bea@upstream.example", fedPassword)
	rp := mustRegisterStrictClient(t, w.adminA, "Broker RP", "public", true, strictPublicRedirect)
	provider, err := oidc.NewProvider(t.Context(), w.a.URL+"/api/auth")
	if err != nil {
		t.Fatal(err)
	}
	conf := rp.oauthConfig(provider)
	flow := newStrictFlow(conf)

	br := newStrictBrowser(t, w.a)
	page := br.get(flow.AuthURL)
	if page.URL.Path != "/sign-in" {
		t.Fatalf("authorize ended at %s, want A's sign-in page", page.URL)
	}
	var button *strictForm
	for _, f := range parseStrictForms(t, page.Body) {
		if strings.HasSuffix(f.Action, "/api/auth/sign-in/social") {
			button = &f
		}
	}
	if button == nil {
		t.Fatalf("no provider button on the sign-in page:\n%s", page.Body)
	}
	// The button goes to B, which sends the browser back to A's callback.
	br.stopAt = w.a.URL + "/api/auth/callback/" + w.provider
	page = br.submit(page, *button, nil)
	if page.Status == http.StatusOK && page.URL.Path == "/sign-in" && strings.HasPrefix(page.URL.String(), w.b.URL) {
		f := strictSignInForm(t, page)
		f.set(t, "email", "bea@upstream.example")
		f.set(t, "password", fedPassword)
		page = br.submit(page, f, nil)
	}
	loc, err := page.URL.Parse(page.Header.Get("Location"))
	if err != nil || strictWithoutQuery(loc) != br.stopAt {
		t.Fatalf("B sent the browser to %q (visited %v)", page.Header.Get("Location"), br.seen)
	}
	// A's callback continues the application's authorization.
	br.stopAt = rp.RedirectURI
	page = br.get(loc.String())
	cb, err := page.URL.Parse(page.Header.Get("Location"))
	if err != nil || strictWithoutQuery(cb) != rp.RedirectURI || cb.Query().Get("code") == "" || cb.Query().Get("state") != flow.State {
		t.Fatalf("the authorization ended at %q (visited %v)", page.Header.Get("Location"), br.seen)
	}
	tok, err := conf.Exchange(t.Context(), cb.Query().Get("code"), oauth2.VerifierOption(flow.Verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := provider.Verifier(&oidc.Config{ClientID: rp.ID}).Verify(t.Context(), raw)
	if err != nil || idt.Nonce != flow.Nonce {
		t.Fatalf("A's ID token: %v (nonce %q)", err, idt.Nonce)
	}
	var claims struct {
		Email string   `json:"email"`
		AMR   []string `json:"amr"`
	}
	if err := idt.Claims(&claims); err != nil || claims.Email != "bea@upstream.example" || !slices.Contains(claims.AMR, "pwd") {
		t.Fatalf("A's ID token claims = %+v, %v; want Bea with B's amr (pwd)", claims, err)
	}
}

// Ensure first sign-ins of one new upstream identity that race (two tabs, a
// double click) all sign in the same single user: the user and their
// account are created whole, and the losers find the winner's account.
func TestFederation_racing_first_sign_ins_make_one_user(t *testing.T) {
	t.Parallel()
	for _, s := range []store{storeSQLite, storePostgres} {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFedWorld(t, s, nil)
			mustVerifiedUser(t, w.b, "Rae Race", "rae@upstream.example", fedPassword)
			first := newStrictBrowser(t, w.a)
			const n = 6
			browsers := make([]*strictBrowser, n)
			callbacks := make([]*url.URL, n)
			for i := range browsers {
				b := newStrictBrowser(t, w.a)
				b.hc.Jar = first.hc.Jar // one person, signed in at B once
				if i > 0 {
					jar, _ := cookiejar.New(nil)
					for _, u := range []string{w.b.URL} {
						pu, _ := url.Parse(u)
						jar.SetCookies(pu, first.hc.Jar.Cookies(pu))
					}
					b.hc.Jar = jar // B's session, A's state cookie of its own
				}
				browsers[i] = b
				callbacks[i] = w.authorizeAtB(t, b, w.start(t, b, "/api/auth/sign-in/social", map[string]any{"provider": w.provider, "callbackURL": "/account"}), "rae@upstream.example")
			}
			var wg sync.WaitGroup
			pages := make([]*strictPage, n)
			for i := range browsers {
				wg.Go(func() { pages[i] = browsers[i].get(callbacks[i].String()) })
			}
			wg.Wait()
			ids := map[any]bool{}
			for i, page := range pages {
				if page.URL.Path != "/account" {
					t.Fatalf("racing sign-in %d ended at %s", i, page.URL)
				}
				u := w.sessionAtA(t, browsers[i])
				if u == nil {
					t.Fatalf("racing sign-in %d has no session", i)
				}
				ids[u["id"]] = true
			}
			if len(ids) != 1 {
				t.Fatalf("racing first sign-ins made %d users, want 1", len(ids))
			}
		})
	}
}
