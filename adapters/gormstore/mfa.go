package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var (
	_ ports.TwoFactorRepository    = (*TwoFactorRepository)(nil)
	_ ports.MFAChallengeRepository = (*MFAChallengeRepository)(nil)
)

// TwoFactorRepository stores TOTP factors and backup codes in the
// totp_factors and backup_codes tables. Every compare-and-set is one
// conditional UPDATE: PostgreSQL re-checks the condition after waiting on
// the row lock a concurrent update holds, and SQLite runs writers one at a
// time, so of two uses of one code exactly one changes the row.
type TwoFactorRepository struct{ db *gorm.DB }

// NewTwoFactorRepository returns a TwoFactorRepository on db.
func NewTwoFactorRepository(db *gorm.DB) *TwoFactorRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &TwoFactorRepository{db: db}
}

// MFAChallengeRepository stores second-factor challenges in the
// mfa_challenges table, with conditional UPDATE … RETURNING for its atomic
// methods.
type MFAChallengeRepository struct{ db *gorm.DB }

// NewMFAChallengeRepository returns an MFAChallengeRepository on db.
func NewMFAChallengeRepository(db *gorm.DB) *MFAChallengeRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &MFAChallengeRepository{db: db}
}

type totpFactorRow struct {
	UserID       string     `gorm:"column:user_id;primaryKey;type:text"`
	SealedSecret []byte     `gorm:"column:sealed_secret;not null"`
	Verified     bool       `gorm:"column:verified;not null"`
	LastUsedStep int64      `gorm:"column:last_used_step;not null"`
	CreatedAt    time.Time  `gorm:"column:created_at;not null;autoCreateTime:false"`
	VerifiedAt   *time.Time `gorm:"column:verified_at"`
}

func (totpFactorRow) TableName() string { return "totp_factors" }

func (r totpFactorRow) toDomain() domain.TOTPFactor {
	return domain.TOTPFactor{UserID: domain.UserID(r.UserID), SealedSecret: nonEmpty(r.SealedSecret), Verified: r.Verified,
		LastUsedStep: r.LastUsedStep, CreatedAt: domain.Timestamp(r.CreatedAt), VerifiedAt: fromNullTime(r.VerifiedAt)}
}

type backupCodeRow struct {
	UserID    string     `gorm:"column:user_id;primaryKey;type:text"`
	CodeHash  []byte     `gorm:"column:code_hash;primaryKey"`
	UsedAt    *time.Time `gorm:"column:used_at"`
	CreatedAt time.Time  `gorm:"column:created_at;not null;autoCreateTime:false"`
}

func (backupCodeRow) TableName() string { return "backup_codes" }

type mfaChallengeRow struct {
	IDHash       []byte     `gorm:"column:id_hash;primaryKey"`
	UserID       string     `gorm:"column:user_id;not null;index:mfa_challenges_user_id_idx"`
	ExpiresAt    time.Time  `gorm:"column:expires_at;not null;index:mfa_challenges_expires_at_idx"`
	Attempts     int        `gorm:"column:attempts;not null"`
	MaxAttempts  int        `gorm:"column:max_attempts;not null"`
	RememberMe   bool       `gorm:"column:remember_me;not null"`
	ConsumedAt   *time.Time `gorm:"column:consumed_at"`
	OTPHash      []byte     `gorm:"column:otp_hash"`
	OTPExpiresAt *time.Time `gorm:"column:otp_expires_at"`
}

func (mfaChallengeRow) TableName() string { return "mfa_challenges" }

func mfaChallengeFromDomain(c domain.MFAChallenge) mfaChallengeRow {
	return mfaChallengeRow{IDHash: c.IDHash, UserID: string(c.UserID), ExpiresAt: domain.Timestamp(c.ExpiresAt),
		Attempts: c.Attempts, MaxAttempts: c.MaxAttempts, RememberMe: c.RememberMe, ConsumedAt: nullTime(c.ConsumedAt),
		OTPHash: nonEmpty(c.OTPHash), OTPExpiresAt: nullTime(c.OTPExpiresAt)}
}

func (r mfaChallengeRow) toDomain() domain.MFAChallenge {
	return domain.MFAChallenge{IDHash: r.IDHash, UserID: domain.UserID(r.UserID), ExpiresAt: domain.Timestamp(r.ExpiresAt),
		Attempts: r.Attempts, MaxAttempts: r.MaxAttempts, RememberMe: r.RememberMe, ConsumedAt: fromNullTime(r.ConsumedAt),
		OTPHash: nonEmpty(r.OTPHash), OTPExpiresAt: fromNullTime(r.OTPExpiresAt)}
}

