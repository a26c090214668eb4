package oidc_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// oauthWorld is the provider on the in-memory store of a world, with a
// public first-party client and a confidential third-party one.
type oauthWorld struct {
	*usecasetest.World
	grants   *memory.OAuthGrantRepository
	keys     *oidc.SigningKeys
	p        *oidc.OAuthProvider
	settings usecase.TokenSettings
}

const (
	publicID     = "spa"
	publicURI    = "https://spa.example.com/callback"
	confID       = "web"
	confSecret   = "gh_cs_confidential-secret"
	confURI      = "https://web.example.com/cb"
	logoutURI    = "https://web.example.com/bye"
	testVerifier = "verifier-0123456789-0123456789-0123456789-abcdef"
)

func newOAuthWorld(t *testing.T) *oauthWorld {
	t.Helper()
	w := &oauthWorld{World: usecasetest.NewWorld(t, false)}
	w.settings = usecase.TokenSettings{Issuer: "https://id.example.com/api/auth", BaseURL: "https://id.example.com",
		CodeLifetime: time.Minute, AccessTokenLifetime: 15 * time.Minute, IDTokenLifetime: time.Hour,
		RefreshTokenLifetime: 30 * 24 * time.Hour, AccessTokenAudience: "https://id.example.com", JWTLifetime: 15 * time.Minute, JWKSMaxAge: 5 * time.Minute}
	jose, err := signingkeys.New(signingkeys.Secrets{"test-secret-0123456789-abcdefghijklmnopqrstuvwxyz"})
	if err != nil {
		t.Fatal(err)
	}
	ids := system.NewIDGenerator()
	w.keys = oidc.NewSigningKeys(memory.NewSigningKeyRepository(w.DB), jose, ids, w.Clock, w.AuditorOf(memory.NewAuditLog(w.DB)), w.settings, usecase.AdminSettings{})
	if err := w.keys.Ensure(t.Context()); err != nil {
		t.Fatal(err)
	}
	clients := memory.NewOAuthClientRepository(w.DB)
	w.grants = memory.NewOAuthGrantRepository(w.DB)
	now := w.Clock.Now()
	for _, c := range []domain.OAuthClient{
		{ID: publicID, Name: "SPA", Type: domain.OAuthClientPublic, RedirectURIs: []string{publicURI}, FirstParty: true, CreatedAt: now, UpdatedAt: now},
		{ID: confID, Name: "Web", Type: domain.OAuthClientConfidential, RedirectURIs: []string{confURI}, PostLogoutRedirectURIs: []string{logoutURI},
			SecretHash: domain.HashToken(confSecret), CreatedAt: now, UpdatedAt: now},
	} {
		if err := clients.Create(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	w.p = oidc.NewOAuthProvider(clients, w.grants, w.Users, memory.NewSessionRepository(w.DB), w.Events, w.keys, system.NewTokenGenerator(), ids, w.Clock, w.settings, w.World.Settings)
	return w
}

// principal signs a new user up and returns their session.
func (w *oauthWorld) principal(t *testing.T, email string) *usecase.Principal {
	t.Helper()
	res := w.MustSignUp(t, email)
	return &usecase.Principal{Session: res.Session, User: res.User}
}

func challenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// publicRequest is a valid authorization request of the public client.
func publicRequest(edit ...func(url.Values)) url.Values {
	q := url.Values{"response_type": {"code"}, "client_id": {publicID}, "redirect_uri": {publicURI}, "scope": {"openid profile email offline_access"},
		"state": {"st4te"}, "nonce": {"n0nce"}, "code_challenge": {challenge(testVerifier)}, "code_challenge_method": {"S256"}}
	for _, e := range edit {
		e(q)
	}
	return q
}

// mustRedirect parses target and checks it goes to prefix.
func mustRedirect(t *testing.T, target, prefix string) url.Values {
	t.Helper()
	if !strings.HasPrefix(target, prefix) {
		t.Fatalf("redirect = %q, want prefix %q", target, prefix)
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// mustCodeFor authorizes q for p and returns the code.
func (w *oauthWorld) mustCodeFor(t *testing.T, q url.Values, p *usecase.Principal) string {
	t.Helper()
	target, err := w.p.Authorize(t.Context(), q, p)
	if err != nil {
		t.Fatal(err)
	}
	got := mustRedirect(t, target, q.Get("redirect_uri")+"?")
	if got.Get("code") == "" || got.Get("state") != q.Get("state") || got.Get("iss") != w.settings.Issuer {
		t.Fatalf("redirect = %s", target)
	}
	return got.Get("code")
}

func (w *oauthWorld) exchange(t *testing.T, code string) (oidc.TokenResponse, error) {
	t.Helper()
	return w.p.Token(t.Context(), oidc.ClientAuthentication{}, url.Values{"grant_type": {"authorization_code"}, "client_id": {publicID},
		"code": {code}, "redirect_uri": {publicURI}, "code_verifier": {testVerifier}})
}

func mustOAuthCode(t *testing.T, err error, code string) {
	t.Helper()
	got, _, ok := oidc.IsOAuthError(err)
	if !ok || got != code {
		t.Fatalf("err = %v, want OAuth error %s", err, code)
	}
}

func TestOAuthAuthorize_rules(t *testing.T) {
	w := newOAuthWorld(t)
	p := w.principal(t, "ada@example.com")
	cases := []struct {
		name      string
		q         url.Values
		principal *usecase.Principal
		page      bool   // an error for the person, never a redirect
		prefix    string // else: where the redirect goes
		errorCode string // and the error it carries
	}{
		{"unknown_client_is_a_page", publicRequest(func(q url.Values) { q.Set("client_id", "nope") }), p, true, "", ""},
		{"redirect_uri_off_by_one_is_a_page", publicRequest(func(q url.Values) { q.Set("redirect_uri", publicURI+"/") }), p, true, "", ""},
		{"missing_redirect_uri_is_a_page", publicRequest(func(q url.Values) { q.Del("redirect_uri") }), p, true, "", ""},
		{"response_type_token", publicRequest(func(q url.Values) { q.Set("response_type", "token") }), p, false, publicURI, "unsupported_response_type"},
		{"unknown_scope", publicRequest(func(q url.Values) { q.Set("scope", "openid admin") }), p, false, publicURI, "invalid_scope"},
		{"public_without_pkce", publicRequest(func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }), p, false, publicURI, "invalid_request"},
		{"first_party_prompt_consent_asks", publicRequest(func(q url.Values) { q.Set("prompt", "consent") }), p, false, "https://id.example.com/consent?", ""},
		{"confidential_without_pkce", url.Values{"response_type": {"code"}, "client_id": {confID}, "redirect_uri": {confURI}, "scope": {"openid"}}, p, false, confURI, "invalid_request"},
		{"plain_refused", publicRequest(func(q url.Values) { q.Set("code_challenge_method", "plain") }), p, false, publicURI, "invalid_request"},
		{"method_missing_means_plain", publicRequest(func(q url.Values) { q.Del("code_challenge_method") }), p, false, publicURI, "invalid_request"},
		{"repeated_parameter", publicRequest(func(q url.Values) { q.Add("scope", "openid") }), p, false, publicURI, "invalid_request"},
		{"prompt_none_without_session", publicRequest(func(q url.Values) { q.Set("prompt", "none") }), nil, false, publicURI, "login_required"},
		{"no_session_signs_in", publicRequest(), nil, false, "https://id.example.com/sign-in?callbackURL=%2Fapi%2Fauth%2Foauth2%2Fauthorize%3F", ""},
		{"prompt_login_signs_in", publicRequest(func(q url.Values) { q.Set("prompt", "login") }), p, false, "https://id.example.com/sign-in?callbackURL=", ""},
		{"third_party_asks_consent", url.Values{"response_type": {"code"}, "code_challenge": {challenge(testVerifier)}, "code_challenge_method": {"S256"}, "client_id": {confID}, "redirect_uri": {confURI}, "scope": {"openid"}}, p, false,
			"https://id.example.com/consent?", ""},
		{"prompt_none_needing_consent", url.Values{"response_type": {"code"}, "code_challenge": {challenge(testVerifier)}, "code_challenge_method": {"S256"}, "client_id": {confID}, "redirect_uri": {confURI}, "scope": {"openid"},
			"prompt": {"none"}}, p, false, confURI, "consent_required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target, err := w.p.Authorize(t.Context(), tc.q, tc.principal)
			if tc.page {
				if err == nil || target != "" {
					t.Fatalf("got redirect %q, err %v; want an error page", target, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			q := mustRedirect(t, target, tc.prefix)
			if q.Get("error") != tc.errorCode {
				t.Fatalf("error = %q, want %q (%s)", q.Get("error"), tc.errorCode, target)
			}
			if tc.errorCode != "" && (q.Get("iss") != w.settings.Issuer || q.Get("state") != tc.q.Get("state")) {
				t.Fatalf("error redirect lacks iss or state: %s", target)
			}
		})
	}
	t.Run("sign_in_callback_drops_prompt_login", func(t *testing.T) {
		target, _ := w.p.Authorize(t.Context(), publicRequest(func(q url.Values) { q.Set("prompt", "login consent") }), p)
		back, _ := url.Parse(mustRedirect(t, target, "https://id.example.com/sign-in?").Get("callbackURL"))
		if got := back.Query().Get("prompt"); got != "consent" || back.Path != "/api/auth/oauth2/authorize" {
			t.Fatalf("callback = %s", back)
		}
	})
	t.Run("max_age_exceeded_signs_in_again", func(t *testing.T) {
		w.Clock.Advance(2 * time.Minute)
		target, _ := w.p.Authorize(t.Context(), publicRequest(func(q url.Values) { q.Set("max_age", "60") }), p)
		mustRedirect(t, target, "https://id.example.com/sign-in?")
		target, _ = w.p.Authorize(t.Context(), publicRequest(func(q url.Values) { q.Set("max_age", "600") }), p)
		mustRedirect(t, target, publicURI+"?code=")
	})
}

func TestOAuthConsent_then_skip(t *testing.T) {
	w := newOAuthWorld(t)
	p := w.principal(t, "ada@example.com")
	q := url.Values{"response_type": {"code"}, "code_challenge": {challenge(testVerifier)}, "code_challenge_method": {"S256"}, "client_id": {confID}, "redirect_uri": {confURI}, "scope": {"openid email"}, "state": {"s"}}
	target, err := w.p.Consent(t.Context(), oidc.ConsentDecision{Principal: *p, Accept: false, Query: q.Encode()})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRedirect(t, target, confURI+"?").Get("error"); got != "access_denied" {
		t.Fatalf("deny → %s", target)
	}
	target, err = w.p.Consent(t.Context(), oidc.ConsentDecision{Principal: *p, Accept: true, Query: q.Encode()})
	if err != nil {
		t.Fatal(err)
	}
	mustRedirect(t, target, confURI+"?code=")
	w.mustCodeFor(t, q, p) // consent stored: no page
	q.Set("scope", "openid profile")
	target, _ = w.p.Authorize(t.Context(), q, p)
	mustRedirect(t, target, "https://id.example.com/consent?") // a new scope asks again
	if _, err := w.p.Consent(t.Context(), oidc.ConsentDecision{Principal: *p, Accept: true, Query: q.Encode()}); err != nil {
		t.Fatal(err)
	}
	q.Set("scope", "openid email profile") // the union is stored
	w.mustCodeFor(t, q, p)
	q.Set("prompt", "consent")
	target, _ = w.p.Authorize(t.Context(), q, p)
	mustRedirect(t, target, "https://id.example.com/consent?")
}

func TestOAuthToken_code_rules(t *testing.T) {
	w := newOAuthWorld(t)
	p := w.principal(t, "ada@example.com")
	t.Run("exchange_and_claims", func(t *testing.T) {
		res, err := w.exchange(t, w.mustCodeFor(t, publicRequest(), p))
		if err != nil {
			t.Fatal(err)
		}
		if res.TokenType != "Bearer" || res.IDToken == "" || !strings.HasPrefix(res.RefreshToken, "gh_rt_") || res.ExpiresIn != 900 {
			t.Fatalf("response = %+v", res)
		}
		id, err := w.keys.Verify(t.Context(), res.IDToken, oidc.VerifyOptions{Alg: domain.AlgRS256, Type: "JWT", Issuer: w.settings.Issuer, Audience: publicID})
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(res.AccessToken))
		if id["nonce"] != "n0nce" || id["sub"] != string(p.User.ID()) || id["azp"] != publicID || id["email"] != "ada@example.com" ||
			id["at_hash"] != base64.RawURLEncoding.EncodeToString(sum[:16]) || id["auth_time"] == nil {
			t.Fatalf("id token claims = %v", id)
		}
		at, err := w.keys.Verify(t.Context(), res.AccessToken, oidc.VerifyOptions{Alg: domain.AlgRS256, Type: "at+jwt", Issuer: w.settings.Issuer, Audience: "https://id.example.com"})
		if err != nil {
			t.Fatal(err)
		}
		if at["client_id"] != publicID || at["gid"] == nil || at["jti"] == nil || at["scope"] != "openid profile email offline_access" {
			t.Fatalf("access token claims = %v", at)
		}
	})
	t.Run("reuse_revokes_first_grant", func(t *testing.T) {
		code := w.mustCodeFor(t, publicRequest(), p)
		res, err := w.exchange(t, code)
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.exchange(t, code)
		mustOAuthCode(t, err, "invalid_grant")
		_, err = w.p.UserInfo(t.Context(), res.AccessToken)
		mustOAuthCode(t, err, "invalid_token")
		_, err = w.p.Token(t.Context(), oidc.ClientAuthentication{}, url.Values{"grant_type": {"refresh_token"}, "client_id": {publicID}, "refresh_token": {res.RefreshToken}})
		mustOAuthCode(t, err, "invalid_grant")
	})
	for name, edit := range map[string]func(url.Values){
		"wrong_verifier":       func(f url.Values) { f.Set("code_verifier", strings.Repeat("a", 43)) },
		"short_verifier":       func(f url.Values) { f.Set("code_verifier", "abc") },
		"no_verifier":          func(f url.Values) { f.Del("code_verifier") },
		"other_redirect_uri":   func(f url.Values) { f.Set("redirect_uri", publicURI+"x") },
		"unknown_code":         func(f url.Values) { f.Set("code", "nope") },
		"confidential_no_auth": func(f url.Values) { f.Set("client_id", confID) },
	} {
		t.Run(name, func(t *testing.T) {
			f := url.Values{"grant_type": {"authorization_code"}, "client_id": {publicID}, "code": {w.mustCodeFor(t, publicRequest(), p)},
				"redirect_uri": {publicURI}, "code_verifier": {testVerifier}}
			edit(f)
			_, err := w.p.Token(t.Context(), oidc.ClientAuthentication{}, f)
			if err == nil {
				t.Fatal("exchange succeeded")
			}
		})
	}
	t.Run("expired_code", func(t *testing.T) {
		code := w.mustCodeFor(t, publicRequest(), p)
		w.Clock.Advance(2 * time.Minute)
		_, err := w.exchange(t, code)
		mustOAuthCode(t, err, "invalid_grant")
	})
	t.Run("banned_user", func(t *testing.T) {
		b := w.principal(t, "banned@example.com")
		code := w.mustCodeFor(t, publicRequest(), b)
		mustBan(t, w, b.User.ID())
		_, err := w.exchange(t, code)
		mustOAuthCode(t, err, "invalid_grant")
	})
	t.Run("public_client_may_not_send_a_secret", func(t *testing.T) {
		_, err := w.p.Token(t.Context(), oidc.ClientAuthentication{HasBasic: true, BasicID: publicID, BasicSecret: "x"},
			url.Values{"grant_type": {"authorization_code"}, "code": {"c"}, "redirect_uri": {publicURI}})
		mustOAuthCode(t, err, "invalid_client")
	})
	t.Run("unsupported_grant_type", func(t *testing.T) {
		_, err := w.p.Token(t.Context(), oidc.ClientAuthentication{}, url.Values{"grant_type": {"password"}, "client_id": {publicID}})
		mustOAuthCode(t, err, "unsupported_grant_type")
	})
}

func mustBan(t *testing.T, w *oauthWorld, id domain.UserID) {
	t.Helper()
	err := w.Users.Update(t.Context(), id, func(u *domain.User) error { return u.Ban("abuse", time.Time{}, w.Clock.Now()) })
	if err != nil {
		t.Fatal(err)
	}
}

func TestOAuthToken_confidential_client_authentication(t *testing.T) {
	w := newOAuthWorld(t)
	p := w.principal(t, "ada@example.com")
	if _, err := w.p.Consent(t.Context(), oidc.ConsentDecision{Principal: *p, Accept: true,
		Query: url.Values{"response_type": {"code"}, "code_challenge": {challenge(testVerifier)}, "code_challenge_method": {"S256"}, "client_id": {confID}, "redirect_uri": {confURI}, "scope": {"openid"}}.Encode()}); err != nil {
		t.Fatal(err)
	}
	code := func() string {
		return w.mustCodeFor(t, url.Values{"response_type": {"code"}, "code_challenge": {challenge(testVerifier)}, "code_challenge_method": {"S256"}, "client_id": {confID}, "redirect_uri": {confURI}, "scope": {"openid"}}, p)
	}
	form := func(c string) url.Values {
		return url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {confURI}, "code_verifier": {testVerifier}}
	}
	// client_secret_basic is form-url-decoded (RFC 6749 §2.3.1).
	basic := oidc.ClientAuthentication{HasBasic: true, BasicID: confID, BasicSecret: url.QueryEscape(confSecret)}
	if _, err := w.p.Token(t.Context(), basic, form(code())); err != nil {
		t.Fatal(err)
	}
	post := form(code())
	post.Set("client_id", confID)
	post.Set("client_secret", confSecret)
	if _, err := w.p.Token(t.Context(), oidc.ClientAuthentication{}, post); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		auth oidc.ClientAuthentication
		form url.Values
		code string
	}{
		"wrong_secret":    {oidc.ClientAuthentication{HasBasic: true, BasicID: confID, BasicSecret: "nope"}, form(code()), "invalid_client"},
		"no_secret":       {oidc.ClientAuthentication{}, func() url.Values { f := form(code()); f.Set("client_id", confID); return f }(), "invalid_client"},
		"two_methods":     {basic, func() url.Values { f := form(code()); f.Set("client_secret", confSecret); return f }(), "invalid_request"},
		"unknown_client":  {oidc.ClientAuthentication{HasBasic: true, BasicID: "nobody", BasicSecret: "x"}, form(code()), "invalid_client"},
		"code_of_another": {oidc.ClientAuthentication{}, func() url.Values { f := form(code()); f.Set("client_id", publicID); return f }(), "invalid_grant"},
		"no_verifier":     {basic, func() url.Values { f := form(code()); f.Del("code_verifier"); return f }(), "invalid_grant"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := w.p.Token(t.Context(), tc.auth, tc.form)
			mustOAuthCode(t, err, tc.code)
		})
	}
}

func TestOAuthToken_refresh_rotation_and_reuse(t *testing.T) {
	w := newOAuthWorld(t)
	p := w.principal(t, "ada@example.com")
	first, err := w.exchange(t, w.mustCodeFor(t, publicRequest(), p))
	if err != nil {
		t.Fatal(err)
	}
	refresh := func(token string, scope string) (oidc.TokenResponse, error) {
		f := url.Values{"grant_type": {"refresh_token"}, "client_id": {publicID}, "refresh_token": {token}}
		if scope != "" {
			f.Set("scope", scope)
		}
		return w.p.Token(t.Context(), oidc.ClientAuthentication{}, f)
	}
	_, err = refresh(first.RefreshToken, "openid profile email offline_access admin")
	mustOAuthCode(t, err, "invalid_scope")
	second, err := refresh(first.RefreshToken, "openid email")
	if err != nil {
		t.Fatal(err)
	}
	if second.Scope != "openid email" || second.RefreshToken == first.RefreshToken || second.IDToken == "" {
		t.Fatalf("refreshed = %+v", second)
	}
	id, err := w.keys.Verify(t.Context(), second.IDToken, oidc.VerifyOptions{Alg: domain.AlgRS256, Type: "JWT", Issuer: w.settings.Issuer, Audience: publicID})
	if err != nil || id["nonce"] != nil || id["name"] != nil || id["email"] == nil {
		t.Fatalf("refreshed id token = %v, %v", id, err)
	}
	third, err := refresh(second.RefreshToken, "")
	if err != nil {
		t.Fatal(err)
	}
	if third.Scope != "openid profile email offline_access" {
		t.Fatalf("scope after narrowing once = %q: narrowing must not stick", third.Scope)
	}
	_, err = refresh(first.RefreshToken, "") // reuse
	mustOAuthCode(t, err, "invalid_grant")
	_, err = refresh(third.RefreshToken, "")
	mustOAuthCode(t, err, "invalid_grant")
	_, err = w.p.UserInfo(t.Context(), third.AccessToken)
	mustOAuthCode(t, err, "invalid_token")
	t.Run("without_offline_access_no_refresh_token", func(t *testing.T) {
		res, err := w.exchange(t, w.mustCodeFor(t, publicRequest(func(q url.Values) { q.Set("scope", "openid") }), p))
		if err != nil || res.RefreshToken != "" {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
	t.Run("grant_ends_absolutely", func(t *testing.T) {
		res, err := w.exchange(t, w.mustCodeFor(t, publicRequest(), p))
		if err != nil {
			t.Fatal(err)
		}
		w.Clock.Advance(29 * 24 * time.Hour)
		if res, err = refresh(res.RefreshToken, ""); err != nil {
			t.Fatal(err)
		}
		w.Clock.Advance(2 * 24 * time.Hour)
		_, err = refresh(res.RefreshToken, "")
		mustOAuthCode(t, err, "invalid_grant")
	})
}

func TestOAuthToken_client_credentials(t *testing.T) {
	w := newOAuthWorld(t)
	basic := oidc.ClientAuthentication{HasBasic: true, BasicID: confID, BasicSecret: confSecret}
	_, err := w.p.Token(t.Context(), oidc.ClientAuthentication{}, url.Values{"grant_type": {"client_credentials"}, "client_id": {publicID}})
	mustOAuthCode(t, err, "unauthorized_client")
	_, err = w.p.Token(t.Context(), basic, url.Values{"grant_type": {"client_credentials"}, "scope": {"openid"}})
	mustOAuthCode(t, err, "invalid_scope")
	res, err := w.p.Token(t.Context(), basic, url.Values{"grant_type": {"client_credentials"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.RefreshToken != "" || res.IDToken != "" {
		t.Fatalf("res = %+v", res)
	}
	_, err = w.p.UserInfo(t.Context(), res.AccessToken)
	mustOAuthCode(t, err, "insufficient_scope")
	in, err := w.p.Introspect(t.Context(), basic, url.Values{"token": {res.AccessToken}})
	if err != nil || !in.Active || in.Subject != confID || in.ClientID != confID {
		t.Fatalf("introspection = %+v, %v", in, err)
	}
	if err := w.p.Revoke(t.Context(), basic, url.Values{"token": {res.AccessToken}}); err != nil {
		t.Fatal(err)
	}
	if in, _ = w.p.Introspect(t.Context(), basic, url.Values{"token": {res.AccessToken}}); in.Active {
		t.Fatal("revoked token still active")
	}
}

func TestOAuthUserInfo_revoke_introspect(t *testing.T) {
	w := newOAuthWorld(t)
	p := w.principal(t, "ada@example.com")
	basic := oidc.ClientAuthentication{HasBasic: true, BasicID: confID, BasicSecret: confSecret}
	res, err := w.exchange(t, w.mustCodeFor(t, publicRequest(func(q url.Values) { q.Set("scope", "openid email offline_access") }), p))
	if err != nil {
		t.Fatal(err)
	}
	info, err := w.p.UserInfo(t.Context(), res.AccessToken)
	if err != nil || info.Subject != string(p.User.ID()) || info.Email != "ada@example.com" || info.EmailVerified == nil || info.Name != "" {
		t.Fatalf("userinfo = %+v, %v", info, err)
	}
	_, err = w.p.UserInfo(t.Context(), res.IDToken) // wrong typ and aud
	mustOAuthCode(t, err, "invalid_token")
	_, err = w.p.Introspect(t.Context(), oidc.ClientAuthentication{}, url.Values{"client_id": {publicID}, "token": {res.AccessToken}})
	mustOAuthCode(t, err, "invalid_client")
	if in, err := w.p.Introspect(t.Context(), basic, url.Values{"token": {res.AccessToken}}); err != nil || !in.Active || in.Username != "ada@example.com" {
		t.Fatalf("introspect = %+v, %v", in, err)
	}
	// Another client's refresh token tells the introspecting client nothing.
	if in, err := w.p.Introspect(t.Context(), basic, url.Values{"token": {res.RefreshToken}}); err != nil || in.Active {
		t.Fatalf("introspect of another client's refresh token = %+v, %v", in, err)
	}
	// Without the email scope, introspection does not reveal the address.
	openidOnly, err := w.exchange(t, w.mustCodeFor(t, publicRequest(func(q url.Values) { q.Set("scope", "openid") }), p))
	if err != nil {
		t.Fatal(err)
	}
	if in, err := w.p.Introspect(t.Context(), basic, url.Values{"token": {openidOnly.AccessToken}}); err != nil || !in.Active || in.Username != "" {
		t.Fatalf("introspect without the email scope = %+v, %v", in, err)
	}
	// Another client's revocation changes nothing.
	if err := w.p.Revoke(t.Context(), basic, url.Values{"token": {res.RefreshToken}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.p.UserInfo(t.Context(), res.AccessToken); err != nil {
		t.Fatal(err)
	}
	if err := w.p.Revoke(t.Context(), oidc.ClientAuthentication{}, url.Values{"client_id": {publicID}, "token": {res.RefreshToken}}); err != nil {
		t.Fatal(err)
	}
	_, err = w.p.UserInfo(t.Context(), res.AccessToken)
	mustOAuthCode(t, err, "invalid_token")
	for _, tok := range []string{res.AccessToken, res.RefreshToken, "garbage"} {
		if in, err := w.p.Introspect(t.Context(), basic, url.Values{"token": {tok}}); err != nil || in.Active {
			t.Fatalf("introspect after revocation = %+v, %v", in, err)
		}
	}
	t.Run("banned_and_deleted_users", func(t *testing.T) {
		for _, del := range []bool{false, true} {
			u := w.principal(t, map[bool]string{false: "b@example.com", true: "d@example.com"}[del])
			res, err := w.exchange(t, w.mustCodeFor(t, publicRequest(), u))
			if err != nil {
				t.Fatal(err)
			}
			if del {
				err = w.Users.Delete(t.Context(), u.User.ID())
			} else {
				mustBan(t, w, u.User.ID())
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = w.p.UserInfo(t.Context(), res.AccessToken)
			mustOAuthCode(t, err, "invalid_token")
			_, err = w.p.Token(t.Context(), oidc.ClientAuthentication{}, url.Values{"grant_type": {"refresh_token"}, "client_id": {publicID}, "refresh_token": {res.RefreshToken}})
			mustOAuthCode(t, err, "invalid_grant")
		}
	})
}

func TestOAuthEndSession(t *testing.T) {
	w := newOAuthWorld(t)
	signedUp := w.MustSignUp(t, "ada@example.com")
	p := &usecase.Principal{Session: signedUp.Session, User: signedUp.User}
	if _, err := w.p.Consent(t.Context(), oidc.ConsentDecision{Principal: *p, Accept: true,
		Query: url.Values{"response_type": {"code"}, "code_challenge": {challenge(testVerifier)}, "code_challenge_method": {"S256"}, "client_id": {confID}, "redirect_uri": {confURI}, "scope": {"openid"}}.Encode()}); err != nil {
		t.Fatal(err)
	}
	code := w.mustCodeFor(t, url.Values{"response_type": {"code"}, "code_challenge": {challenge(testVerifier)}, "code_challenge_method": {"S256"}, "client_id": {confID}, "redirect_uri": {confURI}, "scope": {"openid"}}, p)
	res, err := w.p.Token(t.Context(), oidc.ClientAuthentication{HasBasic: true, BasicID: confID, BasicSecret: confSecret},
		url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {confURI}, "code_verifier": {testVerifier}})
	if err != nil {
		t.Fatal(err)
	}
	end := func(q url.Values, pr *usecase.Principal, confirmed bool) (oidc.EndSessionResult, error) {
		return w.p.EndSession(t.Context(), oidc.EndSession{Params: q, Principal: pr, Confirmed: confirmed})
	}
	for name, q := range map[string]url.Values{
		"unregistered_uri":  {"id_token_hint": {res.IDToken}, "post_logout_redirect_uri": {logoutURI + "x"}},
		"uri_without_hint":  {"post_logout_redirect_uri": {logoutURI}},
		"client_disagrees":  {"id_token_hint": {res.IDToken}, "client_id": {publicID}},
		"access_token_hint": {"id_token_hint": {res.AccessToken}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := end(q, p, false); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	out, err := end(url.Values{"client_id": {confID}, "post_logout_redirect_uri": {logoutURI}}, p, false)
	if err != nil || out.SignedOut || !strings.HasPrefix(out.Redirect, "https://id.example.com/sign-out?") {
		t.Fatalf("without hint = %+v, %v", out, err)
	}
	// A hint from an earlier sign-in of the same user does not end a later
	// session without asking.
	later := domain.NewSession("later", p.User.ID(), domain.HashToken("later"), true, "", "",
		domain.SessionPolicy{Lifetime: time.Hour, ShortLifetime: time.Hour}, w.Clock.Now().Add(time.Minute))
	out, err = end(url.Values{"id_token_hint": {res.IDToken}}, &usecase.Principal{Session: later, User: p.User}, false)
	if err != nil || out.SignedOut || !strings.HasPrefix(out.Redirect, "https://id.example.com/sign-out?") {
		t.Fatalf("hint of an earlier sign-in = %+v, %v", out, err)
	}
	w.Clock.Advance(2 * time.Hour) // an expired hint is fine
	out, err = end(url.Values{"id_token_hint": {res.IDToken}, "post_logout_redirect_uri": {logoutURI}, "state": {"xyz"}}, p, false)
	if err != nil || !out.SignedOut || out.Redirect != logoutURI+"?state=xyz" {
		t.Fatalf("with hint = %+v, %v", out, err)
	}
	if _, err := w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: signedUp.Token}); err == nil {
		t.Fatal("the session survived end-session")
	}
}

func TestOAuthDescribe(t *testing.T) {
	w := newOAuthWorld(t)
	got, err := w.p.DescribeAuthorization(t.Context(), url.Values{"client_id": {confID}, "redirect_uri": {confURI}, "scope": {"openid email"}})
	if err != nil || got.ClientName != "Web" || got.RedirectOrigin != "https://web.example.com" || len(got.Scopes) != 2 || got.FirstParty {
		t.Fatalf("DescribeAuthorization = %+v, %v", got, err)
	}
	if _, err := w.p.DescribeAuthorization(t.Context(), url.Values{"client_id": {confID}, "redirect_uri": {confURI + "/"}}); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("unregistered redirect_uri: %v", err)
	}
	out, err := w.p.DescribeLogout(t.Context(), url.Values{"client_id": {confID}, "post_logout_redirect_uri": {logoutURI}})
	if err != nil || out.ClientName != "Web" || out.RedirectOrigin != "https://web.example.com" {
		t.Fatalf("DescribeLogout = %+v, %v", out, err)
	}
	if _, err := w.p.DescribeLogout(t.Context(), url.Values{"client_id": {publicID}, "post_logout_redirect_uri": {logoutURI}}); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("another client's post-logout URI: %v", err)
	}
}

// replayingGrants runs replay just before the first grant is stored: a code
// presented again while its first exchange is between consuming the code
// and storing the grant.
type replayingGrants struct {
	*memory.OAuthGrantRepository
	replay func()
	done   atomic.Bool // the replay runs once (it stores a grant itself)
}

func (r *replayingGrants) CreateGrant(ctx context.Context, g domain.OAuthGrant, refresh *domain.RefreshToken) error {
	if r.done.CompareAndSwap(false, true) {
		r.replay()
	}
	return r.OAuthGrantRepository.CreateGrant(ctx, g, refresh)
}

// Ensure a code replayed while its first exchange is still storing the
// grant leaves no usable grant: both exchanges fail.
func TestOAuthToken_code_replayed_during_its_first_exchange(t *testing.T) {
	w := newOAuthWorld(t)
	p := w.principal(t, "ada@example.com")
	code := w.mustCodeFor(t, publicRequest(), p)
	form := url.Values{"grant_type": {"authorization_code"}, "client_id": {publicID}, "code": {code}, "redirect_uri": {publicURI}, "code_verifier": {testVerifier}}
	grants := &replayingGrants{OAuthGrantRepository: w.grants}
	provider := oidc.NewOAuthProvider(memory.NewOAuthClientRepository(w.DB), grants, w.Users, memory.NewSessionRepository(w.DB), w.Events, w.keys,
		system.NewTokenGenerator(), system.NewIDGenerator(), w.Clock, w.settings, w.World.Settings)
	var replayErr error
	grants.replay = func() { _, replayErr = provider.Token(t.Context(), oidc.ClientAuthentication{}, form) }
	_, err := provider.Token(t.Context(), oidc.ClientAuthentication{}, form)
	mustOAuthCode(t, err, "invalid_grant")
	mustOAuthCode(t, replayErr, "invalid_grant")
}

func TestOAuthConsents_list_and_revoke(t *testing.T) {
	w := newOAuthWorld(t)
	ada, bob := w.principal(t, "ada@example.com"), w.principal(t, "bob@example.com")
	q := url.Values{"response_type": {"code"}, "code_challenge": {challenge(testVerifier)}, "code_challenge_method": {"S256"}, "client_id": {confID},
		"redirect_uri": {confURI}, "scope": {"openid email offline_access"}, "state": {"s"}}
	basic := oidc.ClientAuthentication{HasBasic: true, BasicID: confID, BasicSecret: url.QueryEscape(confSecret)}
	// tokensFor consents to the confidential client as p and exchanges the code.
	tokensFor := func(p *usecase.Principal) oidc.TokenResponse {
		t.Helper()
		target, err := w.p.Consent(t.Context(), oidc.ConsentDecision{Principal: *p, Accept: true, Query: q.Encode()})
		if err != nil {
			t.Fatal(err)
		}
		code := mustRedirect(t, target, confURI+"?code=").Get("code")
		res, err := w.p.Token(t.Context(), basic, url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {confURI}, "code_verifier": {testVerifier}})
		if err != nil || res.RefreshToken == "" {
			t.Fatalf("token = %+v, %v", res, err)
		}
		return res
	}
	refresh := func(token string) (oidc.TokenResponse, error) {
		return w.p.Token(t.Context(), basic, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}})
	}
	adas, bobs := tokensFor(ada), tokensFor(bob)
	// A first-party grant of the public client, which has no consent.
	spa, err := w.exchange(t, w.mustCodeFor(t, publicRequest(), ada))
	if err != nil {
		t.Fatal(err)
	}

	list, err := w.p.Consents(t.Context(), ada)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ClientID != confID || list[0].ClientName != "Web" ||
		strings.Join(list[0].Scopes, " ") != "openid email offline_access" || list[0].CreatedAt.IsZero() || list[0].UpdatedAt.IsZero() {
		t.Fatalf("Consents = %+v", list)
	}

	if err := w.p.RevokeConsent(t.Context(), ada, confID); err != nil {
		t.Fatal(err)
	}
	_, err = w.p.UserInfo(t.Context(), adas.AccessToken)
	mustOAuthCode(t, err, "invalid_token")
	_, err = refresh(adas.RefreshToken)
	mustOAuthCode(t, err, "invalid_grant")
	target, err := w.p.Authorize(t.Context(), q, ada)
	if err != nil {
		t.Fatal(err)
	}
	mustRedirect(t, target, "https://id.example.com/consent?")
	if list, err := w.p.Consents(t.Context(), ada); err != nil || len(list) != 0 {
		t.Fatalf("Consents after revocation = %+v, %v", list, err)
	}

	// Bob's grant of the same client and Ada's grant of another client stay.
	if _, err := w.p.UserInfo(t.Context(), bobs.AccessToken); err != nil {
		t.Fatalf("bob's userinfo: %v", err)
	}
	if _, err := refresh(bobs.RefreshToken); err != nil {
		t.Fatalf("bob's refresh: %v", err)
	}
	if _, err := w.p.UserInfo(t.Context(), spa.AccessToken); err != nil {
		t.Fatalf("the public client's userinfo: %v", err)
	}

	usecasetest.MustCode(t, w.p.RevokeConsent(t.Context(), ada, confID), "oauth_consent.not_found") // nothing left
	usecasetest.MustCode(t, w.p.RevokeConsent(t.Context(), ada, "nobody"), "oauth_consent.not_found")
	if err := w.p.RevokeConsent(t.Context(), nil, confID); domain.KindOf(err) != domain.KindUnauthenticated {
		t.Fatalf("RevokeConsent without principal = %v", err)
	}
	if _, err := w.p.Consents(t.Context(), nil); domain.KindOf(err) != domain.KindUnauthenticated {
		t.Fatalf("Consents without principal = %v", err)
	}
}

// Ensure acr_values picks the first class the session meets or the
// second-factor page can bring it to, that a class out of reach is passed
// over (the code is issued, its acr says what was met), that prompt=none
// needing a step-up answers interaction_required, that the sign-in
// continuation drops max_age (max_age=0 would loop), and that a passkey
// session's amr and acr reach the ID token.
func TestOAuthAuthorize_acr_values(t *testing.T) {
	w := newOAuthWorld(t)
	p := w.principal(t, "ada@example.com")
	acr := func(v string) func(url.Values) { return func(q url.Values) { q.Set("acr_values", v) } }
	const stepUp = "https://id.example.com/two-factor?callbackURL=%2Fapi%2Fauth%2Foauth2%2Fauthorize%3F"

	// No second factor: mfa is out of reach, the code is issued.
	w.mustCodeFor(t, publicRequest(acr(domain.ACRMultiFactor)), p)

	p.User.SetTwoFactorEnabled(true, w.Clock.Now())
	for name, tc := range map[string]struct{ values, prefix string }{
		"mfa_steps_up":                  {domain.ACRMultiFactor, stepUp},
		"phr_out_of_reach_then_mfa":     {domain.ACRPhishingResistant + " " + domain.ACRMultiFactor, stepUp},
		"pwd_first_is_met":              {domain.ACRPassword + " " + domain.ACRMultiFactor, publicURI + "?code="},
		"unknown_values_ignored":        {"urn:example:gold silver", publicURI + "?code="},
		"phr_alone_out_of_reach_issues": {domain.ACRPhishingResistant, publicURI + "?code="},
	} {
		t.Run(name, func(t *testing.T) {
			target, err := w.p.Authorize(t.Context(), publicRequest(acr(tc.values)), p)
			if err != nil {
				t.Fatal(err)
			}
			mustRedirect(t, target, tc.prefix)
		})
	}
	target, _ := w.p.Authorize(t.Context(), publicRequest(acr(domain.ACRMultiFactor), func(q url.Values) { q.Set("prompt", "none") }), p)
	if q := mustRedirect(t, target, publicURI+"?"); q.Get("error") != "interaction_required" {
		t.Fatalf("prompt=none needing a step-up = %s", target)
	}
	target, _ = w.p.Authorize(t.Context(), publicRequest(acr(strings.Repeat("x", 1025))), p)
	if q := mustRedirect(t, target, publicURI+"?"); q.Get("error") != "invalid_request" {
		t.Fatalf("acr_values of 1025 characters = %s", target)
	}

	w.Clock.Advance(time.Second)
	target, _ = w.p.Authorize(t.Context(), publicRequest(func(q url.Values) { q.Set("max_age", "0") }), p)
	back, _ := url.Parse(mustRedirect(t, target, "https://id.example.com/sign-in?").Get("callbackURL"))
	if back.Query().Has("max_age") || back.Path != "/api/auth/oauth2/authorize" {
		t.Fatalf("sign-in continuation = %s, want the request without max_age", back)
	}

	// A passkey session meets every class.
	p.Session.Authenticate(domain.PasskeyAuthentication(false, w.Clock.Now()))
	res, err := w.exchange(t, w.mustCodeFor(t, publicRequest(acr(domain.ACRPhishingResistant)), p))
	if err != nil {
		t.Fatal(err)
	}
	id, err := w.keys.Verify(t.Context(), res.IDToken, oidc.VerifyOptions{Alg: domain.AlgRS256, Type: "JWT", Issuer: w.settings.Issuer, Audience: publicID})
	if err != nil {
		t.Fatal(err)
	}
	if amr, _ := id["amr"].([]any); len(amr) != 3 || amr[0] != "hwk" || amr[1] != "user" || amr[2] != "mfa" || id["acr"] != domain.ACRPhishingResistant {
		t.Fatalf("passkey ID token amr %v, acr %v", id["amr"], id["acr"])
	}
}
