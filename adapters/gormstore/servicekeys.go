package gormstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.ServiceKeyRepository = (*ServiceKeyRepository)(nil)

// ServiceKeyRepository stores service keys in the service_keys table and the
// hashes of their secrets in service_key_secrets.
type ServiceKeyRepository struct {
	db *gorm.DB
}

// NewServiceKeyRepository returns a ServiceKeyRepository on db.
func NewServiceKeyRepository(db *gorm.DB) *ServiceKeyRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &ServiceKeyRepository{db: db}
}

type serviceKeyRow struct {
	ID        string `gorm:"column:id;primaryKey;type:text"`
	Name      string `gorm:"column:name;not null"`
	Scopes    string `gorm:"column:scopes;not null"` // separated by spaces
	Last4     string `gorm:"column:last4;not null"`
	CreatedBy string `gorm:"column:created_by;not null"`
	// ExpiresAt, LastUsedAt and RevokedAt are NULL when not set.
	ExpiresAt  *time.Time `gorm:"column:expires_at"`
	CreatedAt  time.Time  `gorm:"column:created_at;not null;autoCreateTime:false;index:service_keys_created_at_idx"`
	LastUsedAt *time.Time `gorm:"column:last_used_at"`
	RevokedAt  *time.Time `gorm:"column:revoked_at"`
}

func (serviceKeyRow) TableName() string { return "service_keys" }

type serviceKeySecretRow struct {
	Hash  string `gorm:"column:hash;primaryKey;type:text"`
	KeyID string `gorm:"column:key_id;not null;index:service_key_secrets_key_id_idx"`
	// ExpiresAt is NULL for the newest secret.
	ExpiresAt *time.Time `gorm:"column:expires_at;index:service_key_secrets_expires_at_idx"`
	CreatedAt time.Time  `gorm:"column:created_at;not null;autoCreateTime:false"`
}

func (serviceKeySecretRow) TableName() string { return "service_key_secrets" }

// serviceKeySecretLookupRow is one row of the secret lookup, which reads the
// secret and its key in one query. The prefixes keep the two tables' columns
// apart.
type serviceKeySecretLookupRow struct {
	Key    serviceKeyRow       `gorm:"embedded;embeddedPrefix:k_"`
	Secret serviceKeySecretRow `gorm:"embedded;embeddedPrefix:s_"`
}

// nullTime maps a zero time to NULL and normalises any other, as SQLite
// compares times as text.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = domain.Timestamp(t)
	return &t
}

// fromNullTime maps NULL to the zero time and a time to UTC.
func fromNullTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return domain.Timestamp(*t)
}

func serviceKeyFromDomain(k *domain.ServiceKey) serviceKeyRow {
	scopes := make([]string, 0, len(k.Scopes()))
	for _, s := range k.Scopes() {
		scopes = append(scopes, string(s))
	}
	return serviceKeyRow{
		ID: string(k.ID()), Name: k.Name(), Scopes: strings.Join(scopes, " "), Last4: k.Last4(), CreatedBy: k.CreatedBy(),
		ExpiresAt: nullTime(k.ExpiresAt()), CreatedAt: domain.Timestamp(k.CreatedAt()),
		LastUsedAt: nullTime(k.LastUsedAt()), RevokedAt: nullTime(k.RevokedAt()),
	}
}

func (r serviceKeyRow) toDomain() *domain.ServiceKey {
	// Spaces separate the scopes; commas are accepted too, for rows written
	// by hand.
	fields := strings.FieldsFunc(r.Scopes, func(c rune) bool { return c == ' ' || c == ',' })
	scopes := make([]domain.Scope, 0, len(fields))
	for _, f := range fields {
		scopes = append(scopes, domain.Scope(f))
	}
	return domain.RehydrateServiceKey(domain.ServiceKeyID(r.ID), r.Name, scopes, r.Last4, r.CreatedBy,
		fromNullTime(r.ExpiresAt), r.CreatedAt, fromNullTime(r.LastUsedAt), fromNullTime(r.RevokedAt))
}

// serviceKeySecretFromDomain returns the row of secret, owned by keyID
// whatever secret.KeyID says.
func serviceKeySecretFromDomain(s domain.ServiceKeySecret, keyID domain.ServiceKeyID) serviceKeySecretRow {
	return serviceKeySecretRow{Hash: string(s.Hash), KeyID: string(keyID), ExpiresAt: nullTime(s.ExpiresAt), CreatedAt: domain.Timestamp(s.CreatedAt)}
}

