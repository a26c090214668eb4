package oidc

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// The OpenID Connect provider, driven as a browser (Client: cookies, no
// redirects followed) and as relying parties (plain form posts), on every
// store. The strict third-party clients are in oidc_clients_test.go.

const (
	opSPARedirect = "https://spa.example.com/callback"
	opWebRedirect = "https://web.example.com/cb"
	opWebLogout   = "https://web.example.com/bye"
	opVerifier    = "pkce-verifier-0123456789-0123456789-0123456789-xyz"
	opPassword    = "correct horse battery staple"
)

// opWorld is a running Gatehouse with a public first-party client (spa)
// and a confidential third-party client (web), and a signed-in user.
type opWorld struct {
	app       *harness.App
	spa       string
	web       string
	webSecret string
	user      *harness.Client
	userID    string
}

func opForEachStore(t *testing.T, fn func(t *testing.T, w *opWorld)) {
	t.Helper()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		w := &opWorld{app: app}
		spa := opCreated(t, admin.Post("/api/admin/oauth-clients", harness.MustJSON(t, map[string]any{
			"name": "SPA", "type": "public", "firstParty": true, "redirectUris": []string{opSPARedirect}})))
		web := opCreated(t, admin.Post("/api/admin/oauth-clients", harness.MustJSON(t, map[string]any{
			"name": "Web", "type": "confidential", "redirectUris": []string{opWebRedirect}, "postLogoutRedirectUris": []string{opWebLogout}})))
		w.spa, _ = spa["clientId"].(string)
		w.web, _ = web["clientId"].(string)
		w.webSecret, _ = web["clientSecret"].(string)
		if w.spa == "" || w.web == "" || w.webSecret == "" || spa["clientSecret"] != nil {
			t.Fatalf("registered clients: %v %v", spa, web)
		}
		w.user = app.NewClient(t)
		w.userID = harness.MustID(t, harness.MustSignUp(t, w.user, "Ada", harness.Email(t, "ada@example.com"), opPassword)["user"])
		fn(t, w)
	})
}

func opCreated(t testing.TB, r *harness.Response) map[string]any {
	t.Helper()
	harness.MustStatus(t, r, http.StatusCreated)
	return r.JSON(t)
}

func opChallenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// spaAuthorize is an authorization request of the public client.
func (w *opWorld) spaAuthorize(edit ...func(url.Values)) string {
	q := url.Values{"response_type": {"code"}, "client_id": {w.spa}, "redirect_uri": {opSPARedirect},
		"scope": {"openid profile email offline_access"}, "state": {"st-1"}, "nonce": {"no-1"},
		"code_challenge": {opChallenge(opVerifier)}, "code_challenge_method": {"S256"}}
	for _, e := range edit {
		e(q)
	}
	return "/api/auth/oauth2/authorize?" + q.Encode()
}

// opLocation fails unless r redirects to a URL starting with prefix, and
// returns its query.
func opLocation(t testing.TB, r *harness.Response, status int, prefix string) url.Values {
	t.Helper()
	harness.MustStatus(t, r, status)
	loc := r.Header.Get("Location")
	if !strings.HasPrefix(loc, prefix) {
		t.Fatalf("Location = %q, want prefix %q", loc, prefix)
	}
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// mustAuthCode follows an authorization request of c and returns the code.
func (w *opWorld) mustAuthCode(t testing.TB, c *harness.Client, path, redirect string) string {
	t.Helper()
	q := opLocation(t, c.Get(path), http.StatusFound, redirect+"?")
	if q.Get("code") == "" || q.Get("iss") != w.app.Cfg.HTTP.BaseURL+"/api/auth" {
		t.Fatalf("authorization response = %v", q)
	}
	return q.Get("code")
}

// form posts a form to path as a relying party (no cookies, no Origin),
// with Basic credentials when user is not empty, and header pairs.
func (w *opWorld) form(t testing.TB, path string, f url.Values, user, pass string, headers ...string) *harness.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, w.app.URL+path, strings.NewReader(f.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user != "" {
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return harness.OpSend(t, req)
}

// userinfo calls userinfo with a bearer token.
func (w *opWorld) userinfo(t testing.TB, token string) *harness.Response {
	t.Helper()
	return harness.UserinfoAt(t, w.app.URL, token)
}

// spaExchange redeems a code of the public client.
func (w *opWorld) spaExchange(t testing.TB, code, verifier string) *harness.Response {
	t.Helper()
	return w.form(t, "/api/auth/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {w.spa}, "code": {code},
		"redirect_uri": {opSPARedirect}, "code_verifier": {verifier}}, "", "")
}

// opTokens is a token response.
type opTokens struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	Scope        string `json:"scope"`
	IDToken      string `json:"id_token"`
	RefreshToken string `json:"refresh_token"`
}

