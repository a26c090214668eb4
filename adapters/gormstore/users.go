package gormstore

import (
	"context"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.UserRepository = (*UserRepository)(nil)

// UserRepository stores users in the users table.
type UserRepository struct {
	db *gorm.DB
}

// NewUserRepository returns a UserRepository on db.
func NewUserRepository(db *gorm.DB) *UserRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &UserRepository{db: db}
}

var (
	errUserNotFound = domain.NotFound("user.not_found", "user")
	errUserConflict = domain.NewError(domain.KindConflict, "user.exists", "a user with this id or e-mail already exists")
)

// Create implements ports.UserRepository.
func (r *UserRepository) Create(ctx context.Context, u *domain.User) error {
	row := userFromDomain(u)
	return convertErr("users.create", r.db.WithContext(ctx).Create(&row).Error, nil, errUserConflict)
}

// Get implements ports.UserRepository.
func (r *UserRepository) Get(ctx context.Context, id domain.UserID) (*domain.User, error) {
	return getUser(r.db.WithContext(ctx), "id = ?", string(id))
}

// GetByEmail implements ports.UserRepository.
func (r *UserRepository) GetByEmail(ctx context.Context, email domain.Email) (*domain.User, error) {
	return getUser(r.db.WithContext(ctx), "email = ?", string(email))
}

func getUser(db *gorm.DB, where string, arg string) (*domain.User, error) {
	var row userRow
	if err := db.Where(where, arg).Take(&row).Error; err != nil {
		return nil, convertErr("users.get", err, errUserNotFound, nil)
	}
	return row.toDomain(), nil
}

// Update implements ports.UserRepository. On PostgreSQL the row is locked
// with SELECT … FOR UPDATE; on SQLite the immediate transaction already holds
// the database's write lock.
func (r *UserRepository) Update(ctx context.Context, id domain.UserID, fn func(u *domain.User) error) error {
	err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx
		if DialectOf(tx) == DialectPostgres {
			q = tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
		}
		u, err := getUser(q, "id = ?", string(id))
		if err != nil {
			return err
		}
		if err := fn(u); err != nil {
			return err
		}
		row := userFromDomain(u)
		return tx.Model(&userRow{}).Where("id = ?", row.ID).Select("*").Updates(&row).Error
	})
	return convertErr("users.update", err, errUserNotFound, errUserConflict)
}

// Delete implements ports.UserRepository.
func (r *UserRepository) Delete(ctx context.Context, id domain.UserID) error {
	res := r.db.WithContext(ctx).Where("id = ?", string(id)).Delete(&userRow{})
	if res.Error != nil {
		return convertErr("users.delete", res.Error, nil, nil)
	}
	if res.RowsAffected == 0 {
		return errUserNotFound
	}
	return nil
}
