package domain

import (
	"time"
)

// This file holds the stored records of multi-factor authentication: a
// user's TOTP factor and backup codes, the pending second-factor challenge
// of a password sign-in, passkeys (WebAuthn credentials) and WebAuthn
// ceremony challenges. They are records with exported fields; their
// constructors check what a record must hold, and the rules of the factors
// (RFC 6238 codes, WebAuthn ceremonies) live in the application.

// MFAChallengeMaxTTL is the longest a second-factor challenge may live: the
// signed two_factor cookie that carries it lasts at most ten minutes.
const MFAChallengeMaxTTL = 10 * time.Minute

// TOTPFactor is a user's authenticator-app factor (RFC 6238). A user has at
// most one.
type TOTPFactor struct {
	UserID UserID
	// SealedSecret is the shared secret, encrypted; the store never sees
	// it in the clear.
	SealedSecret []byte
	// Verified turns two-factor on: it is set by the first accepted code.
	Verified bool
	// LastUsedStep is the RFC 6238 time step of the last accepted code; a
	// code of that step or an earlier one is a replay.
	LastUsedStep int64
	CreatedAt    time.Time
	VerifiedAt   time.Time
}

// NewTOTPFactor returns an unverified factor of user with the sealed secret.
func NewTOTPFactor(user UserID, sealedSecret []byte, now time.Time) (TOTPFactor, error) {
	if user == "" || len(sealedSecret) == 0 {
		return TOTPFactor{}, Invalid("mfa.invalid_factor", "a TOTP factor needs a user and a sealed secret")
	}
	return TOTPFactor{UserID: user, SealedSecret: sealedSecret, CreatedAt: Timestamp(now)}, nil
}

// BackupCode is one single-use recovery code of a user. Only the SHA-256 of
// the code is stored.
type BackupCode struct {
	UserID   UserID
	CodeHash []byte
	// UsedAt is zero while the code is unused.
	UsedAt    time.Time
	CreatedAt time.Time
}

// MFAChallenge is the pending second factor of a password sign-in: the
// password was right, and the session is created only once the challenge is
// answered. Its id travels in the signed two_factor cookie; only the id's
// hash is stored.
type MFAChallenge struct {
	IDHash    []byte
	UserID    UserID
	ExpiresAt time.Time
	// Attempts counts wrong answers; at MaxAttempts the challenge is
	// consumed.
	Attempts    int
	MaxAttempts int
	// RememberMe is the sign-in's choice, applied to the session created.
	RememberMe bool
	// ConsumedAt is set when the challenge was answered or exhausted.
	ConsumedAt time.Time
	// OTPHash is the hash of the e-mailed code, when one was sent; it is
	// valid until OTPExpiresAt.
	OTPHash      []byte
	OTPExpiresAt time.Time
}

// NewMFAChallenge returns a challenge of user that expires at expiresAt, no
// later than MFAChallengeMaxTTL after now, and allows maxAttempts wrong
// answers.
func NewMFAChallenge(idHash []byte, user UserID, now, expiresAt time.Time, maxAttempts int, rememberMe bool) (MFAChallenge, error) {
	switch {
	case len(idHash) == 0 || user == "":
		return MFAChallenge{}, Invalid("mfa.invalid_challenge", "a challenge needs an id and a user")
	case !expiresAt.After(now) || expiresAt.Sub(now) > MFAChallengeMaxTTL:
		return MFAChallenge{}, Invalid("mfa.invalid_challenge", "a challenge lives for at most ten minutes")
	case maxAttempts < 1:
		return MFAChallenge{}, Invalid("mfa.invalid_challenge", "a challenge allows at least one attempt")
	}
	return MFAChallenge{IDHash: idHash, UserID: user, ExpiresAt: Timestamp(expiresAt), MaxAttempts: maxAttempts,
		RememberMe: rememberMe}, nil
}

// LiveAt reports whether the challenge can still be answered at now:
// neither consumed nor expired.
func (c MFAChallenge) LiveAt(now time.Time) bool {
	return c.ConsumedAt.IsZero() && now.Before(c.ExpiresAt)
}

// PasskeyCredential is a WebAuthn credential (a passkey) registered by a
// user.
type PasskeyCredential struct {
	// ID is the credential id the authenticator chose; unique.
	ID     []byte
	UserID UserID
	// Name is the user's label for it.
	Name string
	// PublicKey is the credential public key, COSE-encoded.
	PublicKey []byte
	// SignCount is the authenticator's signature counter at the last use.
	SignCount uint32
	AAGUID    []byte
	// Transports are the authenticator's hints ("internal", "usb", …).
	Transports      []string
	BackupEligible  bool
	BackedUp        bool
	AttestationType string
	CreatedAt       time.Time
	// LastUsedAt is zero until the first sign-in with the passkey.
	LastUsedAt time.Time
}

