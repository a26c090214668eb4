package memory

import (
	"context"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var (
	_ ports.TwoFactorRepository    = (*TwoFactorRepository)(nil)
	_ ports.MFAChallengeRepository = (*MFAChallengeRepository)(nil)
)

// TwoFactorRepository keeps TOTP factors and backup codes in the shared DB.
// The single lock makes its compare-and-set methods atomic, as the SQL
// stores' conditional UPDATEs are.
type TwoFactorRepository struct{ db *DB }

// NewTwoFactorRepository returns a TwoFactorRepository on db.
func NewTwoFactorRepository(db *DB) *TwoFactorRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &TwoFactorRepository{db: db}
}

// MFAChallengeRepository keeps second-factor challenges in the shared DB.
type MFAChallengeRepository struct{ db *DB }

// NewMFAChallengeRepository returns an MFAChallengeRepository on db.
func NewMFAChallengeRepository(db *DB) *MFAChallengeRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &MFAChallengeRepository{db: db}
}

// cloneBytes copies b; empty comes back nil, as the SQL stores read NULL.
func cloneBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return slices.Clone(b)
}

func storedTOTP(f domain.TOTPFactor) domain.TOTPFactor {
	f.SealedSecret = cloneBytes(f.SealedSecret)
	f.CreatedAt = timestampOrZero(f.CreatedAt)
	f.VerifiedAt = timestampOrZero(f.VerifiedAt)
	return f
}

func storedMFAChallenge(c domain.MFAChallenge) domain.MFAChallenge {
	c.IDHash = cloneBytes(c.IDHash)
	c.OTPHash = cloneBytes(c.OTPHash)
	c.ExpiresAt = timestampOrZero(c.ExpiresAt)
	c.ConsumedAt = timestampOrZero(c.ConsumedAt)
	c.OTPExpiresAt = timestampOrZero(c.OTPExpiresAt)
	return c
}

// deleteFactorsOf removes every factor and challenge of user, as the foreign
// keys' ON DELETE CASCADE does. The caller holds the write lock.
func (db *DB) deleteFactorsOf(user domain.UserID) {
	unset(db, db.totpFactors, user)
	unset(db, db.backupCodes, user)
	for k, c := range db.mfaChallenges {
		if c.UserID == user {
			unset(db, db.mfaChallenges, k)
		}
	}
	for k, c := range db.passkeys {
		if c.UserID == user {
			unset(db, db.passkeys, k)
		}
	}
	for k, c := range db.webauthnChallenges {
		if c.UserID == user {
			unset(db, db.webauthnChallenges, k)
		}
	}
}

// SaveTOTP implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) SaveTOTP(ctx context.Context, f domain.TOTPFactor) error {
	defer r.db.unlock(r.db.lock(ctx))
	if !r.db.hasUser(f.UserID) {
		return domain.ErrUserNotFound
	}
	if old, ok := r.db.totpFactors[f.UserID]; ok && old.Verified {
		return domain.ErrTOTPExists
	}
	f.Verified, f.LastUsedStep, f.VerifiedAt = false, 0, time.Time{}
	set(r.db, r.db.totpFactors, f.UserID, storedTOTP(f))
	return nil
}

// GetTOTP implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) GetTOTP(ctx context.Context, user domain.UserID) (domain.TOTPFactor, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	f, ok := r.db.totpFactors[user]
	if !ok {
		return domain.TOTPFactor{}, domain.ErrTOTPNotFound
	}
	return storedTOTP(f), nil
}

// VerifyTOTP implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) VerifyTOTP(ctx context.Context, user domain.UserID, step int64, at time.Time) error {
	defer r.db.unlock(r.db.lock(ctx))
	f, ok := r.db.totpFactors[user]
	switch {
	case !ok:
		return domain.ErrTOTPNotFound
	case step <= f.LastUsedStep:
		return domain.ErrTOTPStepReplayed
	}
	if !f.Verified {
		f.Verified, f.VerifiedAt = true, domain.Timestamp(at)
	}
	f.LastUsedStep = step
	set(r.db, r.db.totpFactors, user, f)
	return nil
}

// UseTOTPStep implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) UseTOTPStep(ctx context.Context, user domain.UserID, step int64) error {
	defer r.db.unlock(r.db.lock(ctx))
	f, ok := r.db.totpFactors[user]
	switch {
	case !ok || !f.Verified:
		return domain.ErrTOTPNotFound
	case step <= f.LastUsedStep:
		return domain.ErrTOTPStepReplayed
	}
	f.LastUsedStep = step
	set(r.db, r.db.totpFactors, user, f)
	return nil
}

