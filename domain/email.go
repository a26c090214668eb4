package domain

import (
	"net/mail"
	"strings"
	"unicode/utf8"
)

// Email is a normalised e-mail address: trimmed and lower-cased, so that one
// mailbox has one spelling in storage and lookups are exact.
type Email string

// maxEmailLength is the longest address SMTP can deliver to (RFC 5321 §4.5.3.1).
const maxEmailLength = 254

// NewEmail validates and normalises s. It returns a KindInvalid error with
// code INVALID_EMAIL (the Better Auth code) when s is not a bare address.
func NewEmail(s string) (Email, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	bad := Invalid("INVALID_EMAIL", "Invalid email", FieldViolation{Location: "body.email", Message: "must be a valid e-mail address"})
	if s == "" || len(s) > maxEmailLength || !utf8.ValidString(s) {
		return "", bad
	}
	addr, err := mail.ParseAddress(s)
	// ParseAddress also accepts "Name <a@b>" and comments; only a bare address is an e-mail here.
	if err != nil || addr.Address != s || addr.Name != "" {
		return "", bad
	}
	local, host, ok := strings.Cut(s, "@")
	if !ok || local == "" || len(local) > 64 || !strings.Contains(host, ".") || strings.HasSuffix(host, ".") {
		return "", bad
	}
	return Email(s), nil
}

// String returns the address.
func (e Email) String() string { return string(e) }
