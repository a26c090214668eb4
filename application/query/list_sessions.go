package query

import (
	"context"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// ListSessionsHandler lists a user's live sessions.
type ListSessionsHandler struct {
	sessions ports.SessionRepository
	clock    ports.Clock
}

// NewListSessionsHandler returns a ListSessionsHandler.
func NewListSessionsHandler(sessions ports.SessionRepository, clock ports.Clock) *ListSessionsHandler {
	if sessions == nil || clock == nil {
		panic("query: nil dependency")
	}
	return &ListSessionsHandler{sessions: sessions, clock: clock}
}

// Handle returns the user's sessions that have not expired, newest first.
// Sessions in which an administrator impersonates the user are left out, as
// Better Auth's admin plugin does: they are the administrator's, not the user's.
func (h *ListSessionsHandler) Handle(ctx context.Context, userID domain.UserID) ([]*domain.Session, error) {
	all, err := h.sessions.ListByUser(ctx, userID, h.clock.Now())
	if err != nil {
		return nil, err
	}
	own := all[:0]
	for _, s := range all {
		if s.ImpersonatedBy() == "" {
			own = append(own, s)
		}
	}
	return own, nil
}
