package mfa

import (
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// Observe makes the service count each second factor answered to finish a
// sign-in (not one answered in a session) by its outcome in o.
func (h *TwoFactor) Observe(o ports.Observer) *TwoFactor {
	usecase.MustHave(o)
	h.observer = o
	return h
}

// Observe makes the service count each passkey sign-in (a discoverable
// ceremony, not a step-up) by its outcome in o.
func (h *Passkeys) Observe(o ports.Observer) *Passkeys {
	usecase.MustHave(o)
	h.observer = o
	return h
}

// CountSignIns makes the service record each sign-in it finishes with a
// second factor in c, the durable counts every replica shares (see
// usecase.SignInCounter).
func (h *TwoFactor) CountSignIns(c *usecase.SignInCounter) *TwoFactor {
	usecase.MustHave(c)
	h.counter = c
	return h
}

// CountSignIns makes the service record each passkey sign-in in c.
func (h *Passkeys) CountSignIns(c *usecase.SignInCounter) *Passkeys {
	usecase.MustHave(c)
	h.counter = c
	return h
}
