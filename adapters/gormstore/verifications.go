package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.VerificationRepository = (*VerificationRepository)(nil)

// VerificationRepository stores one-time links in the verifications table.
type VerificationRepository struct {
	db *gorm.DB
}

// NewVerificationRepository returns a VerificationRepository on db.
func NewVerificationRepository(db *gorm.DB) *VerificationRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &VerificationRepository{db: db}
}

// Create implements ports.VerificationRepository.
func (r *VerificationRepository) Create(ctx context.Context, v *domain.Verification) error {
	row := verificationFromDomain(v)
	return convertErr("verifications.create", conn(ctx, r.db).Create(&row).Error, domain.ErrUserNotFound, domain.ErrVerificationExists)
}

// Consume implements ports.VerificationRepository with one DELETE … RETURNING
// (PostgreSQL, and SQLite since 3.35): the database deletes the row for
// exactly one of any concurrent callers, and only that caller gets it back.
// A select-then-delete would hand the link to every caller that read it
// before the first delete.
func (r *VerificationRepository) Consume(ctx context.Context, purpose domain.VerificationPurpose, h domain.TokenHash) (*domain.Verification, error) {
	var rows []verificationRow
	res := conn(ctx, r.db).Clauses(clause.Returning{}).
		Where("token_hash = ? AND purpose = ?", string(h), string(purpose)).
		Delete(&rows)
	if res.Error != nil {
		return nil, convertErr("verifications.consume", res.Error, nil, nil)
	}
	if len(rows) == 0 {
		return nil, domain.ErrVerificationNotFound
	}
	return rows[0].toDomain(), nil
}

// DeleteByUser implements ports.VerificationRepository.
func (r *VerificationRepository) DeleteByUser(ctx context.Context, userID domain.UserID, purpose domain.VerificationPurpose) (int, error) {
	return deleteVerifications(conn(ctx, r.db).Where("user_id = ? AND purpose = ?", string(userID), string(purpose)), "verifications.delete_by_user")
}

// DeleteExpired implements ports.VerificationRepository. now is normalised
// like the stored times: SQLite compares them as text.
func (r *VerificationRepository) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return deleteVerifications(conn(ctx, r.db).Where("expires_at <= ?", domain.Timestamp(now)), "verifications.delete_expired")
}

func deleteVerifications(q *gorm.DB, op string) (int, error) {
	res := q.Delete(&verificationRow{})
	if res.Error != nil {
		return 0, convertErr(op, res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}