func opMustTokens(t testing.TB, r *harness.Response) opTokens {
	t.Helper()
	harness.MustStatus(t, r, http.StatusOK)
	if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Pragma") != "no-cache" {
		t.Fatalf("token response headers: %v", r.Header)
	}
	var tk opTokens
	harness.MustUnmarshal(t, r.Body, &tk)
	if tk.AccessToken == "" || tk.TokenType != "Bearer" || tk.ExpiresIn <= 0 {
		t.Fatalf("token response: %s", r.Body)
	}
	return tk
}

// opMustError fails unless r is an RFC 6749 error with status and code.
func opMustError(t testing.TB, r *harness.Response, status int, code string) {
	t.Helper()
	harness.MustStatus(t, r, status)
	var body struct {
		Error string `json:"error"`
	}
	harness.MustUnmarshal(t, r.Body, &body)
	if body.Error != code {
		t.Fatalf("error = %q, want %q; body %s", body.Error, code, r.Body)
	}
}

// opClaims decodes a JWT's payload without verifying it (the strict clients
// verify; here the provider's own answers are under test).
func opClaims(t testing.TB, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %q", jwt)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	harness.MustUnmarshal(t, b, &m)
	return m
}

// Ensure a public first-party client signs a user in with PKCE, from no
// session through the hosted sign-in redirect, and rotates its refresh
// token with reuse detection.
func TestOAuthProvider_public_client_code_flow(t *testing.T) {
	opForEachStore(t, func(t *testing.T, w *opWorld) {
		browser := w.app.NewClient(t)
		signIn := opLocation(t, browser.Get(w.spaAuthorize()), http.StatusFound, w.app.Cfg.HTTP.BaseURL+"/sign-in?callbackURL=")
		callback := signIn.Get("callbackURL")
		if !strings.HasPrefix(callback, "/api/auth/oauth2/authorize?") {
			t.Fatalf("callbackURL = %q", callback)
		}
		r := browser.Post("/api/auth/sign-in/email", harness.MustJSON(t, map[string]any{"email": harness.Email(t, "ada@example.com"), "password": opPassword, "callbackURL": callback}))
		harness.MustStatus(t, r, http.StatusOK)
		code := w.mustAuthCode(t, browser, callback, opSPARedirect) // first-party: no consent page

		first := opMustTokens(t, w.spaExchange(t, code, opVerifier))
		id := opClaims(t, first.IDToken)
		if id["iss"] != w.app.Cfg.HTTP.BaseURL+"/api/auth" || id["aud"] != w.spa || id["sub"] != w.userID || id["nonce"] != "no-1" || id["email"] != harness.Email(t, "ada@example.com") {
			t.Fatalf("ID token claims: %v", id)
		}
		at := opClaims(t, first.AccessToken)
		if at["client_id"] != w.spa || at["aud"] != w.app.Cfg.Issuer() || at["gid"] == nil || at["jti"] == nil {
			t.Fatalf("access token claims: %v", at)
		}
		info := harness.MustOK(t, w.userinfo(t, first.AccessToken))
		if info["sub"] != w.userID || info["email"] != harness.Email(t, "ada@example.com") || info["name"] != "Ada" || info["email_verified"] == nil {
			t.Fatalf("userinfo: %v", info)
		}

		refresh := func(token string) *harness.Response {
			return w.form(t, "/api/auth/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {w.spa}, "refresh_token": {token}}, "", "")
		}
		second := opMustTokens(t, refresh(first.RefreshToken))
		if second.RefreshToken == "" || second.RefreshToken == first.RefreshToken || opClaims(t, second.IDToken)["nonce"] != nil {
			t.Fatalf("rotated: %+v", second)
		}
		third := opMustTokens(t, refresh(second.RefreshToken))
		opMustError(t, refresh(first.RefreshToken), http.StatusBadRequest, "invalid_grant") // reuse …
		opMustError(t, refresh(third.RefreshToken), http.StatusBadRequest, "invalid_grant") // … revoked the family
		harness.MustStatus(t, w.userinfo(t, third.AccessToken), http.StatusUnauthorized)

		// Revocation by the client, then the token is dead for userinfo and introspection.
		fresh := opMustTokens(t, w.spaExchange(t, w.mustAuthCode(t, browser, w.spaAuthorize(), opSPARedirect), opVerifier))
		harness.MustOK(t, w.userinfo(t, fresh.AccessToken))
		harness.MustStatus(t, w.form(t, "/api/auth/oauth2/revoke", url.Values{"client_id": {w.spa}, "token": {fresh.RefreshToken}}, "", ""), http.StatusOK)
		r = w.userinfo(t, fresh.AccessToken)
		harness.MustStatus(t, r, http.StatusUnauthorized)
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), `Bearer error="invalid_token"`) {
			t.Fatalf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
		}
		in := harness.MustOK(t, w.form(t, "/api/auth/oauth2/introspect", url.Values{"token": {fresh.AccessToken}}, w.web, w.webSecret))
		if in["active"] != false || len(in) != 1 {
			t.Fatalf("introspection of a revoked token: %v", in)
		}
		// Revoking an unknown token is fine too (RFC 7009 §2.2).
		harness.MustStatus(t, w.form(t, "/api/auth/oauth2/revoke", url.Values{"client_id": {w.spa}, "token": {"nope"}}, "", ""), http.StatusOK)
	})
}

