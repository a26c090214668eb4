package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// AuditLog keeps the audit trail. It is append-only: the port has no way to
// change or delete an entry, and the SQL stores refuse UPDATE and DELETE on
// the table with triggers.
type AuditLog interface {
	// Append records e. A taken id is an error of kind domain.KindConflict.
	Append(ctx context.Context, e domain.AuditEntry) error
	// List returns up to q.Limit entries matching q, newest first: ordered
	// by occurred_at then id, both descending.
	List(ctx context.Context, q AuditQuery) ([]domain.AuditEntry, error)
}

// AuditQuery filters and pages the audit log. Empty fields do not filter.
type AuditQuery struct {
	ActorType  domain.ActorType
	ActorID    string
	Action     string
	TargetType string
	TargetID   string
	// Since and Until bound occurred_at: Since ≤ t < Until.
	Since time.Time
	Until time.Time
	// After continues a listing: only entries strictly older than this
	// (occurred_at, id) position are returned.
	After *AuditCursor
	// Limit is the page size (1 to 1000).
	Limit int
}

// AuditCursor is a position in the newest-first order of the log.
type AuditCursor struct {
	OccurredAt time.Time
	ID         string
}
