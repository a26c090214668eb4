package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.SessionRepository = (*SessionRepository)(nil)

// SessionRepository stores sessions in the sessions table.
type SessionRepository struct {
	db     *gorm.DB
	lookup *sessionLookup
}

// NewSessionRepository returns a SessionRepository on db.
func NewSessionRepository(db *gorm.DB) *SessionRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &SessionRepository{db: db, lookup: newSessionLookup(db)}
}

var (
	// errSessionRefNotFound is a foreign-key violation on creating a
	// session that names an organization: its user, its impersonator or
	// its organization is missing, and the databases do not say which.
	errSessionRefNotFound = domain.NotFound("session.reference_not_found", "user or organization")
)

// Create implements ports.SessionRepository.
func (r *SessionRepository) Create(ctx context.Context, s *domain.Session) error {
	row := sessionFromDomain(s)
	missing := domain.ErrUserNotFound
	if row.ActiveOrganizationID != nil {
		missing = errSessionRefNotFound
	}
	return convertErr("sessions.create", conn(ctx, r.db).Create(&row).Error, missing, domain.ErrSessionExists)
}

// Get implements ports.SessionRepository.
func (r *SessionRepository) Get(ctx context.Context, id domain.SessionID) (*domain.Session, error) {
	var row sessionRow
	if err := conn(ctx, r.db).Where("id = ?", string(id)).Take(&row).Error; err != nil {
		return nil, convertErr("sessions.get", err, domain.ErrSessionNotFound, nil)
	}
	return row.toDomain(), nil
}

// GetByTokenHash implements ports.SessionRepository. It is the one query of
// every authenticated request; see sessionLookup. Inside a unit of work it
// reads through the unit's transaction, so it sees what the unit wrote.
func (r *SessionRepository) GetByTokenHash(ctx context.Context, h domain.TokenHash) (*domain.Session, *domain.User, error) {
	if u := unitOf(ctx, r.db); u != nil {
		return getSessionInUnit(conn(ctx, r.db), h)
	}
	return r.lookup.get(ctx, h)
}

// ListByUser implements ports.SessionRepository. Ties in created_at are
// broken by id, so the order is the same on every store.
func (r *SessionRepository) ListByUser(ctx context.Context, userID domain.UserID, now time.Time) ([]*domain.Session, error) {
	var rows []sessionRow
	err := conn(ctx, r.db).
		Where("user_id = ? AND expires_at > ?", string(userID), domain.Timestamp(now)).
		Order("created_at DESC, id DESC").
		Find(&rows).Error
	if err != nil {
		return nil, convertErr("sessions.list_by_user", err, nil, nil)
	}
	out := make([]*domain.Session, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}

// Update implements ports.SessionRepository. On PostgreSQL the row is locked
// with SELECT … FOR UPDATE; on SQLite the immediate transaction already holds
// the database's write lock.
func (r *SessionRepository) Update(ctx context.Context, id domain.SessionID, fn func(s *domain.Session) error) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		q := tx
		if DialectOf(tx) == DialectPostgres {
			q = tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
		}
		var row sessionRow
		if err := q.Where("id = ?", string(id)).Take(&row).Error; err != nil {
			return convertErr("sessions.update", err, domain.ErrSessionNotFound, nil)
		}
		s := row.toDomain()
		if err := fn(s); err != nil {
			return err
		}
		row = sessionFromDomain(s)
		return tx.Model(&sessionRow{}).Where("id = ?", row.ID).Select("*").Updates(&row).Error
	})
	// A foreign-key violation on updating a session: only its active
	// organization can have changed.
	return convertErr("sessions.update", err, domain.ErrActiveOrganizationNotFound, domain.ErrSessionExists)
}

// ClearOrganization implements ports.SessionRepository. It leaves
// updated_at alone, as the foreign key's ON DELETE SET NULL does.
func (r *SessionRepository) ClearOrganization(ctx context.Context, org domain.OrganizationID, userID domain.UserID) error {
	q := conn(ctx, r.db).Model(&sessionRow{}).Where("active_organization_id = ?", string(org))
	if userID != "" {
		q = q.Where("user_id = ?", string(userID))
	}
	err := q.Update("active_organization_id", nil).Error
	return convertErr("sessions.clear_organization", err, nil, nil)
}

// Delete implements ports.SessionRepository. Matching on the owner as well
// as the id means a user cannot revoke, or learn of, another's session.
func (r *SessionRepository) Delete(ctx context.Context, userID domain.UserID, id domain.SessionID) error {
	res := conn(ctx, r.db).Where("id = ? AND user_id = ?", string(id), string(userID)).Delete(&sessionRow{})
	if res.Error != nil {
		return convertErr("sessions.delete", res.Error, nil, nil)
	}
	if res.RowsAffected == 0 {
		return domain.ErrSessionNotFound
	}
	return nil
}

// DeleteByUser implements ports.SessionRepository.
func (r *SessionRepository) DeleteByUser(ctx context.Context, userID domain.UserID, keep domain.SessionID) (int, error) {
	q := conn(ctx, r.db).Where("user_id = ?", string(userID))
	if keep != "" {
		q = q.Where("id <> ?", string(keep))
	}
	res := q.Delete(&sessionRow{})
	if res.Error != nil {
		return 0, convertErr("sessions.delete_by_user", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}

// DeleteExpired implements ports.SessionRepository. now is normalised like
// the stored times: SQLite compares them as text.
func (r *SessionRepository) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	res := conn(ctx, r.db).Where("expires_at <= ?", domain.Timestamp(now)).Delete(&sessionRow{})
	if res.Error != nil {
		return 0, convertErr("sessions.delete_expired", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}
