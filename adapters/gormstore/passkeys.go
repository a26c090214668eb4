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
	_ ports.PasskeyRepository           = (*PasskeyRepository)(nil)
	_ ports.WebAuthnChallengeRepository = (*WebAuthnChallengeRepository)(nil)
)

// PasskeyRepository stores WebAuthn credentials in the passkeys table.
type PasskeyRepository struct{ db *gorm.DB }

// NewPasskeyRepository returns a PasskeyRepository on db.
func NewPasskeyRepository(db *gorm.DB) *PasskeyRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &PasskeyRepository{db: db}
}

// WebAuthnChallengeRepository stores WebAuthn challenges in the
// webauthn_challenges table.
type WebAuthnChallengeRepository struct{ db *gorm.DB }

// NewWebAuthnChallengeRepository returns a WebAuthnChallengeRepository on db.
func NewWebAuthnChallengeRepository(db *gorm.DB) *WebAuthnChallengeRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &WebAuthnChallengeRepository{db: db}
}

type passkeyRow struct {
	ID              []byte     `gorm:"column:id;primaryKey"`
	UserID          string     `gorm:"column:user_id;not null;index:passkeys_user_id_created_at_idx,priority:1"`
	Name            string     `gorm:"column:name;not null"`
	PublicKey       []byte     `gorm:"column:public_key;not null"`
	SignCount       int64      `gorm:"column:sign_count;not null"` // a uint32; bigint holds every value
	AAGUID          []byte     `gorm:"column:aaguid"`
	Transports      stringList `gorm:"column:transports;not null"`
	BackupEligible  bool       `gorm:"column:backup_eligible;not null"`
	BackedUp        bool       `gorm:"column:backed_up;not null"`
	AttestationType string     `gorm:"column:attestation_type;not null"`
	CreatedAt       time.Time  `gorm:"column:created_at;not null;autoCreateTime:false;index:passkeys_user_id_created_at_idx,priority:2"`
	LastUsedAt      *time.Time `gorm:"column:last_used_at"`
}

func (passkeyRow) TableName() string { return "passkeys" }

func passkeyFromDomain(c domain.PasskeyCredential) passkeyRow {
	return passkeyRow{ID: c.ID, UserID: string(c.UserID), Name: c.Name, PublicKey: c.PublicKey, SignCount: int64(c.SignCount),
		AAGUID: nonEmpty(c.AAGUID), Transports: stringList(c.Transports), BackupEligible: c.BackupEligible, BackedUp: c.BackedUp,
		AttestationType: c.AttestationType, CreatedAt: domain.Timestamp(c.CreatedAt), LastUsedAt: nullTime(c.LastUsedAt)}
}

func (r passkeyRow) toDomain() domain.PasskeyCredential {
	var transports []string
	if len(r.Transports) > 0 {
		transports = []string(r.Transports)
	}
	signCount := uint32(r.SignCount) // #nosec G115 -- the column's CHECK keeps it within uint32
	return domain.PasskeyCredential{ID: r.ID, UserID: domain.UserID(r.UserID), Name: r.Name, PublicKey: r.PublicKey,
		SignCount: signCount, AAGUID: nonEmpty(r.AAGUID), Transports: transports,
		BackupEligible: r.BackupEligible, BackedUp: r.BackedUp, AttestationType: r.AttestationType,
		CreatedAt: domain.Timestamp(r.CreatedAt), LastUsedAt: fromNullTime(r.LastUsedAt)}
}

type webauthnChallengeRow struct {
	IDHash      []byte     `gorm:"column:id_hash;primaryKey"`
	Challenge   []byte     `gorm:"column:challenge;not null"`
	UserID      *string    `gorm:"column:user_id;index:webauthn_challenges_user_id_idx"` // NULL for a discoverable sign-in
	Purpose     string     `gorm:"column:purpose;not null"`
	ExpiresAt   time.Time  `gorm:"column:expires_at;not null;index:webauthn_challenges_expires_at_idx"`
	UsedAt      *time.Time `gorm:"column:used_at"`
	SessionData []byte     `gorm:"column:session_data"`
}

func (webauthnChallengeRow) TableName() string { return "webauthn_challenges" }

func webauthnChallengeFromDomain(c domain.WebAuthnChallenge) webauthnChallengeRow {
	row := webauthnChallengeRow{IDHash: c.IDHash, Challenge: c.Challenge, Purpose: string(c.Purpose),
		ExpiresAt: domain.Timestamp(c.ExpiresAt), UsedAt: nullTime(c.UsedAt), SessionData: nonEmpty(c.SessionData)}
	if c.UserID != "" {
		u := string(c.UserID)
		row.UserID = &u
	}
	return row
}

func (r webauthnChallengeRow) toDomain() domain.WebAuthnChallenge {
	c := domain.WebAuthnChallenge{IDHash: r.IDHash, Challenge: r.Challenge, Purpose: domain.WebAuthnPurpose(r.Purpose),
		ExpiresAt: domain.Timestamp(r.ExpiresAt), UsedAt: fromNullTime(r.UsedAt), SessionData: nonEmpty(r.SessionData)}
	if r.UserID != nil {
		c.UserID = domain.UserID(*r.UserID)
	}
	return c
}

