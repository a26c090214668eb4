package memory

import (
	"sync"

	"github.com/gatehouse/gatehouse/domain"
)

// DB is the one in-memory store that every memory repository shares. A single
// lock guards all maps, so that deleting a user removes their sessions,
// credential and links in the same step, as ON DELETE CASCADE does in SQL,
// and creating a row for a missing user fails as a foreign key would.
type DB struct {
	mu sync.RWMutex

	users       map[domain.UserID]*domain.User
	userByEmail map[domain.Email]domain.UserID

	sessions       map[domain.SessionID]*domain.Session
	sessionByToken map[domain.TokenHash]domain.SessionID

	credentials map[domain.UserID]*domain.Credential

	verifications       map[string]*domain.Verification
	verificationByToken map[domain.TokenHash]string
}

// NewDB returns an empty store.
func NewDB() *DB {
	return &DB{
		users:               map[domain.UserID]*domain.User{},
		userByEmail:         map[domain.Email]domain.UserID{},
		sessions:            map[domain.SessionID]*domain.Session{},
		sessionByToken:      map[domain.TokenHash]domain.SessionID{},
		credentials:         map[domain.UserID]*domain.Credential{},
		verifications:       map[string]*domain.Verification{},
		verificationByToken: map[domain.TokenHash]string{},
	}
}

// hasUser reports whether the user exists. The caller holds the lock.
func (db *DB) hasUser(id domain.UserID) bool {
	_, ok := db.users[id]
	return ok
}

// deleteUser removes the user and everything that refers to them. The caller
// holds the write lock.
func (db *DB) deleteUser(u *domain.User) {
	delete(db.userByEmail, u.Email())
	delete(db.users, u.ID())
	delete(db.credentials, u.ID())
	for id, s := range db.sessions {
		if s.UserID() == u.ID() {
			db.deleteSession(id, s)
		}
	}
	for id, v := range db.verifications {
		if v.UserID() == u.ID() {
			db.deleteVerification(id, v)
		}
	}
}

func (db *DB) deleteSession(id domain.SessionID, s *domain.Session) {
	delete(db.sessionByToken, s.TokenHash())
	delete(db.sessions, id)
}

func (db *DB) deleteVerification(id string, v *domain.Verification) {
	delete(db.verificationByToken, v.TokenHash())
	delete(db.verifications, id)
}

// A missing owner is reported as the SQL stores report a foreign-key
// violation: the user is not found.
func ownerNotFound() error { return domain.NotFound("user.not_found", "user") }
