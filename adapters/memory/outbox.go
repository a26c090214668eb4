package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Outbox = (*Outbox)(nil)

// Outbox keeps the outbox's messages in the shared DB, so that a unit of
// work covers them with the changes they report.
type Outbox struct {
	db *DB

	// Signals wakes this process's relays after each append.
	ports.OutboxSignals
}

// NewOutbox returns an Outbox on db.
func NewOutbox(db *DB) *Outbox {
	if db == nil {
		panic("memory: nil db")
	}
	return &Outbox{db: db}
}

// storedOutboxMessage returns a copy of m as the SQL stores keep it.
func storedOutboxMessage(m ports.OutboxMessage) ports.OutboxMessage {
	m.Payload = cloneBytes(m.Payload)
	m.CreatedAt = domain.Timestamp(m.CreatedAt)
	m.AvailableAt = domain.Timestamp(m.AvailableAt)
	return m
}

// Append implements ports.Outbox. A message with no AvailableAt is available
// from its creation.
func (o *Outbox) Append(ctx context.Context, m ports.OutboxMessage) error {
	defer o.db.unlock(o.db.lock(ctx))
	if _, ok := o.db.outbox[m.ID]; ok {
		return ports.ErrOutboxMessageExists
	}
	if m.AvailableAt.IsZero() {
		m.AvailableAt = m.CreatedAt
	}
	set(o.db, o.db.outbox, m.ID, storedOutboxMessage(m))
	if o.db.inUnit(ctx) {
		o.db.afterCommit = append(o.db.afterCommit, func() { o.Notify(m.Topic) })
	} else {
		o.Notify(m.Topic)
	}
	return nil
}

// Claim implements ports.Outbox. The write lock makes claims exclusive.
func (o *Outbox) Claim(ctx context.Context, topic ports.OutboxTopic, now time.Time, lease time.Duration, limit int) ([]ports.OutboxMessage, error) {
	if limit <= 0 {
		return nil, nil
	}
	now = domain.Timestamp(now)
	defer o.db.unlock(o.db.lock(ctx))
	var due []ports.OutboxMessage
	for _, m := range o.db.outbox {
		if m.Topic == topic && !m.AvailableAt.After(now) {
			due = append(due, m)
		}
	}
	slices.SortFunc(due, func(a, b ports.OutboxMessage) int {
		return cmp.Or(a.AvailableAt.Compare(b.AvailableAt), cmp.Compare(a.ID, b.ID))
	})
	due = due[:min(limit, len(due))]
	out := make([]ports.OutboxMessage, 0, len(due))
	for _, m := range due {
		m.Attempts++
		m.AvailableAt = domain.Timestamp(now.Add(lease))
		set(o.db, o.db.outbox, m.ID, m)
		out = append(out, storedOutboxMessage(m))
	}
	return out, nil
}

// Done implements ports.Outbox.
func (o *Outbox) Done(ctx context.Context, id string) error {
	defer o.db.unlock(o.db.lock(ctx))
	unset(o.db, o.db.outbox, id)
	return nil
}

// Retry implements ports.Outbox.
func (o *Outbox) Retry(ctx context.Context, id string, at time.Time, lastError string) error {
	defer o.db.unlock(o.db.lock(ctx))
	m, ok := o.db.outbox[id]
	if !ok {
		return nil
	}
	m.AvailableAt, m.LastError = domain.Timestamp(at), lastError
	set(o.db, o.db.outbox, id, m)
	return nil
}

// Stats implements ports.Outbox.
func (o *Outbox) Stats(ctx context.Context) (map[ports.OutboxTopic]ports.OutboxStats, error) {
	defer o.db.runlock(o.db.rlock(ctx))
	out := map[ports.OutboxTopic]ports.OutboxStats{}
	for _, m := range o.db.outbox {
		s := out[m.Topic]
		s.Depth++
		if s.Oldest.IsZero() || m.CreatedAt.Before(s.Oldest) {
			s.Oldest = m.CreatedAt
		}
		out[m.Topic] = s
	}
	return out, nil
}
