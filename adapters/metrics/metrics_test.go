package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	dto "github.com/prometheus/client_model/go"

	"github.com/gatehouse/gatehouse/adapters/metrics"
	"github.com/gatehouse/gatehouse/ports"
)

// scrape serves m's handler once and parses the text it answers.
func scrape(t *testing.T, m *metrics.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", w.Code, w.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(io.Reader(w.Body))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return families
}

// value returns the value of the series of family whose labels include
// labels, and whether there is one.
func value(families map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	f, ok := families[family]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// Ensure no label takes a value a client chooses: an unknown method is
// OTHER, no route is "unmatched", an unknown outcome is "other".
func TestMetrics_labels_are_bounded(t *testing.T) {
	m := metrics.New(metrics.Options{Version: "test"})
	m.Request("GET", "/api/auth/get-session", 200, time.Millisecond)
	m.Request("GET", "/api/auth/get-session", 200, time.Millisecond)
	m.Request("BREW", "", 404, time.Millisecond)
	m.SignIn(ports.SignInPassword, "made-up")
	m.WebhookDelivery("teapot")
	m.RateLimited("credentials")
	f := scrape(t, m)
	checks := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"gatehouse_http_requests_total", map[string]string{"method": "GET", "route": "/api/auth/get-session", "code": "200"}, 2},
		{"gatehouse_http_request_duration_seconds", map[string]string{"method": "GET", "route": "/api/auth/get-session"}, 2},
		{"gatehouse_http_requests_total", map[string]string{"method": "OTHER", "route": "unmatched", "code": "404"}, 1},
		{"gatehouse_sign_ins_total", map[string]string{"method": "password", "outcome": "other"}, 1},
		{"gatehouse_sign_ins_total", map[string]string{"method": "passkey", "outcome": "locked"}, 0}, // counted ahead, at 0
		{"gatehouse_webhook_deliveries_total", map[string]string{"outcome": "other"}, 1},
		{"gatehouse_webhook_deliveries_total", map[string]string{"outcome": "succeeded"}, 0},
		{"gatehouse_rate_limited_total", map[string]string{"rule": "credentials"}, 1},
		{"gatehouse_build_info", map[string]string{"version": "test"}, 1},
	}
	for _, c := range checks {
		if got, ok := value(f, c.family, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	if _, ok := value(f, "gatehouse_http_requests_total", map[string]string{"method": "BREW"}); ok {
		t.Error("a made-up method became a label value")
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := f[name]; !ok {
			t.Errorf("%s missing: the runtime and process collectors are not registered", name)
		}
	}
}

// Ensure counting a request on a series already seen allocates nothing.
func TestMetrics_request_allocations(t *testing.T) {
	m := metrics.New(metrics.Options{})
	m.Request("GET", "/api/auth/get-session", 200, time.Millisecond)
	if n := testing.AllocsPerRun(1000, func() { m.Request("GET", "/api/auth/get-session", 200, time.Millisecond) }); n != 0 {
		t.Fatalf("Request allocates %v times per call", n)
	}
}

// statsFunc is an outbox reduced to its statistics, for the collector.
type statsFunc func(ctx context.Context) (map[ports.OutboxTopic]ports.OutboxStats, error)

func (f statsFunc) Stats(ctx context.Context) (map[ports.OutboxTopic]ports.OutboxStats, error) {
	return f(ctx)
}

// Ensure each scrape reads the outbox: the depth and age of every topic,
// known topics at 0 when empty.
func TestMetrics_outbox_depth_and_age(t *testing.T) {
	oldest := time.Now().Add(-90 * time.Second)
	m := metrics.New(metrics.Options{Outbox: statsFunc(func(context.Context) (map[ports.OutboxTopic]ports.OutboxStats, error) {
		return map[ports.OutboxTopic]ports.OutboxStats{ports.OutboxEvents: {Depth: 3, Oldest: oldest}}, nil
	})})
	f := scrape(t, m)
	if got, _ := value(f, "gatehouse_outbox_depth", map[string]string{"topic": "event"}); got != 3 {
		t.Errorf("event depth = %v, want 3", got)
	}
	if got, _ := value(f, "gatehouse_outbox_oldest_age_seconds", map[string]string{"topic": "event"}); got < 90 || got > 150 {
		t.Errorf("event age = %vs, want about 90s", got)
	}
	if got, ok := value(f, "gatehouse_outbox_depth", map[string]string{"topic": "mail"}); !ok || got != 0 {
		t.Errorf("mail depth = %v (present %v), want 0", got, ok)
	}
}

// Ensure an outbox that fails or hangs costs a scrape its outbox figures
// (counted as an error), within the timeout, and nothing else.
func TestMetrics_outbox_failure_and_timeout(t *testing.T) {
	tests := []struct {
		name  string
		stats statsFunc
	}{
		{"error", func(context.Context) (map[ports.OutboxTopic]ports.OutboxStats, error) {
			return nil, errors.New("database down")
		}},
		{"hangs", func(ctx context.Context) (map[ports.OutboxTopic]ports.OutboxStats, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := metrics.New(metrics.Options{Outbox: tt.stats, OutboxTimeout: 50 * time.Millisecond})
			f := scrape(t, m)
			if _, ok := f["gatehouse_outbox_depth"]; ok {
				t.Error("outbox depth reported from a failed read")
			}
			if got, _ := value(f, "gatehouse_outbox_stats_errors_total", nil); got != 1 {
				t.Errorf("errors = %v, want 1", got)
			}
			if _, ok := f["gatehouse_build_info"]; !ok {
				t.Error("the other metrics are missing too")
			}
		})
	}
}

// Ensure the handler answers the text format a Prometheus server reads.
func TestMetrics_handler_content_type(t *testing.T) {
	m := metrics.New(metrics.Options{})
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type = %q", ct)
	}
}
