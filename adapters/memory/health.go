package memory

import (
	"context"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.HealthChecker = (*HealthChecker)(nil)

// HealthChecker reports the in-memory store as always available: there is no
// connection that could fail.
type HealthChecker struct{}

// NewHealthChecker returns a HealthChecker.
func NewHealthChecker() *HealthChecker { return &HealthChecker{} }

// Name implements ports.HealthChecker.
func (*HealthChecker) Name() string { return "database" }

// Check implements ports.HealthChecker.
func (*HealthChecker) Check(context.Context) error { return nil }
