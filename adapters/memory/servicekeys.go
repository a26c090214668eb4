package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.ServiceKeyRepository = (*ServiceKeyRepository)(nil)

// ServiceKeyRepository keeps service keys and their secrets in the shared DB.
type ServiceKeyRepository struct {
	db *DB
}

// NewServiceKeyRepository returns a ServiceKeyRepository on db.
func NewServiceKeyRepository(db *DB) *ServiceKeyRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &ServiceKeyRepository{db: db}
}

// copyServiceKey returns an independent copy (the scopes included), with
// lastUsed in place of the key's own when it is not zero.
func copyServiceKey(k *domain.ServiceKey, lastUsed time.Time) *domain.ServiceKey {
	if lastUsed.IsZero() {
		lastUsed = k.LastUsedAt()
	}
	return domain.RehydrateServiceKey(k.ID(), k.Name(), k.Scopes(), k.Last4(), k.CreatedBy(),
		k.ExpiresAt(), k.CreatedAt(), lastUsed, k.RevokedAt())
}

// storedSecret is secret as the SQL stores keep it: owned by keyID, its times
// in UTC at microsecond precision.
func storedSecret(secret domain.ServiceKeySecret, keyID domain.ServiceKeyID) domain.ServiceKeySecret {
	secret.KeyID = keyID
	secret.ExpiresAt = timestampOrZero(secret.ExpiresAt)
	secret.CreatedAt = timestampOrZero(secret.CreatedAt)
	return secret
}

func timestampOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return domain.Timestamp(t)
}

// Create implements ports.ServiceKeyRepository.
func (r *ServiceKeyRepository) Create(ctx context.Context, k *domain.ServiceKey, secret domain.ServiceKeySecret) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.serviceKeys[k.ID()]; ok {
		return domain.ErrServiceKeyExists
	}
	if _, ok := r.db.serviceKeySecrets[secret.Hash]; ok {
		return domain.ErrServiceKeyExists
	}
	set(r.db, r.db.serviceKeys, k.ID(), copyServiceKey(k, time.Time{}))
	set(r.db, r.db.serviceKeySecrets, secret.Hash, storedSecret(secret, k.ID()))
	return nil
}

// Get implements ports.ServiceKeyRepository.
func (r *ServiceKeyRepository) Get(ctx context.Context, id domain.ServiceKeyID) (*domain.ServiceKey, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	k, ok := r.db.serviceKeys[id]
	if !ok {
		return nil, domain.ErrServiceKeyNotFound
	}
	return copyServiceKey(k, time.Time{}), nil
}

// List implements ports.ServiceKeyRepository.
func (r *ServiceKeyRepository) List(ctx context.Context) ([]*domain.ServiceKey, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	out := make([]*domain.ServiceKey, 0, len(r.db.serviceKeys))
	for _, k := range r.db.serviceKeys {
		out = append(out, copyServiceKey(k, time.Time{}))
	}
	// Newest first, ties broken by id, the order the SQL stores use.
	slices.SortFunc(out, func(a, b *domain.ServiceKey) int {
		if c := b.CreatedAt().Compare(a.CreatedAt()); c != 0 {
			return c
		}
		return strings.Compare(string(b.ID()), string(a.ID()))
	})
	return out, nil
}

// GetBySecretHash implements ports.ServiceKeyRepository.
func (r *ServiceKeyRepository) GetBySecretHash(ctx context.Context, h domain.TokenHash) (*domain.ServiceKey, domain.ServiceKeySecret, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	secret, ok := r.db.serviceKeySecrets[h]
	if !ok {
		return nil, domain.ServiceKeySecret{}, domain.ErrServiceKeyNotFound
	}
	k, ok := r.db.serviceKeys[secret.KeyID]
	if !ok || !k.RevokedAt().IsZero() {
		return nil, domain.ServiceKeySecret{}, domain.ErrServiceKeyNotFound
	}
	return copyServiceKey(k, time.Time{}), secret, nil
}

// Rotate implements ports.ServiceKeyRepository. It holds the write lock
// while fn runs, and changes nothing unless every step succeeds.
func (r *ServiceKeyRepository) Rotate(ctx context.Context, id domain.ServiceKeyID, secret domain.ServiceKeySecret, oldExpiresAt time.Time, fn func(k *domain.ServiceKey) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.serviceKeys[id]
	if !ok || !stored.RevokedAt().IsZero() {
		return domain.ErrServiceKeyNotFound
	}
	if _, ok := r.db.serviceKeySecrets[secret.Hash]; ok {
		return domain.ErrServiceKeyExists
	}
	k := copyServiceKey(stored, time.Time{})
	if err := fn(k); err != nil {
		return err
	}
	oldExpiresAt = timestampOrZero(oldExpiresAt)
	for h, s := range r.db.serviceKeySecrets {
		switch {
		case s.KeyID != id:
		case oldExpiresAt.IsZero() || !s.ExpiresAt.IsZero():
			// Only the newest secret lives on through the overlap: one
			// rotated out earlier goes now, as the port promises.
			unset(r.db, r.db.serviceKeySecrets, h)
		default:
			s.ExpiresAt = oldExpiresAt
			set(r.db, r.db.serviceKeySecrets, h, s)
		}
	}
	set(r.db, r.db.serviceKeySecrets, secret.Hash, storedSecret(secret, id))
	set(r.db, r.db.serviceKeys, id, copyServiceKey(k, time.Time{}))
	return nil
}

// Revoke implements ports.ServiceKeyRepository.
func (r *ServiceKeyRepository) Revoke(ctx context.Context, id domain.ServiceKeyID, now time.Time) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.serviceKeys[id]
	if !ok || !stored.RevokedAt().IsZero() {
		return domain.ErrServiceKeyNotFound
	}
	k := copyServiceKey(stored, time.Time{})
	k.Revoke(now)
	set(r.db, r.db.serviceKeys, id, k)
	r.db.deleteServiceKeySecrets(id)
	return nil
}

// deleteServiceKeySecrets removes every secret of the key. The caller holds
// the write lock.
func (db *DB) deleteServiceKeySecrets(id domain.ServiceKeyID) {
	for h, s := range db.serviceKeySecrets {
		if s.KeyID == id {
			unset(db, db.serviceKeySecrets, h)
		}
	}
}

// TouchLastUsed implements ports.ServiceKeyRepository.
func (r *ServiceKeyRepository) TouchLastUsed(ctx context.Context, used map[domain.ServiceKeyID]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	defer r.db.unlock(r.db.lock(ctx))
	for id, t := range used {
		k, ok := r.db.serviceKeys[id]
		if !ok || t.IsZero() {
			continue
		}
		if t = domain.Timestamp(t); k.LastUsedAt().IsZero() || k.LastUsedAt().Before(t) {
			set(r.db, r.db.serviceKeys, id, copyServiceKey(k, t))
		}
	}
	return nil
}

// DeleteExpiredSecrets implements ports.ServiceKeyRepository. A secret whose
// expiry is now no longer works (see ServiceKeySecret.IsActive), so it goes.
func (r *ServiceKeyRepository) DeleteExpiredSecrets(ctx context.Context, now time.Time) (int, error) {
	defer r.db.unlock(r.db.lock(ctx))
	n := 0
	for h, s := range r.db.serviceKeySecrets {
		if !s.IsActive(now) {
			unset(r.db, r.db.serviceKeySecrets, h)
			n++
		}
	}
	return n, nil
}
