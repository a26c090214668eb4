package memory

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.LinkedAccountRepository = (*LinkedAccountRepository)(nil)

// LinkedAccountRepository keeps the upstream identities tied to users in
// the shared DB, indexed by (provider, subject) as the SQL stores' unique
// index does. The single lock makes Delete's keepOne check atomic.
type LinkedAccountRepository struct{ db *DB }

// NewLinkedAccountRepository returns a LinkedAccountRepository on db.
func NewLinkedAccountRepository(db *DB) *LinkedAccountRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &LinkedAccountRepository{db: db}
}

// providerSubject is the unique key of a linked account.
type providerSubject struct {
	provider domain.IdentityProviderID
	subject  string
}

func storedLinkedAccount(a domain.LinkedAccount) domain.LinkedAccount {
	a.Scopes = cloneStrings(a.Scopes)
	a.SealedTokens = cloneBytes(a.SealedTokens)
	a.AccessTokenExpiresAt = timestampOrZero(a.AccessTokenExpiresAt)
	a.RefreshTokenExpiresAt = timestampOrZero(a.RefreshTokenExpiresAt)
	a.CreatedAt = timestampOrZero(a.CreatedAt)
	a.UpdatedAt = timestampOrZero(a.UpdatedAt)
	return a
}

// deleteLinkedAccount removes an account and its index entry. The caller
// holds the write lock.
func (db *DB) deleteLinkedAccount(id domain.LinkedAccountID, a domain.LinkedAccount) {
	unset(db, db.linkedAccountBySubject, providerSubject{a.ProviderID, a.Subject})
	unset(db, db.linkedAccounts, id)
}

// deleteFederationOf removes user's linked accounts and the links they have
// in flight, as the foreign keys' ON DELETE CASCADE does. The caller holds
// the write lock.
func (db *DB) deleteFederationOf(user domain.UserID) {
	for id, a := range db.linkedAccounts {
		if a.UserID == user {
			db.deleteLinkedAccount(id, a)
		}
	}
	for k, s := range db.federationStates {
		if s.LinkUserID == user {
			unset(db, db.federationStates, k)
		}
	}
}

// Create implements ports.LinkedAccountRepository. As the SQL insert, it
// checks the keys before the foreign keys.
func (r *LinkedAccountRepository) Create(ctx context.Context, a domain.LinkedAccount) error {
	defer r.db.unlock(r.db.lock(ctx))
	return r.create(a)
}

// CreateWithUser implements ports.LinkedAccountRepository: checked whole
// before anything is stored, under one lock.
func (r *LinkedAccountRepository) CreateWithUser(ctx context.Context, u *domain.User, a domain.LinkedAccount) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.users[u.ID()]; ok {
		return domain.ErrUserExists
	}
	if _, ok := r.db.userByEmail[u.Email()]; ok {
		return domain.ErrUserExists
	}
	if a.UserID != u.ID() {
		return domain.Internal("memory: linked_accounts.create_with_user", errors.New("the account is another user's"))
	}
	if _, ok := r.db.linkedAccounts[a.ID]; ok {
		return domain.ErrLinkedAccountExists
	}
	if _, ok := r.db.linkedAccountBySubject[providerSubject{a.ProviderID, a.Subject}]; ok {
		return domain.ErrLinkedAccountExists
	}
	if _, ok := r.db.identityProviders[a.ProviderID]; !ok {
		return domain.ErrIdentityProviderNotFound
	}
	if err := r.db.createUser(u); err != nil {
		return err
	}
	return r.create(a)
}

