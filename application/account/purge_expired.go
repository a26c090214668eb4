package account

import (
	"context"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// PurgeExpiredHandler removes expired sessions, one-time links,
// rotated-out service-key secrets and the OpenID provider's expired codes,
// grants and refresh tokens, second-factor and WebAuthn challenges, and the
// console's spent form tokens, so the tables
// hold only what can still be used.
type PurgeExpiredHandler struct {
	sessions      ports.SessionRepository
	verifications ports.VerificationRepository
	keys          ports.ServiceKeyRepository
	grants        ports.OAuthGrantRepository
	challenges    ports.MFAChallengeRepository
	webauthn      ports.WebAuthnChallengeRepository
	states        ports.FederationStateRepository
	spent         ports.SpentTokens
	clock         ports.Clock
}

// NewPurgeExpiredHandler returns a PurgeExpiredHandler.
func NewPurgeExpiredHandler(sessions ports.SessionRepository, verifications ports.VerificationRepository, keys ports.ServiceKeyRepository,
	grants ports.OAuthGrantRepository, challenges ports.MFAChallengeRepository, webauthn ports.WebAuthnChallengeRepository,
	states ports.FederationStateRepository, spent ports.SpentTokens, clock ports.Clock) *PurgeExpiredHandler {
	usecase.MustHave(sessions, verifications, keys, grants, challenges, webauthn, states, spent, clock)
	return &PurgeExpiredHandler{sessions: sessions, verifications: verifications, keys: keys, grants: grants, challenges: challenges,
		webauthn: webauthn, states: states, spent: spent, clock: clock}
}

// Purged counts what a purge removed. OAuth counts authorization codes,
// grants and refresh tokens together; Challenges the second-factor
// challenges of sign-ins, the passkey ceremonies' challenges and the
// sign-ins left unfinished at upstream identity providers; FormTokens the
// console's spent form tokens.
type Purged struct {
	Sessions, Links, KeySecrets, OAuth, Challenges, FormTokens int
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
	if p.OAuth, err = h.grants.DeleteExpired(ctx, now); err != nil {
		return p, err
	}
	if p.Challenges, err = h.challenges.DeleteExpired(ctx, now); err != nil {
		return p, err
	}
	n, err := h.webauthn.DeleteExpired(ctx, now)
	p.Challenges += n
	if err != nil {
		return p, err
	}
	n, err = h.states.DeleteExpired(ctx, now)
	p.Challenges += n
	if err != nil {
		return p, err
	}
	p.FormTokens, err = h.spent.DeleteExpired(ctx, now)
	return p, err
}
