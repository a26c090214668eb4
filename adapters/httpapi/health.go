package httpapi

import (
	"context"
	"net/http"

	"github.com/gatehouse/gatehouse/application/health"
)

// OKOutput is the liveness answer.
type OKOutput struct {
	Body struct {
		OK bool `json:"ok" doc:"Always true: the process is up and serving." example:"true"`
	}
}

// ok answers liveness. It touches no database and no optional dependency, so
// an orchestrator never restarts a healthy process because a dependency is down.
func ok(context.Context, *struct{}) (*OKOutput, error) {
	out := &OKOutput{}
	out.Body.OK = true
	return out, nil
}

// ReadinessCheck is one dependency's state.
type ReadinessCheck struct {
	Name   string `json:"name" doc:"The dependency." example:"database"`
	Status string `json:"status" enum:"up,down" doc:"Whether it answered in time." example:"up"`
}

// ReadinessOutput is the readiness answer: 200 when ready, 503 when not.
type ReadinessOutput struct {
	Status int
	Body   struct {
		Status string           `json:"status" enum:"ready,unavailable" doc:"ready when every check is up." example:"ready"`
		Checks []ReadinessCheck `json:"checks" doc:"Each dependency checked."`
	}
}

func ready(h *health.ReadinessHandler) func(context.Context, *struct{}) (*ReadinessOutput, error) {
	return func(ctx context.Context, _ *struct{}) (*ReadinessOutput, error) {
		r := h.Handle(ctx)
		out := &ReadinessOutput{Status: http.StatusOK}
		out.Body.Status = "ready"
		if !r.Ready {
			out.Status, out.Body.Status = http.StatusServiceUnavailable, "unavailable"
		}
		out.Body.Checks = make([]ReadinessCheck, len(r.Checks))
		for i, c := range r.Checks {
			out.Body.Checks[i] = ReadinessCheck{Name: c.Name, Status: string(c.Status)}
		}
		return out, nil
	}
}
