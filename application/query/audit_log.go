package query

import (
	"context"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// AuditLogHandler lists the audit log to platform administrators.
type AuditLogHandler struct {
	log    ports.AuditLog
	admins domain.PlatformAdmins
}

// NewAuditLogHandler returns an AuditLogHandler.
func NewAuditLogHandler(log ports.AuditLog, admins domain.PlatformAdmins) *AuditLogHandler {
	if log == nil {
		panic("query: nil dependency")
	}
	return &AuditLogHandler{log: log, admins: admins}
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

// Handle returns a page of the log to a platform administrator.
func (h *AuditLogHandler) Handle(ctx context.Context, u *domain.User, q ListAuditLog) (*AuditLogPage, error) {
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
