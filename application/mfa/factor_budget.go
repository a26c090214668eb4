package mfa

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// factorBudget is each user's budget of wrong second-factor answers: the
// account lockout (domain.LockoutPolicy, GATEHOUSE_LOCKOUT_*), on the
// sign-in challenge and in a signed-in session alike (step-up, enrolment),
// for TOTP, backup and e-mailed codes. It is kept in the database, so every
// replica spends the same one: on the password's credential, shared with
// wrong passwords, or, for a user without a password, on their
// domain.FactorLockout. It is per user, whatever address the answers come
// from (per-address limits are the rate limiter's).
//
// An attempt is counted before its answer is looked at (take), so that
// answers sent at once cannot all slip in before the lockout they add up
// to: each takes its turn on the user's row. The answer then settles it:
// a right one forgets every failure, a wrong one stays counted, and one
// that was no answer (no code to check, a store error) is given back.
type factorBudget struct {
	credentials ports.CredentialRepository
	factors     ports.TwoFactorRepository
	clock       ports.Clock
	policy      domain.LockoutPolicy
}

// factorAttempt is an attempt take counted.
type factorAttempt struct {
	user     domain.UserID
	password bool      // counted on the credential, else on the factor lockout
	at       time.Time // when it was counted
	prev     time.Time // the lockout's end before it
}

// take counts an attempt of user's, or refuses it with usecase.ErrAccountLocked
// while the user is locked (counting nothing).
func (b factorBudget) take(ctx context.Context, user domain.UserID) (factorAttempt, error) {
	a := factorAttempt{user: user, password: true, at: b.clock.Now()}
	err := b.credentials.Update(ctx, user, func(c *domain.Credential) error {
		if c.IsLocked(a.at) {
			return usecase.ErrAccountLocked
		}
		a.prev = c.LockedUntil()
		c.RecordFailure(a.at, b.policy)
		return nil
	})
	if !errors.Is(err, domain.ErrCredentialNotFound) {
		return a, err
	}
	a.password = false
	return a, b.factors.UpdateLockout(ctx, user, func(l *domain.FactorLockout) error {
		if l.IsLocked(a.at) {
			return usecase.ErrAccountLocked
		}
		a.prev = l.LockedUntil
		l.RecordFailure(a.at, b.policy)
		return nil
	})
}

// settle ends attempt a with the answer's outcome: nil (right: every
// failure is forgotten), an error that is wrong or ErrTooManyAttempts (a
// wrong answer: it stays counted), or any other error (no answer: the
// attempt is given back). It returns outcome, or the store's error.
func (b factorBudget) settle(ctx context.Context, a factorAttempt, outcome, wrong error) error {
	if outcome != nil && (errors.Is(outcome, wrong) || errors.Is(outcome, ErrTooManyAttempts)) {
		return outcome
	}
	now := b.clock.Now()
	var err error
	if a.password {
		err = b.credentials.Update(ctx, a.user, func(c *domain.Credential) error {
			if outcome == nil {
				c.RecordSuccess(now)
			} else {
				c.RefundFailure(a.at, a.prev, b.policy)
			}
			return nil
		})
	} else {
		err = b.factors.UpdateLockout(ctx, a.user, func(l *domain.FactorLockout) error {
			if outcome == nil {
				l.RecordSuccess(now)
			} else {
				l.RefundFailure(a.at, a.prev, b.policy)
			}
			return nil
		})
	}
	if outcome != nil {
		return outcome
	}
	return err
}
