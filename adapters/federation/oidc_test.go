package federation_test

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

const (
	verifier = "verifier-0123456789-0123456789-0123456789-abc"
	nonce    = "nonce-1"
)

// Ensure the authorization code flow with PKCE and a nonce yields the ID
// token's identity and the tokens, from one discovery.
func TestExchange_happyPath(t *testing.T) {
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	c := newClient(clock)
	p := op.provider(t)

	authURL, err := c.AuthorizationURL(t.Context(), p, ports.UpstreamAuthorization{
		State: "state-1", Verifier: verifier, Nonce: nonce, RedirectURI: redirectURI, LoginHint: "ada@example.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	if got, want := u.Scheme+"://"+u.Host+u.Path, op.srv.URL+"/authorize"; got != want {
		t.Errorf("endpoint %s, want %s", got, want)
	}
	wantQuery := url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
		"scope": {"openid email profile"}, "state": {"state-1"}, "code_challenge": {s256(verifier)},
		"code_challenge_method": {"S256"}, "nonce": {nonce}, "login_hint": {"ada@example.com"},
	}
	if got := u.Query(); !reflect.DeepEqual(got, wantQuery) {
		t.Errorf("query %v\nwant %v", got, wantQuery)
	}

	id, tok, err := c.Exchange(t.Context(), p, op.authorize(t, authURL), verifier, redirectURI, nonce)
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != "user-1" || id.Email != "ada@example.com" || !id.EmailVerified || id.Name != "Ada Lovelace" ||
		id.Image != "https://img.example/ada.png" || !reflect.DeepEqual(id.AMR, []string{"pwd", "mfa"}) {
		t.Errorf("identity %+v", id)
	}
	if id.Profile["nonce"] != nonce || id.Profile["sub"] != "user-1" {
		t.Errorf("profile %v, want the ID token's claims", id.Profile)
	}
	if tok.AccessToken != op.firstAccessToken() || tok.RefreshToken != "rt-1" || tok.IDToken == "" {
		t.Errorf("tokens %+v", tok)
	}
	if got, want := tok.AccessTokenExpiresAt, clock.Now().Add(time.Hour); !got.Equal(want) {
		t.Errorf("access token expires at %v, want %v", got, want)
	}
	if !tok.RefreshTokenExpiresAt.IsZero() || !reflect.DeepEqual(tok.Scopes, []string{"openid", "email"}) {
		t.Errorf("refresh expiry %v, scopes %v", tok.RefreshTokenExpiresAt, tok.Scopes)
	}
	md, err := c.Metadata(t.Context(), p)
	if err != nil || md != (ports.UpstreamMetadata{Issuer: op.srv.URL, IssuerInResponse: true, AuthorizationEndpoint: op.srv.URL + "/authorize"}) {
		t.Errorf("metadata %+v, %v", md, err)
	}
	if got := op.hit("/.well-known/openid-configuration"); got != 1 {
		t.Errorf("%d discoveries, want 1 (cached)", got)
	}
	if got := op.hit("/userinfo"); got != 0 {
		t.Errorf("userinfo read %d times; the ID token had the e-mail and the name", got)
	}
	if v, f := c.KeySetStats(); v != 1 || f != 1 {
		t.Errorf("key set stats %d verifications, %d fetches; want 1, 1", v, f)
	}
}

// Ensure a request without its state or PKCE verifier is never made: a
// programming error, not the provider's.
func TestAuthorizationURL_needsStateAndVerifier(t *testing.T) {
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	c := newClient(clock)
	p := op.provider(t)
	for _, a := range []ports.UpstreamAuthorization{{State: "s", RedirectURI: redirectURI}, {Verifier: verifier, RedirectURI: redirectURI}} {
		if _, err := c.AuthorizationURL(t.Context(), p, a); domain.KindOf(err) != domain.KindInternal || err == nil {
			t.Errorf("%+v: error %v, want an internal one", a, err)
		}
	}
	if _, _, err := c.Exchange(t.Context(), p, "code", "", redirectURI, nonce); domain.KindOf(err) != domain.KindInternal || err == nil {
		t.Errorf("exchange without a verifier: error %v, want an internal one", err)
	}
}

