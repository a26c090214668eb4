package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.AuditLog = (*AuditLog)(nil)

// AuditLog keeps the audit trail in the audit_log table. It only inserts and
// selects: the migration's triggers refuse UPDATE and DELETE on the table.
type AuditLog struct {
	db *gorm.DB
}

// NewAuditLog returns an AuditLog on db.
func NewAuditLog(db *gorm.DB) *AuditLog {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &AuditLog{db: db}
}

// auditRow is one entry. Every index ends in (occurred_at, id), the order of
// List, so that a filtered page is read from an index in order.
type auditRow struct {
	ID         string    `gorm:"column:id;primaryKey;type:text;index:audit_log_occurred_at_idx,priority:2;index:audit_log_actor_id_idx,priority:3;index:audit_log_action_idx,priority:3;index:audit_log_target_id_idx,priority:3"`
	OccurredAt time.Time `gorm:"column:occurred_at;not null;index:audit_log_occurred_at_idx,priority:1;index:audit_log_actor_id_idx,priority:2;index:audit_log_action_idx,priority:2;index:audit_log_target_id_idx,priority:2"`
	ActorType  string    `gorm:"column:actor_type;not null"`
	ActorID    string    `gorm:"column:actor_id;not null;index:audit_log_actor_id_idx,priority:1"`
	Action     string    `gorm:"column:action;not null;index:audit_log_action_idx,priority:1"`
	TargetType string    `gorm:"column:target_type;not null"`
	TargetID   string    `gorm:"column:target_id;not null;index:audit_log_target_id_idx,priority:1"`
	RequestID  string    `gorm:"column:request_id;not null"`
	IPAddress  string    `gorm:"column:ip_address;not null"`
	Outcome    string    `gorm:"column:outcome;not null"`
	Code       string    `gorm:"column:code;not null"`
	// ImpersonatorID is '' unless the action came through an impersonation.
	ImpersonatorID string `gorm:"column:impersonator_id;not null"`
}

func (auditRow) TableName() string { return "audit_log" }

func auditFromDomain(e domain.AuditEntry) auditRow {
	return auditRow{
		ID: e.ID, OccurredAt: domain.Timestamp(e.OccurredAt), ActorType: string(e.ActorType), ActorID: e.ActorID,
		Action: e.Action, TargetType: e.TargetType, TargetID: e.TargetID, RequestID: e.RequestID,
		IPAddress: e.IPAddress, Outcome: string(e.Outcome), Code: e.Code, ImpersonatorID: e.ImpersonatorID,
	}
}

func (r auditRow) toDomain() domain.AuditEntry {
	return domain.AuditEntry{
		ID: r.ID, OccurredAt: domain.Timestamp(r.OccurredAt), ActorType: domain.ActorType(r.ActorType), ActorID: r.ActorID,
		Action: r.Action, TargetType: r.TargetType, TargetID: r.TargetID, RequestID: r.RequestID,
		IPAddress: r.IPAddress, Outcome: domain.Outcome(r.Outcome), Code: r.Code, ImpersonatorID: r.ImpersonatorID,
	}
}

// Append implements ports.AuditLog.
func (l *AuditLog) Append(ctx context.Context, e domain.AuditEntry) error {
	row := auditFromDomain(e)
	return convertErr("audit.append", conn(ctx, l.db).Create(&row).Error, nil, domain.ErrAuditEntryExists)
}

// List implements ports.AuditLog. The filters are AND-ed; the cursor is a
// row-value comparison, which both dialects match against the trailing
// (occurred_at, id) of an index. Times are normalised like the stored ones:
// SQLite compares them as text.
func (l *AuditLog) List(ctx context.Context, q ports.AuditQuery) ([]domain.AuditEntry, error) {
	var rows []auditRow
	if err := auditListQuery(conn(ctx, l.db), q).Find(&rows).Error; err != nil {
		return nil, convertErr("audit.list", err, nil, nil)
	}
	out := make([]domain.AuditEntry, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}

func auditListQuery(db *gorm.DB, q ports.AuditQuery) *gorm.DB {
	db = db.Model(&auditRow{})
	for _, f := range []struct{ column, value string }{
		{"actor_type", string(q.ActorType)}, {"actor_id", q.ActorID}, {"action", q.Action},
		{"target_type", q.TargetType}, {"target_id", q.TargetID},
	} {
		if f.value != "" {
			db = db.Where(f.column+" = ?", f.value)
		}
	}
	if !q.Since.IsZero() {
		db = db.Where("occurred_at >= ?", domain.Timestamp(q.Since))
	}
	if !q.Until.IsZero() {
		db = db.Where("occurred_at < ?", domain.Timestamp(q.Until))
	}
	if q.After != nil {
		db = db.Where("(occurred_at, id) < (?, ?)", domain.Timestamp(q.After.OccurredAt), q.After.ID)
	}
	return db.Order("occurred_at DESC, id DESC").Limit(q.PageSize())
}
