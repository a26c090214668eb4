package account

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// PurgeExpiredHandler removes expired sessions, one-time links,
// rotated-out service-key secrets and the OpenID provider's expired codes,
// grants and refresh tokens, second-factor and WebAuthn challenges, and the
// console's spent form tokens, so the tables hold only what can still be
// used; and the sign-in counts older than SignInCountRetention.
type PurgeExpiredHandler struct {
	sessions      ports.SessionRepository
	verifications ports.VerificationRepository
	keys          ports.ServiceKeyRepository
	grants        ports.OAuthGrantRepository
	challenges    ports.MFAChallengeRepository
	webauthn      ports.WebAuthnChallengeRepository
	states        ports.FederationStateRepository
	signIns       ports.SignInStats
	spent         ports.SpentTokens
	clock         ports.Clock
}

// SignInCountRetention is how long the hourly sign-in counts are kept: the
// overview shows 30 days, and the rest leaves room to look back further.
const SignInCountRetention = 90 * 24 * time.Hour

// NewPurgeExpiredHandler returns a PurgeExpiredHandler.
func NewPurgeExpiredHandler(sessions ports.SessionRepository, verifications ports.VerificationRepository, keys ports.ServiceKeyRepository,
	grants ports.OAuthGrantRepository, challenges ports.MFAChallengeRepository, webauthn ports.WebAuthnChallengeRepository,
	states ports.FederationStateRepository, signIns ports.SignInStats, spent ports.SpentTokens, clock ports.Clock) *PurgeExpiredHandler {
	usecase.MustHave(sessions, verifications, keys, grants, challenges, webauthn, states, signIns, spent, clock)
	return &PurgeExpiredHandler{sessions: sessions, verifications: verifications, keys: keys, grants: grants, challenges: challenges,
		webauthn: webauthn, states: states, signIns: signIns, spent: spent, clock: clock}
}

// Purged counts what a purge removed. OAuth counts authorization codes,
// grants and refresh tokens together; Challenges the second-factor
// challenges of sign-ins, the passkey ceremonies' challenges and the
// sign-ins left unfinished at upstream identity providers; SignInCounts
// the rows of hourly sign-in counts past their retention; FormTokens the
// console's spent form tokens.
type Purged struct {
	Sessions, Links, KeySecrets, OAuth, Challenges, SignInCounts, FormTokens int
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
	p.SignInCounts, err = h.signIns.DeleteBefore(ctx, now.Add(-SignInCountRetention))
	if err != nil {
		return p, err
	}
	p.FormTokens, err = h.spent.DeleteExpired(ctx, now)
	return p, err
}