// NewPasskeyCredential checks that c holds a credential id, an owner and a
// public key, and returns it with its times normalised.
func NewPasskeyCredential(c PasskeyCredential) (PasskeyCredential, error) {
	if len(c.ID) == 0 || c.UserID == "" || len(c.PublicKey) == 0 {
		return PasskeyCredential{}, Invalid("passkey.invalid", "a passkey needs a credential id, a user and a public key")
	}
	c.CreatedAt = Timestamp(c.CreatedAt)
	if !c.LastUsedAt.IsZero() {
		c.LastUsedAt = Timestamp(c.LastUsedAt)
	}
	return c, nil
}

// WebAuthnPurpose is the ceremony a WebAuthn challenge belongs to.
type WebAuthnPurpose string

// The WebAuthn ceremonies.
const (
	WebAuthnRegistration   WebAuthnPurpose = "registration"
	WebAuthnAuthentication WebAuthnPurpose = "authentication"
)

// WebAuthnChallenge is a pending WebAuthn ceremony. Its id travels in a
// cookie; only the id's hash is stored. It is used at most once.
type WebAuthnChallenge struct {
	IDHash    []byte
	Challenge []byte
	// UserID is empty for a discoverable sign-in, where the authenticator
	// names the user.
	UserID    UserID
	Purpose   WebAuthnPurpose
	ExpiresAt time.Time
	UsedAt    time.Time
	// SessionData is the ceremony's serialised session data, opaque to the
	// store.
	SessionData []byte
}

// NewWebAuthnChallenge returns a challenge for purpose, expiring at
// expiresAt (after now). A registration belongs to a user.
func NewWebAuthnChallenge(idHash, challenge []byte, user UserID, purpose WebAuthnPurpose, sessionData []byte, now, expiresAt time.Time) (WebAuthnChallenge, error) {
	switch {
	case len(idHash) == 0 || len(challenge) == 0:
		return WebAuthnChallenge{}, Invalid("webauthn.invalid_challenge", "a challenge needs an id and a challenge")
	case purpose != WebAuthnRegistration && purpose != WebAuthnAuthentication:
		return WebAuthnChallenge{}, Invalid("webauthn.invalid_challenge", "unknown ceremony")
	case purpose == WebAuthnRegistration && user == "":
		return WebAuthnChallenge{}, Invalid("webauthn.invalid_challenge", "a registration belongs to a user")
	case !expiresAt.After(now):
		return WebAuthnChallenge{}, Invalid("webauthn.invalid_challenge", "a challenge must expire after it is made")
	}
	return WebAuthnChallenge{IDHash: idHash, Challenge: challenge, UserID: user, Purpose: purpose,
		ExpiresAt: Timestamp(expiresAt), SessionData: sessionData}, nil
}

// Errors of the multi-factor storage. Their codes are neutral: a used backup
// code and an unknown one answer the same, and a replayed TOTP step or a
// sign counter that went backwards say only that.
var (
	ErrTOTPNotFound              = NotFound("mfa.totp_not_found", "TOTP factor")
	ErrTOTPExists                = NewError(KindConflict, "mfa.totp_exists", "a verified TOTP factor already exists")
	ErrTOTPStepReplayed          = NewError(KindConflict, "mfa.step_replayed", "the code was already used")
	ErrBackupCodeNotFound        = NotFound("mfa.backup_code_not_found", "backup code")
	ErrMFAChallengeNotFound      = NotFound("mfa.challenge_not_found", "challenge")
	ErrMFAChallengeExists        = NewError(KindConflict, "mfa.challenge_exists", "a challenge with this id already exists")
	ErrPasskeyNotFound           = NotFound("passkey.not_found", "passkey")
	ErrPasskeyExists             = NewError(KindConflict, "passkey.exists", "a passkey with this credential id already exists")
	ErrPasskeyCounterRegressed   = NewError(KindConflict, "passkey.counter_regressed", "the authenticator's counter did not advance")
	ErrWebAuthnChallengeNotFound = NotFound("webauthn.challenge_not_found", "challenge")
	ErrWebAuthnChallengeExists   = NewError(KindConflict, "webauthn.challenge_exists", "a challenge with this id already exists")
)
