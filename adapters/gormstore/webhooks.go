package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.WebhookEndpointRepository = (*WebhookEndpointRepository)(nil)

// WebhookEndpointRepository stores webhook endpoints in webhook_endpoints.
// Deleting one deletes its deliveries and their attempts by the foreign
// keys' ON DELETE CASCADE.
type WebhookEndpointRepository struct {
	db *gorm.DB
}

// NewWebhookEndpointRepository returns a WebhookEndpointRepository on db.
func NewWebhookEndpointRepository(db *gorm.DB) *WebhookEndpointRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &WebhookEndpointRepository{db: db}
}

type webhookEndpointRow struct {
	ID                      string     `gorm:"column:id;primaryKey;type:text"`
	URL                     string     `gorm:"column:url;not null"`
	Description             string     `gorm:"column:description;not null"`
	EventTypes              stringList `gorm:"column:event_types;not null"`
	Enabled                 bool       `gorm:"column:enabled;not null"`
	DisabledReason          string     `gorm:"column:disabled_reason;not null"`
	DisabledAt              *time.Time `gorm:"column:disabled_at"`
	SealedSecret            []byte     `gorm:"column:sealed_secret;not null"`
	SealedPreviousSecret    []byte     `gorm:"column:sealed_previous_secret"`
	PreviousSecretExpiresAt *time.Time `gorm:"column:previous_secret_expires_at"`
	LastSuccessAt           *time.Time `gorm:"column:last_success_at"`
	FailingSince            *time.Time `gorm:"column:failing_since"`
	CreatedAt               time.Time  `gorm:"column:created_at;not null;autoCreateTime:false"`
	UpdatedAt               time.Time  `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

func (webhookEndpointRow) TableName() string { return "webhook_endpoints" }

func webhookEndpointFromDomain(e domain.WebhookEndpoint) webhookEndpointRow {
	types := make(stringList, 0, len(e.EventTypes))
	for _, t := range e.EventTypes {
		types = append(types, string(t))
	}
	return webhookEndpointRow{
		ID: string(e.ID), URL: e.URL, Description: e.Description, EventTypes: types, Enabled: e.Enabled,
		DisabledReason: e.DisabledReason, DisabledAt: nullTime(e.DisabledAt),
		SealedSecret: e.SealedSecret, SealedPreviousSecret: nonEmpty(e.SealedPreviousSecret),
		PreviousSecretExpiresAt: nullTime(e.PreviousSecretExpiresAt),
		LastSuccessAt:           nullTime(e.LastSuccessAt), FailingSince: nullTime(e.FailingSince),
		CreatedAt: domain.Timestamp(e.CreatedAt), UpdatedAt: domain.Timestamp(e.UpdatedAt),
	}
}

func (r webhookEndpointRow) toDomain() domain.WebhookEndpoint {
	var types []domain.EventType
	for _, t := range r.EventTypes {
		types = append(types, domain.EventType(t))
	}
	return domain.WebhookEndpoint{
		ID: domain.WebhookEndpointID(r.ID), URL: r.URL, Description: r.Description, EventTypes: types, Enabled: r.Enabled,
		DisabledReason: r.DisabledReason, DisabledAt: fromNullTime(r.DisabledAt),
		SealedSecret: nonEmpty(r.SealedSecret), SealedPreviousSecret: nonEmpty(r.SealedPreviousSecret),
		PreviousSecretExpiresAt: fromNullTime(r.PreviousSecretExpiresAt),
		LastSuccessAt:           fromNullTime(r.LastSuccessAt), FailingSince: fromNullTime(r.FailingSince),
		CreatedAt: domain.Timestamp(r.CreatedAt), UpdatedAt: domain.Timestamp(r.UpdatedAt),
	}
}

// errWebhookExists is a taken endpoint id.
var errWebhookExists = domain.NewError(domain.KindConflict, "webhook.exists", "A webhook endpoint with this id exists")

// Create implements ports.WebhookEndpointRepository.
func (r *WebhookEndpointRepository) Create(ctx context.Context, e domain.WebhookEndpoint) error {
	row := webhookEndpointFromDomain(e)
	return convertErr("webhook_endpoints.create", conn(ctx, r.db).Create(&row).Error, nil, errWebhookExists)
}

// Get implements ports.WebhookEndpointRepository, by primary key.
func (r *WebhookEndpointRepository) Get(ctx context.Context, id domain.WebhookEndpointID) (domain.WebhookEndpoint, error) {
	var row webhookEndpointRow
	if err := conn(ctx, r.db).Where("id = ?", string(id)).Take(&row).Error; err != nil {
		return domain.WebhookEndpoint{}, convertErr("webhook_endpoints.get", err, domain.ErrWebhookNotFound, nil)
	}
	return row.toDomain(), nil
}

// List implements ports.WebhookEndpointRepository.
func (r *WebhookEndpointRepository) List(ctx context.Context) ([]domain.WebhookEndpoint, error) {
	var rows []webhookEndpointRow
	if err := conn(ctx, r.db).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, convertErr("webhook_endpoints.list", err, nil, nil)
	}
	out := make([]domain.WebhookEndpoint, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}

// Update implements ports.WebhookEndpointRepository: the row is read with
// FOR UPDATE on PostgreSQL; on SQLite the immediate transaction already
// holds the write lock. The id and creation time cannot change.
func (r *WebhookEndpointRepository) Update(ctx context.Context, id domain.WebhookEndpointID, fn func(e *domain.WebhookEndpoint) error) error {
	var fnErr error
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		q := tx.Where("id = ?", string(id))
		if DialectOf(r.db) == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		var row webhookEndpointRow
		if err := q.Take(&row).Error; err != nil {
			return convertErr("webhook_endpoints.update", err, domain.ErrWebhookNotFound, nil)
		}
		e := row.toDomain()
		if fnErr = fn(&e); fnErr != nil {
			return fnErr
		}
		e.ID, e.CreatedAt = id, row.CreatedAt
		next := webhookEndpointFromDomain(e)
		return tx.Model(&webhookEndpointRow{}).Where("id = ?", string(id)).Select("*").Updates(&next).Error
	})
	if fnErr != nil {
		return fnErr
	}
	return convertErr("webhook_endpoints.update", err, nil, nil)
}

// Delete implements ports.WebhookEndpointRepository; the foreign keys
// delete its deliveries and attempts.
func (r *WebhookEndpointRepository) Delete(ctx context.Context, id domain.WebhookEndpointID) error {
	res := conn(ctx, r.db).Where("id = ?", string(id)).Delete(&webhookEndpointRow{})
	return affectedOne("webhook_endpoints.delete", res, domain.ErrWebhookNotFound)
}
