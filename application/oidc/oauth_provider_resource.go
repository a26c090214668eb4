package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse/domain"
)

// errInvalidToken is userinfo's answer for every unusable access token.
var errInvalidToken = oauthError("invalid_token", "The access token is invalid, expired or revoked.")

// accessToken is a verified access token.
type accessToken struct {
	claims map[string]any
	grant  domain.OAuthGrant
	scopes []string
}

// verifyAccessToken checks an access token's signature, type, issuer,
// audience and lifetime (unless ignoreExpiry), then that its grant is still
// active. Every failure is errInvalidToken.
func (p *OAuthProvider) verifyAccessToken(ctx context.Context, token string, ignoreExpiry bool) (*accessToken, error) {
	if token == "" || strings.Count(token, ".") != 2 {
		return nil, errInvalidToken
	}
	claims, err := p.keys.Verify(ctx, token, VerifyOptions{Alg: domain.AlgRS256, Type: "at+jwt", Issuer: p.settings.Issuer,
		Audience: p.settings.AccessTokenAudience, IgnoreExpiry: ignoreExpiry})
	if err != nil {
		if domain.KindOf(err) == domain.KindUnauthenticated {
			return nil, errInvalidToken
		}
		return nil, err
	}
	gid, _ := claims["gid"].(string)
	if gid == "" {
		return nil, errInvalidToken
	}
	g, err := p.grants.GetGrant(ctx, domain.GrantID(gid))
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errInvalidToken
	}
	if err != nil {
		return nil, err
	}
	clientID, _ := claims["client_id"].(string)
	if clientID != string(g.ClientID) {
		return nil, errInvalidToken
	}
	if !ignoreExpiry && !g.Active(p.clock.Now()) {
		return nil, errInvalidToken
	}
	scope, _ := claims["scope"].(string)
	return &accessToken{claims: claims, grant: g, scopes: strings.Fields(scope)}, nil
}

// UserInfo is what the userinfo endpoint releases about a user: sub always,
// the rest by scope. Empty fields are absent from the answer.
type UserInfo struct {
	Subject       string
	Email         string
	EmailVerified *bool
	Name          string
	Picture       string
	UpdatedAt     int64
	// AMR and ACR say how the user signed in for the token's grant.
	AMR []string
	ACR string
}

// UserInfo answers the userinfo endpoint for an access token (OpenID
// Connect Core §5.3). An unusable token is invalid_token (401); a token
// without a user or without scope openid is insufficient_scope (403).
func (p *OAuthProvider) UserInfo(ctx context.Context, token string) (UserInfo, error) {
	at, err := p.verifyAccessToken(ctx, token, false)
	if err != nil {
		return UserInfo{}, err
	}
	if at.grant.UserID == "" || !slices.Contains(at.scopes, ScopeOpenID) {
		return UserInfo{}, oauthError("insufficient_scope", "The access token lacks the openid scope.")
	}
	u, err := p.users.Get(ctx, at.grant.UserID)
	if errors.Is(err, domain.ErrNotFound) {
		return UserInfo{}, errInvalidToken
	}
	if err != nil {
		return UserInfo{}, err
	}
	if u.IsBanned(p.clock.Now()) {
		return UserInfo{}, errInvalidToken
	}
	out := UserInfo{Subject: string(u.ID())}
	c := userClaims(u, at.scopes)
	if v, ok := c["email"].(string); ok {
		verified := u.EmailVerified()
		out.Email, out.EmailVerified = v, &verified
	}
	out.Name, _ = c["name"].(string)
	out.Picture, _ = c["picture"].(string)
	out.UpdatedAt, _ = c["updated_at"].(int64)
	a := authClaims(at.grant)
	out.AMR, _ = a["amr"].([]string)
	out.ACR, _ = a["acr"].(string)
	return out, nil
}

