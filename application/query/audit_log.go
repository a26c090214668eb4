package query

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

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
	errNotPlatformAdmin = domain.NewError(domain.KindForbidden, "auth.not_platform_admin", "Only platform administrators may do this")
	errBadCursor        = domain.Invalid("request.invalid_cursor", "Invalid cursor", domain.FieldViolation{Location: "query.cursor", Message: "is not a cursor this listing returned"})
)

// Handle returns a page of the log to a platform administrator.
func (h *AuditLogHandler) Handle(ctx context.Context, u *domain.User, q ListAuditLog) (*AuditLogPage, error) {
	if !h.admins.IsAdmin(u) {
		return nil, errNotPlatformAdmin
	}
	f := q.Filter
	if q.Cursor != "" {
		c, err := decodeAuditCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		f.After = c
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
		page.NextCursor = encodeAuditCursor(ports.AuditCursor{OccurredAt: last.OccurredAt, ID: last.ID})
	}
	return page, nil
}

// A cursor is the position of the last entry of a page: its time in
// microseconds and its id, base64url-encoded so clients treat it as opaque.
func encodeAuditCursor(c ports.AuditCursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.OccurredAt.UnixMicro(), 10) + "~" + c.ID))
}

func decodeAuditCursor(s string) (*ports.AuditCursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, errBadCursor
	}
	ts, id, ok := strings.Cut(string(raw), "~")
	if !ok || id == "" {
		return nil, errBadCursor
	}
	micros, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, errBadCursor
	}
	return &ports.AuditCursor{OccurredAt: time.UnixMicro(micros).UTC(), ID: id}, nil
}
