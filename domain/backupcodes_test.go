package domain_test

import (
	"bytes"
	"crypto/sha256"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/domain"
)

// backupCodeFormat is Better Auth's default backup code: ten characters of
// [a-zA-Z0-9], split five and five by a hyphen.
var backupCodeFormat = regexp.MustCompile(`^[a-zA-Z0-9]{5}-[a-zA-Z0-9]{5}$`)

// Ensure NewBackupCodes returns n distinct codes in Better Auth's format, and
// refuses a count below one.
func TestNewBackupCodes_count_and_format(t *testing.T) {
	for _, n := range []int{1, domain.BackupCodeCount, 50} {
		codes, err := domain.NewBackupCodes(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(codes) != n {
			t.Fatalf("NewBackupCodes(%d) gave %d codes", n, len(codes))
		}
		seen := map[string]bool{}
		for _, c := range codes {
			if !backupCodeFormat.MatchString(c) {
				t.Errorf("code %q is not xxxxx-xxxxx of [a-zA-Z0-9]", c)
			}
			if seen[c] {
				t.Errorf("code %q given twice in one set", c)
			}
			seen[c] = true
		}
	}
	if domain.BackupCodeCount != 10 {
		t.Errorf("BackupCodeCount = %d, want Better Auth's 10", domain.BackupCodeCount)
	}
	for _, n := range []int{0, -1} {
		if _, err := domain.NewBackupCodes(n); err == nil {
			t.Errorf("NewBackupCodes(%d) gave no error", n)
		}
	}
}

// Ensure codes drawn many times never repeat and use the whole alphabet
// with no character far likelier than another (a biased or narrow draw
// would lose the 59.5 bits a code must have).
func TestNewBackupCodes_uniqueness_and_spread(t *testing.T) {
	const sets = 2000
	seen := make(map[string]bool, sets*domain.BackupCodeCount)
	counts := map[rune]int{}
	for range sets {
		codes, err := domain.NewBackupCodes(domain.BackupCodeCount)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range codes {
			if seen[c] {
				t.Fatalf("code %q drawn twice", c)
			}
			seen[c] = true
			for _, r := range strings.ReplaceAll(c, "-", "") {
				counts[r]++
			}
		}
	}
	if len(counts) != 62 {
		t.Fatalf("%d distinct characters used, want 62", len(counts))
	}
	// 200,000 characters: about 3,226 of each; ±20 % is over 10 standard deviations.
	mean := float64(sets*domain.BackupCodeCount*10) / 62
	for r, n := range counts {
		if float64(n) < 0.8*mean || float64(n) > 1.2*mean {
			t.Errorf("character %q drawn %d times, mean %.0f", r, n, mean)
		}
	}
}

// Ensure the hash is the SHA-256 of the code without surrounding spaces,
// and that the code's case and inner characters still count, as Better
// Auth compares codes exactly.
func TestHashBackupCode_normalization(t *testing.T) {
	code := "aB3dE-fG7hJ"
	want := sha256.Sum256([]byte(code))
	if got := domain.HashBackupCode(code); !bytes.Equal(got, want[:]) {
		t.Fatalf("HashBackupCode(%q) = %x, want %x", code, got, want)
	}
	for _, same := range []string{" " + code, code + "\n", "\t" + code + " \r\n"} {
		if !bytes.Equal(domain.HashBackupCode(same), want[:]) {
			t.Errorf("HashBackupCode(%q) differs from the code's", same)
		}
	}
	for _, other := range []string{
		strings.ToLower(code), strings.ToUpper(code), "aB3dEfG7hJ", "aB3dE fG7hJ", "aB3dE-fG7hK", "",
	} {
		if bytes.Equal(domain.HashBackupCode(other), want[:]) {
			t.Errorf("HashBackupCode(%q) equals the code's", other)
		}
	}
}

// Ensure an e-mailed code is six ASCII digits, uniformly drawn.
func TestNewEmailOTP(t *testing.T) {
	digits := regexp.MustCompile(`^[0-9]{6}$`)
	seen := map[string]int{}
	counts := map[byte]int{}
	const draws = 6000
	for range draws {
		code, err := domain.NewEmailOTP()
		if err != nil {
			t.Fatal(err)
		}
		if !digits.MatchString(code) {
			t.Fatalf("code %q is not six digits", code)
		}
		seen[code]++
		for i := range len(code) {
			counts[code[i]]++
		}
	}
	// 6,000 draws from a million: a few repeats at most (about 18 expected pairs).
	if len(seen) < draws-100 {
		t.Errorf("only %d distinct codes in %d draws", len(seen), draws)
	}
	if len(counts) != 10 {
		t.Fatalf("%d distinct digits used, want 10", len(counts))
	}
	for d, n := range counts {
		if n < 3000 || n > 4200 { // mean 3,600, sd ≈ 57
			t.Errorf("digit %q drawn %d times of %d", d, n, draws*6)
		}
	}
}
