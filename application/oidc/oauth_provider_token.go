package oidc

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// ClientAuthentication is what a request to the token, revocation or
// introspection endpoint carries in its Authorization header to
// authenticate its client; the form's client_id and client_secret are read
// from the form itself.
type ClientAuthentication struct {
	// HasBasic says whether Authorization: Basic was sent; BasicID and
	// BasicSecret are its user and password, still form-url-encoded as RFC
	// 6749 §2.3.1 requires clients to send them.
	HasBasic    bool
	BasicID     string
	BasicSecret string
}

// TokenResponse is a successful token endpoint answer (RFC 6749 §5.1).
type TokenResponse struct {
	AccessToken  string
	TokenType    string
	ExpiresIn    int
	Scope        string
	IDToken      string
	RefreshToken string
}

// errInvalidGrant is the answer for every unusable code or refresh token:
// which check failed is not the client's business.
var errInvalidGrant = oauthError("invalid_grant", "The grant is invalid, expired or revoked.")

// singleValues refuses repeated parameters (RFC 6749 §3.1, §3.2).
func singleValues(form url.Values) error {
	for k, v := range form {
		if len(v) > 1 {
			return oauthError("invalid_request", "The parameter "+quoteSafe(k)+" is repeated.")
		}
	}
	return nil
}

// authenticateClient identifies and authenticates the client of a token,
// revocation or introspection request: client_secret_basic or
// client_secret_post for confidential clients (the secret's hash compared in
// constant time), client_id alone for public clients.
func (p *OAuthProvider) authenticateClient(ctx context.Context, auth ClientAuthentication, form url.Values) (domain.OAuthClient, error) {
	invalid := oauthError("invalid_client", "Client authentication failed.")
	id, secret := form.Get("client_id"), form.Get("client_secret")
	if auth.HasBasic {
		if form.Has("client_secret") {
			return domain.OAuthClient{}, oauthError("invalid_request", "Use one client authentication method, not two.")
		}
		bid, err1 := url.QueryUnescape(auth.BasicID)
		bsecret, err2 := url.QueryUnescape(auth.BasicSecret)
		if err1 != nil || err2 != nil {
			return domain.OAuthClient{}, invalid
		}
		if id != "" && id != bid {
			return domain.OAuthClient{}, oauthError("invalid_request", "client_id does not match the authenticated client.")
		}
		id, secret = bid, bsecret
	}
	if id == "" || len(id) > 256 {
		return domain.OAuthClient{}, invalid
	}
	client, err := p.clients.Get(ctx, domain.OAuthClientID(id))
	if errors.Is(err, domain.ErrNotFound) {
		return domain.OAuthClient{}, invalid
	}
	if err != nil {
		return domain.OAuthClient{}, err
	}
	if client.Type == domain.OAuthClientConfidential {
		if secret == "" || !sameSecret(string(domain.HashToken(secret)), string(client.SecretHash)) {
			return domain.OAuthClient{}, invalid
		}
		return client, nil
	}
	if secret != "" {
		return domain.OAuthClient{}, invalid // a public client has no secret to send
	}
	return client, nil
}

// Token handles a token endpoint request (POST /oauth2/token, a form).
func (p *OAuthProvider) Token(ctx context.Context, auth ClientAuthentication, form url.Values) (TokenResponse, error) {
	if err := singleValues(form); err != nil {
		return TokenResponse{}, err
	}
	grantType := form.Get("grant_type")
	if grantType == "" {
		return TokenResponse{}, oauthError("invalid_request", "grant_type is required.")
	}
	client, err := p.authenticateClient(ctx, auth, form)
	if err != nil {
		return TokenResponse{}, err
	}
	switch grantType {
	case "authorization_code":
		return p.exchangeCode(ctx, client, form)
	case "refresh_token":
		return p.refresh(ctx, client, form)
	case "client_credentials":
		return p.clientCredentials(ctx, client, form)
	default:
		return TokenResponse{}, oauthError("unsupported_grant_type", "The grant type is not supported.")
	}
}

