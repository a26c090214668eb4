package memory

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.SigningKeyRepository = (*SigningKeyRepository)(nil)

// SigningKeyRepository keeps signing keys. They refer to nothing and nothing
// refers to them, so they live under a lock of their own rather than the
// shared DB's.
type SigningKeyRepository struct {
	mu   sync.RWMutex
	keys map[domain.SigningKeyID]domain.SigningKey
}

// NewSigningKeyRepository returns the signing-key store. db is taken so the
// memory adapters are wired alike; the keys do not need it.
func NewSigningKeyRepository(db *DB) *SigningKeyRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &SigningKeyRepository{keys: map[domain.SigningKeyID]domain.SigningKey{}}
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
func (r *SigningKeyRepository) Create(_ context.Context, k domain.SigningKey) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.keys[k.ID]; ok {
		return ports.ErrSigningKeyExists
	}
	r.keys[k.ID] = copySigningKey(k)
	return nil
}

// List implements ports.SigningKeyRepository.
func (r *SigningKeyRepository) List(_ context.Context) ([]domain.SigningKey, error) {
	r.mu.RLock()
	out := make([]domain.SigningKey, 0, len(r.keys))
	for _, k := range r.keys {
		out = append(out, copySigningKey(k))
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b domain.SigningKey) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Retire implements ports.SigningKeyRepository.
func (r *SigningKeyRepository) Retire(_ context.Context, id domain.SigningKeyID, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.keys[id]
	if !ok {
		return domain.ErrSigningKeyNotFound
	}
	if at = domain.Timestamp(at); k.RetiredAt.IsZero() || at.Before(k.RetiredAt) {
		k.RetiredAt = at
		r.keys[id] = k
	}
	return nil
}

// DeleteRetiredBefore implements ports.SigningKeyRepository.
func (r *SigningKeyRepository) DeleteRetiredBefore(_ context.Context, t time.Time) (int, error) {
	t = domain.Timestamp(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for id, k := range r.keys {
		if !k.RetiredAt.IsZero() && k.RetiredAt.Before(t) {
			delete(r.keys, id)
			n++
		}
	}
	return n, nil
}