// Ensure a confidential third-party client goes through consent,
// authenticates with its secret, introspects, uses client credentials, and
// ends the session with an ID token hint.
func TestOAuthProvider_confidential_client_consent_and_logout(t *testing.T) {
	opForEachStore(t, func(t *testing.T, w *opWorld) {
		q := url.Values{"response_type": {"code"}, "client_id": {w.web}, "redirect_uri": {opWebRedirect}, "scope": {"openid email"}, "state": {"w-1"},
			"code_challenge": {opChallenge(opVerifier)}, "code_challenge_method": {"S256"}}
		// PKCE is required of confidential clients too.
		noPKCE := url.Values{"response_type": {"code"}, "client_id": {w.web}, "redirect_uri": {opWebRedirect}, "scope": {"openid email"}, "state": {"w-0"}}
		if got := opLocation(t, w.user.Get("/api/auth/oauth2/authorize?"+noPKCE.Encode()), http.StatusFound, opWebRedirect+"?"); got.Get("error") != "invalid_request" {
			t.Fatalf("confidential client without PKCE: %v", got)
		}
		consent := opLocation(t, w.user.Get("/api/auth/oauth2/authorize?"+q.Encode()), http.StatusFound, w.app.Cfg.HTTP.BaseURL+"/consent?")
		if consent.Get("client_id") != w.web {
			t.Fatalf("consent page query: %v", consent)
		}
		// Without a session the answer is 401.
		harness.MustCode(t, w.app.NewClient(t).Post("/api/auth/oauth2/consent", harness.MustJSON(t, map[string]any{"accept": true, "oauth_query": consent.Encode()})),
			http.StatusUnauthorized, "UNAUTHORIZED")
		r := w.user.Post("/api/auth/oauth2/consent", harness.MustJSON(t, map[string]any{"accept": true, "oauth_query": consent.Encode()}))
		body := harness.MustOK(t, r)
		loc := r.Header.Get("Location")
		if body["redirect"] != true || body["url"] != loc || !strings.HasPrefix(loc, opWebRedirect+"?code=") {
			t.Fatalf("consent answer: %v, Location %q", body, loc)
		}
		u, _ := url.Parse(loc)
		if u.Query().Get("state") != "w-1" {
			t.Fatalf("state lost: %s", loc)
		}
		// The hosted page's form post is answered 303; a refusal reaches the client as access_denied.
		denied := opLocation(t, w.user.Post("/api/auth/oauth2/consent", url.Values{"accept": {"false"}, "oauth_query": {consent.Encode()}}.Encode(),
			"Content-Type", "application/x-www-form-urlencoded"), http.StatusSeeOther, opWebRedirect+"?")
		if denied.Get("error") != "access_denied" || denied.Get("state") != "w-1" {
			t.Fatalf("denied consent: %v", denied)
		}
		exchange := func(code string, user, pass string, extra url.Values) *harness.Response {
			f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {opWebRedirect}, "code_verifier": {opVerifier}}
			for k, v := range extra {
				f[k] = v
			}
			return w.form(t, "/api/auth/oauth2/token", f, user, pass)
		}
		tk := opMustTokens(t, exchange(u.Query().Get("code"), w.web, w.webSecret, nil))
		if tk.RefreshToken != "" || tk.Scope != "openid email" {
			t.Fatalf("opTokens: %+v", tk)
		}
		// Consent is remembered; client_secret_post works too; a wrong secret is 401 with Basic.
		code := w.mustAuthCode(t, w.user, "/api/auth/oauth2/authorize?"+q.Encode(), opWebRedirect)
		r = exchange(code, w.web, "wrong", nil)
		opMustError(t, r, http.StatusUnauthorized, "invalid_client")
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic") {
			t.Fatalf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
		}
		code = w.mustAuthCode(t, w.user, "/api/auth/oauth2/authorize?"+q.Encode(), opWebRedirect)
		tk = opMustTokens(t, exchange(code, "", "", url.Values{"client_id": {w.web}, "client_secret": {w.webSecret}}))

		in := harness.MustOK(t, w.form(t, "/api/auth/oauth2/introspect", url.Values{"token": {tk.AccessToken}}, w.web, w.webSecret))
		if in["active"] != true || in["sub"] != w.userID || in["client_id"] != w.web || in["username"] != harness.Email(t, "ada@example.com") || in["scope"] != "openid email" {
			t.Fatalf("introspection: %v", in)
		}
		opMustError(t, w.form(t, "/api/auth/oauth2/introspect", url.Values{"client_id": {w.spa}, "token": {tk.AccessToken}}, "", ""),
			http.StatusUnauthorized, "invalid_client")

		cc := opMustTokens(t, w.form(t, "/api/auth/oauth2/token", url.Values{"grant_type": {"client_credentials"}}, w.web, w.webSecret))
		if c := opClaims(t, cc.AccessToken); c["sub"] != w.web || cc.IDToken != "" || cc.RefreshToken != "" {
			t.Fatalf("client credentials: %v %+v", c, cc)
		}
		harness.MustStatus(t, w.userinfo(t, cc.AccessToken), http.StatusForbidden)
		opMustError(t, w.form(t, "/api/auth/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {w.spa}}, "", ""),
			http.StatusBadRequest, "unauthorized_client")
		opMustError(t, w.form(t, "/api/auth/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "scope": {"openid"}}, w.web, w.webSecret),
			http.StatusBadRequest, "invalid_scope")

		// End-session: an unregistered post-logout URI is a page, never followed.
		r = w.user.Get("/api/auth/oauth2/end-session?" + url.Values{"id_token_hint": {tk.IDToken}, "post_logout_redirect_uri": {opWebLogout + "/x"}}.Encode())
		harness.MustStatus(t, r, http.StatusBadRequest)
		if r.Header.Get("Location") != "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("refusal: %v", r.Header)
		}
		harness.MustSession(t, w.user)
		r = w.user.Get("/api/auth/oauth2/end-session?" + url.Values{"id_token_hint": {tk.IDToken}, "post_logout_redirect_uri": {opWebLogout}, "state": {"bye-1"}}.Encode())
		if got := opLocation(t, r, http.StatusFound, opWebLogout+"?"); got.Get("state") != "bye-1" {
			t.Fatalf("post-logout redirect: %v", got)
		}
		harness.MustNoSession(t, w.user)
	})
}

