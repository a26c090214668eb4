package edge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	loggerKey
)

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-Id"

// RequestIDFrom returns the request id stored in ctx, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// LoggerFrom returns the logger of the request whose context ctx is. Log
// with that context (LogAttrs(ctx, …), ErrorContext(ctx, …)): the request
// id, and the trace, come from it.
func LoggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// isSafeRequestID reports whether a caller's request id may be adopted: short,
// and only characters that cannot forge log lines or headers.
func isSafeRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == ':'
		if !ok {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// RequestContext adopts or creates the request id, echoes it, and puts it and
// the logger in the request context for everything downstream. The logger's
// handler (LogHandler) adds the request id to each line logged with that
// context.
func RequestContext(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader(RequestIDHeader)
		if !isSafeRequestID(id) {
			id = newRequestID()
		}
		c.Header(RequestIDHeader, id)
		ctx := context.WithValue(c.Request.Context(), requestIDKey, id)
		ctx = context.WithValue(ctx, loggerKey, logger)
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// AccessLog writes one line per request. It logs the route template, never
// the raw path or query (tokens travel in both), and no header or body: no
// cookie, key, password or token can reach the log through it.
func AccessLog(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		status := c.Writer.Status()
		level := slog.LevelInfo
		if status >= 500 && c.Request.Context().Err() == nil {
			level = slog.LevelError // unless the client left: its error, if ours, is logged as one
		}
		if !logger.Enabled(c.Request.Context(), level) {
			return // the line's attributes (the client address above all) cost more than nothing
		}
		logger.LogAttrs(c.Request.Context(), level, "request",
			slog.String("method", c.Request.Method),
			slog.String("route", c.FullPath()),
			slog.Int("status", status),
			slog.Int("bytes", c.Writer.Size()),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("client_ip", c.ClientIP()),
		)
	}
}

// Recovery turns a panic into a 500 with no internals, logged with the
// request id and stack. http.ErrAbortHandler is re-raised, as net/http expects.
func Recovery(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			rec := recover()
			if rec == nil {
				return
			}
			if err, ok := rec.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(rec)
			}
			ctx := c.Request.Context()
			logger.LogAttrs(ctx, slog.LevelError, "panic",
				slog.String("panic", fmt.Sprint(rec)),
				slog.String("stack", string(debug.Stack())))
			if c.Writer.Written() {
				c.Abort()
				return
			}
			WriteGinError(c, RenderStatus(ctx, http.StatusInternalServerError, "server.internal", "internal error", nil))
		}()
		c.Next()
	}
}

// apiCSP is the content security policy of API responses: they are data and
// may run nothing. Pages set their own.
const apiCSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// securityHeaders are the headers every response carries, named in
// canonical form. SecurityHeaders assigns these very slices: nothing writes
// into a header value in place (Set replaces the slice; Add appends to a
// full one, which copies it), and every response is spared their
// allocation.
var securityHeaders = []struct {
	name  string
	value []string
}{
	{"X-Content-Type-Options", []string{"nosniff"}},
	{"Content-Security-Policy", []string{apiCSP}},
	{"Referrer-Policy", []string{"no-referrer"}},
	{"X-Frame-Options", []string{"DENY"}},
	{"Cross-Origin-Opener-Policy", []string{"same-origin"}},
	{"Cache-Control", []string{"no-store"}},
}

var hstsHeader = []string{"max-age=31536000; includeSubDomains"}

// SecurityHeaders sets the headers every response carries. Cache-Control
// defaults to no-store, since most answers concern a session or a key;
// cacheable routes (explorer assets) override it.
func SecurityHeaders(https bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		h := c.Writer.Header()
		for _, sh := range securityHeaders {
			h[sh.name] = sh.value[:1:1]
		}
		if https {
			h["Strict-Transport-Security"] = hstsHeader[:1:1]
		}
		c.Next()
	}
}

// BodyLimit refuses bodies over max bytes with 413 before anything reads them,
// and caps bodies of unknown length as they are read.
func BodyLimit(max int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > max {
			WriteGinError(c, RenderStatus(c.Request.Context(), http.StatusRequestEntityTooLarge, "",
				fmt.Sprintf("The request body is larger than %d bytes.", max), nil))
			return
		}
		if c.Request.Body != nil && c.Request.Body != http.NoBody {
			// One byte of slack: Huma reports 413 itself when a body reaches the limit.
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, max+1)
		}
		c.Next()
	}
}

// The largest request line and headers the edge reads. net/http's own
// limit (http.Server.MaxHeaderBytes, set above both by cmd/gatehouse) cuts
// off anything larger with a bare 431 before a handler runs.
const (
	// MaxRequestTargetBytes is the longest request-target (path and query)
	// accepted; longer ones get 414.
	MaxRequestTargetBytes = 8 << 10
	// MaxHeaderBytes is the most header bytes (names, values and the Host)
	// accepted; more get 431.
	MaxHeaderBytes = 32 << 10
)

// RequestSize refuses an over-long request-target with 414 and oversized
// headers with 431, before the rate limiter, routing's handlers or anything
// else reads them: a long path must not become a long key anywhere.
func RequestSize() gin.HandlerFunc {
	return func(c *gin.Context) {
		r := c.Request
		target := len(r.RequestURI)
		if target == 0 {
			target = len(r.URL.RequestURI())
		}
		if target > MaxRequestTargetBytes {
			WriteGinError(c, RenderStatus(r.Context(), http.StatusRequestURITooLong, "URI_TOO_LONG",
				fmt.Sprintf("The request target is longer than %d bytes.", MaxRequestTargetBytes), nil))
			return
		}
		n := len(r.Host)
		for name, values := range r.Header {
			for _, v := range values {
				n += len(name) + len(v) + 4 // ": " and CRLF
			}
		}
		if n > MaxHeaderBytes {
			WriteGinError(c, RenderStatus(r.Context(), http.StatusRequestHeaderFieldsTooLarge, "HEADERS_TOO_LARGE",
				fmt.Sprintf("The request headers are larger than %d bytes.", MaxHeaderBytes), nil))
			return
		}
		c.Next()
	}
}
