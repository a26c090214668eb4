package domain

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an Error. The HTTP edge turns each Kind into exactly one
// status code; nothing else in the program chooses statuses.
type Kind uint8

// The kinds of error. KindInternal is the zero value so that an Error built
// without a kind is never mistaken for a client error.
const (
	KindInternal        Kind = iota // a fault of ours; details are logged, never sent
	KindInvalid                     // the request is malformed or breaks a rule
	KindUnauthenticated             // credentials are absent or invalid: "who are you?"
	KindForbidden                   // a known actor may not do this: "you may not"
	KindNotFound                    // the target does not exist (or is not visible)
	KindConflict                    // the target's state forbids it (duplicates, races)
	KindRateLimited                 // too many attempts; retry later
	KindUnavailable                 // a dependency (the database) is down; retry later
)

// Kinds lists every Kind, so tests can prove each one is mapped at the edge.
var Kinds = []Kind{
	KindInternal, KindInvalid, KindUnauthenticated, KindForbidden,
	KindNotFound, KindConflict, KindRateLimited, KindUnavailable,
}

// String returns the kind's stable lower-case name.
func (k Kind) String() string {
	switch k {
	case KindInvalid:
		return "invalid"
	case KindUnauthenticated:
		return "unauthenticated"
	case KindForbidden:
		return "forbidden"
	case KindNotFound:
		return "not_found"
	case KindConflict:
		return "conflict"
	case KindRateLimited:
		return "rate_limited"
	case KindUnavailable:
		return "unavailable"
	default:
		return "internal"
	}
}

// FieldViolation names one malformed part of a request and says what is wrong
// with it. Field is the bare name of the input ("email", "limit",
// "verify.reason", "redirectUris[0]"; "" for the input as a whole): the edge,
// which knows where the value came from, renders its location (body.email,
// query.limit). Message never repeats the submitted value.
type FieldViolation struct {
	Field   string
	Message string
}

// Error is the one error type of Gatehouse.
//
// Code is stable, machine-readable and neutral: an "area.reason" string
// (organization.invalid_slug, password.too_short) naming one condition, of
// one Kind. Each contract maps it to its own wire vocabulary at the edge
// (the codes.go of each contract package under adapters/httpapi, and
// internal/edge/problem_words.go). Message is safe to show a client. Err is
// the cause: it is logged and never sent.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Fields  []FieldViolation
	// RetryAfter says when a rate-limited request may be tried again.
	RetryAfter time.Duration
	Err        error
}

// Error implements error. The cause is included for logs.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Kind.String()
	}
	if e.Code != "" {
		msg = e.Code + ": " + msg
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error of the same Kind whose Code is empty
// or equal to e's, so errors.Is(err, domain.ErrNotFound) matches any not-found
// error through any amount of wrapping.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Kind == e.Kind && (t.Code == "" || t.Code == e.Code)
}

// Sentinels for errors.Is. They match any Error of their Kind.
var (
	ErrInvalid         = &Error{Kind: KindInvalid}
	ErrUnauthenticated = &Error{Kind: KindUnauthenticated}
	ErrForbidden       = &Error{Kind: KindForbidden}
	ErrNotFound        = &Error{Kind: KindNotFound}
	ErrConflict        = &Error{Kind: KindConflict}
	ErrRateLimited     = &Error{Kind: KindRateLimited}
	ErrUnavailable     = &Error{Kind: KindUnavailable}
	ErrInternal        = &Error{Kind: KindInternal}
)

// KindOf returns the Kind of the first *Error in err's chain, or KindInternal
// when there is none: an unknown error is always a fault of ours.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// NewError returns an Error of kind with a stable code and a client-safe message.
func NewError(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

// Invalid returns an invalid-request error naming each malformed part.
func Invalid(code, message string, fields ...FieldViolation) *Error {
	return &Error{Kind: KindInvalid, Code: code, Message: message, Fields: fields}
}

// NotFound returns a not-found error for the named thing.
func NotFound(code, thing string) *Error {
	return &Error{Kind: KindNotFound, Code: code, Message: thing + " not found"}
}

// Internal wraps an unexpected cause. The op names where it happened, for logs.
func Internal(op string, err error) *Error {
	return &Error{Kind: KindInternal, Code: "server.internal", Message: "internal error", Err: fmt.Errorf("%s: %w", op, err)}
}
