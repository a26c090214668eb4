package account

import (
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// Observe makes the handler count each sign-in by its outcome in o.
func (h *SignInHandler) Observe(o ports.Observer) *SignInHandler {
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
