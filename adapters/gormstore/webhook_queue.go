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
	_ ports.WebhookQueue = (*WebhookQueue)(nil)
	_ ports.WebhookLog   = (*WebhookQueue)(nil)
)

// WebhookQueue stores webhook messages in webhook_messages, their
// deliveries in webhook_deliveries and the attempts in webhook_attempts.
// It is both the senders' queue and the log the API reads.
type WebhookQueue struct {
	db *gorm.DB
	// claimSQL takes the due deliveries: FOR UPDATE SKIP LOCKED on
	// PostgreSQL, so concurrent claimers skip each other's rows; SQLite's
	// immediate transaction already serialises writers. idOrder sorts
	// message ids byte by byte, as SQLite and the memory store do.
	claimSQL, idOrder string
}

// NewWebhookQueue returns a WebhookQueue on db.
func NewWebhookQueue(db *gorm.DB) *WebhookQueue {
	if db == nil {
		panic("gormstore: nil db")
	}
	const returning = ` RETURNING endpoint_id, message_id, status, attempts, next_attempt_at, created_at, last_attempt_id`
	q := &WebhookQueue{db: db, idOrder: "d.message_id",
		claimSQL: `UPDATE webhook_deliveries SET next_attempt_at = ?
WHERE (endpoint_id, message_id) IN (SELECT endpoint_id, message_id FROM webhook_deliveries
 WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?)` + returning}
	if DialectOf(db) == DialectPostgres {
		q.idOrder = `d.message_id COLLATE "C"`
		q.claimSQL = `UPDATE webhook_deliveries d SET next_attempt_at = ?
FROM (SELECT endpoint_id, message_id FROM webhook_deliveries
 WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED) c
WHERE d.endpoint_id = c.endpoint_id AND d.message_id = c.message_id
RETURNING d.endpoint_id, d.message_id, d.status, d.attempts, d.next_attempt_at, d.created_at, d.last_attempt_id`
	}
	return q
}

type webhookMessageRow struct {
	ID        string    `gorm:"column:id;primaryKey;type:text"`
	Type      string    `gorm:"column:type;not null"`
	Payload   []byte    `gorm:"column:payload;not null"`
	CreatedAt time.Time `gorm:"column:created_at;not null;autoCreateTime:false;index:webhook_messages_created_at_idx"`
}

func (webhookMessageRow) TableName() string { return "webhook_messages" }

type webhookDeliveryRow struct {
	EndpointID    string     `gorm:"column:endpoint_id;primaryKey;type:text"`
	MessageID     string     `gorm:"column:message_id;primaryKey;type:text"`
	Status        string     `gorm:"column:status;not null"`
	Attempts      int        `gorm:"column:attempts;not null"`
	NextAttemptAt *time.Time `gorm:"column:next_attempt_at"`
	CreatedAt     time.Time  `gorm:"column:created_at;not null;autoCreateTime:false"`
	LastAttemptID *string    `gorm:"column:last_attempt_id"`
}

func (webhookDeliveryRow) TableName() string { return "webhook_deliveries" }

type webhookAttemptRow struct {
	ID          string    `gorm:"column:id;primaryKey;type:text"`
	EndpointID  string    `gorm:"column:endpoint_id;not null"`
	MessageID   string    `gorm:"column:message_id;not null"`
	AttemptedAt time.Time `gorm:"column:attempted_at;not null"`
	StatusCode  int       `gorm:"column:status_code;not null"`
	Error       string    `gorm:"column:error;not null"`
	LatencyMS   int64     `gorm:"column:latency_ms;not null"`
	Response    string    `gorm:"column:response;not null"`
}

func (webhookAttemptRow) TableName() string { return "webhook_attempts" }

func webhookAttemptFromDomain(a domain.WebhookAttempt) webhookAttemptRow {
	return webhookAttemptRow{ID: a.ID, EndpointID: string(a.EndpointID), MessageID: a.MessageID, AttemptedAt: domain.Timestamp(a.At),
		StatusCode: a.StatusCode, Error: a.Error, LatencyMS: max(a.Latency.Milliseconds(), 0), Response: a.Response}
}

