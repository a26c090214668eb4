package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Settings is how spans are exported and what they carry.
type Settings struct {
	// Endpoint is the collector's OTLP/HTTP traces URL, used as is, such
	// as http://127.0.0.1:4318/v1/traces.
	Endpoint string
	// ServiceName and Version name the service in every span's resource.
	ServiceName, Version string
	// RequestID returns the request id a context carries, or "". Every
	// span started with such a context gets it as RequestIDAttribute.
	RequestID          func(context.Context) string
	RequestIDAttribute string
	// Logger receives export failures (slog.Default() when nil).
	Logger *slog.Logger
}

// New returns a tracer provider that batches spans to s.Endpoint. The
// sampler and the batching follow the standard OTEL_TRACES_SAMPLER(_ARG)
// and OTEL_BSP_* variables, and headers, timeout and certificates the
// OTEL_EXPORTER_OTLP_* ones, read by the SDK itself. Shut it down to send
// what is still batched.
func New(ctx context.Context, s Settings) (*sdktrace.TracerProvider, error) {
	u, err := url.Parse(s.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("tracing: endpoint %q is not an http(s) URL", s.Endpoint)
	}
	if s.RequestID == nil || s.RequestIDAttribute == "" {
		return nil, errors.New("tracing: no request id reader")
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(s.Endpoint))
	if err != nil {
		return nil, fmt.Errorf("tracing: exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(s.ServiceName), semconv.ServiceVersion(s.Version)))
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	logger := s.Logger
	if logger == nil {
		logger = slog.Default()
	}
	// The SDK reports export failures (a collector that is down) here,
	// rather than on standard error in a format of its own.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("tracing: " + err.Error())
	}))
	return sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(requestIDProcessor{read: s.RequestID, key: attribute.Key(s.RequestIDAttribute)}),
		sdktrace.WithBatcher(exp),
	), nil
}

// requestIDProcessor puts the request id of the context a span starts in
// on the span: the request's own span and any started within it.
type requestIDProcessor struct {
	read func(context.Context) string
	key  attribute.Key
}

func (p requestIDProcessor) OnStart(parent context.Context, s sdktrace.ReadWriteSpan) {
	if id := p.read(parent); id != "" {
		s.SetAttributes(p.key.String(id))
	}
}

func (requestIDProcessor) OnEnd(sdktrace.ReadOnlySpan)      {}
func (requestIDProcessor) Shutdown(context.Context) error   { return nil }
func (requestIDProcessor) ForceFlush(context.Context) error { return nil }
