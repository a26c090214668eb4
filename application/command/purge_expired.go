package command

import (
	"context"

	"github.com/gatehouse/gatehouse/ports"
)

// PurgeExpiredHandler removes expired sessions and one-time links, so the
// tables hold only what can still be used.
type PurgeExpiredHandler struct {
	sessions      ports.SessionRepository
	verifications ports.VerificationRepository
	clock         ports.Clock
}

// NewPurgeExpiredHandler returns a PurgeExpiredHandler.
func NewPurgeExpiredHandler(sessions ports.SessionRepository, verifications ports.VerificationRepository, clock ports.Clock) *PurgeExpiredHandler {
	mustHave(sessions, verifications, clock)
	return &PurgeExpiredHandler{sessions: sessions, verifications: verifications, clock: clock}
}

// Handle deletes what expired before now and says how much.
func (h *PurgeExpiredHandler) Handle(ctx context.Context) (sessions, links int, err error) {
	now := h.clock.Now()
	if sessions, err = h.sessions.DeleteExpired(ctx, now); err != nil {
		return 0, 0, err
	}
	links, err = h.verifications.DeleteExpired(ctx, now)
	return sessions, links, err
}
