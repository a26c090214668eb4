package federation

import (
	"bytes"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gatehouse/gatehouse/test/harness"
	"golang.org/x/oauth2"
)

// errorOf returns the ?error= of a page's URL (after redirects).
func errorOf(page *harness.StrictPage) string { return page.URL.Query().Get("error") }

func TestFederation_sign_in_through_a_second_gatehouse(t *testing.T) {
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFedWorld(t, s, nil)
			harness.MustVerifiedUser(t, w.B, "Uma Upstream", "uma@upstream.example", harness.FedPassword)

			br := harness.NewStrictBrowser(t, w.A)
			page := w.SignInThroughB(t, br, "uma@upstream.example", map[string]any{"callbackURL": "/account", "newUserCallbackURL": "/welcome"})
			if page.URL.Path != "/welcome" || !strings.HasPrefix(page.URL.String(), w.A.URL) {
				t.Fatalf("a new user landed at %s, want A's newUserCallbackURL /welcome (visited %v)", page.URL, br.Seen)
			}
			u := w.SessionAtA(t, br)
			if u == nil || u["email"] != "uma@upstream.example" || u["name"] != "Uma Upstream" || u["emailVerified"] != true {
				t.Fatalf("A's session user = %v, want Uma, verified by B", u)
			}

			// list-accounts: the linked account, no password, no token.
			page = w.APIAtA(t, br, http.MethodGet, "/api/auth/list-accounts", nil)
			var accounts []map[string]any
			harness.MustUnmarshal(t, []byte(page.Body), &accounts)
			if len(accounts) != 1 || accounts[0]["providerId"] != w.Provider || accounts[0]["accountId"] == "" || accounts[0]["id"] == "" {
				t.Fatalf("list-accounts = %s, want the one upstream account", page.Body)
			}
			for _, secret := range []string{"accessToken", "refreshToken", "idToken"} {
				if _, ok := accounts[0][secret]; ok {
					t.Fatalf("list-accounts shows %s: %s", secret, page.Body)
				}
			}
			accountID := accounts[0]["id"].(string)

			// The upstream access token works at B's userinfo.
			page = w.APIAtA(t, br, http.MethodPost, "/api/auth/get-access-token", map[string]any{"accountId": accountID})
			if page.Status != http.StatusOK {
				t.Fatalf("get-access-token: %d %s", page.Status, page.Body)
			}
			var tok struct {
				AccessToken string `json:"accessToken"`
			}
			harness.MustUnmarshal(t, []byte(page.Body), &tok)
			// At rest the upstream tokens are sealed: the row holds neither
			// the access token nor any long stretch of it.
			if w.A.DatabaseURL != "" {
				var sealed []byte
				if err := harness.MustDB(t, w.A).Raw("SELECT sealed_tokens FROM linked_accounts WHERE id = ?", accountID).Row().Scan(&sealed); err != nil {
					t.Fatal(err)
				}
				if len(sealed) == 0 || len(tok.AccessToken) < 16 || bytes.Contains(sealed, []byte(tok.AccessToken[:16])) {
					t.Fatalf("linked_accounts.sealed_tokens (%d bytes) holds the upstream access token in the clear", len(sealed))
				}
			}
			ui := (&harness.Client{T: t, App: w.B, Cookies: map[string]string{}, HTTP: w.B.Client()}).Get("/api/auth/oauth2/userinfo", "Authorization", "Bearer "+tok.AccessToken)
			if ui.Status != http.StatusOK || !strings.Contains(string(ui.Body), "uma@upstream.example") {
				t.Fatalf("B's userinfo with A's upstream token: %d %s", ui.Status, ui.Body)
			}
			page = w.APIAtA(t, br, http.MethodGet, "/api/auth/account-info?accountId="+url.QueryEscape(accountID), nil)
			if page.Status != http.StatusOK || !strings.Contains(page.Body, `"email":"uma@upstream.example"`) || !strings.Contains(page.Body, `"providerId":"upstream"`) {
				t.Fatalf("account-info: %d %s", page.Status, page.Body)
			}
			// refresh-token: new upstream tokens, the refresh token kept inside.
			page = w.APIAtA(t, br, http.MethodPost, "/api/auth/refresh-token", map[string]any{"accountId": accountID})
			if page.Status != http.StatusOK || !strings.Contains(page.Body, `"refreshToken":null`) || !strings.Contains(page.Body, `"accessToken":"`) {
				t.Fatalf("refresh-token: %d %s", page.Status, page.Body)
			}

			// The only way in cannot be unlinked.
			page = w.APIAtA(t, br, http.MethodPost, "/api/auth/unlink-account", map[string]any{"accountId": accountID})
			if page.Status != http.StatusBadRequest || !strings.Contains(page.Body, "FAILED_TO_UNLINK_LAST_ACCOUNT") {
				t.Fatalf("unlinking the last account: %d %s", page.Status, page.Body)
			}

			// A second sign-in finds the same user through (provider, subject):
			// a fresh browser, already signed in at B, lands on callbackURL.
			br2 := harness.NewStrictBrowser(t, w.A)
			br2.Hc.Jar = br.Hc.Jar
			page = w.SignInThroughB(t, br2, "uma@upstream.example", map[string]any{"callbackURL": "/account", "newUserCallbackURL": "/welcome"})
			if page.URL.Path != "/account" {
				t.Fatalf("a returning user landed at %s, want /account", page.URL)
			}
			if again := w.SessionAtA(t, br2); again == nil || again["id"] != u["id"] {
				t.Fatalf("second sign-in is user %v, want the same %v", again, u["id"])
			}

			// The audit log has the link.
			r := w.AdminA.Get("/api/admin/audit-log?action=account.link")
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
	w := harness.MustFedWorld(t, harness.StoreSQLite, map[string]any{"trustedForLinking": true})
	harness.MustVerifiedUser(t, w.B, "Tess Totp", "tess@upstream.example", harness.FedPassword)
	local, localID := harness.MustVerifiedUser(t, w.A, "Tess Totp", "tess@upstream.example", harness.FedPassword)
	secret := harness.MustEnrolTOTP(t, local, harness.FedPassword)

	br := harness.NewStrictBrowser(t, w.A)
	page := w.SignInThroughB(t, br, "tess@upstream.example", map[string]any{"callbackURL": "/account"})
	if page.URL.Path != "/two-factor" || page.URL.Query().Get("callbackURL") != "/account" {
		t.Fatalf("a two-factor user landed at %s, want the second-factor page (visited %v)", page.URL, br.Seen)
	}
	if w.SessionAtA(t, br) != nil {
		t.Fatal("a session exists before the second factor")
	}
	r := w.APIAtA(t, br, http.MethodPost, "/api/auth/two-factor/verify-totp", map[string]any{"code": harness.TOTPAt(w.A.Clock, secret, 0)})
	if r.Status != http.StatusOK {
		t.Fatalf("verify-totp after the provider: %d %s", r.Status, r.Body)
	}
	u := w.SessionAtA(t, br)
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
	w := harness.MustFedWorld(t, harness.StoreSQLite, nil)
	harness.MustVerifiedUser(t, w.B, "Bea Broker", "bea@upstream.example", harness.FedPassword)
	rp := harness.MustRegisterStrictClient(t, w.AdminA, "Broker RP", "public", true, harness.StrictPublicRedirect)
	provider, err := oidc.NewProvider(t.Context(), w.A.URL+"/api/auth")
	if err != nil {
		t.Fatal(err)
	}
	conf := rp.OauthConfig(provider)
	flow := harness.NewStrictFlow(conf)

	br := harness.NewStrictBrowser(t, w.A)
	page := br.Get(flow.AuthURL)
	if page.URL.Path != "/sign-in" {
		t.Fatalf("authorize ended at %s, want A's sign-in page", page.URL)
	}
	var button *harness.StrictForm
	for _, f := range harness.ParseStrictForms(t, page.Body) {
		if strings.HasSuffix(f.Action, "/api/auth/sign-in/social") {
			button = &f
		}
	}
	if button == nil {
		t.Fatalf("no provider button on the sign-in page:\n%s", page.Body)
	}
	// The button goes to B, which sends the browser back to A's callback.
	br.StopAt = w.A.URL + "/api/auth/callback/" + w.Provider
	page = br.Submit(page, *button, nil)
	if page.Status == http.StatusOK && page.URL.Path == "/sign-in" && strings.HasPrefix(page.URL.String(), w.B.URL) {
		f := harness.StrictSignInForm(t, page)
		f.Set(t, "email", "bea@upstream.example")
		f.Set(t, "password", harness.FedPassword)
		page = br.Submit(page, f, nil)
	}
	loc, err := page.URL.Parse(page.Header.Get("Location"))
	if err != nil || harness.StrictWithoutQuery(loc) != br.StopAt {
		t.Fatalf("B sent the browser to %q (visited %v)", page.Header.Get("Location"), br.Seen)
	}
	// A's callback continues the application's authorization.
	br.StopAt = rp.RedirectURI
	page = br.Get(loc.String())
	cb, err := page.URL.Parse(page.Header.Get("Location"))
	if err != nil || harness.StrictWithoutQuery(cb) != rp.RedirectURI || cb.Query().Get("code") == "" || cb.Query().Get("state") != flow.State {
		t.Fatalf("the authorization ended at %q (visited %v)", page.Header.Get("Location"), br.Seen)
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
	for _, s := range []harness.Store{harness.StoreSQLite, harness.StorePostgres} {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFedWorld(t, s, nil)
			harness.MustVerifiedUser(t, w.B, "Rae Race", "rae@upstream.example", harness.FedPassword)
			first := harness.NewStrictBrowser(t, w.A)
			const n = 6
			browsers := make([]*harness.StrictBrowser, n)
			callbacks := make([]*url.URL, n)
			for i := range browsers {
				b := harness.NewStrictBrowser(t, w.A)
				b.Hc.Jar = first.Hc.Jar // one person, signed in at B once
				if i > 0 {
					jar, _ := cookiejar.New(nil)
					for _, u := range []string{w.B.URL} {
						pu, _ := url.Parse(u)
						jar.SetCookies(pu, first.Hc.Jar.Cookies(pu))
					}
					b.Hc.Jar = jar // B's session, A's state cookie of its own
				}
				browsers[i] = b
				callbacks[i] = w.AuthorizeAtB(t, b, w.Start(t, b, "/api/auth/sign-in/social", map[string]any{"provider": w.Provider, "callbackURL": "/account"}), "rae@upstream.example")
			}
			var wg sync.WaitGroup
			pages := make([]*harness.StrictPage, n)
			for i := range browsers {
				wg.Go(func() { pages[i] = browsers[i].Get(callbacks[i].String()) })
			}
			wg.Wait()
			ids := map[any]bool{}
			for i, page := range pages {
				if page.URL.Path != "/account" {
					t.Fatalf("racing sign-in %d ended at %s", i, page.URL)
				}
				u := w.SessionAtA(t, browsers[i])
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
