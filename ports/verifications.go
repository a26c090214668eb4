package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// VerificationRepository stores outstanding one-time links by the hash of
// their token. Implementations are safe for concurrent use and return copies.
// Deleting a user deletes their links.
type VerificationRepository interface {
	// Create stores v. It returns an error of kind domain.KindConflict when
	// the id or token hash is taken, and domain.KindNotFound when the user
	// does not exist.
	Create(ctx context.Context, v *domain.Verification) error
	// Consume removes and returns the link with purpose and token hash h, in
	// one atomic step, so that a link works at most once even when it is
	// followed twice at the same moment. An unknown link is an error of kind
	// domain.KindNotFound; a link of another purpose is not found and not
	// used up. Expired links are returned (and removed); the caller decides.
	Consume(ctx context.Context, purpose domain.VerificationPurpose, h domain.TokenHash) (*domain.Verification, error)
	// DeleteByUser removes every link of userID with purpose and returns how many.
	DeleteByUser(ctx context.Context, userID domain.UserID, purpose domain.VerificationPurpose) (int, error)
	// DeleteExpired removes the links expired at now and returns how many.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}
