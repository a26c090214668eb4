package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"strings"
)

// Backup codes and e-mailed one-time codes take Better Auth's two-factor
// defaults: ten backup codes of ten characters from [a-zA-Z0-9] written
// "xxxxx-xxxxx" (10·log2(62) ≈ 59.5 bits each), and e-mailed codes of six
// decimal digits.
const (
	BackupCodeCount  = 10
	backupCodeLength = 10 // characters, the "-" in the middle not counted
	EmailOTPDigits   = 6
)

const (
	backupCodeAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digitAlphabet      = "0123456789"
)

// NewBackupCodes returns n distinct new backup codes ("a1B2c-3D4e5"). Only
// their HashBackupCode is to be kept. n below 1 is an error.
func NewBackupCodes(n int) ([]string, error) {
	if n < 1 {
		return nil, Internal("domain: new backup codes", fmt.Errorf("%d codes asked for", n))
	}
	codes := make([]string, 0, n)
	seen := make(map[string]bool, n)
	for len(codes) < n {
		s, err := randomString(backupCodeAlphabet, backupCodeLength)
		if err != nil {
			return nil, Internal("domain: new backup codes", err)
		}
		code := s[:backupCodeLength/2] + "-" + s[backupCodeLength/2:]
		if !seen[code] { // a repeat is all but impossible, but each code must be usable once
			seen[code] = true
			codes = append(codes, code)
		}
	}
	return codes, nil
}

// normalizeBackupCode returns code as it is compared and hashed: without
// the spaces around it. Case is kept, because Better Auth compares backup
// codes exactly and its codes mix upper- and lower-case letters (folding
// case would take their entropy from 59.5 to 51.7 bits).
func normalizeBackupCode(code string) string {
	return strings.TrimSpace(code)
}

// HashBackupCode returns the SHA-256 of the normalized code, the only form in
// which a backup code is stored. A fast hash is enough: a code is random,
// with about 59.5 bits of entropy, and is never chosen by a person.
func HashBackupCode(code string) []byte {
	sum := sha256.Sum256([]byte(normalizeBackupCode(code)))
	return sum[:]
}

// NewEmailOTP returns a new one-time code of EmailOTPDigits decimal digits,
// to be e-mailed as a second factor.
func NewEmailOTP() (string, error) {
	code, err := randomString(digitAlphabet, EmailOTPDigits)
	if err != nil {
		return "", Internal("domain: new e-mail code", err)
	}
	return code, nil
}

// randomString returns n characters drawn uniformly from alphabet (at most
// 256 characters) with crypto/rand. Random bytes at or above the largest
// multiple of len(alphabet) are dropped, so that no character is likelier
// than another.
func randomString(alphabet string, n int) (string, error) {
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out), nil
}
