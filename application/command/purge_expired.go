package command

import (
	"context"

	"github.com/gatehouse/gatehouse/ports"
)

// PurgeExpiredHandler removes expired sessions, one-time links and
// rotated-out service-key secrets, so the tables hold only what can still
// be used.
type PurgeExpiredHandler struct {
	sessions      ports.SessionRepository
	verifications ports.VerificationRepository
	keys          ports.ServiceKeyRepository
	clock         ports.Clock
}

// NewPurgeExpiredHandler returns a PurgeExpiredHandler.
func NewPurgeExpiredHandler(sessions ports.SessionRepository, verifications ports.VerificationRepository, keys ports.ServiceKeyRepository, clock ports.Clock) *PurgeExpiredHandler {
	mustHave(sessions, verifications, keys, clock)
	return &PurgeExpiredHandler{sessions: sessions, verifications: verifications, keys: keys, clock: clock}
}

// Purged counts what a purge removed.
type Purged struct {
	Sessions, Links, KeySecrets int
}

// Handle deletes what expired before now and says how much.
func (h *PurgeExpiredHandler) Handle(ctx context.Context) (Purged, error) {
	now := h.clock.Now()
	var p Purged
	var err error
	if p.Sessions, err = h.sessions.DeleteExpired(ctx, now); err != nil {
		return p, err
	}
	if p.Links, err = h.verifications.DeleteExpired(ctx, now); err != nil {
		return p, err
	}
	p.KeySecrets, err = h.keys.DeleteExpiredSecrets(ctx, now)
	return p, err
}
