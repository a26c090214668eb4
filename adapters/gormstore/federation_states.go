package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.FederationStateRepository = (*FederationStateRepository)(nil)

// FederationStateRepository stores the sign-ins in flight at upstream
// providers in the federation_states table. Deleting the provider or the
// linking user deletes them by the foreign keys' ON DELETE CASCADE.
type FederationStateRepository struct{ db *gorm.DB }

// NewFederationStateRepository returns a FederationStateRepository on db.
func NewFederationStateRepository(db *gorm.DB) *FederationStateRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &FederationStateRepository{db: db}
}

type federationStateRow struct {
	IDHash        []byte `gorm:"column:id_hash;primaryKey"`
	ProviderID    string `gorm:"column:provider_id;not null;index:federation_states_provider_id_idx"`
	SealedSecrets []byte `gorm:"column:sealed_secrets;not null"`
	CallbackURL   string `gorm:"column:callback_url;not null"`
	ErrorURL      string `gorm:"column:error_url;not null"`
	NewUserURL    string `gorm:"column:new_user_url;not null"`
	// LinkUserID and LinkSessionID are NULL unless the state is a link.
	LinkUserID    *string    `gorm:"column:link_user_id;index:federation_states_link_user_id_idx"`
	LinkSessionID *string    `gorm:"column:link_session_id"`
	RequestSignUp bool       `gorm:"column:request_sign_up;not null"`
	ExpiresAt     time.Time  `gorm:"column:expires_at;not null;index:federation_states_expires_at_idx"`
	UsedAt        *time.Time `gorm:"column:used_at"`
}

func (federationStateRow) TableName() string { return "federation_states" }

func federationStateFromDomain(s domain.FederationState) federationStateRow {
	return federationStateRow{IDHash: s.IDHash, ProviderID: string(s.ProviderID), SealedSecrets: s.SealedSecrets,
		CallbackURL: s.CallbackURL, ErrorURL: s.ErrorURL, NewUserURL: s.NewUserURL,
		LinkUserID: nullIfEmpty(string(s.LinkUserID)), LinkSessionID: nullIfEmpty(string(s.LinkSessionID)),
		RequestSignUp: s.RequestSignUp, ExpiresAt: domain.Timestamp(s.ExpiresAt), UsedAt: nullTime(s.UsedAt)}
}

func (r federationStateRow) toDomain() domain.FederationState {
	return domain.FederationState{IDHash: r.IDHash, ProviderID: domain.IdentityProviderID(r.ProviderID),
		SealedSecrets: nonEmpty(r.SealedSecrets), CallbackURL: r.CallbackURL, ErrorURL: r.ErrorURL, NewUserURL: r.NewUserURL,
		LinkUserID: domain.UserID(emptyIfNull(r.LinkUserID)), LinkSessionID: domain.SessionID(emptyIfNull(r.LinkSessionID)),
		RequestSignUp: r.RequestSignUp, ExpiresAt: domain.Timestamp(r.ExpiresAt), UsedAt: fromNullTime(r.UsedAt)}
}

// Create implements ports.FederationStateRepository. A foreign-key
// violation is told apart by looking the linking user up.
func (r *FederationStateRepository) Create(ctx context.Context, s domain.FederationState) error {
	db := conn(ctx, r.db)
	row := federationStateFromDomain(s)
	err := db.Create(&row).Error
	if err != nil && isForeignKeyViolation(err) {
		return missingReference(db, "federation_states.create", s.LinkUserID, domain.ErrIdentityProviderNotFound)
	}
	return convertErr("federation_states.create", err, nil, domain.ErrFederationStateExists)
}

// Consume implements ports.FederationStateRepository with one UPDATE …
// RETURNING: of concurrent uses, the database changes the row for one
// (PostgreSQL re-checks used_at after the winner's commit; SQLite runs
// writes one at a time), and only that one gets it back.
func (r *FederationStateRepository) Consume(ctx context.Context, idHash []byte, at time.Time) (domain.FederationState, error) {
	at = domain.Timestamp(at)
	var rows []federationStateRow
	res := conn(ctx, r.db).Model(&rows).Clauses(clause.Returning{}).
		Where("id_hash = ? AND used_at IS NULL AND expires_at > ?", idHash, at).Update("used_at", at)
	if res.Error != nil {
		return domain.FederationState{}, convertErr("federation_states.consume", res.Error, nil, nil)
	}
	if len(rows) != 1 {
		return domain.FederationState{}, domain.ErrFederationStateNotFound
	}
	return rows[0].toDomain(), nil
}

// DeleteExpired implements ports.FederationStateRepository, through
// federation_states_expires_at_idx.
func (r *FederationStateRepository) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	res := conn(ctx, r.db).Where("expires_at < ?", domain.Timestamp(before)).Delete(&federationStateRow{})
	if res.Error != nil {
		return 0, convertErr("federation_states.delete_expired", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}
