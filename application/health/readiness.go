package health

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

// CheckStatus is the outcome of one readiness check.
type CheckStatus string

// The check outcomes.
const (
	CheckUp   CheckStatus = "up"
	CheckDown CheckStatus = "down"
)

// Check is the result of checking one dependency.
type Check struct {
	Name   string
	Status CheckStatus
}

// Readiness says whether the service can serve requests that need its
// dependencies, and why not.
type Readiness struct {
	Ready  bool
	Checks []Check
}

// ReadinessTimeout bounds the whole check, so a hung dependency gives a quick
// "not ready" instead of a hung probe.
const ReadinessTimeout = 2 * time.Second

// ReadinessHandler checks the dependencies the service cannot work without.
type ReadinessHandler struct {
	checkers []ports.HealthChecker
}

// NewReadinessHandler returns a handler checking the database.
func NewReadinessHandler(database ports.HealthChecker) *ReadinessHandler {
	if database == nil {
		panic("health: nil database health checker")
	}
	return &ReadinessHandler{checkers: []ports.HealthChecker{database}}
}

// Handle runs every check concurrently, within ReadinessTimeout.
func (h *ReadinessHandler) Handle(ctx context.Context) Readiness {
	ctx, cancel := context.WithTimeout(ctx, ReadinessTimeout)
	defer cancel()
	results := make([]Check, len(h.checkers))
	done := make(chan struct{}, len(h.checkers))
	for i, c := range h.checkers {
		go func() {
			defer func() { done <- struct{}{} }()
			results[i] = Check{Name: c.Name(), Status: CheckUp}
			if err := c.Check(ctx); err != nil {
				results[i].Status = CheckDown
			}
		}()
	}
	for range h.checkers {
		<-done
	}
	r := Readiness{Ready: true, Checks: results}
	for _, c := range results {
		if c.Status != CheckUp {
			r.Ready = false
		}
	}
	return r
}
