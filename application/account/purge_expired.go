package account

import (
	"context"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// PurgeExpiredHandler removes expired sessions, one-time links,
// rotated-out service-key secrets and the OpenID provider's expired codes,
// grants and refresh tokens, so the tables hold only what can still be used.
type PurgeExpiredHandler struct {
	sessions      ports.SessionRepository
	verifications ports.VerificationRepository
	keys          ports.ServiceKeyRepository
	grants        ports.OAuthGrantRepository
	clock         ports.Clock
}

// NewPurgeExpiredHandler returns a PurgeExpiredHandler.
func NewPurgeExpiredHandler(sessions ports.SessionRepository, verifications ports.VerificationRepository, keys ports.ServiceKeyRepository,
	grants ports.OAuthGrantRepository, clock ports.Clock) *PurgeExpiredHandler {
	usecase.MustHave(sessions, verifications, keys, grants, clock)
	return &PurgeExpiredHandler{sessions: sessions, verifications: verifications, keys: keys, grants: grants, clock: clock}
}

// Purged counts what a purge removed. OAuth counts authorization codes,
// grants and refresh tokens together.
type Purged struct {
	Sessions, Links, KeySecrets, OAuth int
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
	if p.KeySecrets, err = h.keys.DeleteExpiredSecrets(ctx, now); err != nil {
		return p, err
	}
	p.OAuth, err = h.grants.DeleteExpired(ctx, now)
	return p, err
}
