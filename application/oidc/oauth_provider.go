package oidc

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// OAuthProvider is the OpenID Connect provider: authorization, consent,
// token exchange, userinfo, revocation, introspection and end-session. Its
// errors are domain errors whose Code is the OAuth error code (RFC 6749
// §4.1.2.1 and §5.2, RFC 6750 §3.1): invalid_request, invalid_client,
// invalid_grant, invalid_scope, unsupported_grant_type, unauthorized_client,
// invalid_token, insufficient_scope.
type OAuthProvider struct {
	clients  ports.OAuthClientRepository
	grants   ports.OAuthGrantRepository
	users    ports.UserRepository
	sessions ports.SessionRepository
	revoker  usecase.SessionRevoker
	keys     *SigningKeys
	tokens   ports.TokenGenerator
	ids      ports.IDGenerator
	clock    ports.Clock
	settings usecase.TokenSettings
}

// NewOAuthProvider returns the provider's use cases.
func NewOAuthProvider(clients ports.OAuthClientRepository, grants ports.OAuthGrantRepository, users ports.UserRepository,
	sessions ports.SessionRepository, events *usecase.Events, keys *SigningKeys, tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock,
	settings usecase.TokenSettings, auth usecase.AuthSettings) *OAuthProvider {
	usecase.MustHave(clients, grants, users, sessions, keys, tokens, ids, clock)
	if settings.BaseURL == "" {
		settings.BaseURL = auth.BaseURL
	}
	settings.BaseURL = strings.TrimRight(settings.BaseURL, "/")
	if settings.Issuer == "" {
		settings.Issuer = settings.BaseURL + "/api/auth"
	}
	if settings.AccessTokenAudience == "" {
		settings.AccessTokenAudience = settings.Issuer
	}
	return &OAuthProvider{clients: clients, grants: grants, users: users, sessions: sessions, keys: keys,
		revoker: usecase.NewSessionRevoker(sessions, events, clock),
		tokens:  tokens, ids: ids, clock: clock, settings: settings}
}

// The scopes the provider knows. Any other scope is invalid_scope.
const (
	ScopeOpenID        = "openid"
	ScopeProfile       = "profile"
	ScopeEmail         = "email"
	ScopeOfflineAccess = "offline_access"
)

// SupportedScopes lists the scopes in the order discovery publishes them.
var SupportedScopes = []string{ScopeOpenID, ScopeProfile, ScopeEmail, ScopeOfflineAccess}

// refreshTokenPrefix starts every refresh token, so leaked ones are easy to
// recognise (secret scanners).
const refreshTokenPrefix = "gh_rt_"

// oauthError returns a domain error carrying an OAuth error code. The kind
// decides the status: invalid_client and invalid_token are 401,
// insufficient_scope 403, everything else 400.
func oauthError(code, description string) *domain.Error {
	kind := domain.KindInvalid
	switch code {
	case "invalid_client", "invalid_token":
		kind = domain.KindUnauthenticated
	case "insufficient_scope", "access_denied":
		kind = domain.KindForbidden
	}
	return domain.NewError(kind, code, description)
}

// IsOAuthError reports whether err carries an OAuth error code, and which.
func IsOAuthError(err error) (code, description string, ok bool) {
	var de *domain.Error
	if !errors.As(err, &de) || de.Code == "" || strings.ContainsAny(de.Code, ".ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return "", "", false
	}
	return de.Code, de.Message, true
}

// parseScope splits a space-delimited scope parameter (RFC 6749 §3.3),
// dropping repeats. Unknown scopes are invalid_scope.
func parseScope(raw string) ([]string, error) {
	var out []string
	for s := range strings.SplitSeq(raw, " ") {
		if s == "" || slices.Contains(out, s) {
			continue
		}
		if !slices.Contains(SupportedScopes, s) {
			return nil, oauthError("invalid_scope", "The scope "+quoteSafe(s)+" is not supported.")
		}
		out = append(out, s)
	}
	return out, nil
}

// quoteSafe quotes a short, printable parameter value for an error
// description, or says "requested" when it is neither.
func quoteSafe(s string) string {
	if len(s) > 40 {
		return "requested"
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e || r == '"' || r == '\\' {
			return "requested"
		}
	}
	return `"` + s + `"`
}

// covers reports whether have includes every scope of want.
func covers(have, want []string) bool {
	for _, s := range want {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

// union returns a's scopes followed by b's that a lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// origin returns scheme://host[:port] of raw, or "".
func origin(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme == "":
		return ""
	case u.Host == "" && strings.Contains(u.Scheme, "."):
		// A native app's private-use scheme (RFC 8252 §7.1), such as
		// com.example.app: — a CSP scheme source.
		return strings.ToLower(u.Scheme) + ":"
	case u.Host == "":
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// s256 is the PKCE S256 transformation (RFC 7636 §4.2).
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// leftHalfHash is at_hash: the left half of the SHA-256 of an access token,
// base64url (OpenID Connect Core §3.1.3.6).
func leftHalfHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2])
}

// sameSecret compares two strings in constant time.
func sameSecret(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// AuthorizationPrompt describes a valid authorization request's client to a
// person: the consent page shows it, and the sign-in and consent pages allow
// their forms to lead to RedirectOrigin (CSP form-action).
type AuthorizationPrompt struct {
	ClientID   string
	ClientName string
	FirstParty bool
	// Scopes requested, in request order.
	Scopes      []string
	RedirectURI string
	// RedirectOrigin is scheme://host[:port] of RedirectURI, or "scheme:"
	// for a native app's private-use scheme.
	RedirectOrigin string
}

// DescribeAuthorization validates an authorization request's client_id,
// redirect_uri and scope (the parameters of /api/auth/oauth2/authorize) and
// describes it. An unknown client or an unregistered redirect URI is
// domain.KindInvalid.
func (p *OAuthProvider) DescribeAuthorization(ctx context.Context, params url.Values) (AuthorizationPrompt, error) {
	client, redirectURI, err := p.authorizationClient(ctx, params)
	if err != nil {
		return AuthorizationPrompt{}, err
	}
	scopes, err := parseScope(params.Get("scope"))
	if err != nil {
		return AuthorizationPrompt{}, err
	}
	return AuthorizationPrompt{ClientID: string(client.ID), ClientName: client.Name, FirstParty: client.FirstParty,
		Scopes: scopes, RedirectURI: redirectURI, RedirectOrigin: origin(redirectURI)}, nil
}

// LogoutPrompt describes an end-session request to the sign-out page.
type LogoutPrompt struct {
	ClientName string
	// RedirectOrigin is the origin of a valid post_logout_redirect_uri, or "".
	RedirectOrigin string
}

// DescribeLogout validates an end-session request's client_id and
// post_logout_redirect_uri (parameters of /api/auth/oauth2/end-session).
func (p *OAuthProvider) DescribeLogout(ctx context.Context, params url.Values) (LogoutPrompt, error) {
	req, err := p.logoutRequest(ctx, params)
	if err != nil {
		return LogoutPrompt{}, err
	}
	out := LogoutPrompt{RedirectOrigin: origin(req.redirectURI)}
	if req.client != nil {
		out.ClientName = req.client.Name
	}
	return out, nil
}
