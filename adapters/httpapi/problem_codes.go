package httpapi

import (
	"net/http"
	"strings"
)

// This file is the problem contracts' one vocabulary map (the service,
// admin and trusted routes, RFC 9457): each neutral code the inner layers
// raise becomes the problem code those routes publish. Most neutral codes
// are published as they are; the entries below keep the codes the admin
// and trusted routes answered before the inner layers became neutral.
var problemCodes = map[string]string{
	// Domain rules the admin and trusted routes publish in the request area.
	"email.invalid":                     "request.invalid_email",
	"user.invalid_name":                 "request.invalid_name",
	"user.invalid_ban_reason":           "request.invalid_ban_reason",
	"user.invalid_ban_expiry":           "request.invalid_ban_expiry",
	"password.invalid":                  "request.invalid_password",
	"password.too_short":                "request.password_too_short",
	"password.too_long":                 "request.password_too_long",
	"password.too_common":               "request.password_too_common",
	"role.invalid_type":                 "request.invalid_role_type",
	"role.not_found":                    "request.role_not_found",
	"role.unknown_value":                "request.you_are_not_allowed_to_set_non_existent_value",
	"organization.invalid_name":         "request.invalid_name",
	"organization.invalid_slug":         "request.invalid_slug",
	"organization.invalid_logo":         "request.invalid_logo",
	"organization.invalid_metadata":     "request.invalid_metadata",
	"invitation.not_open":               "request.invitation_not_found",
	"service_key.invalid_name":          "request.invalid_name",
	"service_key.invalid_scope":         "request.invalid_scope",
	"service_key.invalid_expiry":        "request.invalid_expiry",
	"oauth_client.invalid_name":         "request.invalid_name",
	"oauth_client.invalid_type":         "request.invalid_client_type",
	"oauth_client.invalid_redirect_uri": "request.invalid_redirect_uri",
	"domain.invalid_hostname":           "request.invalid_hostname",
	"domain.invalid_reason":             "request.invalid_reason",
	"paging.invalid_limit":              "request.invalid_limit",
	"paging.invalid_offset":             "request.invalid_offset",
}

// problemAnswer returns the problem code of neutral code, raised with
// status: its entry in problemCodes, else the code itself, else (for codes
// the edge decides, and wire codes still raised inside, isWireCode) the
// problem code for status.
func problemAnswer(code string, status int) string {
	if p, ok := problemCodes[code]; ok {
		return p
	}
	if code == "" || isWireCode(code) {
		return problemCodeFor(status, code)
	}
	return code
}

// problemCodeFor gives edge-decided problems a stable area.reason code. A
// framework-style code (UPPER_SNAKE) is lower-cased into the request area.
func problemCodeFor(status int, code string) string {
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
