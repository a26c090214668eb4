package domain

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The shapes of client ids and secrets: a prefix that says what the string
// is, then characters from [A-Za-z0-9] drawn from a CSPRNG (24 make 142
// bits, 43 make 256).
const (
	OAuthClientIDPrefix     = "gh_ci_"
	OAuthClientIDLength     = 24
	OAuthClientSecretPrefix = "gh_cs_"
	OAuthClientSecretLength = 43
)

// Bounds of a client's registration.
const (
	MaxOAuthClientNameLength = 128
	MaxRedirectURIs          = 20
	MaxRedirectURILength     = 2048
)

// ParseOAuthClientType checks a client type given at location.
func ParseOAuthClientType(s, location string) (OAuthClientType, error) {
	switch t := OAuthClientType(s); t {
	case OAuthClientPublic, OAuthClientConfidential:
		return t, nil
	}
	return "", Invalid("oauth_client.invalid_type", "Invalid client type",
		FieldViolation{Field: location, Message: `must be "public" or "confidential"`})
}

// NormalizeOAuthClientName trims a client's name and checks it is 1 to 128
// characters.
func NormalizeOAuthClientName(name, location string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxOAuthClientNameLength {
		return "", Invalid("oauth_client.invalid_name", "Invalid name", FieldViolation{Field: location, Message: "must be 1 to 128 characters"})
	}
	if HasBidiControl(name) {
		return "", Invalid("oauth_client.invalid_name", "Invalid name", FieldViolation{Field: location, Message: bidiMessage})
	}
	return name, nil
}

// NormalizeRedirectURIs checks the redirect URIs of a client of type t given
// at location (each one at location[i]) and returns them with exact
// duplicates removed, in their order. There must be at least minCount and at most
// MaxRedirectURIs. Each URI is kept as written, since authorization requests
// must match it character for character, and must be absolute, at most 2048
// characters, without fragment, user information, wildcard or white space,
// and either https, or http on a loopback host (localhost, 127.0.0.1,
// [::1]; RFC 8252 §7.3), or, for public clients only, a private-use scheme
// in reverse domain name form such as com.example.app:/callback (RFC 8252
// §7.1).
func NormalizeRedirectURIs(uris []string, t OAuthClientType, location string, minCount int) ([]string, error) {
	if len(uris) < minCount || len(uris) > MaxRedirectURIs {
		return nil, Invalid("oauth_client.invalid_redirect_uri", "Invalid redirect URI",
			FieldViolation{Field: location, Message: fmt.Sprintf("must list %d to %d URIs", minCount, MaxRedirectURIs)})
	}
	var bad []FieldViolation
	out := make([]string, 0, len(uris))
	seen := make(map[string]bool, len(uris))
	for i, u := range uris {
		if msg := redirectURIProblem(u, t); msg != "" {
			bad = append(bad, FieldViolation{Field: fmt.Sprintf("%s[%d]", location, i), Message: msg})
			continue
		}
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	if len(bad) > 0 {
		return nil, Invalid("oauth_client.invalid_redirect_uri", "Invalid redirect URI", bad...)
	}
	return out, nil
}

// redirectURIProblem says what is wrong with raw as a redirect URI of a
// client of type t, or "" if nothing is.
func redirectURIProblem(raw string, t OAuthClientType) string {
	switch {
	case raw == "":
		return "must not be empty"
	case len(raw) > MaxRedirectURILength:
		return "must be at most 2048 characters"
	case strings.ContainsFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return "must not contain white space or control characters"
	case strings.Contains(raw, "#"):
		return "must not have a fragment"
	case strings.Contains(raw, "*"):
		return "must not contain a wildcard"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "must be an absolute URI"
	}
	if u.User != nil {
		return "must not contain user information"
	}
	switch u.Scheme { // url.Parse lower-cases the scheme
	case "https":
		if u.Host == "" || u.Hostname() == "" {
			return "must name a host"
		}
		return ""
	case "http":
		if !isLoopbackHost(u.Hostname()) {
			return "must use https, or http only on a loopback host (localhost, 127.0.0.1, [::1])"
		}
		return ""
	}
	if t != OAuthClientPublic {
		return "must use https (or http on a loopback host); private-use schemes are for public clients"
	}
	if !strings.Contains(u.Scheme, ".") {
		return "must use https, http on a loopback host, or a private-use scheme in reverse domain name form (com.example.app:/callback)"
	}
	return ""
}

func isLoopbackHost(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}
