package usecasetest

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/metrics"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// SignIns returns the count of gatehouse_sign_ins_total{method, outcome} in m.
func SignIns(t *testing.T, m *metrics.Metrics, method ports.SignInMethod, outcome ports.SignInOutcome) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "gatehouse_sign_ins_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["method"] == string(method) && labels["outcome"] == string(outcome) {
				return s.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series for %s/%s", method, outcome)
	return 0
}

// HourCounts flushes c and returns the sign-ins stats holds for the hour
// of now.
func HourCounts(t *testing.T, c *usecase.SignInCounter, stats ports.SignInStats, now time.Time) (succeeded, failed int) {
	t.Helper()
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := stats.Series(t.Context(), now, now.Add(time.Nanosecond), ports.StepHour)
	if err != nil || len(got) != 1 {
		t.Fatalf("Series = %+v, %v", got, err)
	}
	return got[0].Succeeded, got[0].Failed
}
