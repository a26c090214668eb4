package process

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/test/harness"
)

// scrapeMetrics reads url with Prometheus' own text parser.
func scrapeMetrics(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("scrape: status %d", res.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("scrape: not the Prometheus text format: %v", err)
	}
	return families
}

// sample returns the value of the series of family whose labels include
// labels (a histogram's count), and whether there is one.
func sample(families map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	f, ok := families[family]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range labels {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
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

// Ensure the metrics listener serves counters that move with what the
// service does (a sign-in that succeeds, one that fails, a rate-limited
// request, a 404), with the pool and runtime figures, no label holding a
// path, an address or an e-mail; and that only it serves them: the public
// listener answers /metrics 404, and the metrics listener serves nothing
// else.
func TestMetrics_counters_move_on_their_own_listener(t *testing.T) {
	p := harness.StartProcess(t, "GATEHOUSE_METRICS_ADDR=127.0.0.1:0", "GATEHOUSE_REQUIRE_EMAIL_VERIFICATION=false")
	metrics := p.MetricsURL(t)
	if strings.Contains(metrics, p.URL) {
		t.Fatalf("metrics %s on the public listener %s", metrics, p.URL)
	}
	before := scrapeMetrics(t, metrics)

	const email = "metrics-user@example.com"
	if status, _ := p.Send(t, http.MethodPost, "/api/auth/sign-up/email", `{"name":"M","email":"`+email+`","password":"correct horse battery"}`); status != http.StatusOK {
		t.Fatalf("sign-up: %d", status)
	}
	signIn := func(password string) int {
		status, _ := p.Send(t, http.MethodPost, "/api/auth/sign-in/email", `{"email":"`+email+`","password":"`+password+`"}`)
		return status
	}
	// The sign-in rule allows 3 requests per 10 s from one address.
	for i, want := range []struct {
		password string
		status   int
	}{{"correct horse battery", 200}, {"wrong password 1", 401}, {"wrong password 2", 401}, {"correct horse battery", 429}} {
		if got := signIn(want.password); got != want.status {
			t.Fatalf("sign-in %d: %d, want %d", i+1, got, want.status)
		}
	}
	if status, _ := p.Send(t, http.MethodGet, "/no-such-page/"+email, ""); status != http.StatusNotFound {
		t.Fatalf("unknown path: %d", status)
	}
	if status, _ := p.Get(t, "/metrics"); status != http.StatusNotFound {
		t.Fatalf("public listener: GET /metrics = %d, want 404", status)
	}
	base := strings.TrimSuffix(metrics, "/metrics")
	for _, path := range []string{"/", "/api/auth/ok", "/metrics/x"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Fatalf("metrics listener: GET %s = %d, want 404", path, res.StatusCode)
		}
	}

	after := scrapeMetrics(t, metrics)
	moved := []struct {
		family string
		labels map[string]string
		delta  float64
	}{
		{"gatehouse_sign_ins_total", map[string]string{"method": "password", "outcome": "success"}, 1},
		{"gatehouse_sign_ins_total", map[string]string{"method": "password", "outcome": "failure"}, 2},
		{"gatehouse_rate_limited_total", map[string]string{"rule": "credentials"}, 1},
		{"gatehouse_http_requests_total", map[string]string{"method": "POST", "route": "/api/auth/sign-in/email", "code": "200"}, 1},
		{"gatehouse_http_requests_total", map[string]string{"method": "POST", "route": "/api/auth/sign-in/email", "code": "401"}, 2},
		{"gatehouse_http_requests_total", map[string]string{"method": "POST", "route": "/api/auth/sign-in/email", "code": "429"}, 1},
		{"gatehouse_http_requests_total", map[string]string{"method": "GET", "route": "unmatched", "code": "404"}, 2}, // the page and the public /metrics
		{"gatehouse_http_request_duration_seconds", map[string]string{"method": "POST", "route": "/api/auth/sign-in/email"}, 4},
	}
	for _, m := range moved {
		was, _ := sample(before, m.family, m.labels)
		now, ok := sample(after, m.family, m.labels)
		if !ok || now-was != m.delta {
			t.Errorf("%s%v moved by %v (from %v, present %v), want %v", m.family, m.labels, now-was, was, ok, m.delta)
		}
	}
	for _, present := range []struct {
		family string
		labels map[string]string
	}{
		{"go_sql_open_connections", map[string]string{"db_name": "gatehouse"}},
		{"go_sql_wait_count_total", map[string]string{"db_name": "gatehouse"}},
		{"go_goroutines", nil},
		{"process_resident_memory_bytes", nil},
		{"gatehouse_build_info", nil},
		{"gatehouse_webhook_deliveries_total", map[string]string{"outcome": "succeeded"}},
	} {
		if _, ok := sample(after, present.family, present.labels); !ok {
			t.Errorf("%s%v missing", present.family, present.labels)
		}
	}
	for name, f := range after {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v := l.GetValue(); strings.Contains(v, "@") || strings.Contains(v, "no-such") || strings.Contains(v, "127.0.0.1") {
					t.Errorf("%s has label %s=%q: a path, address or e-mail", name, l.GetName(), v)
				}
			}
		}
	}
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, p.Stderr)
	}
	if _, err := http.Get(metrics); err == nil {
		t.Fatal("the metrics listener still serves after shutdown")
	}
}

