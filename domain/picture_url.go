package domain

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxPictureURLLength bounds the address of a picture: a user's image, an
// organization's logo.
const MaxPictureURLLength = 2048

// checkPictureURL checks the address of a picture shown beside a name (a
// user's image, an organization's logo) and returns it trimmed: empty (no
// picture), or an absolute http or https URL with a host, without user
// information, spaces or control characters, at most MaxPictureURLLength
// bytes. Every other scheme is refused, data: included: such an address
// ends up in the href or src of a page or an app that trusts it, where
// javascript: runs and data: shows anything. Better Auth takes any string;
// Gatehouse is stricter, on every route that sets one. code is the
// condition's code, field the field named in the error.
func checkPictureURL(raw, code, field string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", nil
	}
	bad := Invalid(code, "Invalid "+field, FieldViolation{Field: field,
		Message: "must be an http or https URL of at most 2048 characters, or empty for none"})
	if len(raw) > MaxPictureURLLength || !utf8.ValidString(raw) ||
		strings.IndexFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || IsBidiControl(r) }) >= 0 {
		return "", bad
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.Host == "" || u.Hostname() == "" || u.User != nil {
		return "", bad
	}
	return raw, nil
}

// IsPictureURL reports whether raw is an address a user's image or an
// organization's logo may hold (see User.SetImage): empty, or an absolute
// http or https URL.
func IsPictureURL(raw string) bool {
	_, err := checkPictureURL(raw, "picture.invalid", "image")
	return err == nil
}
