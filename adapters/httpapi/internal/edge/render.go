package edge

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/domain"
)

// StatusFor is the only place a domain.Kind becomes an HTTP status.
func StatusFor(k domain.Kind) int {
	switch k {
	case domain.KindInvalid:
		return http.StatusBadRequest
	case domain.KindUnauthenticated:
		return http.StatusUnauthorized
	case domain.KindForbidden:
		return http.StatusForbidden
	case domain.KindNotFound:
		return http.StatusNotFound
	case domain.KindConflict:
		return http.StatusConflict
	case domain.KindRateLimited:
		return http.StatusTooManyRequests
	case domain.KindUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// UnavailableRetryAfter is the Retry-After of a 503: the database's own
// deadline is a few seconds, so by then a short outage (a failover, a
// restart) may be over, and clients that retry do not pile onto it sooner.
const UnavailableRetryAfter = 5 * time.Second

// retryHeaders returns the headers that say when to try again: Retry-After
// (with Better Auth's X-Retry-After) on a 429, Retry-After on every 503, and
// none otherwise. Every renderer of a domain error sets them, so middleware,
// Huma handlers, pages and the OAuth endpoints agree.
func retryHeaders(de *domain.Error) http.Header {
	switch de.Kind {
	case domain.KindRateLimited:
		secs := RetrySeconds(de.RetryAfter)
		return http.Header{"Retry-After": {secs}, "X-Retry-After": {secs}}
	case domain.KindUnavailable:
		d := de.RetryAfter
		if d <= 0 {
			d = UnavailableRetryAfter
		}
		return http.Header{"Retry-After": {RetrySeconds(d)}}
	}
	return nil
}

// RetrySeconds renders d as whole seconds, rounded up.
func RetrySeconds(d time.Duration) string {
	return strconv.Itoa(int((d + time.Second - 1) / time.Second))
}

// SetRetryHeaders sets err's retry headers through set.
func SetRetryHeaders(err error, set func(name, value string)) {
	var de *domain.Error
	if !errors.As(err, &de) {
		return
	}
	for name, values := range retryHeaders(de) {
		set(name, values[0])
	}
}

// FieldError names one malformed part of a request.
type FieldError struct {
	Location string `json:"location" doc:"The malformed part: body.<field>, query.<name>, path.<name> or header.<name>." example:"body.hostname"`
	Message  string `json:"message" doc:"What is wrong with it. The submitted value is never repeated." example:"expected string"`
}

// Problem is an RFC 9457 problem document, the error body of the service,
// admin and trusted routes.
type Problem struct {
	Type      string       `json:"type" doc:"A URI identifying the problem type." example:"about:blank"`
	Title     string       `json:"title" doc:"The HTTP status text." example:"Bad Request"`
	Status    int          `json:"status" doc:"The HTTP status code." example:"400"`
	Detail    string       `json:"detail,omitempty" doc:"What went wrong, safe to show." example:"The request is malformed."`
	Code      string       `json:"code" doc:"A stable machine-readable code (area.reason)." example:"request.invalid"`
	Errors    []FieldError `json:"errors,omitempty" doc:"Each malformed part of the request."`
	RequestID string       `json:"requestId,omitempty" doc:"The request's id, also in the X-Request-Id header." example:"01HZY5K1N8M6X8Q6"`
}

// Error implements error.
func (p *Problem) Error() string { return p.Detail }

// GetStatus implements huma.StatusError.
func (p *Problem) GetStatus() int { return p.Status }

// ContentType implements huma.ContentTypeFilter: problems are problem+json.
func (p *Problem) ContentType(string) string { return "application/problem+json" }

// FrameworkError is the error body of the authentication framework routes,
// exactly as Better Auth sends it, so the better-auth client reads its code.
type FrameworkError struct {
	Message string `json:"message" doc:"What went wrong, safe to show." example:"[body.email] expected string"`
	Code    string `json:"code,omitempty" doc:"An UPPER_SNAKE code the better-auth client compares against." example:"VALIDATION_ERROR"`
	status  int
}

// Error implements error.
func (e *FrameworkError) Error() string { return e.Message }

// GetStatus implements huma.StatusError.
func (e *FrameworkError) GetStatus() int { return e.status }

// RenderError turns any error into the body of the request's route, in the
// shape its policy declares (PolicyFrom(ctx)). Causes are logged here,
// once, and never sent.
func RenderError(ctx context.Context, logger *slog.Logger, err error) huma.StatusError {
	var de *domain.Error
	if !errors.As(err, &de) {
		de = domain.Internal("unclassified", err)
	}
	c := Condition{Status: StatusFor(de.Kind), Code: de.Code, Message: de.Message, Fields: de.Fields}
	if de.Kind == domain.KindInternal {
		// Never send an internal message, whatever its author put in it.
		c.Code, c.Message, c.Fields = "server.internal", "internal error", nil
	}
	c = PolicyFrom(ctx).Word(c)
	LogError(ctx, logger, c.Status, de)
	return render(ctx, c)
}

// RenderStatus builds the body for a status decided outside the domain (an
// unknown route, an oversized body, a validation failure in the edge), in the
// shape the request's route declares.
func RenderStatus(ctx context.Context, status int, code, message string, fields []domain.FieldViolation) huma.StatusError {
	c := Condition{Status: status, Code: code, Message: message, Fields: fields}
	return render(ctx, PolicyFrom(ctx).Word(c))
}

// render builds the body of c, already in the route's vocabulary, in the
// shape the request's route declares.
func render(ctx context.Context, c Condition) huma.StatusError {
	status, code, message := c.Status, c.Code, c.Message
	if message == "" {
		message = http.StatusText(status)
	}
	policy := PolicyFrom(ctx)
	located := make([]FieldError, len(c.Fields))
	for i, f := range c.Fields {
		located[i] = FieldError{Location: policy.Locate(f.Field), Message: f.Message}
	}
	if policy.Shape.Framework() {
		// Better Auth joins field messages only for schema failures; its
		// named errors keep their own message ("Password too short").
		if len(located) > 0 && code == "VALIDATION_ERROR" {
			parts := make([]string, len(located))
			for i, f := range located {
				parts[i] = "[" + f.Location + "] " + f.Message
			}
			message = strings.Join(parts, "; ")
		}
		return &FrameworkError{Message: message, Code: code, status: status}
	}
	p := &Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: message, Code: code, RequestID: RequestIDFrom(ctx)}
	if len(located) > 0 {
		p.Errors = located
	}
	return p
}

func LogError(ctx context.Context, logger *slog.Logger, status int, de *domain.Error) {
	// The request's logger carries request_id already.
	attrs := []slog.Attr{
		slog.Int("status", status),
		slog.String("kind", de.Kind.String()), slog.String("code", de.Code),
	}
	if de.Err != nil {
		attrs = append(attrs, slog.String("cause", de.Err.Error()))
	}
	level, msg := slog.LevelWarn, "request failed"
	switch {
	case errors.Is(de, context.Canceled) && ctx.Err() != nil:
		// The client hung up and its cancellation stopped the work: no
		// fault of ours, and nobody reads the answer.
		level, msg = slog.LevelInfo, "request cancelled by the client"
	case status >= 500:
		level = slog.LevelError
	}
	logger.LogAttrs(ctx, level, msg, attrs...)
}

// WriteGinError renders err for routes outside Huma (unknown routes, the body
// limit, panics) in the same shapes Huma routes use.
func WriteGinError(c *gin.Context, body huma.StatusError) {
	if p, ok := body.(*Problem); ok {
		if page := PolicyFrom(c.Request.Context()).ErrorPage; page != nil {
			page(c, p)
			c.Abort()
			return
		}
	}
	ct := "application/json"
	if _, ok := body.(*Problem); ok {
		ct = "application/problem+json"
	}
	c.Header("Content-Type", ct)
	c.AbortWithStatusJSON(body.GetStatus(), body)
}

var installHumaErrorsOnce sync.Once

// msgBodyRequired is Huma's message for an empty body on an operation that
// requires one.
const msgBodyRequired = "request body is required"

// missingProperty matches Huma's message for an absent required property.
var missingProperty = regexp.MustCompile(`^expected required property (\w+) to be present$`)

// InstallHumaErrors routes every error Huma produces (validation, decoding,
// body size, handler errors) through RenderError/RenderStatus. Huma keeps the
// hook in a package variable, so it is installed once per process; the logger
// travels in the request context.
func InstallHumaErrors() {
	installHumaErrorsOnce.Do(func() {
		huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
			return RenderStatus(context.Background(), status, "", msg, nil)
		}
		huma.NewErrorWithContext = func(hctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
			ctx := context.Background()
			if hctx != nil {
				ctx = hctx.Context()
			}
			for _, err := range errs {
				var de *domain.Error
				if errors.As(err, &de) {
					if hctx != nil {
						SetRetryHeaders(err, hctx.SetHeader)
					}
					return RenderError(ctx, LoggerFrom(ctx), err)
				}
			}
			if status >= 500 {
				var cause error = errors.New(msg)
				if len(errs) > 0 {
					cause = errors.Join(errs...)
				}
				return RenderError(ctx, LoggerFrom(ctx), domain.Internal("huma", cause))
			}
			return humaClientError(ctx, status, msg, errs)
		}
	})
}

