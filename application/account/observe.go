package account

import (
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// Observe makes the service count each sign-in by its outcome in o.
func (h *SignIns) Observe(o ports.Observer) *SignIns {
	usecase.MustHave(o)
	h.observer = o
	return h
}

// CountSignIns makes the service record each sign-in's outcome in c, the
// durable counts every replica shares (see usecase.SignInCounter).
func (h *SignIns) CountSignIns(c *usecase.SignInCounter) *SignIns {
	usecase.MustHave(c)
	h.counter = c
	return h
}
