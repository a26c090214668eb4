package account

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// Authenticate resolves a bearer token to its session.
type Authenticate struct {
	Token string
	// Refresh pushes the expiry of a remembered session forward when it is
	// due (only get-session does, as in Better Auth).
	Refresh bool
}

// AuthenticateResult is the principal and whether its session was refreshed
// (and so its cookie must be re-issued).
type AuthenticateResult struct {
	usecase.Principal
	Refreshed bool
}

// Authenticate returns the live session for the token, or an Unauthenticated error
// when the token is unknown or its session has expired (which is then deleted).
func (h *Sessions) Authenticate(ctx context.Context, cmd Authenticate) (*AuthenticateResult, error) {
	if cmd.Token == "" {
		return nil, usecase.ErrUnauthorized
	}
	s, u, err := h.cache.Lookup(ctx, h.sessions, domain.HashToken(cmd.Token))
	if errors.Is(err, domain.ErrNotFound) {
		return nil, usecase.ErrUnauthorized
	}
	if err != nil {
		return nil, err
	}
	now := h.clock.Now()
	if u.IsBanned(now) {
		return nil, usecase.ErrUnauthorized
	}
	if s.IsExpired(now) {
		if err := h.sessions.Delete(ctx, s.UserID(), s.ID()); err != nil && !errors.Is(err, domain.ErrNotFound) {
			return nil, err
		}
		return nil, usecase.ErrUnauthorized
	}
	res := &AuthenticateResult{Principal: usecase.Principal{Session: s, User: u}}
	if cmd.Refresh {
		if err := h.refresh(ctx, res, now); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Refresh pushes the expiry of res's remembered session forward when it is
// due (at most once per UpdateAge), as Authenticate does when asked: for a caller
// that resolved the session first and refreshes it after (get-session).
func (h *Sessions) Refresh(ctx context.Context, res *AuthenticateResult) error {
	return h.refresh(ctx, res, h.clock.Now())
}

func (h *Sessions) refresh(ctx context.Context, res *AuthenticateResult, now time.Time) error {
	s := res.Session
	if !s.NeedsRefresh(now, h.policy) {
		return nil
	}
	err := h.sessions.Update(ctx, s.ID(), func(stored *domain.Session) error {
		stored.Refresh(now, h.policy)
		s = stored
		return nil
	})
	if err != nil {
		return err
	}
	res.Session, res.Refreshed = s, true
	return nil
}

// SignOut deletes the session of token (session.revoked). An unknown token
// is not an error: signing out always succeeds.
func (h *Sessions) SignOut(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	s, _, err := h.sessions.GetByTokenHash(ctx, domain.HashToken(token))
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	// Signing out of an impersonation ends it: its session.revoked names
	// the administrator too.
	usecase.NoteImpersonation(ctx, s)
	return usecase.IgnoreGone(h.revoker.Revoke(ctx, s))
}

// RevokeSession ends one of the principal's sessions.
type RevokeSession struct {
	Principal usecase.Principal
	// Handle is the session's public handle from list-sessions, or (as Better
	// Auth clients send) a session's token.
	Handle string
}

// RevokeSession ends the session named by cmd.Handle if it is the
// principal's; another user's session, or an unknown one, is left alone
// without saying so. It reports whether the current session was the one
// ended.
func (h *Sessions) RevokeSession(ctx context.Context, cmd RevokeSession) (current bool, err error) {
	owner := cmd.Principal.User.ID()
	id := domain.SessionID(cmd.Handle)
	if err := h.revoker.RevokeID(ctx, owner, id); err == nil {
		return id == cmd.Principal.Session.ID(), nil
	} else if !errors.Is(err, domain.ErrNotFound) {
		return false, err
	}
	s, _, err := h.sessions.GetByTokenHash(ctx, domain.HashToken(cmd.Handle))
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if s.UserID() != owner {
		return false, nil
	}
	if err := h.revoker.Revoke(ctx, s); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	return s.ID() == cmd.Principal.Session.ID(), nil
}

// ErrNotOwnSession refuses ending a session that is not one of the
// user's live sessions (ListSessions): it ended already, it is someone
// else's, or it is an administrator's impersonation of the user.
var ErrNotOwnSession = domain.NewError(domain.KindNotFound, "session.not_own", "Session not found")

// RevokeOwnSession ends one of the principal's live sessions, named by its
// id (the account's sessions page).
type RevokeOwnSession struct {
	Principal usecase.Principal
	ID        domain.SessionID
}

// RevokeOwnSession ends the session cmd.ID when it is among the
// principal's live sessions (ListSessions), as RevokeSession does;
// otherwise ErrNotOwnSession, and nothing changes. It reports whether the
// current session was the one ended.
func (h *Sessions) RevokeOwnSession(ctx context.Context, cmd RevokeOwnSession) (current bool, err error) {
	own, err := h.ListSessions(ctx, cmd.Principal.User.ID())
	if err != nil {
		return false, err
	}
	if !slices.ContainsFunc(own, func(s *domain.Session) bool { return s.ID() == cmd.ID }) {
		return false, ErrNotOwnSession
	}
	return h.RevokeSession(ctx, RevokeSession{Principal: cmd.Principal, Handle: string(cmd.ID)})
}

// RevokeAllSessions ends every session of the principal's user, the current
// one included.
func (h *Sessions) RevokeAllSessions(ctx context.Context, p usecase.Principal) error {
	return h.revoker.RevokeAll(ctx, p.User.ID(), "")
}

// RevokeOtherSessions ends every session of the principal's user but the
// current one.
func (h *Sessions) RevokeOtherSessions(ctx context.Context, p usecase.Principal) error {
	return h.revoker.RevokeAll(ctx, p.User.ID(), p.Session.ID())
}
