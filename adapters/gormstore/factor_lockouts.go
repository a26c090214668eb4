package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
)

type factorLockoutRow struct {
	UserID         string `gorm:"column:user_id;primaryKey;type:text"`
	FailedAttempts int    `gorm:"column:failed_attempts;not null"`
	// LockedUntil is NULL when the second factor is not locked.
	LockedUntil *time.Time `gorm:"column:locked_until"`
	UpdatedAt   time.Time  `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

func (factorLockoutRow) TableName() string { return "factor_lockouts" }

func (r factorLockoutRow) toDomain() domain.FactorLockout {
	l := domain.FactorLockout{UserID: domain.UserID(r.UserID), FailedAttempts: r.FailedAttempts, UpdatedAt: r.UpdatedAt}
	if r.LockedUntil != nil {
		l.LockedUntil = *r.LockedUntil
	}
	return l
}

func factorLockoutFromDomain(l domain.FactorLockout) factorLockoutRow {
	r := factorLockoutRow{UserID: string(l.UserID), FailedAttempts: l.FailedAttempts, UpdatedAt: domain.Timestamp(l.UpdatedAt)}
	if !l.LockedUntil.IsZero() {
		t := domain.Timestamp(l.LockedUntil)
		r.LockedUntil = &t
	}
	return r
}

// GetLockout implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) GetLockout(ctx context.Context, user domain.UserID) (domain.FactorLockout, error) {
	var rows []factorLockoutRow
	if err := conn(ctx, r.db).Where("user_id = ?", string(user)).Limit(1).Find(&rows).Error; err != nil {
		return domain.FactorLockout{}, convertErr("factor_lockouts.get", err, nil, nil)
	}
	if len(rows) == 0 {
		return domain.FactorLockout{UserID: user}, nil
	}
	return rows[0].toDomain(), nil
}

// UpdateLockout implements ports.TwoFactorRepository. The row is inserted
// when missing (doing nothing when a concurrent insert won), then read
// locked (SELECT … FOR UPDATE on PostgreSQL; SQLite's immediate
// transaction holds the write lock), so concurrent failures are counted one
// after another.
func (r *TwoFactorRepository) UpdateLockout(ctx context.Context, user domain.UserID, fn func(l *domain.FactorLockout) error) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		blank := factorLockoutRow{UserID: string(user), UpdatedAt: domain.Timestamp(time.Now())}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&blank).Error; err != nil {
			return err
		}
		q := tx
		if DialectOf(tx) == DialectPostgres {
			q = tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
		}
		var row factorLockoutRow
		if err := q.Where("user_id = ?", string(user)).Take(&row).Error; err != nil {
			return err
		}
		l := row.toDomain()
		if err := fn(&l); err != nil {
			return err
		}
		l.UserID = user
		next := factorLockoutFromDomain(l)
		// Select("*") writes every column, so a lifted lockout stores NULL.
		return tx.Model(&factorLockoutRow{}).Where("user_id = ?", next.UserID).Select("*").Updates(&next).Error
	})
	return convertErr("factor_lockouts.update", err, domain.ErrUserNotFound, nil)
}