// nonEmpty maps an empty byte string to nil, which the NULL-able byte
// columns store as NULL and read back as nil.
func nonEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// SaveTOTP implements ports.TwoFactorRepository with one upsert whose update
// is conditional on the stored factor being unverified: a verified factor
// changes no row.
func (r *TwoFactorRepository) SaveTOTP(ctx context.Context, f domain.TOTPFactor) error {
	res := conn(ctx, r.db).Exec(`INSERT INTO totp_factors (user_id, sealed_secret, verified, last_used_step, created_at, verified_at)
VALUES (?, ?, FALSE, 0, ?, NULL)
ON CONFLICT (user_id) DO UPDATE SET sealed_secret = excluded.sealed_secret, last_used_step = 0,
    created_at = excluded.created_at, verified_at = NULL
WHERE totp_factors.verified = FALSE`, string(f.UserID), f.SealedSecret, domain.Timestamp(f.CreatedAt))
	if res.Error != nil {
		return convertErr("totp_factors.save", res.Error, domain.ErrUserNotFound, nil)
	}
	if res.RowsAffected == 0 {
		return domain.ErrTOTPExists
	}
	return nil
}

// GetTOTP implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) GetTOTP(ctx context.Context, user domain.UserID) (domain.TOTPFactor, error) {
	var row totpFactorRow
	if err := conn(ctx, r.db).Where("user_id = ?", string(user)).Take(&row).Error; err != nil {
		return domain.TOTPFactor{}, convertErr("totp_factors.get", err, domain.ErrTOTPNotFound, nil)
	}
	return row.toDomain(), nil
}

// VerifyTOTP implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) VerifyTOTP(ctx context.Context, user domain.UserID, step int64, at time.Time) error {
	res := conn(ctx, r.db).Model(&totpFactorRow{}).
		Where("user_id = ? AND last_used_step < ?", string(user), step).
		Updates(map[string]any{"verified": true, "last_used_step": step,
			"verified_at": gorm.Expr("COALESCE(verified_at, ?)", domain.Timestamp(at))})
	return r.stepResult(ctx, "totp_factors.verify", res, user, false)
}

// UseTOTPStep implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) UseTOTPStep(ctx context.Context, user domain.UserID, step int64) error {
	res := conn(ctx, r.db).Model(&totpFactorRow{}).
		Where("user_id = ? AND verified = ? AND last_used_step < ?", string(user), true, step).
		Update("last_used_step", step)
	return r.stepResult(ctx, "totp_factors.use_step", res, user, true)
}

// stepResult tells, after a step update that changed nothing, a missing (or,
// when verified is required, unverified) factor from a replayed step.
func (r *TwoFactorRepository) stepResult(ctx context.Context, op string, res *gorm.DB, user domain.UserID, verified bool) error {
	if res.Error != nil {
		return convertErr(op, res.Error, nil, nil)
	}
	if res.RowsAffected > 0 {
		return nil
	}
	f, err := r.GetTOTP(ctx, user)
	switch {
	case err != nil:
		return err
	case verified && !f.Verified:
		return domain.ErrTOTPNotFound
	}
	return domain.ErrTOTPStepReplayed
}

// DeleteTOTP implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) DeleteTOTP(ctx context.Context, user domain.UserID) error {
	res := conn(ctx, r.db).Where("user_id = ?", string(user)).Delete(&totpFactorRow{})
	if res.Error != nil {
		return convertErr("totp_factors.delete", res.Error, nil, nil)
	}
	if res.RowsAffected == 0 {
		return domain.ErrTOTPNotFound
	}
	return nil
}

// ReplaceBackupCodes implements ports.TwoFactorRepository in one
// transaction. A repeated hash is stored once.
func (r *TwoFactorRepository) ReplaceBackupCodes(ctx context.Context, user domain.UserID, hashes [][]byte, at time.Time) error {
	seen := map[string]bool{}
	rows := make([]backupCodeRow, 0, len(hashes))
	for _, h := range hashes {
		if !seen[string(h)] {
			seen[string(h)] = true
			rows = append(rows, backupCodeRow{UserID: string(user), CodeHash: h, CreatedAt: domain.Timestamp(at)})
		}
	}
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		if err := tx.Where("user_id = ?", string(user)).Delete(&backupCodeRow{}).Error; err != nil {
			return err
		}
		if len(rows) > 0 {
			return tx.Create(&rows).Error
		}
		// No insert to fail on the foreign key: look the user up.
		var n int64
		if err := tx.Model(&userRow{}).Where("id = ?", string(user)).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return domain.ErrUserNotFound
		}
		return nil
	})
	return convertErr("backup_codes.replace", err, domain.ErrUserNotFound, nil)
}

// UseBackupCode implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) UseBackupCode(ctx context.Context, user domain.UserID, hash []byte, at time.Time) error {
	res := conn(ctx, r.db).Model(&backupCodeRow{}).
		Where("user_id = ? AND code_hash = ? AND used_at IS NULL", string(user), hash).
		Update("used_at", domain.Timestamp(at))
	if res.Error != nil {
		return convertErr("backup_codes.use", res.Error, nil, nil)
	}
	if res.RowsAffected == 0 {
		return domain.ErrBackupCodeNotFound
	}
	return nil
}

