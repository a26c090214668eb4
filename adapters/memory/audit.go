package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.AuditLog = (*AuditLog)(nil)

// AuditLog keeps the audit trail in the shared DB. Nothing deletes from it.
type AuditLog struct {
	db *DB
}

// NewAuditLog returns an AuditLog on db.
func NewAuditLog(db *DB) *AuditLog {
	if db == nil {
		panic("memory: nil db")
	}
	return &AuditLog{db: db}
}

// Append implements ports.AuditLog.
func (l *AuditLog) Append(ctx context.Context, e domain.AuditEntry) error {
	defer l.db.unlock(l.db.lock(ctx))
	if _, ok := l.db.auditLog[e.ID]; ok {
		return domain.ErrAuditEntryExists
	}
	e.OccurredAt = domain.Timestamp(e.OccurredAt)
	set(l.db, l.db.auditLog, e.ID, e)
	return nil
}

// List implements ports.AuditLog. It scans the whole log: the memory store
// serves tests and development, not large deployments.
func (l *AuditLog) List(ctx context.Context, q ports.AuditQuery) ([]domain.AuditEntry, error) {
	limit := q.PageSize()
	// The bounds are normalised as the SQL stores normalise their arguments.
	if !q.Since.IsZero() {
		q.Since = domain.Timestamp(q.Since)
	}
	if !q.Until.IsZero() {
		q.Until = domain.Timestamp(q.Until)
	}
	if q.After != nil {
		q.After = &ports.AuditCursor{OccurredAt: domain.Timestamp(q.After.OccurredAt), ID: q.After.ID}
	}
	locked := l.db.rlock(ctx)
	var out []domain.AuditEntry
	for _, e := range l.db.auditLog {
		if matchesAudit(e, q) {
			out = append(out, e)
		}
	}
	l.db.runlock(locked)
	slices.SortFunc(out, func(a, b domain.AuditEntry) int { return compareAuditPosition(b, a.OccurredAt, a.ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// compareAuditPosition compares e's (occurred_at, id) with (at, id) as the
// SQL row-value comparison does.
func compareAuditPosition(e domain.AuditEntry, at time.Time, id string) int {
	if c := e.OccurredAt.Compare(at); c != 0 {
		return c
	}
	return strings.Compare(e.ID, id)
}

func matchesAudit(e domain.AuditEntry, q ports.AuditQuery) bool {
	switch {
	case q.ActorType != "" && e.ActorType != q.ActorType,
		q.ActorID != "" && e.ActorID != q.ActorID,
		q.Action != "" && e.Action != q.Action,
		q.TargetType != "" && e.TargetType != q.TargetType,
		q.TargetID != "" && e.TargetID != q.TargetID,
		!q.Since.IsZero() && e.OccurredAt.Before(q.Since),
		!q.Until.IsZero() && !e.OccurredAt.Before(q.Until),
		q.After != nil && compareAuditPosition(e, q.After.OccurredAt, q.After.ID) >= 0:
		return false
	}
	return true
}
