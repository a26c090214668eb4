package usecase

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// SessionRevoker ends sessions before they expire (sign-out, revocations,
// bans), each with its session.revoked event in the same unit of work.
// Sessions that merely expire, and the purge of expired ones, have no
// event.
type SessionRevoker struct {
	sessions ports.SessionRepository
	events   *Events
	clock    ports.Clock
}

// NewSessionRevoker revokes sessions, writing their events through events.
func NewSessionRevoker(sessions ports.SessionRepository, events *Events, clock ports.Clock) SessionRevoker {
	MustHave(sessions, clock)
	if events == nil {
		panic("usecase: nil events")
	}
	return SessionRevoker{sessions: sessions, events: events, clock: clock}
}

// Revoke ends session s. One already gone is domain.KindNotFound.
func (r SessionRevoker) Revoke(ctx context.Context, s *domain.Session) error {
	return r.events.Do(ctx, func(ctx context.Context, emit Emit) error {
		if err := r.sessions.Delete(ctx, s.UserID(), s.ID()); err != nil {
			return err
		}
		emit(domain.EventSessionRevoked, s)
		return nil
	})
}

// RevokeID ends session id if it belongs to owner; a missing session, or
// another user's, is domain.KindNotFound.
func (r SessionRevoker) RevokeID(ctx context.Context, owner domain.UserID, id domain.SessionID) error {
	return r.events.Do(ctx, func(ctx context.Context, emit Emit) error {
		s, err := r.sessions.Get(ctx, id)
		if err != nil {
			return err
		}
		if s.UserID() != owner {
			return domain.NewError(domain.KindNotFound, "session.not_found", "Session not found")
		}
		if err := r.sessions.Delete(ctx, owner, id); err != nil {
			return err
		}
		emit(domain.EventSessionRevoked, s)
		return nil
	})
}

// RevokeAll ends every session of user except keep (empty keeps none).
// Each session that was live gets its event; expired ones go silently.
func (r SessionRevoker) RevokeAll(ctx context.Context, user domain.UserID, keep domain.SessionID) error {
	return r.events.Do(ctx, func(ctx context.Context, emit Emit) error {
		live, err := r.sessions.ListByUser(ctx, user, r.clock.Now())
		if err != nil {
			return err
		}
		if _, err := r.sessions.DeleteByUser(ctx, user, keep); err != nil {
			return err
		}
		for _, s := range live {
			if s.ID() != keep {
				emit(domain.EventSessionRevoked, s)
			}
		}
		return nil
	})
}

// IgnoreGone returns nil for a session that was already gone, else err.
func IgnoreGone(err error) error {
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	return err
}
