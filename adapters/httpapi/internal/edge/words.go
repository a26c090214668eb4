package edge

import (
	"net/http"
	"strings"

	"github.com/gatehouse/gatehouse/domain"
)

// Condition is one error answer: the status its kind maps to, and the code,
// message and fields the inner layers (or the edge) raised it with. A
// contract's Words turn it into that contract's vocabulary before it is
// rendered in the route's Shape.
type Condition struct {
	Status  int
	Code    string
	Message string
	// Fields are bare field names as the inner layers report them ("email",
	// "" for the input as a whole), or locations the edge set itself.
	Fields []domain.FieldViolation
}

// Words is one contract's vocabulary: it maps the neutral codes the inner
// layers raise ("area.reason") to the codes, statuses and fields that
// contract publishes. Each contract package declares its Words in one file
// and attaches them to its routes' policies when it registers them.
type Words interface {
	Word(Condition) Condition
}

// WordsFunc adapts a function to Words.
type WordsFunc func(Condition) Condition

// Word implements Words.
func (f WordsFunc) Word(c Condition) Condition { return f(c) }

// Word returns c in the vocabulary of the route of p: its declared Words, or,
// for requests no route matched, the status mapping of its Shape.
func (p Policy) Word(c Condition) Condition {
	if p.Words != nil {
		return p.Words.Word(c)
	}
	if p.Shape.Framework() {
		return FrameworkStatusWord(c)
	}
	return ProblemStatusWord(c)
}

// IsWireCode reports whether code is not a neutral "area.reason" code but a
// wire code already: one the edge raises in Better Auth's vocabulary itself
// (VALIDATION_ERROR, URI_TOO_LONG, …), or an RFC 6749 error code of the
// OAuth endpoints (invalid_request). The inner layers raise neutral codes
// only.
func IsWireCode(code string) bool {
	return code != "" && !strings.Contains(code, ".")
}

// FrameworkStatusWord is the framework's answer for a condition its Words do
// not name: a wire code is kept, anything else answers Better Auth's code
// for the status.
func FrameworkStatusWord(c Condition) Condition {
	if !IsWireCode(c.Code) {
		c.Code = FrameworkCodeFor(c.Status)
	}
	return c
}

// FrameworkCodeFor gives edge-decided framework errors Better Auth's codes.
func FrameworkCodeFor(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "VALIDATION_ERROR"
	case http.StatusUnauthorized:
		return "UNAUTHORIZED"
	case http.StatusForbidden:
		return "FORBIDDEN"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusRequestEntityTooLarge:
		return "PAYLOAD_TOO_LARGE"
	case http.StatusUnsupportedMediaType:
		return "UNSUPPORTED_MEDIA_TYPE"
	case http.StatusTooManyRequests:
		return "TOO_MANY_REQUESTS"
	case http.StatusServiceUnavailable:
		return "SERVICE_UNAVAILABLE"
	default:
		return "INTERNAL_SERVER_ERROR"
	}
}

// ProblemStatusWord is a problem contract's answer for a condition its Words
// do not name: a neutral code is published as it is; an edge-decided one
// gets a stable area.reason code (ProblemCodeFor).
func ProblemStatusWord(c Condition) Condition {
	if c.Code == "" || IsWireCode(c.Code) {
		c.Code = ProblemCodeFor(c.Status, c.Code)
	}
	return c
}

// ProblemCodeFor gives edge-decided problems a stable area.reason code. A
// framework-style code (UPPER_SNAKE) is lower-cased into the request area.
func ProblemCodeFor(status int, code string) string {
	if code == "UNAUTHORIZED" {
		return "auth.unauthenticated" // a framework session check on a route outside the framework
	}
	if code != "" {
		return "request." + strings.ToLower(code)
	}
	switch status {
	case http.StatusBadRequest:
		return "request.invalid"
	case http.StatusUnauthorized:
		return "auth.unauthenticated"
	case http.StatusForbidden:
		return "auth.forbidden"
	case http.StatusNotFound:
		return "route.not_found"
	case http.StatusMethodNotAllowed:
		return "route.method_not_allowed"
	case http.StatusRequestEntityTooLarge:
		return "request.too_large"
	case http.StatusUnsupportedMediaType:
		return "request.unsupported_media_type"
	case http.StatusNotAcceptable:
		return "request.not_acceptable"
	case http.StatusTooManyRequests:
		return "request.rate_limited"
	case http.StatusServiceUnavailable:
		return "service.unavailable"
	default:
		return "server.internal"
	}
}