// Revoke revokes a refresh or access token of the authenticated client
// (RFC 7009): the token's whole grant ends. A token that is unknown, or
// another client's, is answered alike and changes nothing.
func (p *OAuthProvider) Revoke(ctx context.Context, auth ClientAuthentication, form url.Values) error {
	if err := singleValues(form); err != nil {
		return err
	}
	client, err := p.authenticateClient(ctx, auth, form)
	if err != nil {
		return err
	}
	token := form.Get("token")
	if token == "" {
		return oauthError("invalid_request", "token is required.")
	}
	if strings.HasPrefix(token, refreshTokenPrefix) {
		_, g, err := p.grants.GetRefreshToken(ctx, domain.HashToken(token))
		if errors.Is(err, domain.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if g.ClientID == client.ID {
			return p.revokeGrant(ctx, g.ID)
		}
		return nil
	}
	at, err := p.verifyAccessToken(ctx, token, true)
	if errors.Is(err, errInvalidToken) {
		return nil
	}
	if err != nil {
		return err
	}
	if at.grant.ClientID == client.ID {
		return p.revokeGrant(ctx, at.grant.ID)
	}
	return nil
}

// revokeGrant revokes a grant; a grant already gone is not an error.
func (p *OAuthProvider) revokeGrant(ctx context.Context, id domain.GrantID) error {
	err := p.grants.RevokeGrant(ctx, id, p.clock.Now())
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	return nil
}

// Introspection is a token's state (RFC 7662 §2.2). An inactive token has
// Active false and nothing else.
type Introspection struct {
	Active    bool
	Scope     string
	ClientID  string
	Subject   string
	Username  string
	TokenType string
	ExpiresAt int64
	IssuedAt  int64
	Issuer    string
	Audience  string
}

// Introspect tells a confidential client whether a token is active. Public
// clients may not introspect (invalid_client).
func (p *OAuthProvider) Introspect(ctx context.Context, auth ClientAuthentication, form url.Values) (Introspection, error) {
	if err := singleValues(form); err != nil {
		return Introspection{}, err
	}
	client, err := p.authenticateClient(ctx, auth, form)
	if err != nil {
		return Introspection{}, err
	}
	if client.Type != domain.OAuthClientConfidential {
		return Introspection{}, oauthError("invalid_client", "Only confidential clients may introspect tokens.")
	}
	token := form.Get("token")
	if token == "" {
		return Introspection{}, oauthError("invalid_request", "token is required.")
	}
	now := p.clock.Now()
	if strings.HasPrefix(token, refreshTokenPrefix) {
		rt, g, err := p.grants.GetRefreshToken(ctx, domain.HashToken(token))
		if errors.Is(err, domain.ErrNotFound) {
			return Introspection{}, nil
		}
		if err != nil {
			return Introspection{}, err
		}
		// A refresh token is only ever presented by the client it was
		// issued to: another client learns nothing about it.
		if !rt.UsedAt.IsZero() || !now.Before(rt.ExpiresAt) || !g.Active(now) || g.ClientID != client.ID {
			return Introspection{}, nil
		}
		out := Introspection{Active: true, Scope: strings.Join(g.Scopes, " "), ClientID: string(g.ClientID), Subject: string(g.UserID),
			TokenType: "refresh_token", ExpiresAt: rt.ExpiresAt.Unix(), IssuedAt: rt.CreatedAt.Unix(), Issuer: p.settings.Issuer, Audience: string(g.ClientID)}
		return p.withUser(ctx, out, g.UserID)
	}
	at, err := p.verifyAccessToken(ctx, token, false)
	if errors.Is(err, errInvalidToken) {
		return Introspection{}, nil
	}
	if err != nil {
		return Introspection{}, err
	}
	c := at.claims
	out := Introspection{Active: true, Scope: strings.Join(at.scopes, " "), ClientID: string(at.grant.ClientID), TokenType: "Bearer",
		ExpiresAt: claimInt(c["exp"]), IssuedAt: claimInt(c["iat"]), Issuer: p.settings.Issuer, Audience: p.settings.AccessTokenAudience}
	out.Subject, _ = c["sub"].(string)
	if at.grant.UserID == "" {
		return out, nil
	}
	return p.withUser(ctx, out, at.grant.UserID)
}

// withUser adds the user's address as username when the token's scopes
// include email (the user allowed no more), or reports the token inactive
// when the user is gone or banned.
func (p *OAuthProvider) withUser(ctx context.Context, out Introspection, id domain.UserID) (Introspection, error) {
	if id == "" {
		out.Subject = out.ClientID
		return out, nil
	}
	u, err := p.users.Get(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return Introspection{}, nil
	}
	if err != nil {
		return Introspection{}, err
	}
	if u.IsBanned(p.clock.Now()) {
		return Introspection{}, nil
	}
	if slices.Contains(strings.Fields(out.Scope), "email") {
		out.Username = string(u.Email())
	}
	return out, nil
}

// claimInt reads a numeric claim however the JSON decoder typed it.
func claimInt(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}
