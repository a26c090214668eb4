package domain_test

import (
	"bytes"
	"encoding/base32"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// rfcSecret is the HMAC-SHA-1 key of RFC 4226 Appendix D and RFC 6238
// Appendix B: the ASCII bytes of "12345678901234567890".
var rfcSecret = []byte("12345678901234567890")

// Ensure TOTPCode computes the HOTP values of RFC 4226 Appendix D.
func TestTOTPCode_rfc4226_hotp_vectors(t *testing.T) {
	want := []string{"755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"}
	for counter, code := range want {
		if got := domain.TOTPCode(rfcSecret, int64(counter), 6); got != code {
			t.Errorf("HOTP(counter %d) = %q, want %q", counter, got, code)
		}
	}
}

// Ensure TOTPStep and TOTPCode give the SHA-1 values of RFC 6238 Appendix B
// (8 digits there), with the time steps it lists.
func TestTOTPCode_rfc6238_sha1_vectors(t *testing.T) {
	tests := []struct {
		unix int64
		step int64
		code string
	}{
		{59, 0x1, "94287082"},
		{1111111109, 0x23523EC, "07081804"},
		{1111111111, 0x23523ED, "14050471"},
		{1234567890, 0x273EF07, "89005924"},
		{2000000000, 0x3F940AA, "69279037"},
		{20000000000, 0x27BC86AA, "65353130"},
	}
	for _, tt := range tests {
		at := time.Unix(tt.unix, 0).In(time.FixedZone("UTC+5", 5*3600)) // the zone must not matter
		if got := domain.TOTPStep(at); got != tt.step {
			t.Errorf("TOTPStep(%d) = %#x, want %#x", tt.unix, got, tt.step)
		}
		if got := domain.TOTPCode(rfcSecret, tt.step, 8); got != tt.code {
			t.Errorf("TOTP(%d) = %q, want %q", tt.unix, got, tt.code)
		}
	}
}

// Ensure a step is the floor of the Unix time over 30 s, before 1970 too.
func TestTOTPStep_boundaries(t *testing.T) {
	tests := []struct {
		at   time.Time
		want int64
	}{
		{time.Unix(0, 0), 0},
		{time.Unix(29, 999999999), 0},
		{time.Unix(30, 0), 1},
		{time.Unix(-1, 0), -1},
		{time.Unix(-30, 0), -1},
		{time.Unix(-31, 0), -2},
	}
	for _, tt := range tests {
		if got := domain.TOTPStep(tt.at); got != tt.want {
			t.Errorf("TOTPStep(%v) = %d, want %d", tt.at.Unix(), got, tt.want)
		}
	}
}

// at is a time in the middle of a step; now is its step.
var (
	at  = time.Date(2026, 11, 25, 0, 30, 15, 0, time.UTC)
	now = domain.TOTPStep(at)
)

// Ensure the code of the current step and of one step either side is
// accepted, returning the step it matched, and two steps away is not.
func TestVerifyTOTP_window(t *testing.T) {
	secret := domain.NewTOTPSecret()
	for _, tt := range []struct {
		name   string
		offset int64
		ok     bool
	}{
		{"two_steps_early", -2, false},
		{"one_step_early", -1, true},
		{"current_step", 0, true},
		{"one_step_late", +1, true},
		{"two_steps_late", +2, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code := domain.TOTPCode(secret, now+tt.offset, domain.TOTPDigits)
			if code == domain.TOTPCode(secret, now, domain.TOTPDigits) && !tt.ok {
				t.Skip("the random secret gave the same code to two steps") // one chance in a million
			}
			step, ok := domain.VerifyTOTP(secret, code, at, 0)
			if ok != tt.ok {
				t.Fatalf("VerifyTOTP at offset %d = %v, want %v", tt.offset, ok, tt.ok)
			}
			if ok && step != now+tt.offset {
				t.Fatalf("step = %d, want %d", step, now+tt.offset)
			}
		})
	}
	// The first and last instants of the current step see the same window.
	code := domain.TOTPCode(secret, now-1, domain.TOTPDigits)
	start := time.Unix(now*30, 0)
	if _, ok := domain.VerifyTOTP(secret, code, start.Add(30*time.Second-time.Nanosecond), 0); !ok {
		t.Error("the previous step's code was refused at the end of the current step")
	}
	if _, ok := domain.VerifyTOTP(secret, code, start.Add(30*time.Second), 0); ok {
		t.Error("the code of two steps before was accepted at the start of the next step")
	}
	// Another secret's code is refused (unless, one chance in 300,000, it
	// happens to be a code of this secret's window too).
	other := domain.TOTPCode(domain.NewTOTPSecret(), now, domain.TOTPDigits)
	collides := false
	for s := now - 1; s <= now+1; s++ {
		collides = collides || domain.TOTPCode(secret, s, domain.TOTPDigits) == other
	}
	if _, ok := domain.VerifyTOTP(secret, other, at, 0); ok != collides {
		t.Errorf("another secret's code: accepted = %v, want %v", ok, collides)
	}
}