func (r webhookAttemptRow) toDomain() domain.WebhookAttempt {
	return domain.WebhookAttempt{ID: r.ID, EndpointID: domain.WebhookEndpointID(r.EndpointID), MessageID: r.MessageID,
		At: domain.Timestamp(r.AttemptedAt), StatusCode: r.StatusCode, Error: r.Error,
		Latency: time.Duration(r.LatencyMS) * time.Millisecond, Response: r.Response}
}

func (r webhookDeliveryRow) toDomain(t domain.EventType) domain.WebhookDelivery {
	return domain.WebhookDelivery{EndpointID: domain.WebhookEndpointID(r.EndpointID), MessageID: r.MessageID, EventType: t,
		Status: domain.WebhookDeliveryStatus(r.Status), Attempts: r.Attempts, NextAttemptAt: fromNullTime(r.NextAttemptAt),
		CreatedAt: domain.Timestamp(r.CreatedAt)}
}

// Enqueue implements ports.WebhookQueue: the message and its deliveries,
// each inserted unless it exists, in one transaction.
func (q *WebhookQueue) Enqueue(ctx context.Context, m domain.WebhookMessage, endpoints []domain.WebhookEndpointID, now time.Time) error {
	msg := webhookMessageRow{ID: m.ID, Type: string(m.Type), Payload: m.Payload, CreatedAt: domain.Timestamp(m.CreatedAt)}
	due := domain.Timestamp(now)
	rows := make([]webhookDeliveryRow, 0, len(endpoints))
	for _, e := range endpoints {
		rows = append(rows, webhookDeliveryRow{EndpointID: string(e), MessageID: m.ID, Status: string(domain.WebhookPending),
			NextAttemptAt: &due, CreatedAt: msg.CreatedAt})
	}
	err := transaction(ctx, q.db, func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&msg).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		return tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&rows).Error
	})
	return convertErr("webhook_messages.enqueue", err, nil, nil)
}

// Claim implements ports.WebhookQueue through webhook_deliveries_due_idx,
// which holds only pending deliveries, then reads their messages by
// primary key, in one transaction.
func (q *WebhookQueue) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]ports.ClaimedDelivery, error) {
	if limit < 1 {
		return nil, nil
	}
	var out []ports.ClaimedDelivery
	err := transaction(ctx, q.db, func(tx *gorm.DB) error {
		var rows []webhookDeliveryRow
		if err := tx.Raw(q.claimSQL, domain.Timestamp(now.Add(lease)), domain.Timestamp(now), limit).Scan(&rows).Error; err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		ids := make([]string, 0, len(rows))
		for _, r := range rows {
			ids = append(ids, r.MessageID)
		}
		var msgs []webhookMessageRow
		if err := tx.Where("id IN ?", ids).Find(&msgs).Error; err != nil {
			return err
		}
		byID := make(map[string]webhookMessageRow, len(msgs))
		for _, m := range msgs {
			byID[m.ID] = m
		}
		out = make([]ports.ClaimedDelivery, 0, len(rows))
		for _, r := range rows {
			m := byID[r.MessageID]
			out = append(out, ports.ClaimedDelivery{Delivery: r.toDomain(domain.EventType(m.Type)),
				Message: domain.WebhookMessage{ID: m.ID, Type: domain.EventType(m.Type), Payload: m.Payload, CreatedAt: domain.Timestamp(m.CreatedAt)}})
		}
		return nil
	})
	return out, convertErr("webhook_deliveries.claim", err, nil, nil)
}