// humaClientError renders Huma's own 4xx errors. Validation failures (422)
// become 400s naming each malformed part; values Huma would echo are dropped.
func humaClientError(ctx context.Context, status int, msg string, errs []error) huma.StatusError {
	var fields []domain.FieldViolation
	for _, err := range errs {
		if err == nil {
			continue
		}
		var d huma.ErrorDetailer
		if errors.As(err, &d) {
			detail := d.ErrorDetail()
			loc, msg := detail.Location, detail.Message
			// A missing property is reported on its parent; name the property.
			if m := missingProperty.FindStringSubmatch(msg); m != nil {
				loc, msg = loc+"."+m[1], "is required"
			}
			fields = append(fields, domain.FieldViolation{Field: loc, Message: msg})
			continue
		}
		fields = append(fields, domain.FieldViolation{Field: "body", Message: "malformed"})
	}
	code := ""
	switch status {
	case http.StatusUnprocessableEntity:
		status, msg = http.StatusBadRequest, "The request is malformed."
	case http.StatusUnsupportedMediaType:
		// Better Auth quotes the caller's Content-Type here; submitted values
		// are never echoed, so the message names no type.
		code, msg, fields = "UNSUPPORTED_MEDIA_TYPE", "This Content-Type is not allowed. Allowed types: application/json", nil
	case http.StatusBadRequest:
		if msg == msgBodyRequired && len(fields) == 0 {
			// Huma names no part when a required body is empty.
			return RenderStatus(ctx, status, "", "The request is malformed.", []domain.FieldViolation{{Field: "body", Message: "is required"}})
		}
		msg = "The request is malformed."
		if PolicyFrom(ctx).Shape.Framework() && len(fields) > 0 && fields[0].Field == "body" {
			code, msg, fields = "BAD_REQUEST", "Invalid JSON in request body", nil
		}
	}
	return RenderStatus(ctx, status, code, msg, fields)
}