// Ensure the token endpoint gets the verifier: another verifier than the
// challenge's is refused there, and the error holds neither.
func TestExchange_wrongVerifierIsRefused(t *testing.T) {
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	c := newClient(clock)
	p := op.provider(t)
	code := mustSignIn(t, c, p, op, verifier, nonce)
	_, _, err := c.Exchange(t.Context(), p, code, verifier+"x", redirectURI, nonce)
	mustBe(t, err, domain.ErrUpstreamCode, code, verifier)
}

// Ensure every broken ID token is refused, whatever the token endpoint
// says around it.
func TestExchange_refusesBadIDTokens(t *testing.T) {
	keys := testKeys()
	cases := []struct {
		name  string
		setup func(op *fakeOP)
		nonce string
		want  error
	}{
		{"alg_none", func(op *fakeOP) { op.idToken = func(m map[string]any) string { return unsigned(op.t, m) } }, nonce, domain.ErrUpstreamIDToken},
		{"unknown_key", func(op *fakeOP) { op.signer = keys["rsa-2"] }, nonce, domain.ErrUpstreamIDToken},
		{"hs256_with_the_client_secret", func(op *fakeOP) {
			op.idToken = func(m map[string]any) string {
				return signWith(op.t, jose.SigningKey{Algorithm: jose.HS256, Key: []byte(clientSecret)}, m)
			}
		}, nonce, domain.ErrUpstreamIDToken},
		{"alg_not_in_discovery", func(op *fakeOP) {
			op.discovery["id_token_signing_alg_values_supported"] = []string{"RS256"}
			op.published = append(op.published, keys["ec-1"])
			op.signer = keys["ec-1"]
		}, nonce, domain.ErrUpstreamIDToken},
		{"expired", func(op *fakeOP) {
			op.claims = func(m map[string]any) {
				m["exp"], m["iat"] = op.clock.Now().Add(-2*time.Minute).Unix(), op.clock.Now().Add(-time.Hour).Unix()
			}
		}, nonce, domain.ErrUpstreamIDToken},
		{"no_exp", func(op *fakeOP) { op.claims = func(m map[string]any) { delete(m, "exp") } }, nonce, domain.ErrUpstreamIDToken},
		{"no_iat", func(op *fakeOP) { op.claims = func(m map[string]any) { delete(m, "iat") } }, nonce, domain.ErrUpstreamIDToken},
		{"issued_in_the_future", func(op *fakeOP) {
			op.claims = func(m map[string]any) { m["iat"] = op.clock.Now().Add(2 * time.Minute).Unix() }
		}, nonce, domain.ErrUpstreamIDToken},
		{"wrong_audience", func(op *fakeOP) { op.claims = func(m map[string]any) { m["aud"] = "client-2" } }, nonce, domain.ErrUpstreamIDToken},
		{"several_audiences_no_azp", func(op *fakeOP) {
			op.claims = func(m map[string]any) { m["aud"] = []string{clientID, "client-2"} }
		}, nonce, domain.ErrUpstreamIDToken},
		{"several_audiences_other_azp", func(op *fakeOP) {
			op.claims = func(m map[string]any) { m["aud"], m["azp"] = []string{clientID, "client-2"}, "client-2" }
		}, nonce, domain.ErrUpstreamIDToken},
		{"wrong_issuer", func(op *fakeOP) { op.claims = func(m map[string]any) { m["iss"] = op.srv.URL + "/other" } }, nonce, domain.ErrUpstreamIDToken},
		{"nonce_mismatch", func(op *fakeOP) { op.claims = func(m map[string]any) { m["nonce"] = "nonce-2" } }, nonce, domain.ErrUpstreamIDToken},
		{"nonce_missing", func(op *fakeOP) { op.claims = func(m map[string]any) { delete(m, "nonce") } }, nonce, domain.ErrUpstreamIDToken},
		{"no_nonce_to_check", func(op *fakeOP) {}, "", domain.ErrUpstreamIDToken},
		{"at_hash_mismatch", func(op *fakeOP) { op.claims = func(m map[string]any) { m["at_hash"] = atHash("another token") } }, nonce, domain.ErrUpstreamIDToken},
		{"no_id_token", func(op *fakeOP) { op.noIDToken = true }, nonce, domain.ErrUpstreamIDToken},
		{"subject_null", func(op *fakeOP) { op.claims = func(m map[string]any) { m["sub"] = "null" } }, nonce, domain.ErrUpstreamUserInfo},
		{"no_subject", func(op *fakeOP) { op.claims = func(m map[string]any) { delete(m, "sub") } }, nonce, domain.ErrUpstreamUserInfo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock()
			op := newFakeOP(t, clock)
			op.set(tc.setup)
			c := newClient(clock)
			p := op.provider(t)
			code := mustSignIn(t, c, p, op, verifier, tc.nonce)
			id, _, err := c.Exchange(t.Context(), p, code, verifier, redirectURI, tc.nonce)
			if err == nil {
				t.Fatalf("accepted: %+v", id)
			}
			mustBe(t, err, tc.want, code, verifier)
		})
	}
}