// Record implements ports.WebhookQueue: the attempt and the delivery's new
// state in one transaction, the state only while the delivery is as its
// claim left it (pending, due at claimed). An attempt of a delivery
// deleted meanwhile breaks the foreign key, which is
// ErrWebhookMessageNotFound.
func (q *WebhookQueue) Record(ctx context.Context, a domain.WebhookAttempt, claimed time.Time, status domain.WebhookDeliveryStatus, next time.Time) error {
	row := webhookAttemptFromDomain(a)
	err := transaction(ctx, q.db, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return convertErr("webhook_attempts.create", err, domain.ErrWebhookMessageNotFound, nil)
		}
		var nextAt *time.Time
		if status == domain.WebhookPending {
			nextAt = nullTime(next)
		}
		res := tx.Model(&webhookDeliveryRow{}).
			Where("endpoint_id = ? AND message_id = ? AND status = ? AND next_attempt_at = ?", string(a.EndpointID), a.MessageID,
				string(domain.WebhookPending), domain.Timestamp(claimed)).
			Updates(map[string]any{"status": string(status), "attempts": gorm.Expr("attempts + 1"), "next_attempt_at": nextAt, "last_attempt_id": a.ID})
		if res.Error != nil || res.RowsAffected == 1 {
			return res.Error
		}
		// Changed since the claim: the attempt is its last, and nothing more.
		res = tx.Model(&webhookDeliveryRow{}).Where("endpoint_id = ? AND message_id = ?", string(a.EndpointID), a.MessageID).
			Update("last_attempt_id", a.ID)
		return affectedOne("webhook_deliveries.record", res, domain.ErrWebhookMessageNotFound)
	})
	return convertErr("webhook_deliveries.record", err, nil, nil)
}

// Replay implements ports.WebhookQueue, by primary key.
func (q *WebhookQueue) Replay(ctx context.Context, endpoint domain.WebhookEndpointID, message string, now time.Time) error {
	res := conn(ctx, q.db).Model(&webhookDeliveryRow{}).Where("endpoint_id = ? AND message_id = ?", string(endpoint), message).
		Updates(map[string]any{"status": string(domain.WebhookPending), "attempts": 0, "next_attempt_at": domain.Timestamp(now)})
	return affectedOne("webhook_deliveries.replay", res, domain.ErrWebhookMessageNotFound)
}

// ReplaySince implements ports.WebhookQueue with one INSERT … SELECT over
// webhook_messages_created_at_idx whose conflicts (deliveries the endpoint
// has) are made pending again.
func (q *WebhookQueue) ReplaySince(ctx context.Context, endpoint domain.WebhookEndpointID, since time.Time, types []domain.EventType, now time.Time) (int, error) {
	sql := `INSERT INTO webhook_deliveries (endpoint_id, message_id, status, attempts, next_attempt_at, created_at)
SELECT ?, m.id, 'pending', 0, ?, m.created_at FROM webhook_messages m WHERE m.created_at >= ?`
	args := []any{string(endpoint), domain.Timestamp(now), domain.Timestamp(since)}
	if len(types) > 0 {
		names := make([]string, 0, len(types))
		for _, t := range types {
			names = append(names, string(t))
		}
		sql += ` AND m.type IN ?`
		args = append(args, names)
	}
	sql += ` ON CONFLICT (endpoint_id, message_id) DO UPDATE SET status = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at`
	res := conn(ctx, q.db).Exec(sql, args...)
	if res.Error != nil {
		return 0, convertErr("webhook_deliveries.replay_since", res.Error, domain.ErrWebhookNotFound, nil)
	}
	return int(res.RowsAffected), nil
}

