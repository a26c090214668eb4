package oidc

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/harness"
)

// mustStrictWorld registers the two clients as the platform administrator
// and creates a verified user.
func mustStrictWorld(t *testing.T, app *harness.App) *harness.StrictWorld {
	t.Helper()
	admin, _ := harness.MustAdmin(t, app)
	w := &harness.StrictWorld{App: app, Issuer: app.URL + "/api/auth", Email: harness.Email(t, "olive.oidc@example.com")}
	w.Public = harness.MustRegisterStrictClient(t, admin, "Strict SPA", "public", true, harness.StrictPublicRedirect)
	w.Confidential = harness.MustRegisterStrictClient(t, admin, "Strict Web App", "confidential", false, harness.StrictConfidentialRedirect)
	_, w.UserID = harness.MustVerifiedUser(t, app, "Olive Oidc", w.Email, harness.StrictPassword)
	return w
}

// strictRefreshFails fails unless refreshing with tok's refresh token is
// refused with invalid_grant.
func strictRefreshFails(t testing.TB, conf *oauth2.Config, tok *oauth2.Token) {
	t.Helper()
	_, err := conf.TokenSource(t.Context(), &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Hour)}).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("refresh after revocation: err = %v, want invalid_grant", err)
	}
}

// Ensure go-oidc and x/oauth2 complete the authorization code flow with
// PKCE against Gatehouse on every store: discovery from the issuer, the
// hosted sign-in page (and, for a third-party client, the consent page)
// walked by a cookie-jar browser, the code exchange, ID token verification
// (signature by a discovered key, iss, aud, exp, nonce, at_hash, email),
// userinfo, refresh with rotation, and revocation after which userinfo and
// refresh fail.
func TestOIDCClients_go_oidc_completes_the_code_flow(t *testing.T) {
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := mustStrictWorld(t, app)
		provider, err := oidc.NewProvider(t.Context(), w.Issuer)
		if err != nil {
			t.Fatalf("discovery from %s: %v", w.Issuer, err)
		}
		if provider.Endpoint().AuthURL != w.Issuer+"/oauth2/authorize" || provider.Endpoint().TokenURL != w.Issuer+"/oauth2/token" ||
			provider.UserInfoEndpoint() != w.Issuer+"/oauth2/userinfo" {
			t.Fatalf("discovered endpoints %+v, userinfo %s", provider.Endpoint(), provider.UserInfoEndpoint())
		}

		t.Run("public first-party client", func(t *testing.T) {
			conf := w.Public.OauthConfig(provider)
			b := harness.NewStrictBrowser(t, app)
			flow := harness.NewStrictFlow(conf)
			cb := w.Authorize(t, b, w.Public, flow, true, false)
			toks := w.ExchangeAndVerify(t, provider, conf, flow, cb)
			w.MustUserInfo(t, provider, toks.Token)
			next := w.MustRefresh(t, provider, conf, toks.Token)
			w.MustUserInfo(t, provider, next)

			// The browser keeps its session: a second authorization signs in
			// without the page.
			flow2 := harness.NewStrictFlow(conf)
			cb2 := w.Authorize(t, b, w.Public, flow2, false, false)
			toks2 := w.ExchangeAndVerify(t, provider, conf, flow2, cb2)

			w.Revoke(t, w.Public, next.RefreshToken, "refresh_token")
			if _, err := provider.UserInfo(t.Context(), oauth2.StaticTokenSource(next)); err == nil {
				t.Fatal("userinfo accepted an access token of a revoked grant")
			}
			strictRefreshFails(t, conf, next)
			// The other grant lives on.
			w.MustUserInfo(t, provider, toks2.Token)
		})

		t.Run("confidential third-party client", func(t *testing.T) {
			conf := w.Confidential.OauthConfig(provider)
			b := harness.NewStrictBrowser(t, app)
			flow := harness.NewStrictFlow(conf)
			cb := w.Authorize(t, b, w.Confidential, flow, true, true)
			toks := w.ExchangeAndVerify(t, provider, conf, flow, cb)
			w.MustUserInfo(t, provider, toks.Token)
			if got := w.Introspect(t, w.Confidential, toks.Token.AccessToken); got["active"] != true || got["client_id"] != w.Confidential.ID {
				t.Fatalf("introspection of a live access token = %v", got)
			}
			next := w.MustRefresh(t, provider, conf, toks.Token)
			w.MustUserInfo(t, provider, next)

			// Consent is remembered: the next authorization skips the page.
			flow2 := harness.NewStrictFlow(conf)
			cb2 := w.Authorize(t, b, w.Confidential, flow2, false, false)
			w.ExchangeAndVerify(t, provider, conf, flow2, cb2)

			// Revoking the access token (RFC 7009) ends its use at userinfo;
			// revoking the refresh token ends the grant.
			w.Revoke(t, w.Confidential, next.AccessToken, "access_token")
			if _, err := provider.UserInfo(t.Context(), oauth2.StaticTokenSource(next)); err == nil {
				t.Fatal("userinfo accepted a revoked access token")
			}
			w.Revoke(t, w.Confidential, next.RefreshToken, "refresh_token")
			strictRefreshFails(t, conf, next)
			if got := w.Introspect(t, w.Confidential, next.AccessToken); got["active"] != false {
				t.Fatalf("introspection of a revoked access token = %v", got)
			}
		})
	})
}