// Ensure what must pass does: a token expired within the allowed skew, an
// ES256 token when discovery lists it, several audiences with azp the
// client.
func TestExchange_acceptsValidIDTokens(t *testing.T) {
	keys := testKeys()
	cases := []struct {
		name  string
		setup func(op *fakeOP)
	}{
		{"expired_within_the_skew", func(op *fakeOP) {
			op.claims = func(m map[string]any) { m["exp"] = op.clock.Now().Add(-30 * time.Second).Unix() }
		}},
		{"es256", func(op *fakeOP) {
			op.published = append(op.published, keys["ec-1"])
			op.signer = keys["ec-1"]
		}},
		{"several_audiences_azp_the_client", func(op *fakeOP) {
			op.claims = func(m map[string]any) { m["aud"], m["azp"] = []string{"client-2", clientID}, clientID }
		}},
		{"no_at_hash", func(op *fakeOP) { op.claims = func(m map[string]any) { delete(m, "at_hash") } }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock()
			op := newFakeOP(t, clock)
			op.set(tc.setup)
			c := newClient(clock)
			p := op.provider(t)
			id, _, err := c.Exchange(t.Context(), p, mustSignIn(t, c, p, op, verifier, nonce), verifier, redirectURI, nonce)
			if err != nil || id.Subject != "user-1" {
				t.Fatalf("identity %+v, error %v", id, err)
			}
		})
	}
}

// Ensure a token signed by a key the provider published after the key set
// was read makes the client read it again, once the refetch interval has
// passed, and that repeated verifications are served from the cache.
func TestVerifyIDToken_keyRotation(t *testing.T) {
	keys := testKeys()
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	c := newClient(clock)
	p := op.provider(t)
	mint := func(k testKey) string { return sign(t, k, op.baseClaims("", "")) }

	for range 5 {
		if _, err := c.VerifyIDToken(t.Context(), p, mint(keys["rsa-1"]), ""); err != nil {
			t.Fatal(err)
		}
	}
	if v, f := c.KeySetStats(); v != 5 || f != 1 {
		t.Fatalf("stats %d verifications, %d fetches; want 5, 1 (one fetch, then the cache)", v, f)
	}

	op.set(func(op *fakeOP) { op.published = []testKey{keys["rsa-1"], keys["rsa-2"]} })
	// Within the refetch interval, an unknown key id fetches nothing: a
	// flood of made-up key ids costs the provider one fetch per interval.
	_, err := c.VerifyIDToken(t.Context(), p, mint(keys["rsa-2"]), "")
	mustBe(t, err, domain.ErrUpstreamIDToken)
	if _, f := c.KeySetStats(); f != 1 {
		t.Fatalf("%d fetches within the interval, want 1", f)
	}

	clock.Advance(6 * time.Second)
	if _, err := c.VerifyIDToken(t.Context(), p, mint(keys["rsa-2"]), ""); err != nil {
		t.Fatalf("token of the new key: %v", err)
	}
	if _, err := c.VerifyIDToken(t.Context(), p, mint(keys["rsa-1"]), ""); err != nil {
		t.Fatalf("token of the old key: %v", err)
	}
	if v, f := c.KeySetStats(); v != 8 || f != 2 {
		t.Fatalf("stats %d verifications, %d fetches; want 8, 2", v, f)
	}
	if got := op.hit("/jwks"); got != 2 {
		t.Fatalf("the provider saw %d key set fetches, want 2", got)
	}
}

