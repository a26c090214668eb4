package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.RateLimiter = (*Shared)(nil)

const (
	// MaxClosedKeys bounds how many refused keys a Shared remembers.
	MaxClosedKeys = 65536
	// failureLogInterval is how often a Shared repeats that its store is
	// still failing.
	failureLogInterval = time.Minute
)

// Shared fronts a limiter over a store that replicas share (Redis or
// PostgreSQL) and takes care of two things the store should not decide:
//
//   - A key the store refused stays closed here until the retry time the
//     store gave, without asking the store again, so a flood on one closed
//     key costs the store nothing. The answer is the same either way: a
//     fixed window does not move, and the key is already over its limit on
//     every replica. At most MaxClosedKeys are remembered.
//   - When the store fails (down, or slower than its timeout), the hit is
//     counted in this process's memory instead (a Memory with the options
//     given to NewShared), so each replica goes on holding the limits on
//     its own until the store answers again: a client gets at most the
//     limit times the number of replicas, not unlimited requests, and
//     nobody is refused because the store is away. Failing closed would
//     turn an outage of the store into an outage of sign-in, and the
//     account lockout (in the database) still caps password guesses per
//     account. The first failure is logged at warn, then once a minute
//     while they last, and the return at info; Failures counts every hit
//     the store failed, for a metric.
type Shared struct {
	store  ports.RateLimiter
	name   string // the store, for the logs
	local  *Memory
	logger *slog.Logger
	now    func() time.Time

	closed closedKeys

	failures atomic.Uint64
	down     atomic.Bool
	mu       sync.Mutex // guards the fields below, and the transitions of down
	warnedAt time.Time
	warned   uint64 // failures when last logged
}

// NewShared returns a Shared over store, named name in the logs ("Redis
// redis://host:6379/0", "PostgreSQL"). opts configure the Memory that counts
// while the store fails; WithClock sets the clock of the closed keys too.
// Call Close to stop that Memory's janitor.
func NewShared(store ports.RateLimiter, name string, logger *slog.Logger, opts ...Option) *Shared {
	local := NewMemory(opts...)
	return &Shared{store: store, name: name, local: local, logger: logger, now: local.now,
		closed: closedKeys{entries: map[closedKey]time.Time{}, max: MaxClosedKeys}}
}

// Close stops the janitor of the memory that counts while the store fails.
func (s *Shared) Close() { s.local.Close() }

// Failures returns how many hits the store failed since the start, each of
// them counted in memory instead.
func (s *Shared) Failures() uint64 { return s.failures.Load() }

// Allow implements ports.RateLimiter. It returns an error only when limit or
// window is not positive.
func (s *Shared) Allow(ctx context.Context, key string, limit int, window time.Duration) (bool, time.Duration, error) {
	if limit < 1 || window <= 0 {
		return false, 0, fmt.Errorf("ratelimit: limit %d and window %v must be positive", limit, window)
	}
	ck := closedKey{key: key, limit: limit, window: window}
	if len(key) > MaxKeyBytes {
		ck.key = digestKey(key)
	}
	if retry, ok := s.closed.get(ck, s.now()); ok {
		return false, retryAfter(retry, window), nil
	}
	ok, retry, err := s.store.Allow(ctx, key, limit, window)
	if err != nil {
		s.failed(err)
		return s.local.Allow(ctx, key, limit, window)
	}
	if s.down.Load() {
		s.answered()
	}
	if !ok {
		now := s.now()
		s.closed.put(ck, now, now.Add(retry))
	}
	return ok, retry, nil
}

// failed notes a failure of the store, and logs it if it is the first one
// or the last log is old.
func (s *Shared) failed(err error) {
	n := s.failures.Add(1)
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.down.Load():
		s.down.Store(true)
		s.logger.Warn("rate limits: the shared store failed; counting in this process until it answers",
			slog.String("store", s.name), slog.String("error", err.Error()))
	case now.Sub(s.warnedAt) >= failureLogInterval:
		s.logger.Warn("rate limits: the shared store is still failing; counting in this process",
			slog.String("store", s.name), slog.Uint64("failed_hits", n-s.warned), slog.String("error", err.Error()))
	default:
		return
	}
	s.warnedAt, s.warned = now, n
}

// answered notes that the store answered after failing.
func (s *Shared) answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down.Load() {
		s.down.Store(false)
		s.logger.Info("rate limits: the shared store answers again", slog.String("store", s.name),
			slog.Uint64("failed_hits", s.failures.Load()-s.warned))
	}
}

// closedKey is a key under one rule: a key refused under one limit and
// window may be open under another.
type closedKey struct {
	key    string
	limit  int
	window time.Duration
}

// closedKeys remembers keys the store refused, until when. It is bounded:
// when full, it forgets what has expired (at most once a second) and
// otherwise remembers no more, so the store is asked as before.
type closedKeys struct {
	mu      sync.Mutex
	entries map[closedKey]time.Time
	max     int
	swept   time.Time
}

// get returns how long k stays closed, if it is.
func (c *closedKeys) get(k closedKey, now time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.entries[k]
	if !ok {
		return 0, false
	}
	if !now.Before(until) {
		delete(c.entries, k)
		return 0, false
	}
	return until.Sub(now), true
}

// put remembers, at now, that k is closed until until.
func (c *closedKeys) put(k closedKey, now, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		if now.Sub(c.swept) < time.Second {
			return
		}
		c.swept = now
		for k, u := range c.entries {
			if !now.Before(u) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= c.max {
			return
		}
	}
	c.entries[k] = until
}
