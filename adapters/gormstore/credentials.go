package gormstore

import (
	"context"
	"database/sql"
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
	return convertErr("credentials.create_user", err, nil, domain.ErrUserExists)
}

// Get implements ports.CredentialRepository.
func (r *CredentialRepository) Get(ctx context.Context, userID domain.UserID) (*domain.Credential, error) {
	return getCredential(conn(ctx, r.db), userID)
}

func getCredential(db *gorm.DB, userID domain.UserID) (*domain.Credential, error) {
	var row credentialRow
	if err := db.Where("user_id = ?", string(userID)).Take(&row).Error; err != nil {
		return nil, convertErr("credentials.get", err, domain.ErrCredentialNotFound, nil)
	}
	return row.toDomain(), nil
}

// signInLookupSQL reads a user and their credential by e-mail address in
// one round trip, through users_email_key and the credentials primary key.
// It starts from a constant row and joins both to it, so it answers one row
// of the same columns whether or not either exists (NULLs where one does
// not): about the same work for a known address as for an unknown one.
const signInLookupSQL = `SELECT
 u.id, u.name, u.email, u.email_verified, u.image, u.role, u.banned, u.ban_reason, u.ban_expires,
 u.public_metadata, u.private_metadata, u.two_factor_enabled, u.created_at, u.updated_at,
 c.user_id, c.hash, c.failed_attempts, c.locked_until, c.updated_at
FROM (SELECT 1 AS probe) AS p
LEFT JOIN users u ON u.email = ?
LEFT JOIN credentials c ON c.user_id = u.id`

// signInScan is signInLookupSQL's row. Every column may be NULL, so each
// lands in a nullable value; the row is scanned without gorm's reflection,
// which cost several times the query (and more for a row than for NULLs).
type signInScan struct {
	uID, uName, uEmail, uImage, uRole, uBanReason, uPublic, uPrivate sql.NullString
	uVerified, uBanned, uTwoFactor                                   sql.NullBool
	uBanExpires, uCreated, uUpdated                                  sql.NullTime
	cUserID, cHash                                                   sql.NullString
	cFailed                                                          sql.NullInt64
	cLockedUntil, cUpdated                                           sql.NullTime
}

func (r *signInScan) dest() []any {
	return []any{
		&r.uID, &r.uName, &r.uEmail, &r.uVerified, &r.uImage, &r.uRole, &r.uBanned, &r.uBanReason, &r.uBanExpires,
		&r.uPublic, &r.uPrivate, &r.uTwoFactor, &r.uCreated, &r.uUpdated,
		&r.cUserID, &r.cHash, &r.cFailed, &r.cLockedUntil, &r.cUpdated,
	}
}

// GetByEmail implements ports.CredentialRepository with signInLookupSQL.
func (r *CredentialRepository) GetByEmail(ctx context.Context, email domain.Email) (*domain.User, *domain.Credential, error) {
	var row signInScan
	if err := conn(ctx, r.db).Raw(signInLookupSQL, string(email)).Row().Scan(row.dest()...); err != nil {
		return nil, nil, convertErr("credentials.get_by_email", err, nil, nil)
	}
	// Both are built, present or not, so that an unknown address costs
	// what a known one does; only then are the absent ones dropped.
	u := userRow{ID: row.uID.String, Name: row.uName.String, Email: row.uEmail.String, EmailVerified: row.uVerified.Bool,
		Image: row.uImage.String, Role: row.uRole.String, Banned: row.uBanned.Bool, BanReason: row.uBanReason.String,
		PublicMetadata: row.uPublic.String, PrivateMetadata: row.uPrivate.String, TwoFactorEnabled: row.uTwoFactor.Bool,
		CreatedAt: row.uCreated.Time, UpdatedAt: row.uUpdated.Time}
	if row.uBanExpires.Valid {
		u.BanExpires = &row.uBanExpires.Time
	}
	c := credentialRow{UserID: row.cUserID.String, Hash: row.cHash.String, FailedAttempts: int(row.cFailed.Int64), UpdatedAt: row.cUpdated.Time}
	if row.cLockedUntil.Valid {
		c.LockedUntil = &row.cLockedUntil.Time
	}
	user, cred := u.toDomain(), c.toDomain()
	switch {
	case !row.uID.Valid:
		return nil, nil, domain.ErrUserNotFound
	case !row.cUserID.Valid:
		return user, nil, nil
	}
	return user, cred, nil
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
	return convertErr("credentials.update", err, domain.ErrCredentialNotFound, nil)
}

// Put implements ports.CredentialRepository with one upsert.
func (r *CredentialRepository) Put(ctx context.Context, c *domain.Credential) error {
	row := credentialFromDomain(c)
	err := conn(ctx, r.db).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}},
		UpdateAll: true,
	}).Create(&row).Error
	return convertErr("credentials.put", err, domain.ErrUserNotFound, nil)
}
