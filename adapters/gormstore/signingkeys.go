package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.SigningKeyRepository = (*SigningKeyRepository)(nil)

// SigningKeyRepository stores signing keys in the signing_keys table. The
// private key is stored only as sealed by the JOSE adapter.
type SigningKeyRepository struct {
	db *gorm.DB
	// idOrder is the id column as List breaks ties: on PostgreSQL in the
	// "C" collation, byte by byte as SQLite and the memory store compare.
	idOrder string
}

// NewSigningKeyRepository returns the signing-key store.
func NewSigningKeyRepository(db *gorm.DB) *SigningKeyRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	id := "id"
	if DialectOf(db) == DialectPostgres {
		id = `id COLLATE "C"`
	}
	return &SigningKeyRepository{db: db, idOrder: id}
}

type signingKeyRow struct {
	ID            string     `gorm:"column:id;primaryKey;type:text"`
	Alg           string     `gorm:"column:alg;not null"`
	PublicJWK     string     `gorm:"column:public_jwk;not null"`
	SealedPrivate []byte     `gorm:"column:sealed_private;not null"`
	CreatedAt     time.Time  `gorm:"column:created_at;not null;autoCreateTime:false"`
	ActivatesAt   *time.Time `gorm:"column:activates_at"` // NULL only in rows written before 00011: created_at
	RetiredAt     *time.Time `gorm:"column:retired_at"`   // NULL while nothing replaces the key
}

func (signingKeyRow) TableName() string { return "signing_keys" }

func signingKeyFromDomain(k domain.SigningKey) signingKeyRow {
	return signingKeyRow{ID: string(k.ID), Alg: string(k.Alg), PublicJWK: string(k.PublicJWK), SealedPrivate: k.SealedPrivate,
		CreatedAt: domain.Timestamp(k.CreatedAt), ActivatesAt: nullTime(k.ActivatesAt), RetiredAt: nullTime(k.RetiredAt)}
}

func (r signingKeyRow) toDomain() domain.SigningKey {
	k := domain.SigningKey{ID: domain.SigningKeyID(r.ID), Alg: domain.SigningAlgorithm(r.Alg), PublicJWK: []byte(r.PublicJWK),
		SealedPrivate: r.SealedPrivate, CreatedAt: domain.Timestamp(r.CreatedAt), ActivatesAt: fromNullTime(r.ActivatesAt), RetiredAt: fromNullTime(r.RetiredAt)}
	if r.ActivatesAt == nil {
		k.ActivatesAt = k.CreatedAt // keys made before activation times signed at once
	}
	return k
}

// Create implements ports.SigningKeyRepository.
func (r *SigningKeyRepository) Create(ctx context.Context, k domain.SigningKey) error {
	row := signingKeyFromDomain(k)
	return convertErr("signing_keys.create", conn(ctx, r.db).Create(&row).Error, nil, domain.ErrSigningKeyExists)
}

// List implements ports.SigningKeyRepository.
func (r *SigningKeyRepository) List(ctx context.Context) ([]domain.SigningKey, error) {
	var rows []signingKeyRow
	if err := conn(ctx, r.db).Order("created_at, " + r.idOrder).Find(&rows).Error; err != nil {
		return nil, convertErr("signing_keys.list", err, nil, nil)
	}
	out := make([]domain.SigningKey, len(rows))
	for i, row := range rows {
		out[i] = row.toDomain()
	}
	return out, nil
}

// Retire implements ports.SigningKeyRepository: one conditional update, and
// a lookup only when it changed nothing, to tell a retired key from a
// missing one.
func (r *SigningKeyRepository) Retire(ctx context.Context, id domain.SigningKeyID, at time.Time) error {
	db := conn(ctx, r.db)
	at = domain.Timestamp(at)
	res := db.Model(&signingKeyRow{}).Where("id = ? AND (retired_at IS NULL OR retired_at > ?)", string(id), at).Update("retired_at", at)
	if res.Error != nil {
		return convertErr("signing_keys.retire", res.Error, nil, nil)
	}
	if res.RowsAffected > 0 {
		return nil
	}
	var n int64
	if err := db.Model(&signingKeyRow{}).Where("id = ?", string(id)).Count(&n).Error; err != nil {
		return convertErr("signing_keys.retire", err, nil, nil)
	}
	if n == 0 {
		return domain.ErrSigningKeyNotFound
	}
	return nil
}

// DeleteRetiredBefore implements ports.SigningKeyRepository.
func (r *SigningKeyRepository) DeleteRetiredBefore(ctx context.Context, t time.Time) (int, error) {
	res := conn(ctx, r.db).Where("retired_at IS NOT NULL AND retired_at < ?", domain.Timestamp(t)).Delete(&signingKeyRow{})
	if res.Error != nil {
		return 0, convertErr("signing_keys.delete_retired", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}
