package edge

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatehouse/gatehouse/ports"
)

// RequestIDAttribute is the span attribute that carries the request id.
const RequestIDAttribute = "gatehouse.request_id"

// Observe reports each request to o (Config.Observer) once it is answered:
// its method, its route template (never the raw path: "" when no route
// matched) and its status. It sits before Recovery, so a panic is counted
// as the 500 it becomes.
func Observe(o ports.Observer) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		o.Request(c.Request.Method, c.FullPath(), c.Writer.Status(), time.Since(start))
	}
}

// Trace starts a server span for each request from tp (Config.Tracer),
// continuing the caller's W3C trace context. The span is named after the
// method and route template and carries the request id; like the access
// log it never records the raw path or query, where tokens travel, nor any
// header. A 5xx marks it as an error.
func Trace(tp trace.TracerProvider) gin.HandlerFunc {
	tracer := tp.Tracer("github.com/gatehouse/gatehouse/adapters/httpapi")
	prop := propagation.TraceContext{}
	return func(c *gin.Context) {
		r := c.Request
		method, route := spanMethod(r.Method), c.FullPath()
		name := method
		attrs := []attribute.KeyValue{
			semconv.HTTPRequestMethodKey.String(method),
			attribute.String(RequestIDAttribute, RequestIDFrom(r.Context())),
			semconv.ClientAddress(c.ClientIP()),
		}
		if route != "" {
			name += " " + route
			attrs = append(attrs, semconv.HTTPRoute(route))
		}
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		c.Request = r.WithContext(ctx)
		c.Next()
		status := c.Writer.Status()
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
}

// spanMethod returns method if it is a standard one, else "_OTHER", as the
// semantic conventions ask: a client may send any method on no route.
func spanMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "_OTHER"
}

// LogHandler wraps h so that every line logged with a request's context
// carries its request_id, and its trace_id and span_id when the request is
// traced: the edge's own lines, the use cases' and the mail queue's alike.
// Wrapping twice changes nothing.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(contextHandler); ok {
		return h
	}
	return contextHandler{h}
}

type contextHandler struct{ slog.Handler }

// Handle implements slog.Handler.
func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if id := RequestIDFrom(ctx); id != "" {
			r.AddAttrs(slog.String("request_id", id))
		}
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}