// StatusOfErr returns the status err is answered with.
func StatusOfErr(err error) int { return StatusFor(domain.KindOf(err)) }

// OAuthError is the error body of the token, revocation, introspection and
// userinfo endpoints (RFC 6749 §5.2, RFC 6750 §3.1).
type OAuthError struct {
	Code        string `json:"error" doc:"The OAuth error code." example:"invalid_grant" enum:"invalid_request,invalid_client,invalid_grant,unauthorized_client,unsupported_grant_type,invalid_scope,invalid_token,insufficient_scope,server_error"`
	Description string `json:"error_description,omitempty" doc:"What went wrong, safe to show." example:"The grant is invalid, expired or revoked."`
	status      int
	headers     http.Header
}

// Error implements error.
func (e *OAuthError) Error() string { return e.Code + ": " + e.Description }

// GetStatus implements huma.StatusError.
func (e *OAuthError) GetStatus() int { return e.status }

// GetHeaders implements huma.HeadersError.
func (e *OAuthError) GetHeaders() http.Header { return e.headers }

// ContentType implements huma.ContentTypeFilter.
func (e *OAuthError) ContentType(string) string { return "application/json" }

// OAuthErr is an OAuth error decided at the edge (a malformed body).
func OAuthErr(code, description string) *domain.Error {
	kind := domain.KindInvalid
	if code == "invalid_client" || code == "invalid_token" {
		kind = domain.KindUnauthenticated
	}
	return domain.NewError(kind, code, description)
}

// OAuthFailure renders err in OAuth's shape, logging it once. Internal
// errors become server_error without detail. A 401 invalid_client names the
// Basic scheme when the client used it (RFC 6749 §5.2); userinfo's errors
// carry WWW-Authenticate: Bearer (RFC 6750 §3).
func (s *Kit) OAuthFailure(ctx context.Context, err error, basic, bearer bool) error {
	var de *domain.Error
	if !errors.As(err, &de) {
		de = domain.Internal("oauth", err)
	}
	status := StatusFor(de.Kind)
	LogError(ctx, LoggerFrom(ctx), status, de)
	code, desc, ok := oidc.IsOAuthError(de)
	if !ok || de.Kind == domain.KindInternal || de.Kind == domain.KindUnavailable {
		code, desc = "server_error", "The server could not handle the request."
		if de.Kind == domain.KindUnavailable {
			status = http.StatusServiceUnavailable
		} else {
			status = http.StatusInternalServerError
		}
	}
	out := &OAuthError{Code: code, Description: desc, status: status, headers: http.Header{}}
	SetRetryHeaders(de, out.headers.Set)
	switch {
	case bearer && (status == http.StatusUnauthorized || status == http.StatusForbidden):
		out.headers.Set("WWW-Authenticate", `Bearer error="`+code+`", error_description="`+strings.ReplaceAll(desc, `"`, "'")+`"`)
	case basic && status == http.StatusUnauthorized:
		out.headers.Set("WWW-Authenticate", `Basic realm="gatehouse", charset="UTF-8"`)
	}
	return out
}

func IsUnauthenticated(err error) bool { return StatusOfErr(err) == http.StatusUnauthorized }

// NewFrameworkError is a framework error decided by a handler: Better Auth
// answers some conditions with another status than their kind's in one
// route only.
func NewFrameworkError(status int, code, message string) *FrameworkError {
	return &FrameworkError{Message: message, Code: code, status: status}
}
