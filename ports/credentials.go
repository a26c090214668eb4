package ports

import (
	"context"

	"github.com/gatehouse/gatehouse/domain"
)

// CredentialRepository stores password credentials apart from user profiles.
// Implementations are safe for concurrent use and return copies. Deleting a
// user deletes their credential.
type CredentialRepository interface {
	// CreateUser stores u together with its credential c atomically: either
	// both are stored or neither is. It returns an error of kind
	// domain.KindConflict when the user's id or e-mail address is taken.
	CreateUser(ctx context.Context, u *domain.User, c *domain.Credential) error
	// Get returns the credential of userID, or an error of kind
	// domain.KindNotFound when the user has no password.
	Get(ctx context.Context, userID domain.UserID) (*domain.Credential, error)
	// GetByEmail returns the user at email with their credential (nil when
	// they have no password), or an error of kind domain.KindNotFound when
	// no user has the address. It is what a password sign-in reads: one
	// read, whose work does not depend on whether the user or the
	// credential exists, so that its time cannot tell a known address from
	// an unknown one.
	GetByEmail(ctx context.Context, email domain.Email) (*domain.User, *domain.Credential, error)
	// Update loads the credential, applies fn and saves it atomically: no
	// concurrent Update is lost (failed-attempt counts stay exact). If fn
	// returns an error nothing is saved and that error is returned. A missing
	// credential is an error of kind domain.KindNotFound.
	Update(ctx context.Context, userID domain.UserID, fn func(c *domain.Credential) error) error
	// Put stores c as its user's credential, replacing any they had (an
	// administrator setting a password). A missing user is an error of kind
	// domain.KindNotFound.
	Put(ctx context.Context, c *domain.Credential) error
}