// CountUnusedBackupCodes implements ports.TwoFactorRepository.
func (r *TwoFactorRepository) CountUnusedBackupCodes(ctx context.Context, user domain.UserID) (int, error) {
	var n int64
	err := conn(ctx, r.db).Model(&backupCodeRow{}).Where("user_id = ? AND used_at IS NULL", string(user)).Count(&n).Error
	if err != nil {
		return 0, convertErr("backup_codes.count", err, nil, nil)
	}
	return int(n), nil
}

// DeleteAll implements ports.TwoFactorRepository in one transaction.
func (r *TwoFactorRepository) DeleteAll(ctx context.Context, user domain.UserID) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		for _, model := range []any{&totpFactorRow{}, &backupCodeRow{}, &mfaChallengeRow{}, &passkeyRow{}, &webauthnChallengeRow{}} {
			if err := tx.Where("user_id = ?", string(user)).Delete(model).Error; err != nil {
				return err
			}
		}
		return nil
	})
	return convertErr("mfa.delete_all", err, nil, nil)
}

// Create implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) Create(ctx context.Context, c domain.MFAChallenge) error {
	row := mfaChallengeFromDomain(c)
	return convertErr("mfa_challenges.create", conn(ctx, r.db).Create(&row).Error, domain.ErrUserNotFound, domain.ErrMFAChallengeExists)
}

// live selects the challenge idHash if it is live at now. now is normalised
// like the stored times: SQLite compares them as text.
func live(db *gorm.DB, idHash []byte, now time.Time) *gorm.DB {
	return db.Where("id_hash = ? AND consumed_at IS NULL AND expires_at > ?", idHash, domain.Timestamp(now))
}

// Get implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) Get(ctx context.Context, idHash []byte, now time.Time) (domain.MFAChallenge, error) {
	var row mfaChallengeRow
	if err := live(conn(ctx, r.db), idHash, now).Take(&row).Error; err != nil {
		return domain.MFAChallenge{}, convertErr("mfa_challenges.get", err, domain.ErrMFAChallengeNotFound, nil)
	}
	return row.toDomain(), nil
}

// updateLive applies values to the challenge live at now with one UPDATE …
// RETURNING, and returns the updated row.
func (r *MFAChallengeRepository) updateLive(ctx context.Context, op string, idHash []byte, now time.Time, values map[string]any) (mfaChallengeRow, error) {
	var rows []mfaChallengeRow
	res := live(conn(ctx, r.db).Model(&rows).Clauses(clause.Returning{}), idHash, now).Updates(values)
	if res.Error != nil {
		return mfaChallengeRow{}, convertErr(op, res.Error, nil, nil)
	}
	if len(rows) != 1 {
		return mfaChallengeRow{}, domain.ErrMFAChallengeNotFound
	}
	return rows[0], nil
}

// RecordFailure implements ports.MFAChallengeRepository. Both assignments
// read the row's values before the update, so the failure that reaches
// max_attempts is the one that consumes it.
func (r *MFAChallengeRepository) RecordFailure(ctx context.Context, idHash []byte, now time.Time) (int, error) {
	row, err := r.updateLive(ctx, "mfa_challenges.record_failure", idHash, now, map[string]any{
		"attempts":    gorm.Expr("attempts + 1"),
		"consumed_at": gorm.Expr("CASE WHEN attempts + 1 >= max_attempts THEN ? ELSE consumed_at END", domain.Timestamp(now)),
	})
	return row.Attempts, err
}

// SetOTP implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) SetOTP(ctx context.Context, idHash, otpHash []byte, expiresAt, now time.Time) error {
	_, err := r.updateLive(ctx, "mfa_challenges.set_otp", idHash, now, map[string]any{
		"otp_hash": nonEmpty(otpHash), "otp_expires_at": nullTime(expiresAt),
	})
	return err
}

// Consume implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) Consume(ctx context.Context, idHash []byte, at time.Time) (domain.MFAChallenge, error) {
	row, err := r.updateLive(ctx, "mfa_challenges.consume", idHash, at, map[string]any{"consumed_at": domain.Timestamp(at)})
	if err != nil {
		return domain.MFAChallenge{}, err
	}
	return row.toDomain(), nil
}

// DeleteExpired implements ports.MFAChallengeRepository.
func (r *MFAChallengeRepository) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	res := conn(ctx, r.db).Where("expires_at < ?", domain.Timestamp(before)).Delete(&mfaChallengeRow{})
	if res.Error != nil {
		return 0, convertErr("mfa_challenges.delete_expired", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}
