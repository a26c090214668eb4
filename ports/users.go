package ports

import (
	"context"

	"github.com/gatehouse/gatehouse/domain"
)

// UserRepository stores users. Implementations are safe for concurrent use and
// store and return copies: changing a returned *domain.User changes nothing
// until it goes through Update.
type UserRepository interface {
	// Create stores u. It returns an error of kind domain.KindConflict when the
	// id or the e-mail address is taken.
	Create(ctx context.Context, u *domain.User) error
	// Get returns the user with id, or an error of kind domain.KindNotFound.
	Get(ctx context.Context, id domain.UserID) (*domain.User, error)
	// GetByEmail returns the user with the normalised address email, or an
	// error of kind domain.KindNotFound.
	GetByEmail(ctx context.Context, email domain.Email) (*domain.User, error)
	// Update loads the user, applies fn and saves the result atomically: no
	// concurrent Update is lost. If fn returns an error nothing is saved and
	// that error is returned. fn may run more than once. A missing user is an
	// error of kind domain.KindNotFound; an e-mail taken by another user is
	// domain.KindConflict.
	Update(ctx context.Context, id domain.UserID, fn func(u *domain.User) error) error
	// Delete removes the user, or returns an error of kind domain.KindNotFound.
	Delete(ctx context.Context, id domain.UserID) error
}
