package ratelimit_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/ratelimit"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/ports/conformance"
)

func TestMemory_contract(t *testing.T) {
	conformance.RunRateLimiter(t, func(t *testing.T, now func() time.Time) ports.RateLimiter {
		return newMemory(t, ratelimit.WithClock(now))
	})
}

func newMemory(t *testing.T, opts ...ratelimit.Option) *ratelimit.Memory {
	t.Helper()
	m := ratelimit.NewMemory(opts...)
	t.Cleanup(m.Close)
	return m
}

// clock is a settable clock shared with a janitor goroutine.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func mustAllow(t *testing.T, m *ratelimit.Memory, key string, limit int, window time.Duration) (bool, time.Duration) {
	t.Helper()
	ok, retry, err := m.Allow(context.Background(), key, limit, window)
	if err != nil {
		t.Fatal(err)
	}
	return ok, retry
}

func TestMemory_retryAfterRoundsUpToWholeSeconds(t *testing.T) {
	tests := []struct {
		name    string
		window  time.Duration
		elapsed time.Duration
		want    time.Duration
	}{
		{"fraction_rounds_up", time.Minute, 500 * time.Millisecond, time.Minute},
		{"whole_seconds_stay", time.Minute, 20 * time.Second, 40 * time.Second},
		{"last_instant_is_one_second", time.Minute, time.Minute - time.Nanosecond, time.Second},
		{"sub_second_window_is_one_second", 300 * time.Millisecond, 0, time.Second},
		{"fractional_window_caps_at_its_ceiling", 1500 * time.Millisecond, 0, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			m := newMemory(t, ratelimit.WithClock(c.Now))
			mustAllow(t, m, "k", 1, tt.window)
			c.Advance(tt.elapsed)
			ok, got := mustAllow(t, m, "k", 1, tt.window)
			if ok {
				t.Fatal("allowed, want refused")
			}
			if got != tt.want {
				t.Fatalf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMemory_invalidArguments(t *testing.T) {
	m := newMemory(t)
	for _, tt := range []struct {
		limit  int
		window time.Duration
	}{{0, time.Minute}, {-1, time.Minute}, {1, 0}, {1, -time.Second}} {
		if ok, _, err := m.Allow(context.Background(), "k", tt.limit, tt.window); err == nil || ok {
			t.Errorf("Allow(limit %d, window %v) = %v, %v; want refused with an error", tt.limit, tt.window, ok, err)
		}
	}
}

// Ensure a key used with a new window starts a fresh count instead of being
// held to the old, longer window.
func TestMemory_changedWindowStartsAgain(t *testing.T) {
	m := newMemory(t, ratelimit.WithClock(newClock().Now))
	mustAllow(t, m, "k", 1, time.Hour)
	if ok, _ := mustAllow(t, m, "k", 1, time.Hour); ok {
		t.Fatal("second hit in the hour allowed")
	}
	if ok, _ := mustAllow(t, m, "k", 1, time.Minute); !ok {
		t.Fatal("first hit with a new window refused")
	}
}

// Ensure the janitor bounds memory under key churn (one key per client).
func TestMemory_janitorDeletesExpiredWindows(t *testing.T) {
	c := newClock()
	m := newMemory(t, ratelimit.WithClock(c.Now), ratelimit.WithSweepInterval(5*time.Millisecond))
	const keys = 100_000
	for i := range keys {
		mustAllow(t, m, fmt.Sprintf("ip:%d", i), 5, time.Minute)
	}
	if got := m.Len(); got != keys {
		t.Fatalf("Len() = %d after %d keys, want %d (no window has expired)", got, keys, keys)
	}
	c.Advance(time.Minute)
	mustAllow(t, m, "fresh", 5, time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for m.Len() > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("Len() = %d ten seconds after the windows expired, want 1", m.Len())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ok, _ := mustAllow(t, m, "fresh", 1, time.Minute); ok {
		t.Fatal("janitor deleted a live window")
	}
}

// Ensure the bound is in bytes: distinct keys past it evict older ones, and
// the memory counted never exceeds it while most of it stays in use.
func TestMemory_byteBoundEvicts(t *testing.T) {
	c := newClock()
	const maxBytes = 1 << 20
	m := newMemory(t, ratelimit.WithClock(c.Now), ratelimit.WithSweepInterval(0), ratelimit.WithMaxBytes(maxBytes))
	for i := range 100_000 {
		c.Advance(time.Millisecond)
		if ok, _ := mustAllow(t, m, fmt.Sprintf("global|%064d", i), 5, time.Hour); !ok {
			t.Fatalf("new key %d refused", i)
		}
		if got := m.Bytes(); got > maxBytes {
			t.Fatalf("Bytes() = %d after %d keys, want at most %d", got, i+1, maxBytes)
		}
	}
	if got, want := m.Bytes(), maxBytes/2; got < want {
		t.Fatalf("Bytes() = %d, want the bound mostly used (at least %d)", got, want)
	}
	if got, want := m.Bytes(), m.Len()*(ratelimit.EntryOverhead+len("global|")+64); got != want {
		t.Fatalf("Bytes() = %d for %d keys, want each key's length plus %d", got, m.Len(), ratelimit.EntryOverhead)
	}
}

// Ensure long keys cost no more than MaxKeyBytes each: a flood of 60 KB keys
// (the raw paths of the memory flood) holds far fewer bytes than it
// sent, and each long key still has its own count.
func TestMemory_longKeysAreBounded(t *testing.T) {
	c := newClock()
	const maxBytes = 1 << 20
	m := newMemory(t, ratelimit.WithClock(c.Now), ratelimit.WithSweepInterval(0), ratelimit.WithMaxBytes(maxBytes))
	long := strings.Repeat("x", 60_000)
	for i := range 2_000 {
		if ok, _ := mustAllow(t, m, long+strconv.Itoa(i), 1, time.Hour); !ok {
			t.Fatalf("new long key %d refused", i)
		}
	}
	if got, want := m.Bytes(), m.Len()*(ratelimit.EntryOverhead+ratelimit.MaxKeyBytes); got > want || got > maxBytes {
		t.Fatalf("Bytes() = %d for %d long keys, want at most %d each and %d in all", got, m.Len(), ratelimit.EntryOverhead+ratelimit.MaxKeyBytes, maxBytes)
	}
	if ok, _ := mustAllow(t, m, long+"1999", 1, time.Hour); ok {
		t.Fatal("second hit on a long key allowed, want refused")
	}
	if ok, _ := mustAllow(t, m, long+"fresh", 1, time.Hour); !ok {
		t.Fatal("first hit on another long key refused")
	}
}

// Ensure the janitor gives back the cost of the windows it deletes, so the
// bound tracks live entries only.
func TestMemory_sweepReleasesBytes(t *testing.T) {
	c := newClock()
	m := newMemory(t, ratelimit.WithClock(c.Now), ratelimit.WithSweepInterval(5*time.Millisecond))
	for i := range 1000 {
		mustAllow(t, m, fmt.Sprintf("ip:%d", i), 5, time.Minute)
	}
	c.Advance(time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for m.Bytes() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Bytes() = %d ten seconds after every window expired, want 0", m.Bytes())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestMemory_closeIsIdempotent(t *testing.T) {
	m := ratelimit.NewMemory()
	m.Close()
	m.Close()
	if ok, _ := mustAllow(t, m, "k", 1, time.Minute); !ok {
		t.Fatal("Allow after Close refused")
	}
}

func BenchmarkAllow(b *testing.B) {
	m := ratelimit.NewMemory()
	b.Cleanup(m.Close)
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = fmt.Sprintf("sign-in:198.51.%d.%d", i/256, i%256)
	}
	var next atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(7919)
		for pb.Next() {
			i++
			if _, _, err := m.Allow(context.Background(), keys[i%uint64(len(keys))], 1_000_000, time.Minute); err != nil {
				b.Fatal(err)
			}
		}
	})
}