func (r serviceKeySecretRow) toDomain() domain.ServiceKeySecret {
	return domain.ServiceKeySecret{Hash: domain.TokenHash(r.Hash), KeyID: domain.ServiceKeyID(r.KeyID),
		ExpiresAt: fromNullTime(r.ExpiresAt), CreatedAt: domain.Timestamp(r.CreatedAt)}
}

// serviceKeySecretLookupSQL reads a secret and its key in one round trip,
// through the primary keys of service_key_secrets and service_keys. Every
// trusted request runs it. Revoked keys have no secrets left; the revoked_at
// test only makes sure of it.
//
// #nosec G101 -- an SQL query (it compares secret hashes), not a credential
const serviceKeySecretLookupSQL = `SELECT
 k.id AS k_id, k.name AS k_name, k.scopes AS k_scopes, k.last4 AS k_last4, k.created_by AS k_created_by,
 k.expires_at AS k_expires_at, k.created_at AS k_created_at, k.last_used_at AS k_last_used_at, k.revoked_at AS k_revoked_at,
 s.hash AS s_hash, s.key_id AS s_key_id, s.expires_at AS s_expires_at, s.created_at AS s_created_at
FROM service_key_secrets s JOIN service_keys k ON k.id = s.key_id
WHERE s.hash = ? AND k.revoked_at IS NULL`

// Create implements ports.ServiceKeyRepository.
func (r *ServiceKeyRepository) Create(ctx context.Context, k *domain.ServiceKey, secret domain.ServiceKeySecret) error {
	key := serviceKeyFromDomain(k)
	sec := serviceKeySecretFromDomain(secret, k.ID())
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		if err := tx.Create(&key).Error; err != nil {
			return err
		}
		return tx.Create(&sec).Error
	})
	return convertErr("service_keys.create", err, nil, domain.ErrServiceKeyExists)
}

// Get implements ports.ServiceKeyRepository.
func (r *ServiceKeyRepository) Get(ctx context.Context, id domain.ServiceKeyID) (*domain.ServiceKey, error) {
	var row serviceKeyRow
	if err := conn(ctx, r.db).Where("id = ?", string(id)).Take(&row).Error; err != nil {
		return nil, convertErr("service_keys.get", err, domain.ErrServiceKeyNotFound, nil)
	}
	return row.toDomain(), nil
}

// List implements ports.ServiceKeyRepository. Ties in created_at are broken
// by id, so the order is the same on every store.
func (r *ServiceKeyRepository) List(ctx context.Context) ([]*domain.ServiceKey, error) {
	var rows []serviceKeyRow
	if err := conn(ctx, r.db).Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, convertErr("service_keys.list", err, nil, nil)
	}
	out := make([]*domain.ServiceKey, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}

// GetBySecretHash implements ports.ServiceKeyRepository.
func (r *ServiceKeyRepository) GetBySecretHash(ctx context.Context, h domain.TokenHash) (*domain.ServiceKey, domain.ServiceKeySecret, error) {
	var row serviceKeySecretLookupRow
	res := conn(ctx, r.db).Raw(serviceKeySecretLookupSQL, string(h)).Scan(&row)
	if res.Error != nil {
		return nil, domain.ServiceKeySecret{}, convertErr("service_keys.get_by_secret_hash", res.Error, nil, nil)
	}
	if res.RowsAffected == 0 {
		return nil, domain.ServiceKeySecret{}, domain.ErrServiceKeyNotFound
	}
	return row.Key.toDomain(), row.Secret.toDomain(), nil
}

// lockActiveServiceKey reads key id for update inside tx: on PostgreSQL the
// row is locked with SELECT … FOR UPDATE, so concurrent rotations and
// revocations of one key run one after another; on SQLite the immediate
// transaction already holds the database's write lock. A missing or revoked
// key is not found.
func lockActiveServiceKey(tx *gorm.DB, id domain.ServiceKeyID) (*domain.ServiceKey, error) {
	q := tx
	if DialectOf(tx) == DialectPostgres {
		q = tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
	}
	var row serviceKeyRow
	if err := q.Where("id = ?", string(id)).Take(&row).Error; err != nil {
		return nil, convertErr("service_keys.lock", err, domain.ErrServiceKeyNotFound, nil)
	}
	if row.RevokedAt != nil {
		return nil, domain.ErrServiceKeyNotFound
	}
	return row.toDomain(), nil
}

