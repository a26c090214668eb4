package gormstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Outbox = (*Outbox)(nil)

// Outbox keeps the outbox in the outbox_messages table.
type Outbox struct {
	db       *gorm.DB
	claimSQL string // PostgreSQL's one-statement claim; "" on SQLite

	// Signals wakes this process's relays after each append.
	ports.OutboxSignals
}

// NewOutbox returns an Outbox on db.
func NewOutbox(db *gorm.DB) *Outbox {
	if db == nil {
		panic("gormstore: nil db")
	}
	o := &Outbox{db: db}
	if DialectOf(db) == DialectPostgres {
		o.claimSQL = outboxClaimSQL
	}
	return o
}

// outboxClaimSQL claims on PostgreSQL in one statement: the due messages are
// read through outbox_messages_topic_available_at_idx in claim order and
// locked, skipping those another claim holds, then moved to the end of the
// lease. A row another claim moved meanwhile is checked again against the
// WHERE and dropped, so two claims never return the same message. Each row
// comes back with the time it was due, by which the claim is ordered.
const outboxClaimSQL = `WITH due AS (
	SELECT id, available_at FROM outbox_messages
	WHERE topic = ? AND available_at <= ?
	ORDER BY available_at, id COLLATE "C"
	LIMIT ?
	FOR UPDATE SKIP LOCKED
)
UPDATE outbox_messages o SET attempts = o.attempts + 1, available_at = ?
FROM due WHERE o.id = due.id
RETURNING o.id, o.topic, o.type, o.payload, o.created_at, o.available_at, o.attempts, o.last_error, due.available_at AS due_at`

// outboxRow is one message; outbox_messages_topic_available_at_idx serves
// the claim.
type outboxRow struct {
	ID          string    `gorm:"column:id;primaryKey;type:text;index:outbox_messages_topic_available_at_idx,priority:3"`
	Topic       string    `gorm:"column:topic;not null;index:outbox_messages_topic_available_at_idx,priority:1"`
	Type        string    `gorm:"column:type;not null"`
	Payload     []byte    `gorm:"column:payload;not null"`
	CreatedAt   time.Time `gorm:"column:created_at;not null;autoCreateTime:false"`
	AvailableAt time.Time `gorm:"column:available_at;not null;index:outbox_messages_topic_available_at_idx,priority:2"`
	Attempts    int       `gorm:"column:attempts;not null"`
	LastError   string    `gorm:"column:last_error;not null"`
}

func (outboxRow) TableName() string { return "outbox_messages" }

// claimedRow is a message as outboxClaimSQL returns it, with the time it
// was due. (gorm scans a raw query's columns into the fields of the struct
// itself, not of an embedded row.)
type claimedRow struct {
	ID          string    `gorm:"column:id"`
	Topic       string    `gorm:"column:topic"`
	Type        string    `gorm:"column:type"`
	Payload     []byte    `gorm:"column:payload"`
	CreatedAt   time.Time `gorm:"column:created_at"`
	AvailableAt time.Time `gorm:"column:available_at"`
	Attempts    int       `gorm:"column:attempts"`
	LastError   string    `gorm:"column:last_error"`
	DueAt       time.Time `gorm:"column:due_at"`
}

func (r outboxRow) toPort() ports.OutboxMessage {
	return ports.OutboxMessage{ID: r.ID, Topic: ports.OutboxTopic(r.Topic), Type: r.Type, Payload: r.Payload,
		CreatedAt: domain.Timestamp(r.CreatedAt), AvailableAt: domain.Timestamp(r.AvailableAt),
		Attempts: r.Attempts, LastError: r.LastError}
}

// Append implements ports.Outbox.
func (o *Outbox) Append(ctx context.Context, m ports.OutboxMessage) error {
	if m.AvailableAt.IsZero() {
		m.AvailableAt = m.CreatedAt
	}
	payload := m.Payload
	if payload == nil {
		payload = []byte{} // NOT NULL
	}
	row := outboxRow{ID: m.ID, Topic: string(m.Topic), Type: m.Type, Payload: payload,
		CreatedAt: domain.Timestamp(m.CreatedAt), AvailableAt: domain.Timestamp(m.AvailableAt),
		Attempts: m.Attempts, LastError: m.LastError}
	if err := conn(ctx, o.db).Create(&row).Error; err != nil {
		return convertErr("outbox.append", err, nil, ports.ErrOutboxMessageExists)
	}
	if u := unitOf(ctx, o.db); u != nil {
		u.afterCommit = append(u.afterCommit, func() { o.Notify(m.Topic) })
	} else {
		o.Notify(m.Topic)
	}
	return nil
}

