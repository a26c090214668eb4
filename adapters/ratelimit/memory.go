package ratelimit

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.RateLimiter = (*Memory)(nil)

const (
	shardCount = 32
	// DefaultMaxBytes bounds the memory the windows take: 64 MiB, room for
	// about 250,000 keys of 80 bytes, far more clients than one instance
	// serves within a window.
	DefaultMaxBytes = 64 << 20
	// EntryOverhead is what one entry costs besides its key's bytes: the map
	// slot (key header and window pointer), its spare capacity after growth,
	// and the window's and the key's allocations. It is an upper estimate:
	// on go1.26 a limiter full at the default bound takes 40 to 53 MiB of
	// heap for keys of 20 bytes to 2 KB.
	EntryOverhead = 176
	// MaxKeyBytes is the longest key stored as it is. Longer keys are stored
	// as their SHA-256 digest, so no caller can make one entry large.
	MaxKeyBytes = 256
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
// Memory is bounded in bytes (WithMaxBytes): each entry counts its key's
// length plus EntryOverhead, and keys longer than MaxKeyBytes are kept as a
// digest. The bound is split evenly over the shards. A new key that would
// take its shard past its share evicts entries from that shard first: an
// expired one if a random sample of 8 holds one, otherwise the sampled entry
// whose window ends soonest. An evicted key starts afresh, so a flood of
// distinct keys that fills the bound can reset other keys early; the bound
// is there to cap memory, and should sit well above normal use.
type Memory struct {
	now           func() time.Time
	maxShardBytes int
	sweepInterval time.Duration
	seed          maphash.Seed
	shards        [shardCount]shard

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type shard struct {
	mu      sync.Mutex
	entries map[string]*window // updated in place, so a hit never replaces the stored key
	bytes   int                // the cost of entries: their keys' lengths plus EntryOverhead each
	// Keep shards on separate cache lines so that hot shards don't slow
	// their neighbours.
	_ [40]byte
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

// WithMaxBytes sets the bound on the memory entries take (DefaultMaxBytes),
// counted as each key's length plus EntryOverhead. It is split evenly over
// the shards, so the total never exceeds it; each shard holds at least one
// entry whatever the bound.
func WithMaxBytes(n int) Option {
	return func(m *Memory) { m.maxShardBytes = max(EntryOverhead+MaxKeyBytes, n/shardCount) }
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
		maxShardBytes: DefaultMaxBytes / shardCount,
		sweepInterval: DefaultSweepInterval,
		seed:          maphash.MakeSeed(),
		stop:          make(chan struct{}),
		done:          make(chan struct{}),
	}
	for _, o := range opts {
		o(m)
	}
	for i := range m.shards {
		m.shards[i].entries = make(map[string]*window)
	}
	if m.sweepInterval > 0 {
		go m.janitor()
	} else {
		close(m.done)
	}
	return m
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
	if len(key) > MaxKeyBytes {
		key = digestKey(key)
	}
	now := m.now()
	s := &m.shards[maphash.String(m.seed, key)%shardCount]

	s.mu.Lock()
	w, ok := s.entries[key]
	if !ok {
		cost := len(key) + EntryOverhead
		for s.bytes+cost > m.maxShardBytes && len(s.entries) > 0 {
			s.evictOne(now)
		}
		// Keep only the key's own bytes, not a larger string it may share.
		w = &window{}
		s.entries[strings.Clone(key)] = w
		s.bytes += cost
	}
	if !ok || !now.Before(w.end) || w.length != length {
		*w = window{end: now.Add(length), length: length}
	}
	// Saturate rather than overflow under endless hammering.
	if w.count <= limit {
		w.count++
	}
	count, end := w.count, w.end
	s.mu.Unlock()

	if count <= limit {
		return true, 0, nil
	}
	return false, retryAfter(end.Sub(now), length), nil
}

// digestPrefix starts a digested key. It holds a NUL byte, which no key built
// from rule names, addresses and ids contains, so a digest cannot collide
// with a short key.
const digestPrefix = "\x00sha256:"

// digestKey replaces a long key by a fixed-size digest of it.
func digestKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return digestPrefix + string(sum[:])
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
			s.remove(k)
			return
		}
		if n == 0 || w.end.Before(victimEnd) {
			victim, victimEnd = k, w.end
		}
		if n++; n == evictionSample {
			break
		}
	}
	s.remove(victim)
}

// remove deletes key's entry and its cost. s.mu must be held.
func (s *shard) remove(key string) {
	if _, ok := s.entries[key]; ok {
		delete(s.entries, key)
		s.bytes -= len(key) + EntryOverhead
	}
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
				s.remove(k)
			}
		}
		if len(s.entries) == 0 {
			// A Go map keeps its buckets after deletes: start a small one so
			// a past flood's memory goes back to the runtime.
			s.entries = make(map[string]*window)
		}
		s.mu.Unlock()
	}
}

// Bytes returns the cost of the keys held, as the bound counts it (each key's
// length plus EntryOverhead).
func (m *Memory) Bytes() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += s.bytes
		s.mu.Unlock()
	}
	return n
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