// create stores a. The caller holds the write lock.
func (r *LinkedAccountRepository) create(a domain.LinkedAccount) error {
	key := providerSubject{a.ProviderID, a.Subject}
	if _, ok := r.db.linkedAccounts[a.ID]; ok {
		return domain.ErrLinkedAccountExists
	}
	if _, ok := r.db.linkedAccountBySubject[key]; ok {
		return domain.ErrLinkedAccountExists
	}
	if !r.db.hasUser(a.UserID) {
		return domain.ErrUserNotFound
	}
	if _, ok := r.db.identityProviders[a.ProviderID]; !ok {
		return domain.ErrIdentityProviderNotFound
	}
	set(r.db, r.db.linkedAccounts, a.ID, storedLinkedAccount(a))
	set(r.db, r.db.linkedAccountBySubject, key, a.ID)
	return nil
}

// GetBySubject implements ports.LinkedAccountRepository.
func (r *LinkedAccountRepository) GetBySubject(ctx context.Context, provider domain.IdentityProviderID, subject string) (domain.LinkedAccount, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	id, ok := r.db.linkedAccountBySubject[providerSubject{provider, subject}]
	if !ok {
		return domain.LinkedAccount{}, domain.ErrLinkedAccountNotFound
	}
	return storedLinkedAccount(r.db.linkedAccounts[id]), nil
}

// ListByUser implements ports.LinkedAccountRepository.
func (r *LinkedAccountRepository) ListByUser(ctx context.Context, user domain.UserID) ([]domain.LinkedAccount, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	var out []domain.LinkedAccount
	for _, a := range r.db.linkedAccounts {
		if a.UserID == user {
			out = append(out, storedLinkedAccount(a))
		}
	}
	slices.SortFunc(out, func(a, b domain.LinkedAccount) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(string(a.ID), string(b.ID))
	})
	return out, nil
}

// ListByUsers implements ports.LinkedAccountRepository.
func (r *LinkedAccountRepository) ListByUsers(ctx context.Context, users []domain.UserID) ([]domain.LinkedAccount, error) {
	var out []domain.LinkedAccount
	for _, u := range slices.Compact(slices.Sorted(slices.Values(users))) {
		some, err := r.ListByUser(ctx, u)
		if err != nil {
			return nil, err
		}
		out = append(out, some...)
	}
	return out, nil
}

// owned returns user's account id. The caller holds the lock.
func (r *LinkedAccountRepository) owned(user domain.UserID, id domain.LinkedAccountID) (domain.LinkedAccount, error) {
	a, ok := r.db.linkedAccounts[id]
	if !ok || a.UserID != user {
		return domain.LinkedAccount{}, domain.ErrLinkedAccountNotFound
	}
	return a, nil
}

// Update implements ports.LinkedAccountRepository. The write lock makes it
// atomic: fn runs once. Only the fields the port lets change are kept.
func (r *LinkedAccountRepository) Update(ctx context.Context, user domain.UserID, id domain.LinkedAccountID, fn func(a *domain.LinkedAccount) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, err := r.owned(user, id)
	if err != nil {
		return err
	}
	a := storedLinkedAccount(stored)
	if err := fn(&a); err != nil {
		return err
	}
	stored.Email, stored.Scopes, stored.SealedTokens = a.Email, a.Scopes, a.SealedTokens
	stored.AccessTokenExpiresAt, stored.RefreshTokenExpiresAt = a.AccessTokenExpiresAt, a.RefreshTokenExpiresAt
	stored.UpdatedAt = a.UpdatedAt
	set(r.db, r.db.linkedAccounts, id, storedLinkedAccount(stored))
	return nil
}

// Delete implements ports.LinkedAccountRepository.
func (r *LinkedAccountRepository) Delete(ctx context.Context, user domain.UserID, id domain.LinkedAccountID, keepOne bool) error {
	defer r.db.unlock(r.db.lock(ctx))
	a, err := r.owned(user, id)
	if err != nil {
		return err
	}
	if keepOne {
		n := 0
		for _, other := range r.db.linkedAccounts {
			if other.UserID == user {
				n++
			}
		}
		if n < 2 {
			return domain.ErrLastLinkedAccount
		}
	}
	r.db.deleteLinkedAccount(id, a)
	return nil
}
