package command

import (
	"context"
	"net/url"

	"github.com/gatehouse/gatehouse/ports"
)

// GROUNDWORK STUB: the OpenID-provider helper replaces this file. Keep the
// exported signatures below (the hosted pages call them).

// OAuthProvider is the OpenID Connect provider: authorization, consent,
// token exchange, userinfo, revocation, introspection and end-session.
type OAuthProvider struct {
	clients ports.OAuthClientRepository
	grants  ports.OAuthGrantRepository
	keys    *SigningKeys
}

// NewOAuthProvider returns the provider's use cases.
func NewOAuthProvider(clients ports.OAuthClientRepository, grants ports.OAuthGrantRepository, users ports.UserRepository,
	sessions ports.SessionRepository, keys *SigningKeys, tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock,
	settings TokenSettings, auth AuthSettings) *OAuthProvider {
	return &OAuthProvider{clients: clients, grants: grants, keys: keys}
}

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
	// RedirectOrigin is scheme://host[:port] of RedirectURI.
	RedirectOrigin string
}

// DescribeAuthorization validates an authorization request's client_id,
// redirect_uri and scope (the parameters of /api/auth/oauth2/authorize) and
// describes it. An unknown client or an unregistered redirect URI is
// domain.KindInvalid.
func (p *OAuthProvider) DescribeAuthorization(ctx context.Context, params url.Values) (AuthorizationPrompt, error) {
	panic("groundwork")
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
	panic("groundwork")
}