// Ensure strict clients refuse an issuer that differs from the provider's by
// a trailing slash (OpenID Connect Discovery §4.3): go-oidc's discovery fails.
func TestOIDCClients_go_oidc_refuses_an_issuer_with_a_trailing_slash(t *testing.T) {
	app := harness.MustStart(t, harness.StoreMemory, harness.AdminEnv)
	issuer := app.URL + "/api/auth"
	if _, err := oidc.NewProvider(t.Context(), issuer); err != nil {
		t.Fatalf("control: discovery from %s: %v", issuer, err)
	}
	_, err := oidc.NewProvider(t.Context(), issuer+"/")
	if err == nil || !strings.Contains(err.Error(), "did not match") {
		t.Fatalf("discovery from %s/: err = %v, want the issuer mismatch", issuer, err)
	}
}

// Ensure a redirect_uri that differs from the registered one by one
// character is refused with an error page: no redirect, no code, even for
// a signed-in user (RFC 6749 §4.1.2.1, exact matching).
func TestOIDCClients_redirect_uri_one_character_off_is_refused(t *testing.T) {
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := mustStrictWorld(t, app)
		provider, err := oidc.NewProvider(t.Context(), w.Issuer)
		if err != nil {
			t.Fatal(err)
		}
		conf := w.Confidential.OauthConfig(provider)
		b := harness.NewStrictBrowser(t, app)
		flow := harness.NewStrictFlow(conf)
		w.Authorize(t, b, w.Confidential, flow, true, true) // control: signed in, consent stored

		for _, bad := range []string{
			"https://rp.example.test/callback/",     // an extra slash
			"https://rp.example.test/callbacK",      // a changed letter
			"https://rp.example.test:8443/callback", // another port
			"https://rp.example.test/callback?x=1",  // an added query
			"http://rp.example.test/callback",       // another scheme
			"https://rp.example.test/callback#",     // an empty fragment
			"https://rp.example.test.evil/callback", // another host
			"https://rp.example.test/callback%2F",   // an encoded slash
			"https://rp.example.test//callback",     // a doubled slash
			"https://RP.example.test/callback",      // another case
			"https://rp.example.test/./callback",    // a dot segment
			"https://rp.example.test/callback?",     // an empty query
			"https://rp.example.test/callback ",     // a trailing space
			"https://user@rp.example.test/callback", // user info
		} {
			c := *conf
			c.RedirectURL = bad
			f := harness.NewStrictFlow(&c)
			b.StopAt = ""
			hc := *b.Hc
			hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.AuthURL, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := hc.Do(req)
			if err != nil {
				t.Fatalf("%q: %v", bad, err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
				t.Errorf("redirect_uri %q: %d Location %q, want a 400 error page without a redirect", bad, res.StatusCode, res.Header.Get("Location"))
				continue
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Errorf("redirect_uri %q: Content-Type %q, want an HTML error page", bad, ct)
			}
			if strings.Contains(strings.ToLower(string(body)), "http-equiv=\"refresh\"") {
				t.Errorf("redirect_uri %q: the error page leads to the client:\n%s", bad, body)
			}
		}
	})
}