// Create implements ports.PasskeyRepository.
func (r *PasskeyRepository) Create(ctx context.Context, c domain.PasskeyCredential) error {
	row := passkeyFromDomain(c)
	return convertErr("passkeys.create", conn(ctx, r.db).Create(&row).Error, domain.ErrUserNotFound, domain.ErrPasskeyExists)
}

// Get implements ports.PasskeyRepository, by primary key.
func (r *PasskeyRepository) Get(ctx context.Context, id []byte) (domain.PasskeyCredential, error) {
	var row passkeyRow
	if err := conn(ctx, r.db).Where("id = ?", id).Take(&row).Error; err != nil {
		return domain.PasskeyCredential{}, convertErr("passkeys.get", err, domain.ErrPasskeyNotFound, nil)
	}
	return row.toDomain(), nil
}

// ListByUser implements ports.PasskeyRepository. Ties on created_at are
// broken by id, compared byte by byte on both dialects.
func (r *PasskeyRepository) ListByUser(ctx context.Context, user domain.UserID) ([]domain.PasskeyCredential, error) {
	var rows []passkeyRow
	if err := conn(ctx, r.db).Where("user_id = ?", string(user)).Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, convertErr("passkeys.list_by_user", err, nil, nil)
	}
	var out []domain.PasskeyCredential
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}

// Rename implements ports.PasskeyRepository.
func (r *PasskeyRepository) Rename(ctx context.Context, user domain.UserID, id []byte, name string) error {
	res := conn(ctx, r.db).Model(&passkeyRow{}).Where("id = ? AND user_id = ?", id, string(user)).Update("name", name)
	return affectedOne("passkeys.rename", res, domain.ErrPasskeyNotFound)
}

// Delete implements ports.PasskeyRepository.
func (r *PasskeyRepository) Delete(ctx context.Context, user domain.UserID, id []byte) error {
	res := conn(ctx, r.db).Where("id = ? AND user_id = ?", id, string(user)).Delete(&passkeyRow{})
	return affectedOne("passkeys.delete", res, domain.ErrPasskeyNotFound)
}

// affectedOne returns the statement's error, nil when it changed a row, and
// none when it changed nothing.
func affectedOne(op string, res *gorm.DB, none *domain.Error) error {
	if res.Error != nil {
		return convertErr(op, res.Error, nil, nil)
	}
	if res.RowsAffected == 0 {
		return none
	}
	return nil
}

// UpdateSignCount implements ports.PasskeyRepository with one conditional
// UPDATE on the stored counter; only when it changes nothing is the
// credential looked up, to tell a missing one from a refused counter.
func (r *PasskeyRepository) UpdateSignCount(ctx context.Context, id []byte, old, next uint32, at time.Time) error {
	if (old == 0 && next == 0) || next > old {
		res := conn(ctx, r.db).Model(&passkeyRow{}).Where("id = ? AND sign_count = ?", id, int64(old)).
			Updates(map[string]any{"sign_count": int64(next), "last_used_at": domain.Timestamp(at)})
		if res.Error != nil {
			return convertErr("passkeys.update_sign_count", res.Error, nil, nil)
		}
		if res.RowsAffected > 0 {
			return nil
		}
	}
	if _, err := r.Get(ctx, id); err != nil {
		return err
	}
	return domain.ErrPasskeyCounterRegressed
}

// CountByUser implements ports.PasskeyRepository.
func (r *PasskeyRepository) CountByUser(ctx context.Context, user domain.UserID) (int, error) {
	var n int64
	if err := conn(ctx, r.db).Model(&passkeyRow{}).Where("user_id = ?", string(user)).Count(&n).Error; err != nil {
		return 0, convertErr("passkeys.count_by_user", err, nil, nil)
	}
	return int(n), nil
}

// Create implements ports.WebAuthnChallengeRepository.
func (r *WebAuthnChallengeRepository) Create(ctx context.Context, c domain.WebAuthnChallenge) error {
	row := webauthnChallengeFromDomain(c)
	return convertErr("webauthn_challenges.create", conn(ctx, r.db).Create(&row).Error, domain.ErrUserNotFound, domain.ErrWebAuthnChallengeExists)
}

// Consume implements ports.WebAuthnChallengeRepository with one UPDATE …
// RETURNING: of concurrent uses, the database changes the row for one.
func (r *WebAuthnChallengeRepository) Consume(ctx context.Context, idHash []byte, at time.Time) (domain.WebAuthnChallenge, error) {
	at = domain.Timestamp(at)
	var rows []webauthnChallengeRow
	res := conn(ctx, r.db).Model(&rows).Clauses(clause.Returning{}).
		Where("id_hash = ? AND used_at IS NULL AND expires_at > ?", idHash, at).Update("used_at", at)
	if res.Error != nil {
		return domain.WebAuthnChallenge{}, convertErr("webauthn_challenges.consume", res.Error, nil, nil)
	}
	if len(rows) != 1 {
		return domain.WebAuthnChallenge{}, domain.ErrWebAuthnChallengeNotFound
	}
	return rows[0].toDomain(), nil
}

// DeleteExpired implements ports.WebAuthnChallengeRepository.
func (r *WebAuthnChallengeRepository) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	res := conn(ctx, r.db).Where("expires_at < ?", domain.Timestamp(before)).Delete(&webauthnChallengeRow{})
	if res.Error != nil {
		return 0, convertErr("webauthn_challenges.delete_expired", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}
