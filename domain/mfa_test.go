package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

var mfaNow = time.Date(2026, 11, 25, 10, 0, 0, 0, time.FixedZone("CET", 3600))

// wantInvalid fails unless err is KindInvalid with code.
func wantInvalid(t *testing.T, err error, code string) {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid || de.Code != code {
		t.Fatalf("error = %v, want invalid %s", err, code)
	}
}

func TestNewTOTPFactor(t *testing.T) {
	f, err := domain.NewTOTPFactor("u1", []byte("sealed"), mfaNow)
	if err != nil {
		t.Fatal(err)
	}
	if f.Verified || f.LastUsedStep != 0 || !f.VerifiedAt.IsZero() {
		t.Fatalf("a new factor is unverified with no step used: %+v", f)
	}
	if !f.CreatedAt.Equal(mfaNow) || f.CreatedAt.Location() != time.UTC {
		t.Fatalf("created = %v, want the instant in UTC", f.CreatedAt)
	}
	for name, tt := range map[string]struct {
		user   domain.UserID
		sealed []byte
	}{
		"no_user":   {"", []byte("sealed")},
		"no_secret": {"u1", nil},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := domain.NewTOTPFactor(tt.user, tt.sealed, mfaNow)
			wantInvalid(t, err, "mfa.invalid_factor")
		})
	}
}

func TestNewMFAChallenge(t *testing.T) {
	c, err := domain.NewMFAChallenge([]byte("h"), "u1", mfaNow, mfaNow.Add(domain.MFAChallengeMaxTTL), 5, true)
	if err != nil {
		t.Fatal(err)
	}
	if !c.LiveAt(mfaNow) || !c.LiveAt(mfaNow.Add(domain.MFAChallengeMaxTTL-time.Nanosecond)) || c.LiveAt(mfaNow.Add(domain.MFAChallengeMaxTTL)) {
		t.Fatal("a challenge is live until its expiry, exclusive")
	}
	c.ConsumedAt = mfaNow
	if c.LiveAt(mfaNow) {
		t.Fatal("a consumed challenge is not live")
	}
	for name, tt := range map[string]struct {
		id       []byte
		user     domain.UserID
		expires  time.Time
		attempts int
	}{
		"no_id":               {nil, "u1", mfaNow.Add(time.Minute), 5},
		"no_user":             {[]byte("h"), "", mfaNow.Add(time.Minute), 5},
		"already_expired":     {[]byte("h"), "u1", mfaNow, 5},
		"longer_than_ten_min": {[]byte("h"), "u1", mfaNow.Add(domain.MFAChallengeMaxTTL + time.Second), 5},
		"no_attempt":          {[]byte("h"), "u1", mfaNow.Add(time.Minute), 0},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := domain.NewMFAChallenge(tt.id, tt.user, mfaNow, tt.expires, tt.attempts, false)
			wantInvalid(t, err, "mfa.invalid_challenge")
		})
	}
}

func TestNewPasskeyCredential(t *testing.T) {
	c, err := domain.NewPasskeyCredential(domain.PasskeyCredential{ID: []byte("cred"), UserID: "u1", PublicKey: []byte("cose"), CreatedAt: mfaNow})
	if err != nil {
		t.Fatal(err)
	}
	if c.CreatedAt.Location() != time.UTC || !c.CreatedAt.Equal(mfaNow) || !c.LastUsedAt.IsZero() {
		t.Fatalf("times = %v, %v: created in UTC, never used", c.CreatedAt, c.LastUsedAt)
	}
	for name, c := range map[string]domain.PasskeyCredential{
		"no_id":         {UserID: "u1", PublicKey: []byte("cose")},
		"no_user":       {ID: []byte("cred"), PublicKey: []byte("cose")},
		"no_public_key": {ID: []byte("cred"), UserID: "u1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := domain.NewPasskeyCredential(c)
			wantInvalid(t, err, "passkey.invalid")
		})
	}
}

func TestNewWebAuthnChallenge(t *testing.T) {
	later := mfaNow.Add(5 * time.Minute)
	if _, err := domain.NewWebAuthnChallenge([]byte("h"), []byte("c"), "", domain.WebAuthnAuthentication, nil, mfaNow, later); err != nil {
		t.Fatalf("a discoverable sign-in names no user: %v", err)
	}
	c, err := domain.NewWebAuthnChallenge([]byte("h"), []byte("c"), "u1", domain.WebAuthnRegistration, []byte("s"), mfaNow, later)
	if err != nil {
		t.Fatal(err)
	}
	if c.ExpiresAt.Location() != time.UTC || !c.UsedAt.IsZero() {
		t.Fatalf("challenge = %+v: expiry in UTC, unused", c)
	}
	for name, tt := range map[string]struct {
		id, challenge []byte
		user          domain.UserID
		purpose       domain.WebAuthnPurpose
		expires       time.Time
	}{
		"no_id":                   {nil, []byte("c"), "u1", domain.WebAuthnAuthentication, later},
		"no_challenge":            {[]byte("h"), nil, "u1", domain.WebAuthnAuthentication, later},
		"unknown_ceremony":        {[]byte("h"), []byte("c"), "u1", "attestation", later},
		"registration_of_no_one":  {[]byte("h"), []byte("c"), "", domain.WebAuthnRegistration, later},
		"expires_when_it_is_made": {[]byte("h"), []byte("c"), "u1", domain.WebAuthnAuthentication, mfaNow},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := domain.NewWebAuthnChallenge(tt.id, tt.challenge, tt.user, tt.purpose, nil, mfaNow, tt.expires)
			wantInvalid(t, err, "webauthn.invalid_challenge")
		})
	}
}