// exchangeCode redeems an authorization code. The code is consumed first,
// atomically, so that of two exchanges one wins; a consumed code presented
// again revokes the grant its first exchange created (RFC 6749 §4.1.2).
func (p *OAuthProvider) exchangeCode(ctx context.Context, client domain.OAuthClient, form url.Values) (TokenResponse, error) {
	secret, redirectURI, verifier := form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier")
	if secret == "" || redirectURI == "" {
		return TokenResponse{}, oauthError("invalid_request", "code and redirect_uri are required.")
	}
	if verifier != "" && !isVerifier(verifier) {
		return TokenResponse{}, oauthError("invalid_request", "code_verifier must be 43 to 128 unreserved characters.")
	}
	now := p.clock.Now()
	gid := domain.GrantID(p.ids.NewID())
	code, err := p.grants.ConsumeCode(ctx, domain.HashToken(secret), gid, now)
	switch {
	case errors.Is(err, domain.ErrConflict):
		if code.GrantID != "" {
			if err := p.revokeReplayed(ctx, code, now); err != nil {
				return TokenResponse{}, err
			}
		}
		return TokenResponse{}, errInvalidGrant
	case errors.Is(err, domain.ErrNotFound):
		return TokenResponse{}, errInvalidGrant
	case err != nil:
		return TokenResponse{}, err
	}
	if code.ClientID != client.ID || code.RedirectURI != redirectURI {
		return TokenResponse{}, errInvalidGrant
	}
	if code.CodeChallenge != "" {
		if verifier == "" || !sameSecret(s256(verifier), code.CodeChallenge) {
			return TokenResponse{}, errInvalidGrant
		}
	} else if verifier != "" {
		return TokenResponse{}, errInvalidGrant // no challenge was sent: a verifier now is a downgrade attempt
	}
	user, err := p.liveUser(ctx, code.UserID)
	if err != nil {
		return TokenResponse{}, err
	}
	g := domain.OAuthGrant{ID: gid, ClientID: client.ID, UserID: code.UserID, Scopes: code.Scopes, AuthTime: code.AuthTime,
		AMR: code.AMR, ACR: code.ACR, Nonce: code.Nonce, CreatedAt: now, ExpiresAt: now.Add(p.settings.AccessTokenLifetime)}
	var rt *domain.RefreshToken
	var refresh string
	if slices.Contains(code.Scopes, ScopeOfflineAccess) {
		g.ExpiresAt = now.Add(p.settings.RefreshTokenLifetime)
		refresh = refreshTokenPrefix + p.tokens.NewSecret(43)
		rt = &domain.RefreshToken{Hash: domain.HashToken(refresh), GrantID: gid, CreatedAt: now, ExpiresAt: g.ExpiresAt}
	}
	if err := p.grants.CreateGrant(ctx, g, rt); errors.Is(err, domain.ErrConflict) {
		return TokenResponse{}, errInvalidGrant // the code was replayed meanwhile: see revokeReplayed
	} else if err != nil {
		return TokenResponse{}, err
	}
	return p.issueTokens(ctx, client, g, code.Scopes, user, code.Nonce, refresh)
}

// revokeReplayed revokes the grant that a replayed code's first exchange
// created. When that exchange has not stored its grant yet, a revoked grant
// with its id takes the place first, so the first exchange's insert fails
// and it issues nothing: the replay wins the race either way.
func (p *OAuthProvider) revokeReplayed(ctx context.Context, code domain.AuthorizationCode, now time.Time) error {
	err := p.grants.RevokeGrant(ctx, code.GrantID, now)
	if !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	revoked := domain.OAuthGrant{ID: code.GrantID, ClientID: code.ClientID, UserID: code.UserID, Scopes: code.Scopes,
		AuthTime: code.AuthTime, CreatedAt: now, ExpiresAt: now, RevokedAt: now}
	switch err := p.grants.CreateGrant(ctx, revoked, nil); {
	case errors.Is(err, domain.ErrConflict): // the first exchange stored it after all
		return p.grants.RevokeGrant(ctx, code.GrantID, now)
	case errors.Is(err, domain.ErrNotFound): // the client or the user is gone, and the grant with them
		return nil
	default:
		return err
	}
}