// Ensure the provider refuses what it must: code reuse (revoking the first
// exchange's tokens), inexact redirect URIs, missing or plain PKCE, wrong
// verifiers, ID tokens and unsigned tokens at userinfo, and prompt=none
// without a session; and that the token endpoint answers any origin.
func TestOAuthProvider_refusals(t *testing.T) {
	opForEachStore(t, func(t *testing.T, w *opWorld) {
		code := w.mustAuthCode(t, w.user, w.spaAuthorize(), opSPARedirect)
		first := opMustTokens(t, w.spaExchange(t, code, opVerifier))
		harness.MustOK(t, w.userinfo(t, first.AccessToken))
		opMustError(t, w.spaExchange(t, code, opVerifier), http.StatusBadRequest, "invalid_grant")
		harness.MustStatus(t, w.userinfo(t, first.AccessToken), http.StatusUnauthorized)

		r := w.user.Get(w.spaAuthorize(func(q url.Values) { q.Set("redirect_uri", opSPARedirect+"s") }))
		harness.MustStatus(t, r, http.StatusBadRequest)
		if r.Header.Get("Location") != "" || !strings.Contains(string(r.Body), "<html") ||
			!strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Fatalf("off-by-one redirect_uri: %d %v", r.Status, r.Header)
		}
		harness.MustStatus(t, w.user.Get(w.spaAuthorize(func(q url.Values) { q.Set("client_id", "unknown") })), http.StatusBadRequest)

		for name, edit := range map[string]func(url.Values){
			"missing_pkce": func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") },
			"plain_pkce": func(q url.Values) {
				q.Set("code_challenge", opChallenge(opVerifier))
				q.Set("code_challenge_method", "plain")
			},
		} {
			q := opLocation(t, w.user.Get(w.spaAuthorize(edit)), http.StatusFound, opSPARedirect+"?")
			if q.Get("error") != "invalid_request" || q.Get("state") != "st-1" || q.Get("iss") != w.app.Cfg.HTTP.BaseURL+"/api/auth" {
				t.Fatalf("%s: %v", name, q)
			}
		}
		code = w.mustAuthCode(t, w.user, w.spaAuthorize(), opSPARedirect)
		opMustError(t, w.spaExchange(t, code, strings.Repeat("x", 43)), http.StatusBadRequest, "invalid_grant")

		tk := opMustTokens(t, w.spaExchange(t, w.mustAuthCode(t, w.user, w.spaAuthorize(), opSPARedirect), opVerifier))
		harness.MustStatus(t, w.userinfo(t, tk.IDToken), http.StatusUnauthorized) // typ JWT, aud the client
		parts := strings.Split(tk.AccessToken, ".")
		none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"at+jwt"}`)) + "." + parts[1] + "."
		harness.MustStatus(t, w.userinfo(t, none), http.StatusUnauthorized)

		q := opLocation(t, w.app.NewClient(t).Get(w.spaAuthorize(func(q url.Values) { q.Set("prompt", "none") })), http.StatusFound, opSPARedirect+"?")
		if q.Get("error") != "login_required" {
			t.Fatalf("prompt=none: %v", q)
		}

		// CORS: any origin, no credentials, preflight answered.
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodOptions, w.app.URL+"/api/auth/oauth2/token", nil)
		req.Header.Set("Origin", "https://elsewhere.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		pre := harness.OpSend(t, req)
		if pre.Status != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "*" || pre.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("preflight: %d %v", pre.Status, pre.Header)
		}
		r = w.form(t, "/api/auth/oauth2/token", url.Values{"grant_type": {"password"}, "client_id": {w.spa}}, "", "", "Origin", "https://elsewhere.example")
		opMustError(t, r, http.StatusBadRequest, "unsupported_grant_type")
		if r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("token endpoint CORS: %v", r.Header)
		}
		var e map[string]any
		if err := json.Unmarshal(r.Body, &e); err != nil || e["message"] != nil {
			t.Fatalf("not an RFC 6749 error body: %s", r.Body)
		}
	})
}

// Ensure a signed-in user lists the clients they consented to and revokes
// one (ASVS V10.4.9): its access token fails at userinfo, its refresh token
// is invalid_grant, and the next authorization asks for consent again.
func TestOAuthProvider_user_revokes_consent(t *testing.T) {
	opForEachStore(t, func(t *testing.T, w *opWorld) {
		q := url.Values{"response_type": {"code"}, "client_id": {w.web}, "redirect_uri": {opWebRedirect}, "scope": {"openid email offline_access"},
			"state": {"c-1"}, "code_challenge": {opChallenge(opVerifier)}, "code_challenge_method": {"S256"}}
		authorize := "/api/auth/oauth2/authorize?" + q.Encode()
		consent := opLocation(t, w.user.Get(authorize), http.StatusFound, w.app.Cfg.HTTP.BaseURL+"/consent?")
		harness.MustOK(t, w.user.Post("/api/auth/oauth2/consent", harness.MustJSON(t, map[string]any{"accept": true, "oauth_query": consent.Encode()})))
		code := w.mustAuthCode(t, w.user, authorize, opWebRedirect)
		tk := opMustTokens(t, w.form(t, "/api/auth/oauth2/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {opWebRedirect}, "code_verifier": {opVerifier}}, w.web, w.webSecret))
		if tk.RefreshToken == "" {
			t.Fatalf("no refresh token: %+v", tk)
		}
		harness.MustStatus(t, w.userinfo(t, tk.AccessToken), http.StatusOK)

		r := w.user.Get("/api/auth/oauth2/get-consents")
		harness.MustStatus(t, r, http.StatusOK)
		var list []map[string]any
		harness.MustUnmarshal(t, r.Body, &list)
		if len(list) != 1 || list[0]["clientId"] != w.web || list[0]["clientName"] != "Web" || list[0]["createdAt"] == nil || list[0]["updatedAt"] == nil {
			t.Fatalf("get-consents: %s", r.Body)
		}
		if scopes, _ := list[0]["scopes"].([]any); len(scopes) != 3 || scopes[0] != "openid" || scopes[2] != "offline_access" {
			t.Fatalf("scopes: %s", r.Body)
		}

		// Without a session: 401; an unknown client: 404.
		anon := w.app.NewClient(t)
		harness.MustCode(t, anon.Get("/api/auth/oauth2/get-consents"), http.StatusUnauthorized, "UNAUTHORIZED")
		harness.MustCode(t, anon.Post("/api/auth/oauth2/delete-consent", harness.MustJSON(t, map[string]any{"clientId": w.web})), http.StatusUnauthorized, "UNAUTHORIZED")
		harness.MustCode(t, w.user.Post("/api/auth/oauth2/delete-consent", harness.MustJSON(t, map[string]any{"clientId": "gh_ci_nobody"})),
			http.StatusNotFound, "CONSENT_NOT_FOUND")
		// Cookie-authenticated: a foreign origin is refused.
		harness.MustCode(t, w.user.Post("/api/auth/oauth2/delete-consent", harness.MustJSON(t, map[string]any{"clientId": w.web}), "Origin", "https://evil.example"),
			http.StatusForbidden, "INVALID_ORIGIN")
		harness.MustStatus(t, w.userinfo(t, tk.AccessToken), http.StatusOK)

		if body := harness.MustOK(t, w.user.Post("/api/auth/oauth2/delete-consent", harness.MustJSON(t, map[string]any{"clientId": w.web}))); body["status"] != true {
			t.Fatalf("delete-consent: %v", body)
		}
		harness.MustStatus(t, w.userinfo(t, tk.AccessToken), http.StatusUnauthorized)
		opMustError(t, w.form(t, "/api/auth/oauth2/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tk.RefreshToken}}, w.web, w.webSecret),
			http.StatusBadRequest, "invalid_grant")
		opLocation(t, w.user.Get(authorize), http.StatusFound, w.app.Cfg.HTTP.BaseURL+"/consent?")
		r = w.user.Get("/api/auth/oauth2/get-consents")
		harness.MustStatus(t, r, http.StatusOK)
		if strings.TrimSpace(string(r.Body)) != "[]" {
			t.Fatalf("get-consents after revocation: %s", r.Body)
		}
		harness.MustCode(t, w.user.Post("/api/auth/oauth2/delete-consent", harness.MustJSON(t, map[string]any{"clientId": w.web})),
			http.StatusNotFound, "CONSENT_NOT_FOUND")
	})
}