// Ensure a key set is read again after an hour, so a withdrawn key stops
// verifying, and that the old set serves on when the provider does not
// answer then.
func TestVerifyIDToken_keySetMaxAge(t *testing.T) {
	keys := testKeys()
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	c := newClient(clock)
	p := op.provider(t)
	mint := func(k testKey) string { return sign(t, k, op.baseClaims("", "")) }
	if _, err := c.VerifyIDToken(t.Context(), p, mint(keys["rsa-1"]), ""); err != nil {
		t.Fatal(err)
	}

	clock.Advance(61 * time.Minute)
	op.set(func(op *fakeOP) { op.jwksStatus = http.StatusServiceUnavailable })
	if _, err := c.VerifyIDToken(t.Context(), p, mint(keys["rsa-1"]), ""); err != nil {
		t.Fatalf("the old set did not serve while the provider is down: %v", err)
	}
	if _, f := c.KeySetStats(); f != 2 {
		t.Fatalf("%d fetches, want 2 (the set expired)", f)
	}

	clock.Advance(6 * time.Second)
	op.set(func(op *fakeOP) { op.jwksStatus, op.published = 0, []testKey{keys["rsa-2"]} })
	_, err := c.VerifyIDToken(t.Context(), p, mint(keys["rsa-1"]), "")
	mustBe(t, err, domain.ErrUpstreamIDToken)
	if _, f := c.KeySetStats(); f != 3 {
		t.Fatalf("%d fetches, want 3", f)
	}
}

// Ensure a provider whose key set cannot be read is unavailable, not a
// sender of bad tokens.
func TestVerifyIDToken_keySetDown(t *testing.T) {
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	op.set(func(op *fakeOP) { op.jwksStatus = http.StatusNotFound })
	c := newClient(clock)
	p := op.provider(t)
	_, err := c.VerifyIDToken(t.Context(), p, sign(t, testKeys()["rsa-1"], op.baseClaims("", "")), "")
	mustBe(t, err, domain.ErrUpstreamDiscovery)
}

// Ensure a native app's ID token is checked as an exchanged one, its nonce
// only when one is given.
func TestVerifyIDToken_nonceWhenGiven(t *testing.T) {
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	c := newClient(clock)
	p := op.provider(t)
	raw := sign(t, testKeys()["rsa-1"], op.baseClaims("", ""))
	id, err := c.VerifyIDToken(t.Context(), p, raw, "")
	if err != nil || id.Subject != "user-1" || id.Email != "ada@example.com" || !id.EmailVerified {
		t.Fatalf("identity %+v, error %v", id, err)
	}
	_, err = c.VerifyIDToken(t.Context(), p, raw, nonce)
	mustBe(t, err, domain.ErrUpstreamIDToken)
	withNonce := sign(t, testKeys()["rsa-1"], op.baseClaims(nonce, ""))
	if _, err := c.VerifyIDToken(t.Context(), p, withNonce, nonce); err != nil {
		t.Fatal(err)
	}
}

