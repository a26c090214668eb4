package account

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Observe makes the handler count each sign-in by its outcome in o.
func (h *SignInHandler) Observe(o ports.Observer) *SignInHandler {
	usecase.MustHave(o)
	h.observer = o
	return h
}

// Observe makes the handler count each second factor answered to finish a
// sign-in (not one answered in a session) by its outcome in o.
func (h *TwoFactorHandler) Observe(o ports.Observer) *TwoFactorHandler {
	usecase.MustHave(o)
	h.observer = o
	return h
}

// Observe makes the handler count each passkey sign-in (a discoverable
// ceremony, not a step-up) by its outcome in o.
func (h *PasskeyHandler) Observe(o ports.Observer) *PasskeyHandler {
	usecase.MustHave(o)
	h.observer = o
	return h
}

// CountSignIns makes the handler record each sign-in's outcome in c, the
// durable counts every replica shares (see usecase.SignInCounter).
func (h *SignInHandler) CountSignIns(c *usecase.SignInCounter) *SignInHandler {
	usecase.MustHave(c)
	h.counter = c
	return h
}

// CountSignIns makes the handler record each sign-in it finishes with a
// second factor in c.
func (h *TwoFactorHandler) CountSignIns(c *usecase.SignInCounter) *TwoFactorHandler {
	usecase.MustHave(c)
	h.counter = c
	return h
}

// CountSignIns makes the handler record each passkey sign-in in c.
func (h *PasskeyHandler) CountSignIns(c *usecase.SignInCounter) *PasskeyHandler {
	usecase.MustHave(c)
	h.counter = c
	return h
}

// observeSignIn counts a sign-in by method that ended with err in o and c,
// if any.
func observeSignIn(ctx context.Context, o ports.Observer, c *usecase.SignInCounter, method ports.SignInMethod, err error) {
	countSignIn(ctx, o, c, method, SignInOutcome(err))
}

// countSignIn counts a sign-in by method that ended with outcome in o and
// c, if any.
func countSignIn(ctx context.Context, o ports.Observer, c *usecase.SignInCounter, method ports.SignInMethod, outcome ports.SignInOutcome) {
	if o != nil {
		o.SignIn(method, outcome)
	}
	c.Count(ctx, outcome)
}

// SignInOutcome says how a sign-in that returned err ended: the refusals
// the service chose by their reason, the service's own failures as errors,
// and every other refusal (wrong or unknown credentials, a wrong code, bad
// input) as a failure.
func SignInOutcome(err error) ports.SignInOutcome {
	switch {
	case err == nil:
		return ports.SignInSuccess
	case errors.Is(err, ErrAccountLocked):
		return ports.SignInLocked
	case errors.Is(err, usecase.ErrBannedUser):
		return ports.SignInBanned
	case errors.Is(err, usecase.ErrEmailNotVerified):
		return ports.SignInEmailNotVerified
	case errors.Is(err, usecase.ErrSSORequired):
		return ports.SignInSSORequired
	}
	switch domain.KindOf(err) {
	case domain.KindInternal, domain.KindUnavailable:
		return ports.SignInError
	}
	return ports.SignInFailure
}
