package account

import (
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

// observeSignIn counts a sign-in by method that ended with err in o, if any.
func observeSignIn(o ports.Observer, method ports.SignInMethod, err error) {
	if o != nil {
		o.SignIn(method, signInOutcome(err))
	}
}

// signInOutcome says how a sign-in that returned err ended: the refusals
// the service chose by their reason, the service's own failures as errors,
// and every other refusal (wrong or unknown credentials, a wrong code, bad
// input) as a failure.
func signInOutcome(err error) ports.SignInOutcome {
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
