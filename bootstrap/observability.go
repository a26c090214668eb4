package bootstrap

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/gatehouse/gatehouse/adapters/httpapi"
	"github.com/gatehouse/gatehouse/adapters/metrics"
	"github.com/gatehouse/gatehouse/adapters/tracing"
	"github.com/gatehouse/gatehouse/ports"
)

// ObservabilityConfig is the section of metrics and tracing, both off by
// default.
type ObservabilityConfig struct {
	// MetricsAddr is the listen address of the metrics listener; "" serves
	// no metrics. It is never the public listener.
	MetricsAddr string
	// Tracing exports spans over OTLP/HTTP to TracesEndpoint.
	Tracing        bool
	TracesEndpoint string // the collector's traces URL
	ServiceName    string
}

var observabilitySettingList settingList

var (
	settingMetricsAddr = observabilitySettingList.add("GATEHOUSE_METRICS_ADDR", "metrics-addr", "", "listen address of a separate listener serving Prometheus metrics at /metrics, such as 127.0.0.1:9090 (empty: no metrics); never the public address")
	settingTracing     = observabilitySettingList.add("GATEHOUSE_TRACING", "tracing", "off", "off, or otlp: export a span per request over OTLP/HTTP to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT (see docs/observability.md)")
)

// The standard OpenTelemetry variables Gatehouse reads itself (the SDK
// reads the other OTEL_* variables).
const (
	otelEndpointEnv       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	otelTracesEndpointEnv = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	otelServiceNameEnv    = "OTEL_SERVICE_NAME"
)

// defaultOTLPEndpoint is the OTLP/HTTP default of the specification.
const defaultOTLPEndpoint = "http://localhost:4318"

func (o *ObservabilityConfig) load(r *reader, publicAddr string) {
	if o.MetricsAddr = r.text(settingMetricsAddr); o.MetricsAddr != "" {
		if err := checkAddr(o.MetricsAddr); err != nil {
			r.fail(settingMetricsAddr, err.Error())
		} else if sameListener(o.MetricsAddr, publicAddr) {
			r.fail(settingMetricsAddr, "must not be the public address ("+settingAddr.env+"): metrics are never served on the public listener")
		}
	}
	o.Tracing = r.switched(settingTracing, []string{"otlp"}, []string{"off"}, "must be off or otlp")
	if !o.Tracing {
		return
	}
	if o.ServiceName = r.get(otelServiceNameEnv); o.ServiceName == "" {
		o.ServiceName = "gatehouse"
	}
	endpoint, env := r.get(otelTracesEndpointEnv), otelTracesEndpointEnv
	if endpoint == "" {
		// The general endpoint is a base: the signal's path is appended.
		base := r.get(otelEndpointEnv)
		env = otelEndpointEnv
		if base == "" {
			base = defaultOTLPEndpoint
		}
		endpoint = strings.TrimRight(base, "/") + "/v1/traces"
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		r.p.add(env, "must be an http or https URL without credentials (put them in OTEL_EXPORTER_OTLP_HEADERS)")
		return
	}
	o.TracesEndpoint = endpoint
}

// sameListener reports whether the listen addresses a and b would take
// the same socket: the same port, and the same host or either on every
// interface. Port 0 picks a free port, so it never clashes.
func sameListener(a, b string) bool {
	ha, pa, err1 := net.SplitHostPort(a)
	hb, pb, err2 := net.SplitHostPort(b)
	if err1 != nil || err2 != nil || pa != pb || pa == "0" {
		return false
	}
	wildcard := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return ha == hb || wildcard(ha) || wildcard(hb) || (isLocalhost(ha) && isLocalhost(hb))
}

func isLocalhost(h string) bool { return h == "localhost" || h == "127.0.0.1" || h == "::1" }

// dbPool is the database pool whose statistics the metrics report; nil in
// memory.
type dbPool struct{ db *sql.DB }

func sqlPool(s *sqlStore) dbPool {
	db, err := s.db.DB()
	if err != nil {
		return dbPool{}
	}
	return dbPool{db}
}

func noPool() dbPool { return dbPool{} }

// outboxStats is the outbox whose depth and age the metrics read on each
// scrape.
func outboxStats(o ports.Outbox) metrics.Outbox { return o }

// newMetrics returns the metrics when GATEHOUSE_METRICS_ADDR is set, else
// nil: then nothing is counted and the edge adds no middleware.
func newMetrics(c Config, pool dbPool, outbox metrics.Outbox, limits *rateLimits, logger *slog.Logger) *metrics.Metrics {
	if c.Observability.MetricsAddr == "" {
		return nil
	}
	return metrics.New(metrics.Options{Version: Version, DB: pool.db, Outbox: outbox, RateLimitStoreFailures: limits.failures,
		RateLimitStoreDown: limits.down, Logger: logger})
}

// observer is what the application reports sign-ins and deliveries to:
// the metrics, or nothing. It is never nil.
func observer(m *metrics.Metrics) ports.Observer {
	if m == nil {
		return metrics.Nop{}
	}
	return m
}

// tracerProvider returns the OTLP tracer provider when tracing is on, else
// nil; the cleanup sends the spans still batched, within 5 s.
func tracerProvider(c Config, logger *slog.Logger) (trace.TracerProvider, func(), error) {
	o := c.Observability
	if !o.Tracing {
		return nil, func() {}, nil
	}
	tp, err := tracing.New(context.Background(), tracing.Settings{Endpoint: o.TracesEndpoint, ServiceName: o.ServiceName, Version: Version,
		RequestID: httpapi.RequestIDFrom, RequestIDAttribute: httpapi.RequestIDAttribute, Logger: logger})
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: %w", err)
	}
	return tp, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			logger.Warn("tracing: spans not sent before stopping", slog.String("error", err.Error()))
		}
	}, nil
}

// MetricsAddrError reports a problem with the metrics address found after
// loading (already in use, say), naming its flag if it came from the
// command line.
func (c Config) MetricsAddrError(msg string) *ConfigError {
	return c.settingError(settingMetricsAddr, msg)
}
