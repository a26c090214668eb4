package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// The federation stores. Implementations are safe for concurrent use and
// return copies. Deleting a user deletes their linked accounts and their
// sign-in states (a link in flight); deleting an identity provider deletes
// its linked accounts, its domain bindings and its sign-in states; deleting
// a domain removes it from any provider's Domains.

// IdentityProviderRepository stores the upstream identity providers.
type IdentityProviderRepository interface {
	// Create stores p. A taken id is domain.ErrIdentityProviderExists; one
	// of p.Domains already bound to another provider is
	// domain.ErrIdentityProviderDomainTaken; a missing organization or
	// domain is domain.KindNotFound.
	Create(ctx context.Context, p domain.IdentityProvider) error
	// Get returns provider id, or domain.ErrIdentityProviderNotFound; one
	// lookup by primary key (every sign-in and callback makes it).
	Get(ctx context.Context, id domain.IdentityProviderID) (domain.IdentityProvider, error)
	// List returns every provider, in id order.
	List(ctx context.Context) ([]domain.IdentityProvider, error)
	// Update loads provider id, applies fn and saves it atomically (its
	// domain bindings included). A missing provider is
	// domain.ErrIdentityProviderNotFound; fn's error is returned as is and
	// nothing is saved; bindings as for Create.
	Update(ctx context.Context, id domain.IdentityProviderID, fn func(p *domain.IdentityProvider) error) error
	// Delete removes provider id with its linked accounts, bindings and
	// states, or returns domain.ErrIdentityProviderNotFound.
	Delete(ctx context.Context, id domain.IdentityProviderID) error
	// GetByDomain returns the provider domain d is bound to, or
	// domain.ErrIdentityProviderNotFound; one indexed lookup.
	GetByDomain(ctx context.Context, d domain.DomainID) (domain.IdentityProvider, error)
}

// LinkedAccountRepository stores the upstream identities tied to users.
type LinkedAccountRepository interface {
	// Create stores a. A taken (provider, subject) or id is
	// domain.ErrLinkedAccountExists; a missing user ErrUserNotFound; a
	// missing provider domain.ErrIdentityProviderNotFound.
	Create(ctx context.Context, a domain.LinkedAccount) error
	// CreateWithUser stores the new user u and their first linked account
	// a atomically: both or neither. A taken user id or address is
	// ErrUserExists; a taken (provider, subject) or account id
	// domain.ErrLinkedAccountExists; a missing provider
	// domain.ErrIdentityProviderNotFound.
	CreateWithUser(ctx context.Context, u *domain.User, a domain.LinkedAccount) error
	// GetBySubject returns the account of (provider, subject), or
	// domain.ErrLinkedAccountNotFound; one indexed lookup.
	GetBySubject(ctx context.Context, provider domain.IdentityProviderID, subject string) (domain.LinkedAccount, error)
	// ListByUser returns user's accounts, oldest first (created_at, then id).
	ListByUser(ctx context.Context, user domain.UserID) ([]domain.LinkedAccount, error)
	// ListByUsers returns the accounts of every user in users (at most 100),
	// each user's oldest first, in one query: a page of users is listed
	// with its accounts at a flat cost.
	ListByUsers(ctx context.Context, users []domain.UserID) ([]domain.LinkedAccount, error)
	// Update loads user's account id, applies fn and saves it atomically
	// (only Email, Scopes, SealedTokens, the expiries and UpdatedAt change).
	// Another user's or a missing account is domain.ErrLinkedAccountNotFound.
	Update(ctx context.Context, user domain.UserID, id domain.LinkedAccountID, fn func(a *domain.LinkedAccount) error) error
	// Delete removes user's account id. With keepOne, it removes it only if
	// the user keeps another linked account, atomically (of two concurrent
	// unlinks of a user's last two accounts, one fails), else
	// domain.ErrLastLinkedAccount. Another user's or a missing account is
	// domain.ErrLinkedAccountNotFound.
	Delete(ctx context.Context, user domain.UserID, id domain.LinkedAccountID, keepOne bool) error
}