// Ensure an e-mail missing from the ID token is read from userinfo, about
// the same subject only.
func TestExchange_userInfo(t *testing.T) {
	noEmail := func(op *fakeOP) {
		op.claims = func(m map[string]any) { delete(m, "email"); delete(m, "email_verified") }
	}
	t.Run("fills_the_email", func(t *testing.T) {
		clock := newFakeClock()
		op := newFakeOP(t, clock)
		op.set(noEmail)
		c := newClient(clock)
		p := op.provider(t)
		id, _, err := c.Exchange(t.Context(), p, mustSignIn(t, c, p, op, verifier, nonce), verifier, redirectURI, nonce)
		if err != nil {
			t.Fatal(err)
		}
		if id.Email != "ada@userinfo.example" || !id.EmailVerified || id.Name != "Ada Lovelace" || id.Profile["name"] != "Ada (userinfo)" {
			t.Errorf("identity %+v", id)
		}
	})
	t.Run("other_subject", func(t *testing.T) {
		clock := newFakeClock()
		op := newFakeOP(t, clock)
		op.set(noEmail)
		op.set(func(op *fakeOP) { op.userinfo = func(m map[string]any) { m["sub"] = "user-2" } })
		c := newClient(clock)
		p := op.provider(t)
		_, _, err := c.Exchange(t.Context(), p, mustSignIn(t, c, p, op, verifier, nonce), verifier, redirectURI, nonce)
		mustBe(t, err, domain.ErrUpstreamUserInfo)
	})
	t.Run("userinfo_alone", func(t *testing.T) {
		clock := newFakeClock()
		op := newFakeOP(t, clock)
		c := newClient(clock)
		p := op.provider(t)
		if _, _, err := c.Exchange(t.Context(), p, mustSignIn(t, c, p, op, verifier, nonce), verifier, redirectURI, nonce); err != nil {
			t.Fatal(err)
		}
		id, err := c.UserInfo(t.Context(), p, op.firstAccessToken())
		if err != nil || id.Subject != "user-1" || id.Email != "ada@userinfo.example" || !id.EmailVerified {
			t.Fatalf("identity %+v, error %v", id, err)
		}
		_, err = c.UserInfo(t.Context(), p, "at-unknown")
		mustBe(t, err, domain.ErrUpstreamUserInfo, "at-unknown")
	})
}

// Ensure Microsoft Entra's preferred_username stands in for a missing
// e-mail only when it is an address, and never as verified; and that an
// email_verified sent as a string counts.
func TestExchange_presetClaims(t *testing.T) {
	cases := []struct {
		name         string
		preset       domain.IdentityProviderPreset
		claims       func(m map[string]any)
		userinfo     func(m map[string]any)
		wantEmail    string
		wantVerified bool
	}{
		{"microsoft_preferred_username", domain.PresetMicrosoft,
			func(m map[string]any) { delete(m, "email"); m["preferred_username"] = "ada@contoso.example" },
			func(m map[string]any) { delete(m, "email") }, "ada@contoso.example", false},
		{"microsoft_username_not_an_address", domain.PresetMicrosoft,
			func(m map[string]any) { delete(m, "email"); m["preferred_username"] = "ada" },
			func(m map[string]any) { delete(m, "email") }, "", false},
		{"microsoft_email_unverified", domain.PresetMicrosoft,
			func(m map[string]any) { delete(m, "email_verified"); m["preferred_username"] = "other@contoso.example" },
			nil, "ada@example.com", false},
		{"google_string_true", domain.PresetGoogle, func(m map[string]any) { m["email_verified"] = "true" }, nil, "ada@example.com", true},
		{"google_string_false", domain.PresetGoogle, func(m map[string]any) { m["email_verified"] = "false" }, nil, "ada@example.com", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock()
			op := newFakeOP(t, clock)
			op.set(func(op *fakeOP) { op.claims, op.userinfo = tc.claims, tc.userinfo })
			c := newClient(clock)
			p := op.provider(t, tc.preset)
			id, _, err := c.Exchange(t.Context(), p, mustSignIn(t, c, p, op, verifier, nonce), verifier, redirectURI, nonce)
			if err != nil {
				t.Fatal(err)
			}
			if id.Email != tc.wantEmail || id.EmailVerified != tc.wantVerified {
				t.Errorf("e-mail %q verified %v, want %q %v", id.Email, id.EmailVerified, tc.wantEmail, tc.wantVerified)
			}
		})
	}
}

