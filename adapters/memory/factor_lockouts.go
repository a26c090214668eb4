package memory

import (
	"context"

	"github.com/gatehouse/gatehouse/domain"
)

func storedFactorLockout(l domain.FactorLockout) domain.FactorLockout {
	l.LockedUntil = timestampOrZero(l.LockedUntil)
	l.UpdatedAt = timestampOrZero(l.UpdatedAt)
	return l
}

// GetLockout implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) GetLockout(ctx context.Context, user domain.UserID) (domain.FactorLockout, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	if l, ok := r.db.factorLockouts[user]; ok {
		return l, nil
	}
	return domain.FactorLockout{UserID: user}, nil
}

// UpdateLockout implements ports.TwoFactorRepository under the write lock.
func (r *TwoFactorRepository) UpdateLockout(ctx context.Context, user domain.UserID, fn func(l *domain.FactorLockout) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	if !r.db.hasUser(user) {
		return domain.ErrUserNotFound
	}
	l, ok := r.db.factorLockouts[user]
	if !ok {
		l = domain.FactorLockout{UserID: user}
	}
	if err := fn(&l); err != nil {
		return err
	}
	l.UserID = user
	set(r.db, r.db.factorLockouts, user, storedFactorLockout(l))
	return nil
}
