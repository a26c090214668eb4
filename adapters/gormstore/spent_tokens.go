package gormstore

import (
	"context"
	"database/sql/driver"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.SpentTokens = (*SpentTokens)(nil)

// SpentTokens stores spent tokens in the spent_tokens table, one row per
// hash, so that every replica sees a spend at once.
type SpentTokens struct {
	db *gorm.DB
}

// NewSpentTokens returns SpentTokens on db.
func NewSpentTokens(db *gorm.DB) *SpentTokens {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &SpentTokens{db: db}
}

type spentTokenRow struct {
	Hash      []byte    `gorm:"column:hash;primaryKey"`
	ExpiresAt time.Time `gorm:"column:expires_at;not null;index:spent_tokens_expires_at_idx"`
}

func (spentTokenRow) TableName() string { return "spent_tokens" }

// spendSQL inserts the hash, or takes over its row when that entry has
// expired: one statement, atomic on both dialects (on PostgreSQL the
// conflicting row is locked and the condition checked against its latest
// version). A refused spend changes no row.
const spendSQL = `INSERT INTO spent_tokens (hash, expires_at) VALUES (?, ?)
ON CONFLICT (hash) DO UPDATE SET expires_at = excluded.expires_at
WHERE spent_tokens.expires_at <= ?`

// Spend implements ports.SpentTokens.
func (s *SpentTokens) Spend(ctx context.Context, hash []byte, expiresAt, now time.Time) (bool, error) {
	if err := ports.ValidateSpend(hash); err != nil {
		return false, err
	}
	res := s.db.WithContext(ctx).Exec(spendSQL, blob(hash), domain.Timestamp(expiresAt), domain.Timestamp(now))
	if res.Error != nil {
		return false, convertErr("spent_tokens.spend", res.Error, nil, nil)
	}
	return res.RowsAffected == 1, nil
}

// DeleteExpired implements ports.SpentTokens, through
// spent_tokens_expires_at_idx.
func (s *SpentTokens) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	res := s.db.WithContext(ctx).Where("expires_at <= ?", domain.Timestamp(before)).Delete(&spentTokenRow{})
	if res.Error != nil {
		return 0, convertErr("spent_tokens.delete_expired", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}

// blob passes bytes to a raw statement as one value: gorm expands a bare
// []byte argument into a list.
type blob []byte

// Value implements driver.Valuer.
func (b blob) Value() (driver.Value, error) { return []byte(b), nil }