// FederationStateRepository stores the sign-ins in flight at upstream
// providers, by the hash of their state parameter.
type FederationStateRepository interface {
	// Create stores s. A taken hash is domain.ErrFederationStateExists; a
	// missing provider domain.ErrIdentityProviderNotFound; a missing link
	// user ErrUserNotFound.
	Create(ctx context.Context, s domain.FederationState) error
	// Consume marks the unused state unexpired at at used and returns it,
	// atomically: of two uses, one wins. A used, expired or unknown state is
	// domain.ErrFederationStateNotFound.
	Consume(ctx context.Context, idHash []byte, at time.Time) (domain.FederationState, error)
	// DeleteExpired removes states that expired before before and returns
	// how many.
	DeleteExpired(ctx context.Context, before time.Time) (int, error)
}

// UpstreamProvider is an identity provider with its client secret opened,
// as the federation client needs it.
type UpstreamProvider struct {
	Provider     domain.IdentityProvider
	ClientSecret string
}

// UpstreamAuthorization is what an authorization request carries.
type UpstreamAuthorization struct {
	State string
	// Verifier is the PKCE code verifier; the request carries its S256
	// challenge.
	Verifier    string
	Nonce       string // OpenID Connect only
	RedirectURI string
	// Scopes replace the provider's when not empty.
	Scopes    []string
	LoginHint string
}

// UpstreamIdentity is who the provider says the person is.
type UpstreamIdentity struct {
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
	Image         string
	// AMR is the upstream ID token's amr claim, when it has one.
	AMR []string
	// Profile is the raw profile (userinfo, or GitHub's user object), for
	// account-info.
	Profile map[string]any
}

// UpstreamTokens are the provider's tokens. Zero times are unknown.
type UpstreamTokens struct {
	AccessToken           string
	RefreshToken          string
	IDToken               string
	AccessTokenExpiresAt  time.Time
	RefreshTokenExpiresAt time.Time
	Scopes                []string
}

// UpstreamMetadata is what the provider's discovery says that the callback
// checks.
type UpstreamMetadata struct {
	// Issuer is the provider's issuer ("" for GitHub).
	Issuer string
	// IssuerInResponse is the RFC 9207
	// authorization_response_iss_parameter_supported flag: the callback
	// then must carry iss, equal to Issuer.
	IssuerInResponse bool
	// AuthorizationEndpoint is where sign-ins start (the override, else
	// discovery's, else the preset's).
	AuthorizationEndpoint string
}

// FederationClient talks to upstream providers. Discovery documents and key
// sets are cached per provider; a token signed by a key the cache does not
// know makes it fetch the key set again (key rotation), at most once per
// few seconds. Errors are domain.ErrUpstreamDiscovery, ErrUpstreamCode,
// ErrUpstreamIDToken, ErrUpstreamUserInfo or ErrUpstreamRefresh, with the
// cause wrapped for the log. Implementations are safe for concurrent use.
type FederationClient interface {
	// Metadata returns the provider's issuer and RFC 9207 flag.
	Metadata(ctx context.Context, p UpstreamProvider) (UpstreamMetadata, error)
	// AuthorizationURL returns where to send the browser: the authorization
	// endpoint with response_type=code, client_id, redirect_uri, scope,
	// state, the PKCE S256 challenge, nonce (OpenID Connect) and login_hint.
	AuthorizationURL(ctx context.Context, p UpstreamProvider, a UpstreamAuthorization) (string, error)
	// Exchange redeems code with the PKCE verifier and returns who signed
	// in and the tokens. For OpenID Connect the ID token is required and
	// verified: its signature against the provider's key set (never alg
	// none, never an HMAC), iss, aud (azp when several), exp and iat, and
	// nonce equal to nonce; e-mail and name missing from it are read from
	// userinfo. For GitHub the profile and the verified primary e-mail come
	// from its API.
	Exchange(ctx context.Context, p UpstreamProvider, code, verifier, redirectURI, nonce string) (UpstreamIdentity, UpstreamTokens, error)
	// VerifyIDToken verifies an ID token a native app got itself, as
	// Exchange does; nonce is checked when not empty.
	VerifyIDToken(ctx context.Context, p UpstreamProvider, rawIDToken, nonce string) (UpstreamIdentity, error)
	// Refresh redeems a refresh token. A provider that sends no new refresh
	// token leaves RefreshToken empty.
	Refresh(ctx context.Context, p UpstreamProvider, refreshToken string) (UpstreamTokens, error)
	// UserInfo reads the profile with an access token (userinfo, or
	// GitHub's API).
	UserInfo(ctx context.Context, p UpstreamProvider, accessToken string) (UpstreamIdentity, error)
}
