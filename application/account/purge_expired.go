package account

import (
	"context"
)

// Purged counts what a purge removed. OAuth counts authorization codes,
// grants and refresh tokens together; Challenges the second-factor
// challenges of sign-ins, the passkey ceremonies' challenges and the
// sign-ins left unfinished at upstream identity providers; SignInCounts
// the rows of hourly sign-in counts past their retention; FormTokens the
// console's spent form tokens.
type Purged struct {
	Sessions, Links, KeySecrets, OAuth, Challenges, SignInCounts, FormTokens int
}

// PurgeExpired deletes what expired before now and says how much.
func (h *Purger) PurgeExpired(ctx context.Context) (Purged, error) {
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
