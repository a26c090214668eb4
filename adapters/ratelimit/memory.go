package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.RateLimiter = (*Memory)(nil)

const (
	shardCount = 32
	// DefaultMaxEntries bounds the keys held at once: about 100 MB at worst
	// with IPv6 /64 keys, and far more clients than one instance serves.
	DefaultMaxEntries = 1_000_000
	// DefaultSweepInterval is how often the janitor deletes expired windows.
	DefaultSweepInterval = time.Minute
	// evictionSample is how many entries a full shard looks at to pick one
	// to evict (see Memory).
	evictionSample = 8
)

// Memory is a RateLimiter that keeps one fixed window per key in memory. It
// suits a single instance; several instances behind a load balancer each
// count on their own.
//
// A key's window opens at its first request and lasts the window passed to
// Allow; the next request after it ends opens a new one. Every request is
// counted, refused ones included, and requests past limit are refused with
// retryAfter = the time left in the window, rounded up to whole seconds, at
// least 1s and at most the window (itself rounded up to whole seconds when it
// is not). If a key is used with a different window than before, its count
// starts again.
//
// Keys are spread over 32 shards, each with its own mutex, by a hash seeded
// at start-up, so clients cannot aim their keys at one shard. A janitor
// goroutine deletes expired windows every sweep interval, so memory follows
// the number of keys active within one window, not the number ever seen.
// Beyond the hard cap (WithMaxEntries), a new key evicts an entry from its
// shard first: an expired one if a random sample of 8 holds one, otherwise
// the sampled entry whose window ends soonest. An evicted key starts afresh,
// so a flood of distinct keys that fills the cap can reset other keys early;
// the cap is there to bound memory, and should sit well above normal use.
type Memory struct {
	now           func() time.Time
	maxPerShard   int
	sweepInterval time.Duration
	seed          maphash.Seed
	shards        [shardCount]shard

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type shard struct {
	mu      sync.Mutex
	entries map[string]window
	// Keep shards on separate cache lines so that hot shards don't slow
	// their neighbours.
	_ [48]byte
}

type window struct {
	end    time.Time
	length time.Duration
	count  int
}

// Option configures a Memory.
type Option func(*Memory)

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(m *Memory) { m.now = now } }

// WithMaxEntries sets the hard cap on keys held at once (DefaultMaxEntries).
// The cap is split evenly over the shards, so the total never exceeds it.
func WithMaxEntries(n int) Option {
	return func(m *Memory) { m.maxPerShard = max(1, n/shardCount) }
}

// WithSweepInterval sets how often the janitor runs (DefaultSweepInterval).
// Zero or less disables the janitor; the cap still bounds memory.
func WithSweepInterval(d time.Duration) Option {
	return func(m *Memory) { m.sweepInterval = d }
}

// NewMemory returns a Memory and starts its janitor. Call Close to stop it.
func NewMemory(opts ...Option) *Memory {
	m := &Memory{
		now:           time.Now,
		maxPerShard:   DefaultMaxEntries / shardCount,
		sweepInterval: DefaultSweepInterval,
		seed:          maphash.MakeSeed(),
		stop:          make(chan struct{}),
		done:          make(chan struct{}),
	}
	for _, o := range opts {
		o(m)
	}
	for i := range m.shards {
		m.shards[i].entries = make(map[string]window)
	}
	if m.sweepInterval > 0 {
		go m.janitor()
	} else {
		close(m.done)
	}
	return m
}

// NewDefault returns a Memory with the default options and a cleanup that
// stops its janitor, for wire.
func NewDefault() (*Memory, func()) {
	m := NewMemory()
	return m, m.Close
}

// Close stops the janitor. It is safe to call more than once; the limiter
// keeps working without it, bounded by the cap alone.
func (m *Memory) Close() {
	m.closeOnce.Do(func() { close(m.stop) })
	<-m.done
}

// Allow implements ports.RateLimiter. It returns an error only when limit or
// window is not positive.
func (m *Memory) Allow(_ context.Context, key string, limit int, length time.Duration) (bool, time.Duration, error) {
	if limit < 1 || length <= 0 {
		return false, 0, fmt.Errorf("ratelimit: limit %d and window %v must be positive", limit, length)
	}
	now := m.now()
	s := &m.shards[maphash.String(m.seed, key)%shardCount]

	s.mu.Lock()
	w, ok := s.entries[key]
	if !ok || !now.Before(w.end) || w.length != length {
		if !ok && len(s.entries) >= m.maxPerShard {
			s.evictOne(now)
		}
		w = window{end: now.Add(length), length: length}
	}
	// Saturate rather than overflow under endless hammering.
	if w.count <= limit {
		w.count++
	}
	s.entries[key] = w
	s.mu.Unlock()

	if w.count <= limit {
		return true, 0, nil
	}
	return false, retryAfter(w.end.Sub(now), length), nil
}

// retryAfter rounds left up to whole seconds, within [1s, length rounded up].
func retryAfter(left, length time.Duration) time.Duration {
	ceil := func(d time.Duration) time.Duration {
		return (d + time.Second - 1) / time.Second * time.Second
	}
	return min(max(ceil(left), time.Second), max(ceil(length), time.Second))
}

// evictOne makes room in a full shard. Map iteration order is random, so the
// first few entries are a random sample. s.mu must be held.
func (s *shard) evictOne(now time.Time) {
	var victim string
	var victimEnd time.Time
	n := 0
	for k, w := range s.entries {
		if !now.Before(w.end) {
			delete(s.entries, k)
			return
		}
		if n == 0 || w.end.Before(victimEnd) {
			victim, victimEnd = k, w.end
		}
		if n++; n == evictionSample {
			break
		}
	}
	delete(s.entries, victim)
}

func (m *Memory) janitor() {
	defer close(m.done)
	t := time.NewTicker(m.sweepInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.sweep()
		}
	}
}

// sweep deletes expired windows, one shard at a time so Allow on other
// shards never waits for it.
func (m *Memory) sweep() {
	now := m.now()
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		for k, w := range s.entries {
			if !now.Before(w.end) {
				delete(s.entries, k)
			}
		}
		s.mu.Unlock()
	}
}

// Len returns the number of keys held, expired windows not yet swept
// included.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.entries)
		s.mu.Unlock()
	}
	return n
}