// otlpReceiver is an OTLP/HTTP collector on loopback that keeps the spans
// it is sent.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	service string
	span    *tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(req.Body)
		var export collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &export)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range export.GetResourceSpans() {
			service := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					r.spans = append(r.spans, receivedSpan{service, s})
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// waitSpan waits up to 20 s for the span carrying requestID.
func (r *otlpReceiver) waitSpan(t *testing.T, requestID string) receivedSpan {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, s := range r.spans {
			for _, a := range s.span.GetAttributes() {
				if a.GetKey() == "gatehouse.request_id" && a.GetValue().GetStringValue() == requestID {
					r.mu.Unlock()
					return s
				}
			}
		}
		r.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no span with request id %s reached the collector", requestID)
	return receivedSpan{}
}

// Ensure spans leave the process over OTLP/HTTP to a collector on
// loopback: one per request, named after its route, carrying the request
// id of its X-Request-Id; and that the request's log lines (the access
// line, and the mail queue's line for a sign-up's mail) carry that request
// id and the span's trace id.
func TestTracing_spans_reach_an_otlp_collector(t *testing.T) {
	collector := newOTLPReceiver(t)
	p := harness.StartProcess(t, "GATEHOUSE_TRACING=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL,
		"OTEL_SERVICE_NAME=gatehouse-under-test", "OTEL_BSP_SCHEDULE_DELAY=100")

	if status, h := p.Send(t, http.MethodGet, "/api/auth/ok", "", "X-Request-Id", "trace-test-ok"); status != http.StatusOK || h.Get("X-Request-Id") != "trace-test-ok" {
		t.Fatalf("ok: %d, request id %q", status, h.Get("X-Request-Id"))
	}
	if status, _ := p.Send(t, http.MethodPost, "/api/auth/sign-up/email", `{"name":"T","email":"traced@example.com","password":"correct horse battery"}`,
		"X-Request-Id", "trace-test-sign-up"); status != http.StatusOK {
		t.Fatalf("sign-up: %d", status)
	}

	ok := collector.waitSpan(t, "trace-test-ok")
	if ok.service != "gatehouse-under-test" || ok.span.GetName() != "GET /api/auth/ok" || ok.span.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Fatalf("span: service %q, name %q, kind %v", ok.service, ok.span.GetName(), ok.span.GetKind())
	}
	signUp := collector.waitSpan(t, "trace-test-sign-up")
	if signUp.span.GetName() != "POST /api/auth/sign-up/email" {
		t.Fatalf("sign-up span named %q", signUp.span.GetName())
	}

	for _, c := range []struct {
		id, wantMsg string
		span        *tracepb.Span
	}{
		{"trace-test-ok", "request", ok.span},
		{"trace-test-sign-up", "mail (development mailer: not sent)", signUp.span},
	} {
		traceID := hexID(c.span.GetTraceId())
		deadline := time.Now().Add(10 * time.Second)
		for {
			lines := p.LogLines(t, c.id)
			found := false
			for _, l := range lines {
				if l["trace_id"] != traceID {
					t.Fatalf("line of %s: trace_id %v, want %s: %v", c.id, l["trace_id"], traceID, l)
				}
				found = found || l["msg"] == c.wantMsg
			}
			if found {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q line with request_id %s in:\n%s", c.wantMsg, c.id, p.Stdout)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func hexID(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// startObservedBench wires Gatehouse on memory like MustStartBench, with
// the metrics on or off (the in-process handler: no listener is needed to
// count).
func startObservedBench(tb testing.TB, metrics bool) *harness.BenchApp {
	tb.Helper()
	env := map[string]string{}
	for k, v := range harness.BenchEnv {
		env[k] = v
	}
	if metrics {
		env["GATEHOUSE_METRICS_ADDR"] = "127.0.0.1:0"
	}
	cfg := harness.MustConfig(tb, env)
	app, cleanup, err := bootstrap.InitializeMemory(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cleanup)
	if (app.Metrics != nil) != metrics {
		tb.Fatalf("metrics on = %v, want %v", app.Metrics != nil, metrics)
	}
	return &harness.BenchApp{Handler: app.Handler, App: app, Cookie: cfg.SessionCookieName()}
}

// BenchmarkGetSession_metrics measures what counting a request costs on
// get-session: compare allocs/op of metrics=off and metrics=on (never the
// timings on a shared machine).
//
//	go test -run '^$' -bench GetSession_metrics -benchmem ./test/
func BenchmarkGetSession_metrics(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "metrics=off", true: "metrics=on"}[on], func(b *testing.B) {
			app := startObservedBench(b, on)
			cookie := app.SignedUp(b)
			b.ReportAllocs()
			for b.Loop() {
				if w := app.Serve(app.GetSessionRequest(cookie)); w.Code != http.StatusOK {
					b.Fatalf("get-session: %d", w.Code)
				}
			}
		})
	}
}

// Ensure counting requests adds no allocation to get-session (allocation
// counts, averaged over many requests; not timings).
func TestMetrics_get_session_allocations(t *testing.T) {
	// Each measurement runs in a subtest, so its application (and its
	// pollers, which allocate too) is stopped before the next one starts:
	// otherwise the first one's pollers counted against the second.
	allocs := func(on bool) float64 {
		least := math.Inf(1)
		t.Run(fmt.Sprintf("metrics=%v", on), func(t *testing.T) {
			app := startObservedBench(t, on)
			cookie := app.SignedUp(t)
			app.Serve(app.GetSessionRequest(cookie)) // the first request creates the series
			// The count is process-wide, so the service's own pollers (outbox
			// relays, jobs) can add to one measurement: the least of five is
			// the request's own, and 1,000 requests a measurement spread what
			// they add thinly (over 200, it came to 2 now and then).
			for range 5 {
				least = min(least, testing.AllocsPerRun(1000, func() {
					if w := app.Serve(app.GetSessionRequest(cookie)); w.Code != http.StatusOK {
						t.Fatalf("get-session: %d", w.Code)
					}
				}))
			}
		})
		return least
	}
	off, on := allocs(false), allocs(true)
	t.Logf("allocations per get-session: metrics off %.1f, on %.1f", off, on)
	// In the whole test binary, goroutines left by earlier tests allocate
	// beside the measurement (about one allocation per request under the
	// race detector), so one is tolerated; a series or label built per
	// request costs more.
	if on-off >= 2 {
		t.Fatalf("metrics add %.1f allocations per get-session (off %.1f, on %.1f)", on-off, off, on)
	}
}
