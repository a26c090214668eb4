package usecase

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// MaxSessionCacheTTL bounds SessionCache's lifetime: a session revoked or a
// user banned through another replica is refused by this one within it.
const MaxSessionCacheTTL = time.Second

// sessionCacheSize bounds how many checks a SessionCache keeps; when it is
// full, it starts again empty.
const sessionCacheSize = 10_000

// SessionCache remembers, for a short while, what the session check found
// for a token hash (the session and its user), so that a burst of requests
// with one session costs one query rather than one each.
//
// What it keeps is never stale for a change made through this process: the
// repositories and the unit of work it wraps (Sessions, Users, UnitOfWork)
// move its generation on once each write, or each unit, is over, and a kept
// check counts only while the generation it was read at is still current.
// A check is read at the generation current before its query, so a write
// that commits while the query runs leaves it unused. A change made through
// another process (another replica) is seen once the check is older than the
// TTL, at most MaxSessionCacheTTL.
//
// Only the session check reads through it; everything that writes reads the
// store. A nil *SessionCache keeps nothing.
type SessionCache struct {
	ttl time.Duration
	// now is the monotonic clock of the TTL: the cache bounds how long a
	// change elsewhere may take to be seen, in real time, whatever the
	// service's clock says.
	now func() time.Time
	gen atomic.Uint64

	mu      sync.RWMutex
	entries map[domain.TokenHash]cachedCheck
}

// cachedCheck is one kept session check.
type cachedCheck struct {
	session *domain.Session
	user    *domain.User
	gen     uint64
	at      time.Time
}

// NewSessionCache returns a cache whose checks last ttl, or nil (no cache)
// when ttl is not positive. A ttl over MaxSessionCacheTTL is cut to it.
func NewSessionCache(ttl time.Duration) *SessionCache {
	return newSessionCache(ttl, time.Now)
}

// NewSessionCacheAt is NewSessionCache on the clock now, for tests.
func NewSessionCacheAt(ttl time.Duration, now func() time.Time) *SessionCache {
	return newSessionCache(ttl, now)
}

func newSessionCache(ttl time.Duration, now func() time.Time) *SessionCache {
	if ttl <= 0 {
		return nil
	}
	return &SessionCache{ttl: min(ttl, MaxSessionCacheTTL), now: now, entries: map[domain.TokenHash]cachedCheck{}}
}

// Lookup returns the session and user with token hash h, from the cache
// when a current check is kept there, else from sessions (which the cache
// then keeps). What it returns is the caller's own: it shares nothing with
// what the cache keeps.
func (c *SessionCache) Lookup(ctx context.Context, sessions ports.SessionRepository, h domain.TokenHash) (*domain.Session, *domain.User, error) {
	if c == nil {
		return sessions.GetByTokenHash(ctx, h)
	}
	gen := c.gen.Load()
	now := c.now()
	c.mu.RLock()
	e, ok := c.entries[h]
	c.mu.RUnlock()
	if ok && e.gen == gen && now.Sub(e.at) < c.ttl {
		return e.session.Clone(), e.user.Clone(), nil
	}
	s, u, err := sessions.GetByTokenHash(ctx, h)
	if err != nil {
		return nil, nil, err
	}
	e = cachedCheck{session: s.Clone(), user: u.Clone(), gen: gen, at: now}
	c.mu.Lock()
	if _, ok := c.entries[h]; !ok && len(c.entries) >= sessionCacheSize {
		c.entries = make(map[domain.TokenHash]cachedCheck, sessionCacheSize)
	}
	c.entries[h] = e
	c.mu.Unlock()
	return s, u, nil
}

// Changed makes every kept check stale. The wrapped repositories and unit
// of work call it; so may anything else that changes sessions or users.
func (c *SessionCache) Changed() {
	if c != nil {
		c.gen.Add(1)
	}
}

// Sessions returns r with every write followed by Changed.
func (c *SessionCache) Sessions(r ports.SessionRepository) ports.SessionRepository {
	if c == nil {
		return r
	}
	return cachedSessions{SessionRepository: r, c: c}
}

// Users returns r with every write followed by Changed.
func (c *SessionCache) Users(r ports.UserRepository) ports.UserRepository {
	if c == nil {
		return r
	}
	return cachedUsers{UserRepository: r, c: c}
}

// UnitOfWork returns u with every unit followed by Changed, once it has
// committed or rolled back: a write inside a unit is seen by other
// transactions only then.
func (c *SessionCache) UnitOfWork(u ports.UnitOfWork) ports.UnitOfWork {
	if c == nil {
		return u
	}
	return cachedUnits{u: u, c: c}
}

// changed is a write's deferred Changed.
func (c *SessionCache) changed(err error) error {
	c.Changed()
	return err
}

// cachedSessions is a SessionRepository whose writes make the cache stale.
// Create does not: a session not yet stored is never kept.
type cachedSessions struct {
	ports.SessionRepository
	c *SessionCache
}

func (r cachedSessions) ClearOrganization(ctx context.Context, org domain.OrganizationID, userID domain.UserID) error {
	return r.c.changed(r.SessionRepository.ClearOrganization(ctx, org, userID))
}

func (r cachedSessions) Update(ctx context.Context, id domain.SessionID, fn func(s *domain.Session) error) error {
	return r.c.changed(r.SessionRepository.Update(ctx, id, fn))
}

func (r cachedSessions) Delete(ctx context.Context, userID domain.UserID, id domain.SessionID) error {
	return r.c.changed(r.SessionRepository.Delete(ctx, userID, id))
}

func (r cachedSessions) DeleteByUser(ctx context.Context, userID domain.UserID, keep domain.SessionID) (int, error) {
	n, err := r.SessionRepository.DeleteByUser(ctx, userID, keep)
	return n, r.c.changed(err)
}

func (r cachedSessions) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	n, err := r.SessionRepository.DeleteExpired(ctx, now)
	return n, r.c.changed(err)
}

// cachedUsers is a UserRepository whose writes make the cache stale. Create
// does not: a new user has no session yet.
type cachedUsers struct {
	ports.UserRepository
	c *SessionCache
}

func (r cachedUsers) Update(ctx context.Context, id domain.UserID, fn func(u *domain.User) error) error {
	return r.c.changed(r.UserRepository.Update(ctx, id, fn))
}

func (r cachedUsers) Delete(ctx context.Context, id domain.UserID) error {
	return r.c.changed(r.UserRepository.Delete(ctx, id))
}

// cachedUnits is a UnitOfWork whose units make the cache stale once over.
type cachedUnits struct {
	u ports.UnitOfWork
	c *SessionCache
}

func (u cachedUnits) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	return u.c.changed(u.u.Do(ctx, fn))
}
