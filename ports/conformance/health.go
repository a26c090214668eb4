package conformance

import (
	"context"
	"testing"

	"github.com/gatehouse/gatehouse/ports"
)

// RunHealthChecker runs the HealthChecker contract on a healthy dependency.
// Adapters test the unhealthy case themselves, since only they know how to
// break their dependency.
func RunHealthChecker(t *testing.T, newChecker func(t *testing.T) ports.HealthChecker) {
	t.Helper()
	t.Run("contract=HealthChecker/healthy_dependency_passes", func(t *testing.T) {
		c := newChecker(t)
		if c.Name() == "" {
			t.Fatal("Name() is empty")
		}
		if err := c.Check(context.Background()); err != nil {
			t.Fatalf("Check: %v", err)
		}
	})
}
