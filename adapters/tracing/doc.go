// Package tracing sets up OpenTelemetry tracing: an SDK tracer provider
// that batches spans to an OTLP/HTTP collector, and puts the request id on
// every span started within a request.
package tracing