// Ensure a code whose step is at or below the last step used is refused, so
// an accepted code cannot be replayed, while a later step's still works.
func TestVerifyTOTP_replay(t *testing.T) {
	secret := rfcSecret
	code := func(offset int64) string { return domain.TOTPCode(secret, now+offset, domain.TOTPDigits) }
	for _, tt := range []struct {
		name     string
		offset   int64
		lastUsed int64
		ok       bool
	}{
		{"never_used", 0, 0, true},
		{"previous_step_used", 0, now - 1, true},
		{"same_step_used", 0, now, false},
		{"later_step_used", 0, now + 1, false},
		{"earlier_code_after_current_used", -1, now, false},
		{"earlier_code_same_step_used", -1, now - 1, false},
		{"later_code_after_current_used", +1, now, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			step, ok := domain.VerifyTOTP(secret, code(tt.offset), at, tt.lastUsed)
			if ok != tt.ok {
				t.Fatalf("VerifyTOTP(offset %d, lastUsed %d) = %v, want %v", tt.offset, tt.lastUsed-now, ok, tt.ok)
			}
			if ok && step != now+tt.offset {
				t.Fatalf("step = %d, want %d", step, now+tt.offset)
			}
		})
	}
	// Accepting a code and storing its step refuses the same code next.
	step, ok := domain.VerifyTOTP(secret, code(0), at, 0)
	if !ok {
		t.Fatal("the current code was refused")
	}
	if _, ok := domain.VerifyTOTP(secret, code(0), at.Add(10*time.Second), step); ok {
		t.Fatal("an accepted code was accepted again")
	}
}

// Ensure anything but exactly six ASCII digits is refused, even when it
// holds or spells the right code.
func TestVerifyTOTP_malformed_codes(t *testing.T) {
	secret := rfcSecret
	good := domain.TOTPCode(secret, now, domain.TOTPDigits)
	if _, ok := domain.VerifyTOTP(secret, good, at, 0); !ok {
		t.Fatal("the well-formed code was refused")
	}
	arabic := strings.Map(func(r rune) rune { return r - '0' + '٠' }, good)
	fullwidth := strings.Map(func(r rune) rune { return r - '0' + '０' }, good)
	eight := domain.TOTPCode(secret, now, 8)
	for name, code := range map[string]string{
		"empty":              "",
		"five_digits":        good[:5],
		"seven_digits":       good + "0",
		"eight_digit_code":   eight,
		"letters":            "abcdef",
		"letter_inside":      good[:3] + "a" + good[4:],
		"nul_inside":         good[:5] + "\x00",
		"nul_after":          good + "\x00",
		"leading_space":      " " + good,
		"trailing_newline":   good + "\n",
		"sign":               "+" + good[1:],
		"arabic_indic_digit": arabic,
		"arabic_literal":     "١٢٣٤٥٦",
		"fullwidth_digits":   fullwidth,
	} {
		t.Run(name, func(t *testing.T) {
			if _, ok := domain.VerifyTOTP(secret, code, at, 0); ok {
				t.Fatalf("VerifyTOTP(%q) accepted", code)
			}
		})
	}
}

