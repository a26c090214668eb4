package gormstore

import (
	"context"
	"errors"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.CredentialRepository = (*CredentialRepository)(nil)

// CredentialRepository stores password credentials in the credentials table,
// apart from the users table, so that reading a profile never reads a hash.
type CredentialRepository struct {
	db *gorm.DB
}

// NewCredentialRepository returns a CredentialRepository on db.
func NewCredentialRepository(db *gorm.DB) *CredentialRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &CredentialRepository{db: db}
}

var errCredentialOwner = errors.New("the credential belongs to another user")

// CreateUser implements ports.CredentialRepository with both inserts in one
// transaction.
func (r *CredentialRepository) CreateUser(ctx context.Context, u *domain.User, c *domain.Credential) error {
	if c.UserID() != u.ID() {
		return domain.Internal("gormstore: credentials.create_user", errCredentialOwner)
	}
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		user := userFromDomain(u)
		if err := tx.Create(&user).Error; err != nil {
			return err
		}
		cred := credentialFromDomain(c)
		return tx.Create(&cred).Error
	})
	return convertErr("credentials.create_user", err, nil, ports.ErrUserExists)
}

// Get implements ports.CredentialRepository.
func (r *CredentialRepository) Get(ctx context.Context, userID domain.UserID) (*domain.Credential, error) {
	return getCredential(conn(ctx, r.db), userID)
}

func getCredential(db *gorm.DB, userID domain.UserID) (*domain.Credential, error) {
	var row credentialRow
	if err := db.Where("user_id = ?", string(userID)).Take(&row).Error; err != nil {
		return nil, convertErr("credentials.get", err, ports.ErrCredentialNotFound, nil)
	}
	return row.toDomain(), nil
}

// Update implements ports.CredentialRepository. On PostgreSQL the row is
// locked with SELECT … FOR UPDATE; on SQLite the immediate transaction
// already holds the database's write lock. Either way concurrent failed
// attempts are counted one after another, never lost.
func (r *CredentialRepository) Update(ctx context.Context, userID domain.UserID, fn func(c *domain.Credential) error) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		q := tx
		if DialectOf(tx) == DialectPostgres {
			q = tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
		}
		c, err := getCredential(q, userID)
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
		row := credentialFromDomain(c)
		// Select("*") writes every column, so a cleared lockout stores NULL.
		return tx.Model(&credentialRow{}).Where("user_id = ?", row.UserID).Select("*").Updates(&row).Error
	})
	return convertErr("credentials.update", err, ports.ErrCredentialNotFound, nil)
}

// Put implements ports.CredentialRepository with one upsert.
func (r *CredentialRepository) Put(ctx context.Context, c *domain.Credential) error {
	row := credentialFromDomain(c)
	err := conn(ctx, r.db).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}},
		UpdateAll: true,
	}).Create(&row).Error
	return convertErr("credentials.put", err, ports.ErrUserNotFound, nil)
}