// DeleteTOTP implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) DeleteTOTP(ctx context.Context, user domain.UserID) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.totpFactors[user]; !ok {
		return domain.ErrTOTPNotFound
	}
	unset(r.db, r.db.totpFactors, user)
	return nil
}

// ReplaceBackupCodes implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) ReplaceBackupCodes(ctx context.Context, user domain.UserID, hashes [][]byte, at time.Time) error {
	defer r.db.unlock(r.db.lock(ctx))
	if !r.db.hasUser(user) {
		return domain.ErrUserNotFound
	}
	codes := make(map[string]domain.BackupCode, len(hashes))
	for _, h := range hashes {
		codes[string(h)] = domain.BackupCode{UserID: user, CodeHash: cloneBytes(h), CreatedAt: domain.Timestamp(at)}
	}
	set(r.db, r.db.backupCodes, user, codes)
	return nil
}

// UseBackupCode implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) UseBackupCode(ctx context.Context, user domain.UserID, hash []byte, at time.Time) error {
	defer r.db.unlock(r.db.lock(ctx))
	c, ok := r.db.backupCodes[user][string(hash)]
	if !ok || !c.UsedAt.IsZero() {
		return domain.ErrBackupCodeNotFound
	}
	c.UsedAt = domain.Timestamp(at)
	set(r.db, r.db.backupCodes[user], string(hash), c)
	return nil
}

// CountUnusedBackupCodes implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) CountUnusedBackupCodes(ctx context.Context, user domain.UserID) (int, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	n := 0
	for _, c := range r.db.backupCodes[user] {
		if c.UsedAt.IsZero() {
			n++
		}
	}
	return n, nil
}

// DeleteAll implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) DeleteAll(ctx context.Context, user domain.UserID) error {
	defer r.db.unlock(r.db.lock(ctx))
	r.db.deleteFactorsOf(user)
	return nil
}

// Create implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) Create(ctx context.Context, c domain.MFAChallenge) error {
	defer r.db.unlock(r.db.lock(ctx))
	if !r.db.hasUser(c.UserID) {
		return domain.ErrUserNotFound
	}
	if _, ok := r.db.mfaChallenges[string(c.IDHash)]; ok {
		return domain.ErrMFAChallengeExists
	}
	set(r.db, r.db.mfaChallenges, string(c.IDHash), storedMFAChallenge(c))
	return nil
}

// live returns the challenge live at now. The caller holds the lock.
func (r *MFAChallengeRepository) live(idHash []byte, now time.Time) (domain.MFAChallenge, error) {
	c, ok := r.db.mfaChallenges[string(idHash)]
	if !ok || !c.LiveAt(domain.Timestamp(now)) {
		return domain.MFAChallenge{}, domain.ErrMFAChallengeNotFound
	}
	return c, nil
}

// Get implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) Get(ctx context.Context, idHash []byte, now time.Time) (domain.MFAChallenge, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	c, err := r.live(idHash, now)
	if err != nil {
		return c, err
	}
	return storedMFAChallenge(c), nil
}

// RecordFailure implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) RecordFailure(ctx context.Context, idHash []byte, now time.Time) (int, error) {
	defer r.db.unlock(r.db.lock(ctx))
	c, err := r.live(idHash, now)
	if err != nil {
		return 0, err
	}
	c.Attempts++
	if c.Attempts >= c.MaxAttempts {
		c.ConsumedAt = domain.Timestamp(now)
	}
	set(r.db, r.db.mfaChallenges, string(idHash), c)
	return c.Attempts, nil
}

// SetOTP implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) SetOTP(ctx context.Context, idHash, otpHash []byte, expiresAt, now time.Time) error {
	defer r.db.unlock(r.db.lock(ctx))
	c, err := r.live(idHash, now)
	if err != nil {
		return err
	}
	c.OTPHash, c.OTPExpiresAt = cloneBytes(otpHash), timestampOrZero(expiresAt)
	set(r.db, r.db.mfaChallenges, string(idHash), c)
	return nil
}

// Consume implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) Consume(ctx context.Context, idHash []byte, at time.Time) (domain.MFAChallenge, error) {
	defer r.db.unlock(r.db.lock(ctx))
	c, err := r.live(idHash, at)
	if err != nil {
		return c, err
	}
	c.ConsumedAt = domain.Timestamp(at)
	set(r.db, r.db.mfaChallenges, string(idHash), c)
	return storedMFAChallenge(c), nil
}

// DeleteExpired implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	defer r.db.unlock(r.db.lock(ctx))
	n := 0
	for k, c := range r.db.mfaChallenges {
		if c.ExpiresAt.Before(domain.Timestamp(before)) {
			unset(r.db, r.db.mfaChallenges, k)
			n++
		}
	}
	return n, nil
}