// Ensure a new secret has 20 random bytes.
func TestNewTOTPSecret(t *testing.T) {
	a, b := domain.NewTOTPSecret(), domain.NewTOTPSecret()
	if len(a) != 20 || len(b) != 20 {
		t.Fatalf("len = %d, %d, want 20", len(a), len(b))
	}
	if bytes.Equal(a, b) {
		t.Fatal("two secrets are equal")
	}
}

// Ensure the key URI is the one Better Auth's two-factor plugin builds.
// The wanted values were printed by createOTP(secret, {digits: 6, period:
// 30}).url(issuer, account) of @better-auth/utils 0.5.1, the version the
// pinned better-auth 1.7.25 (test/clients) uses.
func TestTOTPURI_matches_better_auth(t *testing.T) {
	tests := []struct {
		secret          []byte
		issuer, account string
		want            string
	}{
		{rfcSecret, "Gatehouse", "alice@example.com",
			"otpauth://totp/Gatehouse:alice%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Gatehouse&digits=6&period=30"},
		{rfcSecret, "Acme & Co* ~(x)!'", "alice+mfa@example.com",
			"otpauth://totp/Acme%20%26%20Co*%20~(x)!':alice%2Bmfa%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Acme+%26+Co*+%7E%28x%29%21%27&digits=6&period=30"},
		{rfcSecret, "Zoë:Ünïcode/é?#", "bob é@exämple.org",
			"otpauth://totp/Zo%C3%AB%3A%C3%9Cn%C3%AFcode%2F%C3%A9%3F%23:bob%20%C3%A9%40ex%C3%A4mple.org?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Zo%C3%AB%3A%C3%9Cn%C3%AFcode%2F%C3%A9%3F%23&digits=6&period=30"},
		{[]byte{0, 1, 2, 250, 255, 128, 7}, "I", "a",
			"otpauth://totp/I:a?secret=AAAQF6X7QADQ&issuer=I&digits=6&period=30"},
	}
	for _, tt := range tests {
		if got := domain.TOTPURI(tt.secret, tt.issuer, tt.account); got != tt.want {
			t.Errorf("TOTPURI(%q, %q)\n got %s\nwant %s", tt.issuer, tt.account, got, tt.want)
		}
	}
}

// Ensure the key URI parses back, with net/url, into the secret, issuer,
// account, digits and period, and names no algorithm.
func TestTOTPURI_round_trip(t *testing.T) {
	secret := domain.NewTOTPSecret()
	issuer, account := "Acme: Identity & Co", "zoë+2fa@example.com"
	u, err := url.Parse(domain.TOTPURI(secret, issuer, account))
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "otpauth" || u.Host != "totp" {
		t.Fatalf("scheme, host = %q, %q", u.Scheme, u.Host)
	}
	label, found := strings.CutPrefix(u.EscapedPath(), "/")
	gotIssuer, gotAccount, found2 := strings.Cut(label, ":")
	if !found || !found2 {
		t.Fatalf("label %q is not issuer:account", label)
	}
	for got, want := range map[string]string{gotIssuer: issuer, gotAccount: account} {
		if unescaped, err := url.PathUnescape(got); err != nil || unescaped != want {
			t.Errorf("label part %q = %q (%v), want %q", got, unescaped, err, want)
		}
	}
	q := u.Query()
	if len(q) != 4 {
		t.Errorf("query = %v, want secret, issuer, digits and period only", q)
	}
	raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(q.Get("secret"))
	if err != nil || !bytes.Equal(raw, secret) {
		t.Errorf("secret %q decodes to %x (%v), want %x", q.Get("secret"), raw, err, secret)
	}
	if q.Get("issuer") != issuer || q.Get("digits") != "6" || q.Get("period") != "30" || q.Has("algorithm") {
		t.Errorf("query = %v", q)
	}
}