// isVerifier reports whether s is a PKCE code verifier: 43 to 128
// characters of [A-Za-z0-9-._~] (RFC 7636 §4.1).
func isVerifier(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// liveUser returns the grant's user if they still exist and are not banned.
func (p *OAuthProvider) liveUser(ctx context.Context, id domain.UserID) (*domain.User, error) {
	u, err := p.users.Get(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errInvalidGrant
	}
	if err != nil {
		return nil, err
	}
	if u.IsBanned(p.clock.Now()) {
		return nil, errInvalidGrant
	}
	return u, nil
}

// refresh exchanges a refresh token for new tokens and its successor. A
// used token presented again is reuse: the whole grant is revoked (RFC 9700
// §4.14.2), and so is it when a concurrent rotation won the race.
func (p *OAuthProvider) refresh(ctx context.Context, client domain.OAuthClient, form url.Values) (TokenResponse, error) {
	old := form.Get("refresh_token")
	if old == "" {
		return TokenResponse{}, oauthError("invalid_request", "refresh_token is required.")
	}
	now := p.clock.Now()
	rt, g, err := p.grants.GetRefreshToken(ctx, domain.HashToken(old))
	if errors.Is(err, domain.ErrNotFound) {
		return TokenResponse{}, errInvalidGrant
	}
	if err != nil {
		return TokenResponse{}, err
	}
	if g.ClientID != client.ID || !g.Active(now) || !now.Before(rt.ExpiresAt) {
		return TokenResponse{}, errInvalidGrant
	}
	if !rt.UsedAt.IsZero() {
		return TokenResponse{}, p.revokeForReuse(ctx, g.ID, now)
	}
	scopes := g.Scopes
	if raw := form.Get("scope"); raw != "" {
		if scopes, err = parseScope(raw); err != nil {
			return TokenResponse{}, err
		}
		if !covers(g.Scopes, scopes) {
			return TokenResponse{}, oauthError("invalid_scope", "The scope exceeds what was granted.")
		}
	}
	user, err := p.liveUser(ctx, g.UserID)
	if err != nil {
		return TokenResponse{}, err
	}
	next := refreshTokenPrefix + p.tokens.NewSecret(43)
	err = p.grants.RotateRefreshToken(ctx, rt.Hash, domain.RefreshToken{Hash: domain.HashToken(next), GrantID: g.ID, CreatedAt: now, ExpiresAt: g.ExpiresAt}, now)
	if errors.Is(err, domain.ErrConflict) {
		return TokenResponse{}, p.revokeForReuse(ctx, g.ID, now)
	}
	if err != nil {
		return TokenResponse{}, err
	}
	return p.issueTokens(ctx, client, g, scopes, user, "", next)
}

// revokeForReuse revokes a grant whose refresh token was used twice.
func (p *OAuthProvider) revokeForReuse(ctx context.Context, id domain.GrantID, now time.Time) error {
	if err := p.grants.RevokeGrant(ctx, id, now); err != nil && !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	return errInvalidGrant
}

// clientCredentials issues a confidential client an access token for
// itself. The token belongs to a grant without user, so it can be revoked.
func (p *OAuthProvider) clientCredentials(ctx context.Context, client domain.OAuthClient, form url.Values) (TokenResponse, error) {
	if client.Type != domain.OAuthClientConfidential {
		return TokenResponse{}, oauthError("unauthorized_client", "Only confidential clients may use client_credentials.")
	}
	if raw := strings.TrimSpace(form.Get("scope")); raw != "" {
		return TokenResponse{}, oauthError("invalid_scope", "client_credentials grants no user scopes.")
	}
	now := p.clock.Now()
	g := domain.OAuthGrant{ID: domain.GrantID(p.ids.NewID()), ClientID: client.ID, AuthTime: now, CreatedAt: now,
		ExpiresAt: now.Add(p.settings.AccessTokenLifetime)}
	if err := p.grants.CreateGrant(ctx, g, nil); err != nil {
		return TokenResponse{}, err
	}
	return p.issueTokens(ctx, client, g, nil, nil, "", "")
}

// issueTokens signs the access token and, for scope openid, the ID token.
func (p *OAuthProvider) issueTokens(ctx context.Context, client domain.OAuthClient, g domain.OAuthGrant, scopes []string,
	user *domain.User, nonce, refresh string) (TokenResponse, error) {
	now := p.clock.Now()
	exp := now.Add(p.settings.AccessTokenLifetime)
	if g.ExpiresAt.Before(exp) {
		exp = g.ExpiresAt
	}
	sub := string(client.ID)
	if user != nil {
		sub = string(user.ID())
	}
	scope := strings.Join(scopes, " ")
	at := map[string]any{
		"iss": p.settings.Issuer, "sub": sub, "aud": p.settings.AccessTokenAudience, "client_id": string(client.ID),
		"scope": scope, "iat": now.Unix(), "exp": exp.Unix(), "jti": p.ids.NewID(), "gid": string(g.ID),
	}
	if user != nil {
		at["auth_time"] = g.AuthTime.Unix()
	}
	access, err := p.keys.Sign(ctx, domain.AlgRS256, "at+jwt", at)
	if err != nil {
		return TokenResponse{}, err
	}
	out := TokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(exp.Sub(now) / time.Second), Scope: scope, RefreshToken: refresh}
	if user == nil || !slices.Contains(scopes, ScopeOpenID) {
		return out, nil
	}
	id := map[string]any{
		"iss": p.settings.Issuer, "sub": sub, "aud": string(client.ID), "azp": string(client.ID),
		"iat": now.Unix(), "exp": now.Add(p.settings.IDTokenLifetime).Unix(), "auth_time": g.AuthTime.Unix(),
		"at_hash": leftHalfHash(access),
	}
	if nonce != "" {
		id["nonce"] = nonce
	}
	for k, v := range authClaims(g) {
		id[k] = v
	}
	for k, v := range userClaims(user, scopes) {
		id[k] = v
	}
	if out.IDToken, err = p.keys.Sign(ctx, domain.AlgRS256, "JWT", id); err != nil {
		return TokenResponse{}, err
	}
	return out, nil
}

// authClaims are amr and acr (OpenID Connect Core §2, RFC 8176): how the
// user signed in when the grant was authorized. A refresh repeats them: it
// proves nothing new about the user.
func authClaims(g domain.OAuthGrant) map[string]any {
	out := map[string]any{}
	if len(g.AMR) > 0 {
		out["amr"] = domain.Authentication{Methods: g.AMR}.MethodNames()
	}
	if g.ACR != "" {
		out["acr"] = g.ACR
	}
	return out
}

// userClaims are the standard claims the scopes release (OpenID Connect
// Core §5.4): email and email_verified for email; name, picture and
// updated_at for profile.
func userClaims(u *domain.User, scopes []string) map[string]any {
	out := map[string]any{}
	if slices.Contains(scopes, ScopeEmail) {
		out["email"], out["email_verified"] = string(u.Email()), u.EmailVerified()
	}
	if slices.Contains(scopes, ScopeProfile) {
		out["name"], out["updated_at"] = u.Name(), u.UpdatedAt().Unix()
		if u.Image() != "" {
			out["picture"] = u.Image()
		}
	}
	return out
}
