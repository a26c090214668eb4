package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// SessionRepository stores sessions by the hash of their token.
// Implementations are safe for concurrent use and return copies. Deleting a
// user deletes their sessions.
type SessionRepository interface {
	// Create stores s. It returns an error of kind domain.KindConflict when
	// the id or token hash is taken, and domain.KindNotFound when the user
	// does not exist.
	Create(ctx context.Context, s *domain.Session) error
	// GetByTokenHash returns the session with token hash h and its user, in
	// one indexed query: this is the hot path of every authenticated request.
	// An unknown hash is an error of kind domain.KindNotFound. Expired
	// sessions are returned; the caller decides.
	GetByTokenHash(ctx context.Context, h domain.TokenHash) (*domain.Session, *domain.User, error)
	// Get returns the session id, or an error of kind domain.KindNotFound.
	Get(ctx context.Context, id domain.SessionID) (*domain.Session, error)
	// ListByUser returns the user's sessions that have not expired at now,
	// newest first.
	ListByUser(ctx context.Context, userID domain.UserID, now time.Time) ([]*domain.Session, error)
	// CountActive returns how many sessions have not expired at now, in
	// one statement through the expiry index.
	CountActive(ctx context.Context, now time.Time) (int, error)
	// ClearOrganization sets no active organization on every session whose
	// active organization is org, as when org is deleted or userID leaves it
	// (an empty userID clears it on everyone's sessions).
	ClearOrganization(ctx context.Context, org domain.OrganizationID, userID domain.UserID) error
	// Update loads the session, applies fn and saves it atomically. If fn
	// returns an error nothing is saved and that error is returned. A missing
	// session is an error of kind domain.KindNotFound.
	Update(ctx context.Context, id domain.SessionID, fn func(s *domain.Session) error) error
	// Delete removes the session id if it belongs to userID, and returns an
	// error of kind domain.KindNotFound otherwise.
	Delete(ctx context.Context, userID domain.UserID, id domain.SessionID) error
	// DeleteByUser removes every session of userID except keep (empty keeps
	// none) and returns how many it removed.
	DeleteByUser(ctx context.Context, userID domain.UserID, keep domain.SessionID) (int, error)
	// DeleteExpired removes the sessions expired at now and returns how many.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}
