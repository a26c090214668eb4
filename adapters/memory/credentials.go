package memory

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.CredentialRepository = (*CredentialRepository)(nil)

// CredentialRepository keeps password credentials in the shared DB.
type CredentialRepository struct {
	db *DB
}

// NewCredentialRepository returns a CredentialRepository on db.
func NewCredentialRepository(db *DB) *CredentialRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &CredentialRepository{db: db}
}

func copyCredential(c *domain.Credential) *domain.Credential {
	cp := *c
	return &cp
}

var errCredentialOwner = errors.New("the credential belongs to another user")

// CreateUser implements ports.CredentialRepository. Both maps change under
// one lock, so nobody sees the user without its credential.
func (r *CredentialRepository) CreateUser(ctx context.Context, u *domain.User, c *domain.Credential) error {
	if c.UserID() != u.ID() {
		return domain.Internal("memory: credentials.create_user", errCredentialOwner)
	}
	defer r.db.unlock(r.db.lock(ctx))
	if err := r.db.createUser(u); err != nil {
		return err
	}
	set(r.db, r.db.credentials, u.ID(), copyCredential(c))
	return nil
}

// Get implements ports.CredentialRepository.
func (r *CredentialRepository) Get(ctx context.Context, userID domain.UserID) (*domain.Credential, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	c, ok := r.db.credentials[userID]
	if !ok {
		return nil, domain.ErrCredentialNotFound
	}
	return copyCredential(c), nil
}

// GetByEmail implements ports.CredentialRepository.
func (r *CredentialRepository) GetByEmail(ctx context.Context, email domain.Email) (*domain.User, *domain.Credential, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	id, ok := r.db.userByEmail[email]
	if !ok {
		return nil, nil, domain.ErrUserNotFound
	}
	u := copyUser(r.db.users[id])
	c, ok := r.db.credentials[id]
	if !ok {
		return u, nil, nil
	}
	return u, copyCredential(c), nil
}

// Update implements ports.CredentialRepository. It holds the write lock while
// fn runs, which is what makes concurrent updates serialise.
func (r *CredentialRepository) Update(ctx context.Context, userID domain.UserID, fn func(c *domain.Credential) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.credentials[userID]
	if !ok {
		return domain.ErrCredentialNotFound
	}
	c := copyCredential(stored)
	if err := fn(c); err != nil {
		return err
	}
	set(r.db, r.db.credentials, userID, c)
	return nil
}

// Put implements ports.CredentialRepository.
func (r *CredentialRepository) Put(ctx context.Context, c *domain.Credential) error {
	defer r.db.unlock(r.db.lock(ctx))
	if !r.db.hasUser(c.UserID()) {
		return domain.ErrUserNotFound
	}
	set(r.db, r.db.credentials, c.UserID(), copyCredential(c))
	return nil
}
