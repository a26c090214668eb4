package domain

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// PasswordPolicy is what a new password must satisfy. There are no
// composition rules (NIST SP 800-63B-4 §3.1.1.2 forbids them): only a length
// range and a blocklist of common passwords.
type PasswordPolicy struct {
	MinLength int // in characters (code points); default 8
	MaxLength int // in characters; default 128
}

// The codes of refused passwords.
const (
	CodePasswordTooShort  = "password.too_short"
	CodePasswordTooLong   = "password.too_long"
	CodePasswordTooCommon = "password.too_common"
)

// Check returns an Invalid error naming field (such as "password") when
// password is too short, too long, or blocked: found in the blocklist, or
// equal to one of the context words (the user's address, its local part, the
// product's name), compared case-insensitively.
func (p PasswordPolicy) Check(field, password string, blocked func(string) bool, context ...string) error {
	n := utf8.RuneCountInString(password)
	switch {
	case !utf8.ValidString(password):
		return Invalid("password.invalid", "Invalid password", FieldViolation{Field: field, Message: "must be valid UTF-8"})
	case n < p.MinLength:
		return Invalid(CodePasswordTooShort, "Password too short",
			FieldViolation{Field: field, Message: "must be at least " + strconv.Itoa(p.MinLength) + " characters"})
	case n > p.MaxLength:
		return Invalid(CodePasswordTooLong, "Password too long",
			FieldViolation{Field: field, Message: "must be at most " + strconv.Itoa(p.MaxLength) + " characters"})
	}
	lower := strings.ToLower(password)
	common := blocked != nil && blocked(lower)
	for _, w := range context {
		if w != "" && lower == strings.ToLower(w) {
			common = true
		}
	}
	if common {
		return Invalid(CodePasswordTooCommon,
			"This password is too common or too easy to guess. Choose a longer, less predictable one, such as a few unrelated words.",
			FieldViolation{Field: field, Message: "is too common; choose another"})
	}
	return nil
}