// Ensure discovery names the configured issuer exactly.
func TestDiscovery_issuerMismatch(t *testing.T) {
	for _, issuer := range []string{"/", "/other"} {
		clock := newFakeClock()
		op := newFakeOP(t, clock)
		op.set(func(op *fakeOP) { op.discovery["issuer"] = op.srv.URL + issuer })
		c := newClient(clock)
		p := op.provider(t)
		_, err := c.Metadata(t.Context(), p)
		mustBe(t, err, domain.ErrUpstreamDiscovery)
		_, err = c.AuthorizationURL(t.Context(), p, ports.UpstreamAuthorization{State: "s", Verifier: verifier, RedirectURI: redirectURI})
		mustBe(t, err, domain.ErrUpstreamDiscovery)
	}
}

// Ensure a failed discovery is retried after the backoff, not before, a
// good one is cached, and an updated provider is discovered again.
func TestDiscovery_cacheAndBackoff(t *testing.T) {
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	op.set(func(op *fakeOP) { op.discoveryStatus = http.StatusServiceUnavailable })
	c := newClient(clock)
	p := op.provider(t)
	const path = "/.well-known/openid-configuration"
	for range 2 {
		_, err := c.Metadata(t.Context(), p)
		mustBe(t, err, domain.ErrUpstreamDiscovery)
	}
	if got := op.hit(path); got != 1 {
		t.Fatalf("%d discoveries within the backoff, want 1", got)
	}
	op.set(func(op *fakeOP) { op.discoveryStatus = 0 })
	clock.Advance(11 * time.Second)
	for range 3 {
		if _, err := c.Metadata(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	if got := op.hit(path); got != 2 {
		t.Fatalf("%d discoveries, want 2 (the retry, then the cache)", got)
	}
	p.Provider.Endpoints.UserInfo = op.srv.URL + "/userinfo"
	if _, err := c.Metadata(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if got := op.hit(path); got != 3 {
		t.Fatalf("%d discoveries, want 3 (the updated provider is discovered again)", got)
	}
}

// Ensure the provider's endpoint overrides replace discovery's, and a
// query on the configured authorization endpoint is kept.
func TestEndpointOverrides(t *testing.T) {
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	u := op.srv.URL
	op.set(func(op *fakeOP) {
		op.discovery["authorization_endpoint"] = u + "/discovered/authorize"
		op.discovery["token_endpoint"] = u + "/discovered/token"
		op.discovery["userinfo_endpoint"] = u + "/discovered/userinfo"
		op.discovery["jwks_uri"] = u + "/discovered/jwks"
		op.claims = func(m map[string]any) { delete(m, "email") } // so userinfo is read
	})
	c := newClient(clock)
	p := op.provider(t)
	p.Provider.Endpoints = domain.IdentityProviderEndpoints{
		Authorization: u + "/authorize?prompt=consent&client_id=overwritten",
		Token:         u + "/token", UserInfo: u + "/userinfo", JWKS: u + "/jwks",
	}
	authURL, err := c.AuthorizationURL(t.Context(), p, ports.UpstreamAuthorization{State: "s", Verifier: verifier, Nonce: nonce, RedirectURI: redirectURI, Scopes: []string{"email"}})
	if err != nil {
		t.Fatal(err)
	}
	au, _ := url.Parse(authURL)
	q := au.Query()
	if au.Path != "/authorize" || q.Get("prompt") != "consent" || !reflect.DeepEqual(q["client_id"], []string{clientID}) || q.Get("scope") != "openid email" {
		t.Fatalf("authorization URL %s", authURL)
	}
	id, _, err := c.Exchange(t.Context(), p, op.authorize(t, authURL), verifier, redirectURI, nonce)
	if err != nil {
		t.Fatal(err)
	}
	if id.Email != "ada@userinfo.example" {
		t.Errorf("e-mail %q, want userinfo's", id.Email)
	}
	for _, path := range []string{"/token", "/userinfo", "/jwks"} {
		if op.hit(path) != 1 {
			t.Errorf("override %s used %d times, want 1", path, op.hit(path))
		}
		if op.hit("/discovered"+path) != 0 {
			t.Errorf("discovered %s used", path)
		}
	}
}

// Ensure client_secret_post is used when discovery lists it and not
// client_secret_basic.
func TestExchange_clientSecretPost(t *testing.T) {
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	op.set(func(op *fakeOP) {
		op.authMethod = "post"
		op.discovery["token_endpoint_auth_methods_supported"] = []string{"client_secret_post", "private_key_jwt"}
	})
	c := newClient(clock)
	p := op.provider(t)
	if _, _, err := c.Exchange(t.Context(), p, mustSignIn(t, c, p, op, verifier, nonce), verifier, redirectURI, nonce); err != nil {
		t.Fatal(err)
	}
}

// Ensure a refresh returns the new tokens, without a refresh token when
// none is sent, and a refused one is ErrUpstreamRefresh.
func TestRefresh(t *testing.T) {
	clock := newFakeClock()
	op := newFakeOP(t, clock)
	c := newClient(clock)
	p := op.provider(t)
	tok, err := c.Refresh(t.Context(), p, "rt-1")
	if err != nil {
		t.Fatal(err)
	}
	want := ports.UpstreamTokens{AccessToken: "at-refreshed", AccessTokenExpiresAt: clock.Now().Add(30 * time.Minute), Scopes: []string{"openid", "email", "profile"}}
	if !reflect.DeepEqual(tok, want) {
		t.Errorf("tokens %+v\nwant %+v", tok, want)
	}
	_, err = c.Refresh(t.Context(), p, "rt-revoked")
	mustBe(t, err, domain.ErrUpstreamRefresh, "rt-revoked")
}

// Ensure the token endpoint's answers that are not tokens are refused: a
// redirect (not followed), an oversized body, and a provider that fails is
// unavailable, not a refusal.
func TestExchange_tokenEndpointAnswers(t *testing.T) {
	cases := []struct {
		name    string
		handler func(op *fakeOP) http.HandlerFunc
		want    error
	}{
		{"redirect_302", func(op *fakeOP) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) }
		}, domain.ErrUpstreamCode},
		{"redirect_307", func(op *fakeOP) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
			}
		}, domain.ErrUpstreamCode},
		{"oversized", func(op *fakeOP) http.HandlerFunc {
			// A good answer, then spaces: cut at any length it would still
			// be JSON, so only the refusal of its size refuses it.
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"access_token":"at-1","token_type":"Bearer","id_token":"x"}`))
				_, _ = w.Write([]byte(strings.Repeat(" ", 1<<20)))
			}
		}, domain.ErrUpstreamCode},
		{"error_with_a_token", func(op *fakeOP) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusOK, map[string]any{"error": "invalid_grant", "access_token": "at-1", "id_token": "x"})
			}
		}, domain.ErrUpstreamCode},
		{"not_json", func(op *fakeOP) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) }
		}, domain.ErrUpstreamCode},
		{"no_access_token", func(op *fakeOP) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer"})
			}
		}, domain.ErrUpstreamCode},
		{"server_error", func(op *fakeOP) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }
		}, domain.ErrUpstreamDiscovery},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock()
			op := newFakeOP(t, clock)
			op.set(func(op *fakeOP) { op.token = tc.handler(op) })
			c := newClient(clock)
			p := op.provider(t)
			code := mustSignIn(t, c, p, op, verifier, nonce)
			_, _, err := c.Exchange(t.Context(), p, code, verifier, redirectURI, nonce)
			mustBe(t, err, tc.want, code, verifier)
			if got := op.hit("/elsewhere"); got != 0 {
				t.Errorf("the redirect was followed")
			}
		})
	}
}