// --- Forged and misused tokens -------------------------------------------

// strictJWTPart encodes a JWT header or claims object.
func strictJWTPart(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// strictJWTParts decodes a JWT's claims without verifying it.
func strictJWTParts(t testing.TB, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("%q is not a compact JWS", token)
	}
	for i, dst := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("JWT part %d: %v", i, err)
		}
		harness.MustUnmarshal(t, b, dst)
	}
	return header, claims
}

// strictSignJWT signs claims with key (a *rsa.PrivateKey, crypto.Signer, or
// []byte for HMAC) as alg, with the headers kid and typ.
func strictSignJWT(t testing.TB, alg jose.SignatureAlgorithm, key any, kid, typ string, claims map[string]any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// strictWithClaims returns a copy of claims with changes applied (nil deletes).
func strictWithClaims(claims map[string]any, changes map[string]any) map[string]any {
	out := maps.Clone(claims)
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// Ensure the service's own verification (userinfo and introspection) refuses
// tokens a strict resource server must refuse: alg "none", a token signed by
// a key that is not the service's (an unknown kid, or the service's kid with
// another key), an HMAC token keyed with the service's public key, and an ID
// token presented as an access token. Tokens with valid signatures but bad
// claims are in TestOIDCClients_service_refuses_bad_claims_signed_by_its_key.
func TestOIDCClients_service_refuses_forged_tokens(t *testing.T) {
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := mustStrictWorld(t, app)
		_, toks := w.StrictLiveTokens(t)
		access := toks.Token.AccessToken
		w.MustTokenAccepted(t, "the issued access token", access)

		header, claims := strictJWTParts(t, access)
		if header["typ"] != "at+jwt" || header["alg"] != "RS256" {
			t.Fatalf("access token header %v, want alg RS256, typ at+jwt (RFC 9068)", header)
		}
		kid, _ := header["kid"].(string)
		payload := strictJWTPart(t, claims)

		noneHeaders := []map[string]any{
			{"alg": "none", "typ": "at+jwt"},
			{"alg": "none", "typ": "at+jwt", "kid": kid},
			{"alg": "None", "typ": "at+jwt", "kid": kid},
		}
		for _, h := range noneHeaders {
			w.MustTokenRefused(t, "alg "+h["alg"].(string), strictJWTPart(t, h)+"."+payload+".")
		}
		// The real signature under a header naming alg none.
		sig := access[strings.LastIndex(access, ".")+1:]
		w.MustTokenRefused(t, "alg none with the real signature", strictJWTPart(t, noneHeaders[1])+"."+payload+"."+sig)

		stranger, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		w.MustTokenRefused(t, "an unknown kid", strictSignJWT(t, jose.RS256, stranger, rand.Text(), "at+jwt", claims))
		w.MustTokenRefused(t, "no kid", strictSignJWT(t, jose.RS256, stranger, "", "at+jwt", claims))
		w.MustTokenRefused(t, "the service's kid, another key", strictSignJWT(t, jose.RS256, stranger, kid, "at+jwt", claims))

		// HS256 keyed with the published key's JSON (algorithm confusion).
		var jwks struct{ Keys []json.RawMessage }
		harness.MustUnmarshal(t, strictGetBody(t, app, "/api/auth/jwks"), &jwks)
		for _, k := range jwks.Keys {
			w.MustTokenRefused(t, "HS256 keyed with a published key", strictSignJWT(t, jose.HS256, []byte(k), kid, "at+jwt", claims))
		}

		// A tampered payload under the real signature.
		tampered := strictWithClaims(claims, map[string]any{"scope": "openid profile email offline_access admin"})
		w.MustTokenRefused(t, "a tampered payload", access[:strings.Index(access, ".")]+"."+strictJWTPart(t, tampered)+"."+sig)

		// The ID token is not an access token: typ JWT, aud the client.
		w.MustTokenRefused(t, "the ID token as an access token", toks.RawID)

		// Control: the untouched access token is still good.
		w.MustTokenAccepted(t, "the issued access token after the forgeries", access)
	})
}

