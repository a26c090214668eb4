package httpapi

import (
	"net/http"
	"strings"
)

// This file is the framework contract's one vocabulary map: each neutral
// code the inner layers raise (an "area.reason" string) becomes the
// UPPER_SNAKE code the Better Auth client compares against
// (reference/better-auth-wire.md appendix A), with the status Better Auth
// answers where it differs from the one its kind maps to. A code missing
// here answers the framework's code for its status (frameworkCodeFor).

// wireCode is one framework answer: its code, and its status when Better
// Auth's wire fixes another than the kind's.
type wireCode struct {
	Code   string
	Status int // 0: the status of the error's kind
}

// frameworkCodes maps neutral codes to Better Auth's.
var frameworkCodes = map[string]wireCode{
	// E-mail addresses (domain.NewEmail).
	"email.invalid":              {Code: "INVALID_EMAIL"},
	"email.invisible_characters": {Code: "INVALID_EMAIL"},
	"email.not_normalized":       {Code: "INVALID_EMAIL"},
	"email.mixed_script":         {Code: "INVALID_EMAIL"},

	// Users (domain.User).
	"user.invalid_name":       {Code: "INVALID_NAME"},
	"user.invalid_ban_reason": {Code: "INVALID_BAN_REASON"},
	"user.invalid_ban_expiry": {Code: "INVALID_BAN_EXPIRY"},

	// Passwords (domain.PasswordPolicy).
	"password.invalid":    {Code: "INVALID_PASSWORD"},
	"password.too_short":  {Code: "PASSWORD_TOO_SHORT"},
	"password.too_long":   {Code: "PASSWORD_TOO_LONG"},
	"password.too_common": {Code: "PASSWORD_TOO_COMMON"},

	// Roles and permissions (domain access control).
	"role.invalid_type":             {Code: "INVALID_ROLE_TYPE"},
	"role.not_found":                {Code: "ROLE_NOT_FOUND"},
	"role.unknown_value":            {Code: "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE"},
	"organization.invalid_name":     {Code: "INVALID_NAME"},
	"organization.invalid_slug":     {Code: "INVALID_SLUG"},
	"organization.invalid_logo":     {Code: "INVALID_LOGO"},
	"organization.invalid_metadata": {Code: "INVALID_METADATA"},

	"invitation.not_open": {Code: "INVITATION_NOT_FOUND"},

	// Service keys, OAuth clients and domains (their rules in domain).
	"service_key.invalid_name":          {Code: "INVALID_NAME"},
	"service_key.invalid_scope":         {Code: "INVALID_SCOPE"},
	"service_key.invalid_expiry":        {Code: "INVALID_EXPIRY"},
	"oauth_client.invalid_name":         {Code: "INVALID_NAME"},
	"oauth_client.invalid_type":         {Code: "INVALID_CLIENT_TYPE"},
	"oauth_client.invalid_redirect_uri": {Code: "INVALID_REDIRECT_URI"},
	"domain.invalid_hostname":           {Code: "INVALID_HOSTNAME"},
	"domain.invalid_reason":             {Code: "INVALID_REASON"},

	// Paging (ports).
	"paging.invalid_limit":  {Code: "INVALID_LIMIT"},
	"paging.invalid_offset": {Code: "INVALID_OFFSET"},

	// Status overrides: Better Auth answers these with 422.
	"USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL": {Code: "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL", Status: http.StatusUnprocessableEntity},
	"FAILED_TO_CREATE_USER":                 {Code: "FAILED_TO_CREATE_USER", Status: http.StatusUnprocessableEntity},
}

// frameworkAnswer returns the Better Auth code and status of neutral code,
// raised with status: its entry in frameworkCodes, else a code the inner
// layers still raise in Better Auth's vocabulary (isWireCode), else the
// framework's code for status.
func frameworkAnswer(code string, status int) (string, int) {
	if w, ok := frameworkCodes[code]; ok {
		if w.Status != 0 {
			status = w.Status
		}
		return w.Code, status
	}
	if isWireCode(code) {
		return code, status
	}
	return frameworkCodeFor(status), status
}

// isWireCode reports whether code is not a neutral "area.reason" code but
// already a wire code: an UPPER_SNAKE code the application layer still
// raises in Better Auth's vocabulary, or an RFC 6749 error code of the
// OAuth endpoints. Transitional: issue 15 moves each UPPER_SNAKE code to a
// neutral one listed above; once none is left, only the OAuth codes remain.
func isWireCode(code string) bool {
	return code != "" && !strings.Contains(code, ".")
}

// frameworkCodeFor gives edge-decided framework errors Better Auth's codes.
func frameworkCodeFor(status int) string {
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
