package memory

import (
	"context"
	"sync"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.UserRepository = (*UserRepository)(nil)

// UserRepository keeps users in a map guarded by a lock.
type UserRepository struct {
	mu      sync.RWMutex
	byID    map[domain.UserID]*domain.User
	byEmail map[domain.Email]domain.UserID
}

// NewUserRepository returns an empty repository.
func NewUserRepository() *UserRepository {
	return &UserRepository{byID: map[domain.UserID]*domain.User{}, byEmail: map[domain.Email]domain.UserID{}}
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byID[u.ID()]; ok {
		return userConflict()
	}
	if _, ok := r.byEmail[u.Email()]; ok {
		return userConflict()
	}
	r.byID[u.ID()] = copyUser(u)
	r.byEmail[u.Email()] = u.ID()
	return nil
}

// Get implements ports.UserRepository.
func (r *UserRepository) Get(_ context.Context, id domain.UserID) (*domain.User, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	u, ok := r.byID[id]
	if !ok {
		return nil, userNotFound()
	}
	return copyUser(u), nil
}

// GetByEmail implements ports.UserRepository.
func (r *UserRepository) GetByEmail(_ context.Context, email domain.Email) (*domain.User, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	id, ok := r.byEmail[email]
	if !ok {
		return nil, userNotFound()
	}
	return copyUser(r.byID[id]), nil
}

// Update implements ports.UserRepository. It holds the write lock while fn
// runs, which is what makes concurrent updates serialise.
func (r *UserRepository) Update(_ context.Context, id domain.UserID, fn func(u *domain.User) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	stored, ok := r.byID[id]
	if !ok {
		return userNotFound()
	}
	u := copyUser(stored)
	if err := fn(u); err != nil {
		return err
	}
	if u.Email() != stored.Email() {
		if _, taken := r.byEmail[u.Email()]; taken {
			return userConflict()
		}
		delete(r.byEmail, stored.Email())
		r.byEmail[u.Email()] = id
	}
	r.byID[id] = u
	return nil
}

// Delete implements ports.UserRepository.
func (r *UserRepository) Delete(_ context.Context, id domain.UserID) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	u, ok := r.byID[id]
	if !ok {
		return userNotFound()
	}
	delete(r.byEmail, u.Email())
	delete(r.byID, id)
	return nil
}