// strictGetBody GETs path without cookies and returns the body of a 200.
func strictGetBody(t testing.TB, app *harness.App, path string) []byte {
	t.Helper()
	r := app.NewClient(t).Get(path)
	harness.MustStatus(t, r, http.StatusOK)
	return r.Body
}

// strictSigner returns the service's signing RS256 key, read from the
// store and opened with the service secret, as an operator holding both
// could.
func strictSigner(t *testing.T, app *harness.App) (kid string, key *rsa.PrivateKey) {
	t.Helper()
	keys, err := gormstore.NewSigningKeyRepository(harness.MustDB(t, app)).List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var current *domain.SigningKey
	for i := range keys { // oldest first: the last unretired one signs
		if keys[i].Alg == domain.AlgRS256 && keys[i].RetiredAt.IsZero() {
			current = &keys[i]
		}
	}
	if current == nil {
		t.Fatalf("no signing RS256 key among %d stored keys", len(keys))
	}
	priv, err := signingkeys.PrivateKey(signingkeys.Secrets{harness.TestSecret}, *current)
	if err != nil {
		t.Fatalf("open key %s with the service secret: %v", current.ID, err)
	}
	rsaKey, ok := priv.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("key %s opens to %T, want *rsa.PrivateKey", current.ID, priv)
	}
	return string(current.ID), rsaKey
}

// Ensure the service's own verification refuses tokens signed by its own
// current key (opened from the store with the service secret) whose claims
// are wrong: expired, not yet valid (iat or nbf in the future), another
// audience, another issuer, an ID token's type, no type. A control token
// re-signed with the same key and the issued claims is accepted.
func TestOIDCClients_service_refuses_bad_claims_signed_by_its_key(t *testing.T) {
	harness.ForStores(t, harness.SQLOnly(harness.StoresOnce), harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := mustStrictWorld(t, app)
		_, toks := w.StrictLiveTokens(t)
		header, claims := strictJWTParts(t, toks.Token.AccessToken)
		kid, key := strictSigner(t, app)
		if header["kid"] != kid {
			t.Fatalf("the access token's kid %v is not the stored signing key %s", header["kid"], kid)
		}
		sign := func(changes map[string]any) string {
			return strictSignJWT(t, jose.RS256, key, kid, "at+jwt", strictWithClaims(claims, changes))
		}
		now := time.Now()
		w.MustTokenAccepted(t, "control: the issued claims re-signed", sign(map[string]any{"jti": rand.Text()}))

		w.MustTokenRefused(t, "expired", sign(map[string]any{"iat": now.Add(-2 * time.Hour).Unix(), "exp": now.Add(-time.Hour).Unix()}))
		w.MustTokenRefused(t, "no exp", sign(map[string]any{"exp": nil}))
		w.MustTokenRefused(t, "nbf in the future", sign(map[string]any{"nbf": now.Add(time.Hour).Unix(), "exp": now.Add(2 * time.Hour).Unix()}))
		w.MustTokenRefused(t, "iat in the future", sign(map[string]any{"iat": now.Add(time.Hour).Unix(), "exp": now.Add(2 * time.Hour).Unix()}))
		w.MustTokenRefused(t, "another audience", sign(map[string]any{"aud": "https://api.other.example"}))
		w.MustTokenRefused(t, "another audience in a list", sign(map[string]any{"aud": []string{"https://api.other.example"}}))
		w.MustTokenRefused(t, "the client as audience", sign(map[string]any{"aud": w.Confidential.ID}))
		w.MustTokenRefused(t, "another issuer", sign(map[string]any{"iss": w.Issuer + "/"}))
		w.MustTokenRefused(t, "an unknown grant", sign(map[string]any{"gid": "grant-that-never-was"}))
		w.MustTokenRefused(t, "typ JWT", strictSignJWT(t, jose.RS256, key, kid, "JWT", claims))
		w.MustTokenRefused(t, "no typ", strictSignJWT(t, jose.RS256, key, kid, "", claims))
	})
}