// Rotate implements ports.ServiceKeyRepository in one transaction: the new
// secret is inserted, the older secrets get their expiry (or go), and the
// key as fn leaves it is written back.
func (r *ServiceKeyRepository) Rotate(ctx context.Context, id domain.ServiceKeyID, secret domain.ServiceKeySecret, oldExpiresAt time.Time, fn func(k *domain.ServiceKey) error) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		k, err := lockActiveServiceKey(tx, id)
		if err != nil {
			return err
		}
		// The new secret goes in first, so that a taken hash, even one of
		// this key's own secrets, is a conflict.
		sec := serviceKeySecretFromDomain(secret, id)
		if err := tx.Create(&sec).Error; err != nil {
			return err
		}
		// Secrets rotated out earlier go now; the newest until now lives on
		// through the overlap, if there is one: a key has at most two.
		older := func() *gorm.DB { return tx.Where("key_id = ? AND hash <> ?", string(id), sec.Hash) }
		if oldExpiresAt.IsZero() {
			err = older().Delete(&serviceKeySecretRow{}).Error
		} else if err = older().Where("expires_at IS NOT NULL").Delete(&serviceKeySecretRow{}).Error; err == nil {
			err = older().Model(&serviceKeySecretRow{}).Where("expires_at IS NULL").
				Update("expires_at", domain.Timestamp(oldExpiresAt)).Error
		}
		if err != nil {
			return err
		}
		if err := fn(k); err != nil {
			return err
		}
		row := serviceKeyFromDomain(k)
		return tx.Model(&serviceKeyRow{}).Where("id = ?", row.ID).Select("*").Updates(&row).Error
	})
	return convertErr("service_keys.rotate", err, domain.ErrServiceKeyNotFound, domain.ErrServiceKeyExists)
}

// Revoke implements ports.ServiceKeyRepository. The conditional UPDATE is
// what makes a second revocation, even a concurrent one, not found.
func (r *ServiceKeyRepository) Revoke(ctx context.Context, id domain.ServiceKeyID, now time.Time) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		res := tx.Model(&serviceKeyRow{}).Where("id = ? AND revoked_at IS NULL", string(id)).
			Update("revoked_at", domain.Timestamp(now))
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return domain.ErrServiceKeyNotFound
		}
		return tx.Where("key_id = ?", string(id)).Delete(&serviceKeySecretRow{}).Error
	})
	return convertErr("service_keys.revoke", err, domain.ErrServiceKeyNotFound, nil)
}

// touchLastUsedSQL moves last_used_at forwards only, so batches flushed out
// of order, or by several replicas, never move it backwards.
const touchLastUsedSQL = `UPDATE service_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`

// TouchLastUsed implements ports.ServiceKeyRepository with one UPDATE per key
// in one transaction. The keys are updated in id order, so that concurrent
// batches on PostgreSQL lock their rows in the same order and cannot
// deadlock.
func (r *ServiceKeyRepository) TouchLastUsed(ctx context.Context, used map[domain.ServiceKeyID]time.Time) error {
	ids := make([]domain.ServiceKeyID, 0, len(used))
	for id, t := range used {
		if !t.IsZero() {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		for _, id := range ids {
			t := domain.Timestamp(used[id])
			if err := tx.Exec(touchLastUsedSQL, t, string(id), t).Error; err != nil {
				return err
			}
		}
		return nil
	})
	return convertErr("service_keys.touch_last_used", err, nil, nil)
}

// DeleteExpiredSecrets implements ports.ServiceKeyRepository. A secret whose
// expiry is now no longer works (see domain.ServiceKeySecret.IsActive), so
// it goes; the newest secret, with no expiry, never does.
func (r *ServiceKeyRepository) DeleteExpiredSecrets(ctx context.Context, now time.Time) (int, error) {
	res := conn(ctx, r.db).Where("expires_at IS NOT NULL AND expires_at <= ?", domain.Timestamp(now)).Delete(&serviceKeySecretRow{})
	if res.Error != nil {
		return 0, convertErr("service_keys.delete_expired_secrets", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}
