package memory

import (
	"context"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.UserRepository = (*UserRepository)(nil)

// UserRepository keeps users in the shared DB.
type UserRepository struct {
	db *DB
}

// NewUserRepository returns a UserRepository on db.
func NewUserRepository(db *DB) *UserRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &UserRepository{db: db}
}

// copyUser returns an independent copy, so neither the caller nor the store
// can change the other's value.
func copyUser(u *domain.User) *domain.User {
	c := *u
	return &c
}

func userConflict() error {
	return domain.NewError(domain.KindConflict, "user.exists", "a user with this id or e-mail already exists")
}

func userNotFound() error { return domain.NotFound("user.not_found", "user") }

// Create implements ports.UserRepository.
func (r *UserRepository) Create(_ context.Context, u *domain.User) error {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	return r.db.createUser(u)
}

// createUser stores a copy of u. The caller holds the write lock.
func (db *DB) createUser(u *domain.User) error {
	if _, ok := db.users[u.ID()]; ok {
		return userConflict()
	}
	if _, ok := db.userByEmail[u.Email()]; ok {
		return userConflict()
	}
	db.users[u.ID()] = copyUser(u)
	db.userByEmail[u.Email()] = u.ID()
	return nil
}

// Get implements ports.UserRepository.
func (r *UserRepository) Get(_ context.Context, id domain.UserID) (*domain.User, error) {
	r.db.mu.RLock()
	defer r.db.mu.RUnlock()
	u, ok := r.db.users[id]
	if !ok {
		return nil, userNotFound()
	}
	return copyUser(u), nil
}

// GetByEmail implements ports.UserRepository.
func (r *UserRepository) GetByEmail(_ context.Context, email domain.Email) (*domain.User, error) {
	r.db.mu.RLock()
	defer r.db.mu.RUnlock()
	id, ok := r.db.userByEmail[email]
	if !ok {
		return nil, userNotFound()
	}
	return copyUser(r.db.users[id]), nil
}

// Update implements ports.UserRepository. It holds the write lock while fn
// runs, which is what makes concurrent updates serialise.
func (r *UserRepository) Update(_ context.Context, id domain.UserID, fn func(u *domain.User) error) error {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	stored, ok := r.db.users[id]
	if !ok {
		return userNotFound()
	}
	u := copyUser(stored)
	if err := fn(u); err != nil {
		return err
	}
	if u.Email() != stored.Email() {
		if _, taken := r.db.userByEmail[u.Email()]; taken {
			return userConflict()
		}
		delete(r.db.userByEmail, stored.Email())
		r.db.userByEmail[u.Email()] = id
	}
	r.db.users[id] = u
	return nil
}

// Delete implements ports.UserRepository. The user's sessions, credential and
// links go with them.
func (r *UserRepository) Delete(_ context.Context, id domain.UserID) error {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	u, ok := r.db.users[id]
	if !ok {
		return userNotFound()
	}
	r.db.deleteUser(u)
	return nil
}
