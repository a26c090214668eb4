package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application"
	"github.com/gatehouse/gatehouse/application/health"
)

// newTracedServer builds a Server on memory adapters whose spans end in the
// returned in-memory exporter.
func newTracedServer(t *testing.T) (*Server, *tracetest.InMemoryExporter, *strings.Builder) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	logs := &strings.Builder{}
	app := &application.Application{Readiness: health.NewReadinessHandler(memory.NewHealthChecker())}
	s := NewServer(edge.Config{BaseURL: "http://localhost:8080", MaxBodyBytes: 4096, SessionCookieName: "gatehouse.session_token",
		Secrets: []string{"test-secret"}, Tracer: tp}, app, slog.New(slog.NewJSONHandler(logs, nil)))
	addErrorRoutes(s)
	return s, exp, logs
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	out := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		out[kv.Key] = kv.Value
	}
	return out
}

// Ensure each request has a server span named after its route template,
// with its request id, route and status and never its raw path, that a 5xx
// (a panic included) marks it an error, and that the caller's trace
// context is continued.
func TestTrace_request_spans(t *testing.T) {
	s, exp, _ := newTracedServer(t)
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name, path, traceparent string
		wantName, wantRoute     string
		wantStatus              int
		wantError               bool
	}{
		{"route", "/api/auth/ok", "", "GET /api/auth/ok", "/api/auth/ok", 200, false},
		{"template, not the path", "/api/test/fail/not_found?token=secret", "", "GET /api/test/fail/:kind", "/api/test/fail/:kind", 404, false},
		{"panic", "/api/test/fail/panic", "", "GET /api/test/fail/:kind", "/api/test/fail/:kind", 500, true},
		{"no route", "/no/such/path/secret-token", "", "GET", "", 404, false},
		{"caller's trace", "/api/auth/ok", parent, "GET /api/auth/ok", "/api/auth/ok", 200, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp.Reset()
			r := httptest.NewRequest(http.MethodGet, tt.path, nil)
			if tt.traceparent != "" {
				r.Header.Set("traceparent", tt.traceparent)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			if w.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d", w.Code, tt.wantStatus)
			}
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			sp := spans[0]
			a := attrs(sp)
			if sp.Name != tt.wantName {
				t.Errorf("name %q, want %q", sp.Name, tt.wantName)
			}
			if got := a[edge.RequestIDAttribute].AsString(); got == "" || got != w.Header().Get(edge.RequestIDHeader) {
				t.Errorf("request id attribute %q, header %q", got, w.Header().Get(edge.RequestIDHeader))
			}
			if got := a["http.route"].AsString(); got != tt.wantRoute {
				t.Errorf("http.route %q, want %q", got, tt.wantRoute)
			}
			if got := a["http.response.status_code"].AsInt64(); got != int64(tt.wantStatus) {
				t.Errorf("status attribute %d, want %d", got, tt.wantStatus)
			}
			if (sp.Status.Code == codes.Error) != tt.wantError {
				t.Errorf("span status %v, want error %v", sp.Status.Code, tt.wantError)
			}
			for k, v := range a {
				if strings.Contains(v.String(), "secret") {
					t.Errorf("attribute %s = %q carries the raw path or query", k, v.String())
				}
			}
			if tt.traceparent != "" {
				if got := sp.SpanContext.TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
					t.Errorf("trace id %s, want the caller's", got)
				}
				if got := sp.Parent.SpanID().String(); got != "00f067aa0ba902b7" {
					t.Errorf("parent span %s, want the caller's", got)
				}
			}
		})
	}
}

// Ensure every line logged for a traced request names the request and its
// trace, once each.
func TestTrace_log_lines_carry_request_and_trace(t *testing.T) {
	s, exp, logs := newTracedServer(t)
	w := serve(s, http.MethodGet, "/api/test/fail/internal", "") // logs "request failed" and the access line
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	traceID, spanID := spans[0].SpanContext.TraceID().String(), spans[0].SpanContext.SpanID().String()
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("want the failure and the access lines, got %q", logs)
	}
	for _, line := range lines {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatal(err)
		}
		if entry["request_id"] != w.Header().Get(edge.RequestIDHeader) || entry["trace_id"] != traceID || entry["span_id"] != spanID {
			t.Errorf("line %s: want request_id %s, trace_id %s, span_id %s", line, w.Header().Get(edge.RequestIDHeader), traceID, spanID)
		}
		for _, key := range []string{`"request_id":`, `"trace_id":`} {
			if n := strings.Count(line, key); n != 1 {
				t.Errorf("%s %d times: %s", key, n, line)
			}
		}
	}
}
