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
	// SecondFactors says whether the user has a second factor
	// (StepUp.Has, for the rules that require one).
	SecondFactors
	clock ports.Clock
	// Window is how long a proven second factor counts as fresh.
	Window time.Duration
}

// NewStepUp returns a StepUp with the given window.
func NewStepUp(passkeys ports.PasskeyRepository, clock ports.Clock, window time.Duration) StepUp {
	MustHave(passkeys, clock)
	return StepUp{SecondFactors: SecondFactors{passkeys: passkeys}, clock: clock, Window: window}
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
	has, err := s.user(ctx, p.User)
	if err != nil {
		return err
	}
	if has {
		return ErrStepUpRequired
	}
	return nil
}

// SecondFactors tells whether a user has a second factor, for the rules
// that require one (administrators, organizations).
type SecondFactors struct {
	passkeys ports.PasskeyRepository
}

// NewSecondFactors returns SecondFactors reading passkeys.
func NewSecondFactors(passkeys ports.PasskeyRepository) SecondFactors {
	MustHave(passkeys)
	return SecondFactors{passkeys: passkeys}
}

// Has reports whether p's user has a second factor: two-factor on, or a
// passkey, which a session signed in or stepped up with one shows without
// a read. Only a user with neither sign costs a read. (A code proven in the
// session is no sign: two-factor may have been turned off since.)
func (f SecondFactors) Has(ctx context.Context, p Principal) (bool, error) {
	if p.Session == nil || p.User == nil {
		return false, ErrUnauthorized
	}
	if p.User.TwoFactorEnabled() || p.Session.Authentication().PhishingResistant() {
		return true, nil
	}
	return f.user(ctx, p.User)
}

// user reports whether u has two-factor on or a passkey.
func (f SecondFactors) user(ctx context.Context, u *domain.User) (bool, error) {
	if u.TwoFactorEnabled() {
		return true, nil
	}
	n, err := f.passkeys.CountByUser(ctx, u.ID())
	if err != nil {
		return false, err
	}
	return n > 0, nil
}
