package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// The multi-factor stores. Implementations are safe for concurrent use and
// return copies. Deleting a user deletes their TOTP factor, backup codes,
// second-factor challenges, passkeys and WebAuthn challenges. Rows naming a
// missing user are domain.ErrUserNotFound.

// TwoFactorRepository stores each user's TOTP factor and backup codes.
type TwoFactorRepository interface {
	// SaveTOTP stores f, unverified and with no step used, as its user's
	// factor, replacing an unverified one. A verified factor is
	// domain.ErrTOTPExists: it goes only through DeleteTOTP or DeleteAll.
	SaveTOTP(ctx context.Context, f domain.TOTPFactor) error
	// GetTOTP returns user's factor, or domain.ErrTOTPNotFound.
	GetTOTP(ctx context.Context, user domain.UserID) (domain.TOTPFactor, error)
	// VerifyTOTP marks user's factor verified at at (keeping the first
	// verification time) and records step as used, atomically and only if
	// step is later than the last step used, else domain.ErrTOTPStepReplayed.
	VerifyTOTP(ctx context.Context, user domain.UserID, step int64, at time.Time) error
	// UseTOTPStep records step as used by user's verified factor, atomically
	// and only if step is later than the last step used: of two uses of one
	// code, one wins and the other is domain.ErrTOTPStepReplayed. A missing
	// or unverified factor is domain.ErrTOTPNotFound.
	UseTOTPStep(ctx context.Context, user domain.UserID, step int64) error
	// DeleteTOTP removes user's factor, or returns domain.ErrTOTPNotFound.
	DeleteTOTP(ctx context.Context, user domain.UserID) error
	// ReplaceBackupCodes replaces all of user's backup codes with unused
	// codes of the given hashes, created at at, atomically.
	ReplaceBackupCodes(ctx context.Context, user domain.UserID, hashes [][]byte, at time.Time) error
	// UseBackupCode marks user's unused code of hash used at at, atomically:
	// of two uses of one code, one wins. An unknown or used code (or one of
	// another user) is domain.ErrBackupCodeNotFound.
	UseBackupCode(ctx context.Context, user domain.UserID, hash []byte, at time.Time) error
	// CountUnusedBackupCodes returns how many of user's codes are unused.
	CountUnusedBackupCodes(ctx context.Context, user domain.UserID) (int, error)
	// DeleteAll removes user's factor, backup codes and passkeys, and their
	// pending challenges, atomically: a reset of every factor. A user with
	// none is not an error.
	DeleteAll(ctx context.Context, user domain.UserID) error
	// GetLockout returns user's second-factor lockout (domain.FactorLockout:
	// the count of a user without a password); none stored is the zero one
	// naming user.
	GetLockout(ctx context.Context, user domain.UserID) (domain.FactorLockout, error)
	// UpdateLockout loads user's lockout (the zero one when none is
	// stored), applies fn and stores the result, atomically: no concurrent
	// update is lost, so every failure counts. If fn returns an error
	// nothing is stored and that error is returned. DeleteAll keeps it.
	UpdateLockout(ctx context.Context, user domain.UserID, fn func(l *domain.FactorLockout) error) error
}

// MFAChallengeRepository stores the pending second-factor challenges of
// password sign-ins, by the hash of their id. To Get, RecordFailure, SetOTP
// and Consume, an unknown, expired or consumed challenge is
// domain.ErrMFAChallengeNotFound.
type MFAChallengeRepository interface {
	// Create stores c. A taken id hash is domain.ErrMFAChallengeExists.
	Create(ctx context.Context, c domain.MFAChallenge) error
	// Get returns the challenge live at now.
	Get(ctx context.Context, idHash []byte, now time.Time) (domain.MFAChallenge, error)
	// RecordFailure counts a wrong answer at now and returns the attempts
	// made, atomically (no concurrent failure is lost); the failure that
	// reaches MaxAttempts consumes the challenge.
	RecordFailure(ctx context.Context, idHash []byte, now time.Time) (int, error)
	// SetOTP stores the hash of a newly e-mailed code, valid until
	// expiresAt, replacing any earlier one, on the challenge live at now.
	SetOTP(ctx context.Context, idHash, otpHash []byte, expiresAt, now time.Time) error
	// Consume marks the challenge live at at consumed and returns it,
	// atomically: of concurrent answers, one wins.
	Consume(ctx context.Context, idHash []byte, at time.Time) (domain.MFAChallenge, error)
	// DeleteExpired removes challenges that expired before before and
	// returns how many.
	DeleteExpired(ctx context.Context, before time.Time) (int, error)
}

// PasskeyRepository stores WebAuthn credentials. A credential of another
// user is domain.ErrPasskeyNotFound to the methods that name a user.
type PasskeyRepository interface {
	// Create stores c. A taken credential id is domain.ErrPasskeyExists.
	Create(ctx context.Context, c domain.PasskeyCredential) error
	// Get returns the credential with id, or domain.ErrPasskeyNotFound.
	Get(ctx context.Context, id []byte) (domain.PasskeyCredential, error)
	// ListByUser returns user's credentials, newest first (created_at, then
	// id).
	ListByUser(ctx context.Context, user domain.UserID) ([]domain.PasskeyCredential, error)
	// Rename sets the name of user's credential id.
	Rename(ctx context.Context, user domain.UserID, id []byte, name string) error
	// Delete removes user's credential id.
	Delete(ctx context.Context, user domain.UserID, id []byte) error
	// UpdateSignCount sets the counter of credential id from old to next and
	// its last use to at, atomically and only if the stored counter is old
	// and, unless both are zero (an authenticator without a counter), next
	// is greater than old. Otherwise it is domain.ErrPasskeyCounterRegressed.
	UpdateSignCount(ctx context.Context, id []byte, old, next uint32, at time.Time) error
	// CountByUser returns how many credentials user has.
	CountByUser(ctx context.Context, user domain.UserID) (int, error)
}

// WebAuthnChallengeRepository stores pending WebAuthn ceremonies, by the hash
// of their id.
type WebAuthnChallengeRepository interface {
	// Create stores c. A taken id hash is domain.ErrWebAuthnChallengeExists.
	Create(ctx context.Context, c domain.WebAuthnChallenge) error
	// Consume marks the unused challenge unexpired at at used and returns
	// it, atomically: of two uses, one wins. A used, expired or unknown
	// challenge is domain.ErrWebAuthnChallengeNotFound.
	Consume(ctx context.Context, idHash []byte, at time.Time) (domain.WebAuthnChallenge, error)
	// DeleteExpired removes challenges that expired before before and
	// returns how many.
	DeleteExpired(ctx context.Context, before time.Time) (int, error)
}
