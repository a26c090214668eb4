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
	// DefaultStoreTimeout bounds each hit on the store when
	// SharedOptions.Timeout is zero: a hit is one short statement or script
	// that a healthy store answers in a few milliseconds.
	DefaultStoreTimeout = 200 * time.Millisecond
	// DefaultStoreCooldown is how long the store is left alone after it
	// failed when SharedOptions.Cooldown is zero.
	DefaultStoreCooldown = 5 * time.Second
	// failureLogInterval is how often a Shared repeats that its store is
	// still failing.
	failureLogInterval = time.Minute
)

// SharedOptions are the bounds of a Shared's use of its store.
type SharedOptions struct {
	// Timeout bounds each hit on the store, waiting for a connection
	// included (DefaultStoreTimeout when zero). A hit that takes longer is
	// a failure, counted in memory.
	Timeout time.Duration
	// Cooldown is how long the store is left alone after it failed, before
	// one hit asks it again (DefaultStoreCooldown when zero).
	Cooldown time.Duration
}

// Shared fronts a limiter over a store that replicas share (Redis or
// PostgreSQL) and takes care of what the store should not decide:
//
//   - A key the store refused stays closed here until the retry time the
//     store gave, without asking the store again, so a flood on one closed
//     key costs the store nothing. The answer is the same either way: a
//     fixed window does not move, and the key is already over its limit on
//     every replica. At most MaxClosedKeys are remembered.
//   - When the store fails (down, or slower than the hit's own deadline,
//     SharedOptions.Timeout, much shorter than a request's), the hit is
//     counted in this process's memory instead (a Memory with the options
//     given to NewShared), so each replica goes on holding the limits on
//     its own until the store answers again: a client gets at most the
//     limit times the number of replicas, not unlimited requests, and
//     nobody is refused because the store is away. Failing closed would
//     turn an outage of the store into an outage of sign-in, and the
//     account lockout (in the database) still caps password guesses per
//     account.
//   - A failure opens a circuit breaker: for the cooldown
//     (SharedOptions.Cooldown) every hit is counted in memory without
//     asking the store, so an outage costs one hit the store's deadline,
//     not every request. Then one hit at a time asks it again; its answer
//     closes the breaker, its failure opens it for another cooldown.
//
// Opening is logged at warn, then once a minute while the store keeps
// failing, and closing at info; Failures counts every hit counted in
// memory because of the store, and Down reports whether the breaker is
// open, for the metrics.
type Shared struct {
	store   ports.RateLimiter
	name    string // the store, for the logs
	local   *Memory
	logger  *slog.Logger
	now     func() time.Time
	timeout time.Duration
	breaker breaker

	closed closedKeys

	failures atomic.Uint64
	mu       sync.Mutex // guards the fields below
	warnedAt time.Time
	warned   uint64 // failures when last logged
}

// NewShared returns a Shared over store, named name in the logs ("Redis
// redis://host:6379/0", "PostgreSQL"), bounded by so. opts configure the
// Memory that counts while the store fails; WithClock sets the clock of the
// closed keys and of the breaker too. Call Close to stop that Memory's
// janitor.
func NewShared(store ports.RateLimiter, name string, logger *slog.Logger, so SharedOptions, opts ...Option) *Shared {
	local := NewMemory(opts...)
	if so.Timeout <= 0 {
		so.Timeout = DefaultStoreTimeout
	}
	if so.Cooldown <= 0 {
		so.Cooldown = DefaultStoreCooldown
	}
	return &Shared{store: store, name: name, local: local, logger: logger, now: local.now, timeout: so.Timeout,
		breaker: breaker{now: local.now, cooldown: so.Cooldown},
		closed:  closedKeys{entries: map[closedKey]time.Time{}, max: MaxClosedKeys}}
}

// Close stops the janitor of the memory that counts while the store fails.
func (s *Shared) Close() { s.local.Close() }

// Failures returns how many hits were counted in memory because of the
// store since the start: those it failed, and those it was not asked while
// the breaker was open.
func (s *Shared) Failures() uint64 { return s.failures.Load() }

// Down reports whether the breaker is open: the store failed and has not
// answered since, and the hits are counted in memory.
func (s *Shared) Down() bool { return s.breaker.isOpen() }

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
	p := s.breaker.allow()
	if p == skip {
		s.failures.Add(1)
		return s.local.Allow(ctx, key, limit, window)
	}
	ok, retry, err := s.ask(ctx, key, limit, window)
	if err != nil {
		s.failures.Add(1)
		if ctx.Err() != nil {
			// The caller went away: nothing is known of the store.
			s.breaker.abandoned(p)
		} else {
			s.failed(p, err)
		}
		return s.local.Allow(ctx, key, limit, window)
	}
	if s.breaker.succeeded(p) {
		s.answered()
	}
	if !ok {
		now := s.now()
		s.closed.put(ck, now, now.Add(retry))
	}
	return ok, retry, nil
}

// ask counts the hit in the store, within the store's own deadline.
func (s *Shared) ask(ctx context.Context, key string, limit int, window time.Duration) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.store.Allow(ctx, key, limit, window)
}

// failed notes a failure of the store on a hit allowed as p, and logs it if
// it opened the breaker or the last log is old.
func (s *Shared) failed(p pass, err error) {
	opened := s.breaker.failed(p)
	n := s.failures.Load()
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case opened:
		s.logger.Warn("rate limits: the shared store failed; counting in this process until it answers",
			slog.String("store", s.name), slog.String("error", err.Error()),
			slog.Duration("timeout", s.timeout), slog.Duration("retry_every", s.breaker.cooldown))
	case now.Sub(s.warnedAt) >= failureLogInterval:
		s.logger.Warn("rate limits: the shared store is still failing; counting in this process",
			slog.String("store", s.name), slog.Uint64("failed_hits", n-s.warned), slog.String("error", err.Error()))
	default:
		return
	}
	s.warnedAt, s.warned = now, n
}

// answered notes that the store answered the probe after failing.
func (s *Shared) answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logger.Info("rate limits: the shared store answers again", slog.String("store", s.name),
		slog.Uint64("failed_hits", s.failures.Load()-s.warned))
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
