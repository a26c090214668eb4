package memory

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.FederationStateRepository = (*FederationStateRepository)(nil)

// FederationStateRepository keeps the sign-ins in flight at upstream
// providers in the shared DB. The single lock makes Consume atomic, as the
// SQL stores' conditional UPDATE is.
type FederationStateRepository struct{ db *DB }

// NewFederationStateRepository returns a FederationStateRepository on db.
func NewFederationStateRepository(db *DB) *FederationStateRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &FederationStateRepository{db: db}
}

func storedFederationState(s domain.FederationState) domain.FederationState {
	s.IDHash = cloneBytes(s.IDHash)
	s.SealedSecrets = cloneBytes(s.SealedSecrets)
	s.ExpiresAt = timestampOrZero(s.ExpiresAt)
	s.UsedAt = timestampOrZero(s.UsedAt)
	return s
}

// Create implements ports.FederationStateRepository. As the SQL insert, it
// checks the key before the foreign keys, and the linking user before the
// provider.
func (r *FederationStateRepository) Create(ctx context.Context, s domain.FederationState) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.federationStates[string(s.IDHash)]; ok {
		return domain.ErrFederationStateExists
	}
	if s.LinkUserID != "" && !r.db.hasUser(s.LinkUserID) {
		return domain.ErrUserNotFound
	}
	if _, ok := r.db.identityProviders[s.ProviderID]; !ok {
		return domain.ErrIdentityProviderNotFound
	}
	set(r.db, r.db.federationStates, string(s.IDHash), storedFederationState(s))
	return nil
}

// Consume implements ports.FederationStateRepository.
func (r *FederationStateRepository) Consume(ctx context.Context, idHash []byte, at time.Time) (domain.FederationState, error) {
	defer r.db.unlock(r.db.lock(ctx))
	s, ok := r.db.federationStates[string(idHash)]
	if !ok || !s.UsedAt.IsZero() || !domain.Timestamp(at).Before(s.ExpiresAt) {
		return domain.FederationState{}, domain.ErrFederationStateNotFound
	}
	s.UsedAt = domain.Timestamp(at)
	set(r.db, r.db.federationStates, string(idHash), s)
	return storedFederationState(s), nil
}

// DeleteExpired implements ports.FederationStateRepository.
func (r *FederationStateRepository) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	defer r.db.unlock(r.db.lock(ctx))
	n := 0
	for k, s := range r.db.federationStates {
		if s.ExpiresAt.Before(domain.Timestamp(before)) {
			unset(r.db, r.db.federationStates, k)
			n++
		}
	}
	return n, nil
}
