package memory

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.SigningKeyRepository = (*SigningKeyRepository)(nil)

// SigningKeyRepository keeps signing keys in the shared DB. They refer to
// nothing and nothing refers to them; they share the DB's lock so that a
// unit of work covers them too.
type SigningKeyRepository struct {
	db *DB
}

// NewSigningKeyRepository returns a SigningKeyRepository on db.
func NewSigningKeyRepository(db *DB) *SigningKeyRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &SigningKeyRepository{db: db}
}

// copySigningKey returns an independent copy of k as the SQL stores keep it.
func copySigningKey(k domain.SigningKey) domain.SigningKey {
	k.PublicJWK = bytes.Clone(k.PublicJWK)
	k.SealedPrivate = bytes.Clone(k.SealedPrivate)
	k.CreatedAt = timestampOrZero(k.CreatedAt)
	k.ActivatesAt = timestampOrZero(k.ActivatesAt)
	k.RetiredAt = timestampOrZero(k.RetiredAt)
	return k
}

// Create implements ports.SigningKeyRepository.
func (r *SigningKeyRepository) Create(ctx context.Context, k domain.SigningKey) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.signingKeys[k.ID]; ok {
		return domain.ErrSigningKeyExists
	}
	set(r.db, r.db.signingKeys, k.ID, copySigningKey(k))
	return nil
}

// List implements ports.SigningKeyRepository.
func (r *SigningKeyRepository) List(ctx context.Context) ([]domain.SigningKey, error) {
	locked := r.db.rlock(ctx)
	out := make([]domain.SigningKey, 0, len(r.db.signingKeys))
	for _, k := range r.db.signingKeys {
		out = append(out, copySigningKey(k))
	}
	r.db.runlock(locked)
	slices.SortFunc(out, func(a, b domain.SigningKey) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Retire implements ports.SigningKeyRepository.
func (r *SigningKeyRepository) Retire(ctx context.Context, id domain.SigningKeyID, at time.Time) error {
	defer r.db.unlock(r.db.lock(ctx))
	k, ok := r.db.signingKeys[id]
	if !ok {
		return domain.ErrSigningKeyNotFound
	}
	if at = domain.Timestamp(at); k.RetiredAt.IsZero() || at.Before(k.RetiredAt) {
		k.RetiredAt = at
		set(r.db, r.db.signingKeys, id, k)
	}
	return nil
}

// DeleteRetiredBefore implements ports.SigningKeyRepository.
func (r *SigningKeyRepository) DeleteRetiredBefore(ctx context.Context, t time.Time) (int, error) {
	t = domain.Timestamp(t)
	defer r.db.unlock(r.db.lock(ctx))
	n := 0
	for id, k := range r.db.signingKeys {
		if !k.RetiredAt.IsZero() && k.RetiredAt.Before(t) {
			unset(r.db, r.db.signingKeys, id)
			n++
		}
	}
	return n, nil
}
