package admin

import (
	"context"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// AuditLog is the audit log, listed to platform administrators.
type AuditLog struct {
	log    ports.AuditLog
	admins domain.PlatformAdmins
}

// NewAuditLog returns an AuditLog.
func NewAuditLog(log ports.AuditLog, admins domain.PlatformAdmins) *AuditLog {
	usecase.MustHave(log)
	return &AuditLog{log: log, admins: admins}
}

// AuditLogPage is one page of entries, newest first, and the cursor of the
// next page ("" on the last).
type AuditLogPage struct {
	Entries    []domain.AuditEntry
	NextCursor string
}

// ListAuditLog filters and pages the log. Cursor continues a listing.
type ListAuditLog struct {
	Filter ports.AuditQuery
	Cursor string
}

var (
	errBadCursor = domain.Invalid("paging.invalid_cursor", "Invalid cursor", domain.FieldViolation{Field: "cursor", Message: "is not a cursor this listing returned"})
)

// List returns a page of the log to a platform administrator.
func (h *AuditLog) List(ctx context.Context, u *domain.User, q ListAuditLog) (*AuditLogPage, error) {
	if !h.admins.IsAdmin(u) {
		return nil, domain.ErrNotPlatformAdmin
	}
	f := q.Filter
	if q.Cursor != "" {
		p, ok := domain.ParseCursor(q.Cursor)
		if !ok {
			return nil, errBadCursor
		}
		f.After = &ports.AuditCursor{OccurredAt: p.At, ID: p.ID}
	}
	limit := f.Limit
	f.Limit = limit + 1 // one more tells whether a next page exists
	entries, err := h.log.List(ctx, f)
	if err != nil {
		return nil, err
	}
	page := &AuditLogPage{Entries: entries}
	if len(entries) > limit {
		page.Entries = entries[:limit]
		last := page.Entries[limit-1]
		page.NextCursor = domain.Position{At: last.OccurredAt, ID: last.ID}.Cursor()
	}
	return page, nil
}
