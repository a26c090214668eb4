package bootstrap_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/bootstrap"
)

// Ensure metrics and tracing are off unless asked for.
func TestLoadConfig_observability_off_by_default(t *testing.T) {
	c, err := load(t, nil, map[string]string{"GATEHOUSE_SECRET": longSecret})
	if err != nil {
		t.Fatal(err)
	}
	if c.Observability.MetricsAddr != "" || c.Observability.Tracing {
		t.Fatalf("observability = %+v, want metrics and tracing off", c.Observability)
	}
	app, cleanup, err := bootstrap.InitializeMemory(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if app.Metrics != nil {
		t.Fatal("App.Metrics is set without GATEHOUSE_METRICS_ADDR")
	}
}

// Ensure the metrics address never names the public listener, and a bad
// tracing setting or endpoint is refused, naming the variable.
func TestLoadConfig_observability_refusals(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		setting string
	}{
		{"same address", map[string]string{"GATEHOUSE_ADDR": "127.0.0.1:8080", "GATEHOUSE_METRICS_ADDR": "127.0.0.1:8080"}, "GATEHOUSE_METRICS_ADDR"},
		{"same port on every interface", map[string]string{"GATEHOUSE_ADDR": ":8080", "GATEHOUSE_METRICS_ADDR": "127.0.0.1:8080"}, "GATEHOUSE_METRICS_ADDR"},
		{"public on every interface", map[string]string{"GATEHOUSE_ADDR": "0.0.0.0:9000", "GATEHOUSE_METRICS_ADDR": ":9000"}, "GATEHOUSE_METRICS_ADDR"},
		{"localhost names", map[string]string{"GATEHOUSE_ADDR": "localhost:9000", "GATEHOUSE_METRICS_ADDR": "127.0.0.1:9000"}, "GATEHOUSE_METRICS_ADDR"},
		{"not an address", map[string]string{"GATEHOUSE_METRICS_ADDR": "metrics"}, "GATEHOUSE_METRICS_ADDR"},
		{"unknown tracing", map[string]string{"GATEHOUSE_TRACING": "jaeger"}, "GATEHOUSE_TRACING"},
		{"endpoint not a URL", map[string]string{"GATEHOUSE_TRACING": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"endpoint with credentials", map[string]string{"GATEHOUSE_TRACING": "otlp", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://u:p@collector/v1/traces"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, nil, tt.env)
			var errs bootstrap.ConfigErrors
			if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Var != tt.setting {
				t.Fatalf("err = %v, want one problem with %s", err, tt.setting)
			}
		})
	}
}

// Ensure the accepted forms: another port, port 0 on both, and the
// endpoints of the OpenTelemetry specification.
func TestLoadConfig_observability_accepts(t *testing.T) {
	tests := []struct {
		name                   string
		env                    map[string]string
		wantEndpoint, wantName string
	}{
		{"another port", map[string]string{"GATEHOUSE_ADDR": ":8080", "GATEHOUSE_METRICS_ADDR": "127.0.0.1:9090"}, "", ""},
		{"both ephemeral", map[string]string{"GATEHOUSE_ADDR": "127.0.0.1:0", "GATEHOUSE_METRICS_ADDR": "127.0.0.1:0"}, "", ""},
		{"default endpoint", map[string]string{"GATEHOUSE_TRACING": "otlp"}, "http://localhost:4318/v1/traces", "gatehouse"},
		{"base endpoint", map[string]string{"GATEHOUSE_TRACING": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector:4318/", "OTEL_SERVICE_NAME": "id"},
			"https://collector:4318/v1/traces", "id"},
		{"traces endpoint as is", map[string]string{"GATEHOUSE_TRACING": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://ignored:4318",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/custom"}, "http://collector:4318/custom", "gatehouse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(t, nil, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			o := c.Observability
			if o.TracesEndpoint != tt.wantEndpoint || o.ServiceName != tt.wantName || o.MetricsAddr != tt.env["GATEHOUSE_METRICS_ADDR"] {
				t.Fatalf("observability = %+v, want endpoint %q, service %q", o, tt.wantEndpoint, tt.wantName)
			}
		})
	}
	if _, err := load(t, nil, map[string]string{"GATEHOUSE_TRACING": "OTLP"}); err == nil || !strings.Contains(err.Error(), "off or otlp") {
		t.Fatalf("GATEHOUSE_TRACING=OTLP: %v", err)
	}
}
