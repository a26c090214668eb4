package domain

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" // #nosec G505 -- RFC 6238 TOTP as every authenticator app computes it is HMAC-SHA-1; HMAC does not rely on SHA-1's collision resistance
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The time-based one-time passwords of two-factor authentication (RFC 6238
// over RFC 4226 HOTP): HMAC-SHA-1, 6 digits, a 30-second step, and a code of
// the step before or after the current one still accepted, to allow for
// clock drift and typing time. These are Better Auth's defaults, and what
// authenticator apps assume when a key URI says nothing else.
const (
	TOTPDigits     = 6
	TOTPPeriod     = 30 * time.Second
	TOTPSecretSize = 20 // bytes: the 160 bits RFC 4226 recommends for HMAC-SHA-1
	totpWindow     = 1  // steps accepted either side of the current one
)

// NewTOTPSecret returns a new random TOTP secret of TOTPSecretSize bytes.
func NewTOTPSecret() []byte {
	secret := make([]byte, TOTPSecretSize)
	_, _ = rand.Read(secret) // crypto/rand.Read never returns an error; it crashes the program instead
	return secret
}

// TOTPStep returns the RFC 6238 time step of t: the number of whole
// TOTPPeriods since the Unix epoch.
func TOTPStep(t time.Time) int64 {
	period := int64(TOTPPeriod / time.Second)
	sec := t.Unix()
	step := sec / period
	if sec%period < 0 { // round towards minus infinity before 1970 too
		step--
	}
	return step
}

// TOTPCode returns the HOTP value (RFC 4226) of secret for the counter step,
// as a decimal string of digits digits, zero-padded: for a TOTP the counter
// is TOTPStep of the time. digits must be between 1 and 9 (the truncated
// value has 31 bits); anything else is a programming error and panics.
func TOTPCode(secret []byte, step int64, digits int) string {
	if digits < 1 || digits > 9 {
		panic(fmt.Sprintf("domain: TOTPCode with %d digits", digits))
	}
	mac := hmac.New(sha1.New, secret)
	var counter [8]byte
	binary.BigEndian.PutUint64(counter[:], uint64(step)) // #nosec G115 -- the counter is the step's 64 bits, as RFC 4226 defines it
	mac.Write(counter[:])
	sum := mac.Sum(nil)
	// Dynamic truncation (RFC 4226 section 5.3): 31 bits at the offset
	// named by the low nibble of the last byte.
	offset := sum[len(sum)-1] & 0x0f
	value := binary.BigEndian.Uint32(sum[offset:offset+4]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	code := strconv.FormatUint(uint64(value%mod), 10)
	return strings.Repeat("0", digits-len(code)) + code
}

// VerifyTOTP reports whether code is secret's TOTP at the time at, or at the
// step before or after it, and returns the step it matched. A step at or
// below lastUsedStep is refused, so a code accepted once (whose step the
// caller stores as its new lastUsedStep) cannot be used again, nor can an
// older one; pass 0 when no code has been accepted yet. Anything but exactly
// TOTPDigits ASCII digits is refused. The comparison takes the same time
// whichever step matches, and whatever the code.
func VerifyTOTP(secret []byte, code string, at time.Time, lastUsedStep int64) (step int64, ok bool) {
	if !isTOTPCode(code) {
		return 0, false
	}
	current := TOTPStep(at)
	matched := 0
	for s := current - totpWindow; s <= current+totpWindow; s++ {
		want := TOTPCode(secret, s, TOTPDigits)
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && s > lastUsedStep {
			// The latest matching step wins: if one code matches two steps,
			// storing the later one refuses it at both.
			step, matched = s, 1
		}
	}
	return step, matched == 1
}

// isTOTPCode reports whether code is exactly TOTPDigits ASCII digits.
func isTOTPCode(code string) bool {
	if len(code) != TOTPDigits {
		return false
	}
	for i := range len(code) {
		if code[i] < '0' || code[i] > '9' {
			return false
		}
	}
	return true
}

// TOTPURI returns the otpauth:// key URI an authenticator app scans to add
// secret, built as Better Auth's two-factor plugin builds its totpURI
// (createOTP(...).url(issuer, email) in @better-auth/utils):
//
//	otpauth://totp/<issuer>:<account>?secret=<base32>&issuer=<issuer>&digits=6&period=30
//
// The label's issuer and account are escaped as JavaScript's
// encodeURIComponent escapes them, with a literal ":" between; the query is
// serialized as URLSearchParams serializes it, in that order; the secret is
// RFC 4648 base32 without padding. There is no algorithm parameter: apps
// default to SHA1. Invalid UTF-8 is replaced by U+FFFD first, as a
// JavaScript string would hold it.
func TOTPURI(secret []byte, issuer, account string) string {
	issuer = strings.ToValidUTF8(issuer, "\uFFFD")
	account = strings.ToValidUTF8(account, "\uFFFD")
	var b strings.Builder
	b.WriteString("otpauth://totp/")
	b.WriteString(escapeJS(issuer, uriComponentSafe, false))
	b.WriteByte(':')
	b.WriteString(escapeJS(account, uriComponentSafe, false))
	b.WriteString("?secret=")
	b.WriteString(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(secret))
	b.WriteString("&issuer=")
	b.WriteString(escapeJS(issuer, formSafe, true))
	b.WriteString("&digits=")
	b.WriteString(strconv.Itoa(TOTPDigits))
	b.WriteString("&period=")
	b.WriteString(strconv.Itoa(int(TOTPPeriod / time.Second)))
	return b.String()
}

// The bytes left as they are, besides ASCII letters and digits, by
// encodeURIComponent and by the application/x-www-form-urlencoded serializer
// of URLSearchParams (which also writes a space as "+").
const (
	uriComponentSafe = "-_.!~*'()"
	formSafe         = "*-._"
)

// escapeJS percent-encodes, in upper-case hex, every UTF-8 byte of s that is
// not an ASCII letter, digit or one of safe; with plusForSpace a space is
// written as "+".
func escapeJS(s, safe string, plusForSpace bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if c == ' ' && plusForSpace {
			b.WriteByte('+')
			continue
		}
		if c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(safe, c) >= 0) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0x0f])
	}
	return b.String()
}
