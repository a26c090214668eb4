package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// SigningKeyRepository stores the key pairs tokens are signed with. The keys
// are few (two per rotation), so the signing-key use cases read them all and
// keep them in memory; no request reads this repository.
type SigningKeyRepository interface {
	// Create stores k. A taken id is domain.KindConflict.
	Create(ctx context.Context, k domain.SigningKey) error
	// List returns every stored key, oldest first (created_at, then id).
	List(ctx context.Context) ([]domain.SigningKey, error)
	// Retire sets the retirement time of key id to at, if it has none yet
	// or a later one: a retirement only ever moves earlier (a rotation in a
	// hurry brings forward one scheduled by a calm rotation). A missing key
	// is domain.ErrSigningKeyNotFound; retiring a key already retired at or
	// before at changes nothing and is not an error.
	Retire(ctx context.Context, id domain.SigningKeyID, at time.Time) error
	// DeleteRetiredBefore removes keys retired before t and returns how many.
	DeleteRetiredBefore(ctx context.Context, t time.Time) (int, error)
}

// OAuthClientRepository stores the OAuth clients administrators register.
// Deleting a client deletes its codes, grants (with their refresh tokens) and
// consents.
type OAuthClientRepository interface {
	// Create stores c. A taken id is domain.KindConflict.
	Create(ctx context.Context, c domain.OAuthClient) error
	// Get returns client id, or domain.ErrOAuthClientNotFound; one lookup by
	// primary key (every authorize and token request makes it).
	Get(ctx context.Context, id domain.OAuthClientID) (domain.OAuthClient, error)
	// Update loads the client, applies fn and saves it atomically. A missing
	// client is domain.ErrOAuthClientNotFound; fn's error is returned as is
	// and nothing is saved.
	Update(ctx context.Context, id domain.OAuthClientID, fn func(c *domain.OAuthClient) error) error
	// Delete removes the client and everything issued to it, or returns
	// domain.ErrOAuthClientNotFound.
	Delete(ctx context.Context, id domain.OAuthClientID) error
	// List returns every client, newest first (created_at, then id).
	List(ctx context.Context) ([]domain.OAuthClient, error)
}

// OAuthGrantRepository stores what the provider issues: authorization codes,
// grants with their refresh tokens, and consents. Deleting a user deletes
// their codes, grants and consents. Only hashes of codes and refresh tokens
// are stored.
type OAuthGrantRepository interface {
	// CreateCode stores an authorization code. A taken hash is
	// domain.KindConflict.
	CreateCode(ctx context.Context, c domain.AuthorizationCode) error
	// ConsumeCode marks the unexpired, unconsumed code with hash h consumed at
	// now by grant, atomically (of two concurrent exchanges, one wins), and
	// returns it. A code already consumed is returned with
	// domain.KindConflict (its GrantID names the grant to revoke); an
	// unknown or expired one is domain.ErrCodeNotFound.
	ConsumeCode(ctx context.Context, h domain.TokenHash, grant domain.GrantID, now time.Time) (domain.AuthorizationCode, error)

	// CreateGrant stores g and, when refresh is not nil, its first refresh
	// token, atomically. A taken grant id or refresh hash is
	// domain.KindConflict; a missing client or user domain.KindNotFound.
	CreateGrant(ctx context.Context, g domain.OAuthGrant, refresh *domain.RefreshToken) error
	// GetGrant returns grant id, revoked or not, or domain.ErrGrantNotFound;
	// one lookup by primary key.
	GetGrant(ctx context.Context, id domain.GrantID) (domain.OAuthGrant, error)
	// RevokeGrant sets the grant's revocation time to at if it has none and
	// deletes its unused refresh tokens' usability (they are found as
	// belonging to a revoked grant). A missing grant is domain.ErrGrantNotFound.
	RevokeGrant(ctx context.Context, id domain.GrantID, at time.Time) error

	// GetRefreshToken returns the refresh token with hash h and its grant in
	// one query, used or not, or domain.ErrRefreshNotFound.
	GetRefreshToken(ctx context.Context, h domain.TokenHash) (domain.RefreshToken, domain.OAuthGrant, error)
	// RotateRefreshToken marks the token with hash old used at now and stores
	// next, atomically, only if old is still unused: when another request
	// used it first, nothing changes and the error is domain.KindConflict.
	RotateRefreshToken(ctx context.Context, old domain.TokenHash, next domain.RefreshToken, now time.Time) error

	// GetConsent returns what user allowed client, or domain.ErrConsentNotFound.
	GetConsent(ctx context.Context, user domain.UserID, client domain.OAuthClientID) (domain.Consent, error)
	// PutConsent creates or replaces the consent of c.UserID for c.ClientID.
	PutConsent(ctx context.Context, c domain.Consent) error
	// ListConsents returns every consent of user, most recently updated
	// first (updated_at, then client id).
	ListConsents(ctx context.Context, user domain.UserID) ([]domain.Consent, error)
	// RevokeConsent deletes the consent of user for client and sets the
	// revocation time of every unrevoked grant of that user and client to
	// at, atomically, so their access and refresh tokens stop working. When
	// there is neither a consent nor an unrevoked grant (nothing to revoke),
	// the error is domain.ErrConsentNotFound.
	RevokeConsent(ctx context.Context, user domain.UserID, client domain.OAuthClientID, at time.Time) error

	// DeleteExpired removes codes and grants (with their refresh tokens) that
	// expired before now, and returns how many rows went.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}
