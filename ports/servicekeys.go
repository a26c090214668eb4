package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// ServiceKeyRepository stores service keys and the hashes of their secrets.
// Implementations are safe for concurrent use and return copies.
type ServiceKeyRepository interface {
	// Create stores k with its first secret, atomically. A taken id or
	// secret hash is an error of kind domain.KindConflict.
	Create(ctx context.Context, k *domain.ServiceKey, secret domain.ServiceKeySecret) error
	// Get returns the key id (revoked or not), or domain.KindNotFound.
	Get(ctx context.Context, id domain.ServiceKeyID) (*domain.ServiceKey, error)
	// List returns every key, revoked ones included, newest first.
	List(ctx context.Context) ([]*domain.ServiceKey, error)
	// GetBySecretHash returns the key owning the secret with hash h and that
	// secret, in one indexed query: this is the hot path of every trusted
	// request. An unknown hash is domain.KindNotFound. Revoked keys have no
	// secrets left, so they are never found; expiry is the caller's to check.
	GetBySecretHash(ctx context.Context, h domain.TokenHash) (*domain.ServiceKey, domain.ServiceKeySecret, error)
	// Rotate adds secret as the key's newest and gives the newest until
	// then the expiry oldExpiresAt, deleting every secret rotated out
	// before (a key has at most two live secrets: the newest and, during
	// an overlap, the one before it); a zero oldExpiresAt deletes the older
	// secrets at once. fn is applied to the key (to record the new secret's last four
	// characters) in the same transaction. A revoked or missing key is
	// domain.KindNotFound.
	Rotate(ctx context.Context, id domain.ServiceKeyID, secret domain.ServiceKeySecret, oldExpiresAt time.Time, fn func(k *domain.ServiceKey) error) error
	// Revoke marks the key revoked at now and deletes all its secrets,
	// atomically, so the next lookup of any of them fails. A missing or
	// already revoked key is domain.KindNotFound.
	Revoke(ctx context.Context, id domain.ServiceKeyID, now time.Time) error
	// TouchLastUsed records when keys were last used, in one batch. Unknown
	// ids are ignored, and a stored time is never moved backwards.
	TouchLastUsed(ctx context.Context, used map[domain.ServiceKeyID]time.Time) error
	// DeleteExpiredSecrets removes secrets whose overlap ended before now
	// and returns how many.
	DeleteExpiredSecrets(ctx context.Context, now time.Time) (int, error)
}