// Purge implements ports.WebhookQueue through
// webhook_messages_created_at_idx; the foreign keys delete the deliveries
// and attempts.
func (q *WebhookQueue) Purge(ctx context.Context, before time.Time) (int, error) {
	res := conn(ctx, q.db).Where("created_at < ?", domain.Timestamp(before)).Delete(&webhookMessageRow{})
	if res.Error != nil {
		return 0, convertErr("webhook_messages.purge", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}

// webhookDeliveryListRow is one row of an endpoint's deliveries: the
// delivery, its message's type and its latest attempt (NULLs before the
// first).
type webhookDeliveryListRow struct {
	Delivery webhookDeliveryRow `gorm:"embedded"`
	Type     string             `gorm:"column:type"`
	AID      *string            `gorm:"column:a_id"`
	AAt      *time.Time         `gorm:"column:a_attempted_at"`
	ACode    *int               `gorm:"column:a_status_code"`
	AError   *string            `gorm:"column:a_error"`
	ALatency *int64             `gorm:"column:a_latency_ms"`
	AResp    *string            `gorm:"column:a_response"`
}

// ListDeliveries implements ports.WebhookLog through
// webhook_deliveries_endpoint_created_idx (or its status twin), with the
// message and the latest attempt by primary key.
func (q *WebhookQueue) ListDeliveries(ctx context.Context, f ports.WebhookDeliveryQuery) ([]domain.WebhookDelivery, *domain.Position, error) {
	db := conn(ctx, q.db).Table("webhook_deliveries d").
		Select(`d.*, m.type AS type, a.id AS a_id, a.attempted_at AS a_attempted_at, a.status_code AS a_status_code,
 a.error AS a_error, a.latency_ms AS a_latency_ms, a.response AS a_response`).
		Joins("JOIN webhook_messages m ON m.id = d.message_id").
		Joins("LEFT JOIN webhook_attempts a ON a.id = d.last_attempt_id").
		Where("d.endpoint_id = ?", string(f.Endpoint))
	if f.Status != "" {
		db = db.Where("d.status = ?", string(f.Status))
	}
	if f.After != nil {
		db = db.Where("(d.created_at, "+q.idOrder+") < (?, ?)", domain.Timestamp(f.After.At), f.After.ID)
	}
	var rows []webhookDeliveryListRow
	if err := db.Order("d.created_at DESC, " + q.idOrder + " DESC").Limit(f.Limit + 1).Scan(&rows).Error; err != nil {
		return nil, nil, convertErr("webhook_deliveries.list", err, nil, nil)
	}
	var next *domain.Position
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		last := rows[len(rows)-1].Delivery
		next = &domain.Position{At: domain.Timestamp(last.CreatedAt), ID: last.MessageID}
	}
	out := make([]domain.WebhookDelivery, 0, len(rows))
	for _, r := range rows {
		d := r.Delivery.toDomain(domain.EventType(r.Type))
		if r.AID != nil {
			a := webhookAttemptRow{ID: *r.AID, EndpointID: r.Delivery.EndpointID, MessageID: r.Delivery.MessageID, AttemptedAt: fromNullTime(r.AAt),
				StatusCode: deref(r.ACode), Error: deref(r.AError), LatencyMS: deref(r.ALatency), Response: deref(r.AResp)}.toDomain()
			d.LastAttempt = &a
		}
		out = append(out, d)
	}
	return out, next, nil
}

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// ListAttempts implements ports.WebhookLog through
// webhook_attempts_delivery_idx, after finding the delivery by primary key.
func (q *WebhookQueue) ListAttempts(ctx context.Context, endpoint domain.WebhookEndpointID, message string) ([]domain.WebhookAttempt, error) {
	db := conn(ctx, q.db)
	var n int64
	if err := db.Model(&webhookDeliveryRow{}).Where("endpoint_id = ? AND message_id = ?", string(endpoint), message).Count(&n).Error; err != nil {
		return nil, convertErr("webhook_attempts.list", err, nil, nil)
	}
	if n == 0 {
		return nil, domain.ErrWebhookMessageNotFound
	}
	var rows []webhookAttemptRow
	if err := db.Where("endpoint_id = ? AND message_id = ?", string(endpoint), message).Order("attempted_at, id").Find(&rows).Error; err != nil {
		return nil, convertErr("webhook_attempts.list", err, nil, nil)
	}
	out := make([]domain.WebhookAttempt, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.toDomain())
	}
	return out, nil
}
