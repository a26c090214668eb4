package health_test

import (
	"context"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application/health"
	"github.com/gatehouse/gatehouse/domain"
)

type downChecker struct{}

func (downChecker) Name() string { return "database" }
func (downChecker) Check(ctx context.Context) error {
	<-ctx.Done() // a dependency that never answers
	return domain.ErrUnavailable
}

func TestReadiness(t *testing.T) {
	tests := []struct {
		name    string
		handler *health.ReadinessHandler
		ready   bool
	}{
		{"healthy_database_is_ready", health.NewReadinessHandler(memory.NewHealthChecker()), true},
		{"hung_database_is_not_ready", health.NewReadinessHandler(downChecker{}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.handler.Handle(context.Background())
			if got.Ready != tt.ready || len(got.Checks) != 1 || got.Checks[0].Name != "database" {
				t.Fatalf("Handle() = %+v, want ready=%v with one database check", got, tt.ready)
			}
		})
	}
}
