package account

import (
	"context"

	"github.com/gatehouse/gatehouse/domain"
)

// ListSessions returns the user's sessions that have not expired, newest first.
// Sessions in which an administrator impersonates the user are left out, as
// Better Auth's admin plugin does: they are the administrator's, not the user's.
func (h *Sessions) ListSessions(ctx context.Context, userID domain.UserID) ([]*domain.Session, error) {
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
