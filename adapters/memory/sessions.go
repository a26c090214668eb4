package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.SessionRepository = (*SessionRepository)(nil)

// SessionRepository keeps sessions in the shared DB.
type SessionRepository struct {
	db *DB
}

// NewSessionRepository returns a SessionRepository on db.
func NewSessionRepository(db *DB) *SessionRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &SessionRepository{db: db}
}

func copySession(s *domain.Session) *domain.Session {
	c := *s
	c.Authenticate(s.Authentication())
	return &c
}

// hasActiveOrganization reports whether a session may name org as its
// active organization: whether org exists. The caller holds the lock.
func (db *DB) hasActiveOrganization(org domain.OrganizationID) bool {
	_, ok := db.organizations[org]
	return ok
}

// Create implements ports.SessionRepository.
func (r *SessionRepository) Create(ctx context.Context, s *domain.Session) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.sessions[s.ID()]; ok {
		return domain.ErrSessionExists
	}
	if _, ok := r.db.sessionByToken[s.TokenHash()]; ok {
		return domain.ErrSessionExists
	}
	if !r.db.hasUser(s.UserID()) {
		return domain.ErrUserNotFound
	}
	if by := s.ImpersonatedBy(); by != "" && !r.db.hasUser(by) {
		return domain.ErrUserNotFound
	}
	if org := s.ActiveOrganizationID(); org != "" && !r.db.hasActiveOrganization(org) {
		return domain.ErrActiveOrganizationNotFound
	}
	set(r.db, r.db.sessions, s.ID(), copySession(s))
	set(r.db, r.db.sessionByToken, s.TokenHash(), s.ID())
	return nil
}

// GetByTokenHash implements ports.SessionRepository.
func (r *SessionRepository) GetByTokenHash(ctx context.Context, h domain.TokenHash) (*domain.Session, *domain.User, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	id, ok := r.db.sessionByToken[h]
	if !ok {
		return nil, nil, domain.ErrSessionNotFound
	}
	s := r.db.sessions[id]
	return copySession(s), copyUser(r.db.users[s.UserID()]), nil
}

// Get implements ports.SessionRepository.
func (r *SessionRepository) Get(ctx context.Context, id domain.SessionID) (*domain.Session, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	s, ok := r.db.sessions[id]
	if !ok {
		return nil, domain.ErrSessionNotFound
	}
	return copySession(s), nil
}

// ListByUser implements ports.SessionRepository. It scans every session:
// the memory store serves tests and development, not large deployments.
func (r *SessionRepository) ListByUser(ctx context.Context, userID domain.UserID, now time.Time) ([]*domain.Session, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	var out []*domain.Session
	for _, s := range r.db.sessions {
		if s.UserID() == userID && !s.IsExpired(now) {
			out = append(out, copySession(s))
		}
	}
	// Newest first, ties broken by id, the order the SQL stores use.
	slices.SortFunc(out, func(a, b *domain.Session) int {
		if c := b.CreatedAt().Compare(a.CreatedAt()); c != 0 {
			return c
		}
		return strings.Compare(string(b.ID()), string(a.ID()))
	})
	return out, nil
}

// Update implements ports.SessionRepository. It holds the write lock while fn
// runs, which is what makes concurrent updates serialise.
func (r *SessionRepository) Update(ctx context.Context, id domain.SessionID, fn func(s *domain.Session) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.sessions[id]
	if !ok {
		return domain.ErrSessionNotFound
	}
	s := copySession(stored)
	if err := fn(s); err != nil {
		return err
	}
	// fn cannot change the id, owner or token hash (Session has no setters
	// for them), so the indexes stay valid. The active organization must
	// exist, as the SQL stores' foreign key requires.
	if org := s.ActiveOrganizationID(); org != "" && org != stored.ActiveOrganizationID() && !r.db.hasActiveOrganization(org) {
		return domain.ErrActiveOrganizationNotFound
	}
	set(r.db, r.db.sessions, id, s)
	return nil
}

// Delete implements ports.SessionRepository.
func (r *SessionRepository) Delete(ctx context.Context, userID domain.UserID, id domain.SessionID) error {
	defer r.db.unlock(r.db.lock(ctx))
	s, ok := r.db.sessions[id]
	if !ok || s.UserID() != userID {
		return domain.ErrSessionNotFound
	}
	r.db.deleteSession(id, s)
	return nil
}

// DeleteByUser implements ports.SessionRepository.
func (r *SessionRepository) DeleteByUser(ctx context.Context, userID domain.UserID, keep domain.SessionID) (int, error) {
	defer r.db.unlock(r.db.lock(ctx))
	n := 0
	for id, s := range r.db.sessions {
		if s.UserID() == userID && (keep == "" || id != keep) {
			r.db.deleteSession(id, s)
			n++
		}
	}
	return n, nil
}

// DeleteExpired implements ports.SessionRepository.
func (r *SessionRepository) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	defer r.db.unlock(r.db.lock(ctx))
	n := 0
	for id, s := range r.db.sessions {
		if s.IsExpired(now) {
			r.db.deleteSession(id, s)
			n++
		}
	}
	return n, nil
}

// ClearOrganization implements ports.SessionRepository.
func (r *SessionRepository) ClearOrganization(ctx context.Context, org domain.OrganizationID, userID domain.UserID) error {
	defer r.db.unlock(r.db.lock(ctx))
	r.db.clearSessionsOrganization(org, userID)
	return nil
}

// clearActiveOrganization sets no active organization on every session
// working in org, as the SQL stores' ON DELETE SET NULL does when org is
// deleted. The caller holds the write lock.
func (db *DB) clearActiveOrganization(org domain.OrganizationID) {
	db.clearSessionsOrganization(org, "")
}

// clearSessionsOrganization sets no active organization on the sessions of
// userID (of everyone, if userID is "") working in org. Like the SQL
// stores, it leaves updatedAt alone. The caller holds the write lock.
func (db *DB) clearSessionsOrganization(org domain.OrganizationID, userID domain.UserID) {
	for id, s := range db.sessions {
		if s.ActiveOrganizationID() != org || (userID != "" && s.UserID() != userID) {
			continue
		}
		set(db, db.sessions, id, domain.RehydrateSession(s.ID(), s.UserID(), s.TokenHash(), s.RememberMe(), s.IPAddress(), s.UserAgent(),
			"", s.ImpersonatedBy(), s.ExpiresAt(), s.CreatedAt(), s.UpdatedAt(), s.Authentication()))
	}
}
