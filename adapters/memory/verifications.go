package memory

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.VerificationRepository = (*VerificationRepository)(nil)

// VerificationRepository keeps one-time links in the shared DB.
type VerificationRepository struct {
	db *DB
}

// NewVerificationRepository returns a VerificationRepository on db.
func NewVerificationRepository(db *DB) *VerificationRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &VerificationRepository{db: db}
}

func copyVerification(v *domain.Verification) *domain.Verification {
	c := *v
	return &c
}

// Create implements ports.VerificationRepository.
func (r *VerificationRepository) Create(ctx context.Context, v *domain.Verification) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.verifications[v.ID()]; ok {
		return domain.ErrVerificationExists
	}
	if _, ok := r.db.verificationByToken[v.TokenHash()]; ok {
		return domain.ErrVerificationExists
	}
	if !r.db.hasUser(v.UserID()) {
		return domain.ErrUserNotFound
	}
	set(r.db, r.db.verifications, v.ID(), copyVerification(v))
	set(r.db, r.db.verificationByToken, v.TokenHash(), v.ID())
	return nil
}

// Consume implements ports.VerificationRepository. The lookup and the removal
// happen under one write lock, so only one caller gets the link.
func (r *VerificationRepository) Consume(ctx context.Context, purpose domain.VerificationPurpose, h domain.TokenHash) (*domain.Verification, error) {
	defer r.db.unlock(r.db.lock(ctx))
	id, ok := r.db.verificationByToken[h]
	if !ok {
		return nil, domain.ErrVerificationNotFound
	}
	v := r.db.verifications[id]
	if v.Purpose() != purpose {
		// A link made for one purpose proves nothing about another, and
		// trying it must not use it up.
		return nil, domain.ErrVerificationNotFound
	}
	r.db.deleteVerification(id, v)
	return v, nil
}

// DeleteByUser implements ports.VerificationRepository.
func (r *VerificationRepository) DeleteByUser(ctx context.Context, userID domain.UserID, purpose domain.VerificationPurpose) (int, error) {
	defer r.db.unlock(r.db.lock(ctx))
	n := 0
	for id, v := range r.db.verifications {
		if v.UserID() == userID && v.Purpose() == purpose {
			r.db.deleteVerification(id, v)
			n++
		}
	}
	return n, nil
}

// DeleteExpired implements ports.VerificationRepository.
func (r *VerificationRepository) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	defer r.db.unlock(r.db.lock(ctx))
	n := 0
	for id, v := range r.db.verifications {
		if v.IsExpired(now) {
			r.db.deleteVerification(id, v)
			n++
		}
	}
	return n, nil
}
