package usecase

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// ErrStepUpRequired refuses a sensitive action of a user who has a second
// factor but has not proven one in this session within the step-up window.
// Answering a code (two-factor verify routes) or a passkey in the session
// steps it up.
var ErrStepUpRequired = domain.NewError(domain.KindForbidden, "mfa.step_up_required",
	"This action needs a second factor proven recently: verify a code or a passkey, then try again")

// StepUp guards sensitive actions (changing the e-mail or the password,
// deleting the account, turning a factor off, creating service keys): a user
// with a second factor (two-factor on, or a passkey) must have proven one in
// the session less than Window ago. A user without one is not asked.
type StepUp struct {
	passkeys ports.PasskeyRepository
	clock    ports.Clock
	// Window is how long a proven second factor counts as fresh.
	Window time.Duration
}

// NewStepUp returns a StepUp with the given window.
func NewStepUp(passkeys ports.PasskeyRepository, clock ports.Clock, window time.Duration) StepUp {
	MustHave(passkeys, clock)
	return StepUp{passkeys: passkeys, clock: clock, Window: window}
}

// Require returns ErrStepUpRequired unless p's user has no second factor or
// proved one in p's session within the window. It reads the passkeys only
// when the session holds no fresh second factor and two-factor is off.
func (s StepUp) Require(ctx context.Context, p Principal) error {
	if p.Session == nil || p.User == nil {
		return ErrUnauthorized
	}
	if p.Session.Authentication().SecondFactorWithin(s.clock.Now(), s.Window) {
		return nil
	}
	has, err := s.hasFactor(ctx, p.User)
	if err != nil {
		return err
	}
	if has {
		return ErrStepUpRequired
	}
	return nil
}

// HasSecondFactor reports whether p's user has a second factor: one proven
// in p's session (so they have one), two-factor on, or a passkey. Only the
// last costs a read, and only when the first two say no.
func (s StepUp) HasSecondFactor(ctx context.Context, p Principal) (bool, error) {
	if p.Session == nil || p.User == nil {
		return false, ErrUnauthorized
	}
	if p.Session.Authentication().HasSecondFactor() {
		return true, nil
	}
	return s.hasFactor(ctx, p.User)
}

// hasFactor reports whether u has two-factor on or a passkey.
func (s StepUp) hasFactor(ctx context.Context, u *domain.User) (bool, error) {
	if u.TwoFactorEnabled() {
		return true, nil
	}
	n, err := s.passkeys.CountByUser(ctx, u.ID())
	if err != nil {
		return false, err
	}
	return n > 0, nil
}
