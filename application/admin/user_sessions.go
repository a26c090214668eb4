package admin

import (
	"context"
	"slices"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// ErrNotUsersSession refuses ending a session that is not one of the
// user's live sessions: it ended already, or it is someone else's.
var ErrNotUsersSession = domain.NewError(domain.KindNotFound, "admin.session_not_of_user", "Session not found")

// RevokeSessionOf ends one of user's live sessions (the console's user
// page): ListUserSessions, then RevokeUserSession when the session is
// among them; otherwise ErrNotUsersSession, and nothing changes.
func (a *Administration) RevokeSessionOf(ctx context.Context, req usecase.AdminRequest, user domain.UserID, id domain.SessionID) error {
	sessions, err := a.ListUserSessions(ctx, req, user)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(sessions, func(s *domain.Session) bool { return s.ID() == id }) {
		return ErrNotUsersSession
	}
	return a.RevokeUserSession(ctx, req, id)
}