// Claim implements ports.Outbox: in one statement on PostgreSQL (see
// outboxClaimSQL); on SQLite in an immediate transaction, whose write lock
// keeps other claimers out until it commits.
func (o *Outbox) Claim(ctx context.Context, topic ports.OutboxTopic, now time.Time, lease time.Duration, limit int) ([]ports.OutboxMessage, error) {
	if limit <= 0 {
		return nil, nil
	}
	now = domain.Timestamp(now)
	until := domain.Timestamp(now.Add(lease))
	if o.claimSQL != "" {
		var rows []claimedRow
		if err := conn(ctx, o.db).Raw(o.claimSQL, string(topic), now, limit, until).Scan(&rows).Error; err != nil {
			return nil, convertErr("outbox.claim", err, nil, nil)
		}
		slices.SortFunc(rows, func(a, b claimedRow) int {
			return cmp.Or(a.DueAt.Compare(b.DueAt), cmp.Compare(a.ID, b.ID))
		})
		out := make([]ports.OutboxMessage, 0, len(rows))
		for _, r := range rows {
			out = append(out, outboxRow{ID: r.ID, Topic: r.Topic, Type: r.Type, Payload: r.Payload, CreatedAt: r.CreatedAt,
				AvailableAt: r.AvailableAt, Attempts: r.Attempts, LastError: r.LastError}.toPort())
		}
		return out, nil
	}
	var rows []outboxRow
	err := transaction(ctx, o.db, func(tx *gorm.DB) error {
		err := tx.Where("topic = ? AND available_at <= ?", string(topic), now).
			Order("available_at, id").Limit(limit).Find(&rows).Error
		if err != nil || len(rows) == 0 {
			return err
		}
		ids := make([]string, 0, len(rows))
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		return tx.Model(&outboxRow{}).Where("id IN ?", ids).
			Updates(map[string]any{"attempts": gorm.Expr("attempts + 1"), "available_at": until}).Error
	})
	if err != nil {
		return nil, convertErr("outbox.claim", err, nil, nil)
	}
	out := make([]ports.OutboxMessage, 0, len(rows))
	for _, r := range rows {
		r.Attempts++
		r.AvailableAt = until
		out = append(out, r.toPort())
	}
	return out, nil
}

// Done implements ports.Outbox.
func (o *Outbox) Done(ctx context.Context, id string) error {
	return convertErr("outbox.done", conn(ctx, o.db).Where("id = ?", id).Delete(&outboxRow{}).Error, nil, nil)
}

// Retry implements ports.Outbox.
func (o *Outbox) Retry(ctx context.Context, id string, at time.Time, lastError string) error {
	err := conn(ctx, o.db).Model(&outboxRow{}).Where("id = ?", id).
		Updates(map[string]any{"available_at": domain.Timestamp(at), "last_error": lastError}).Error
	return convertErr("outbox.retry", err, nil, nil)
}

// Stats implements ports.Outbox. It reads every waiting message's topic and
// creation, grouped: the outbox is short when its relays keep up, and the
// statistics are read by the metrics, not by requests.
func (o *Outbox) Stats(ctx context.Context) (map[ports.OutboxTopic]ports.OutboxStats, error) {
	var rows []struct {
		Topic  string
		Depth  int
		Oldest time.Time
	}
	err := conn(ctx, o.db).Raw(`SELECT topic, count(*) AS depth, min(created_at) AS oldest FROM outbox_messages GROUP BY topic`).
		Scan(&rows).Error
	if err != nil {
		return nil, convertErr("outbox.stats", err, nil, nil)
	}
	out := make(map[ports.OutboxTopic]ports.OutboxStats, len(rows))
	for _, r := range rows {
		out[ports.OutboxTopic(r.Topic)] = ports.OutboxStats{Depth: r.Depth, Oldest: domain.Timestamp(r.Oldest)}
	}
	return out, nil
}
