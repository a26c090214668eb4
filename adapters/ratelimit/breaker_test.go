package ratelimit_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/ratelimit"
)

// hangingStore is a shared store that allows every hit while it is up, and
// while it is down holds each hit until the hit's context ends, as a server
// that swallows every byte does (or until release, to end a hit at a time
// of the test's choosing).
type hangingStore struct {
	down    atomic.Bool
	calls   atomic.Int64
	entered chan struct{} // if set, told as each hit starts
	release chan struct{} // if set, ends a held hit with an error
}

func (f *hangingStore) Allow(ctx context.Context, _ string, _ int, _ time.Duration) (bool, time.Duration, error) {
	f.calls.Add(1)
	if f.entered != nil {
		f.entered <- struct{}{}
	}
	if !f.down.Load() {
		return true, 0, nil
	}
	select {
	case <-ctx.Done():
		return false, 0, ctx.Err()
	case <-f.release:
		return false, 0, errors.New("hanging store: down")
	}
}

// The bounds of the breaker tests: a store deadline short enough that a
// hanging hit costs a test next to nothing, and the default cooldown, which
// the fake clock skips.
const (
	testStoreTimeout = 5 * time.Millisecond
	testCooldown     = ratelimit.DefaultStoreCooldown
)

// newBreakerShared returns a Shared over store on clock, logging to logs.
func newBreakerShared(t *testing.T, store *hangingStore, clock *clock, logs *syncBuffer) *ratelimit.Shared {
	t.Helper()
	s := ratelimit.NewShared(store, "test store", slog.New(slog.NewJSONHandler(logs, nil)),
		ratelimit.SharedOptions{Timeout: testStoreTimeout, Cooldown: testCooldown}, ratelimit.WithClock(clock.Now))
	t.Cleanup(s.Close)
	return s
}

// allowAsync counts a hit on key (limit 3 a minute) in a goroutine of its
// own and sends whether it was allowed.
func allowAsync(s *ratelimit.Shared, key string) <-chan bool {
	res := make(chan bool, 1)
	go func() {
		ok, _, _ := s.Allow(context.Background(), key, 3, time.Minute)
		res <- ok
	}()
	return res
}

// mustCalls fails unless the store was asked want times.
func mustCalls(t *testing.T, store *hangingStore, want int64, when string) {
	t.Helper()
	if got := store.calls.Load(); got != want {
		t.Fatalf("%s: the store was asked %d times, want %d", when, got, want)
	}
}

// Ensure a store that hangs costs a hit the Shared's own deadline, not the
// caller's (a request's context has none): the hit comes back, counted in
// memory, and the limit holds there.
func TestShared_deadline_bounds_a_hanging_store(t *testing.T) {
	t.Parallel()
	store := &hangingStore{}
	store.down.Store(true)
	s := newBreakerShared(t, store, newClock(), &syncBuffer{})
	for i, want := range []bool{true, true, true, false} {
		select {
		case got := <-allowAsync(s, "k"):
			if got != want {
				t.Fatalf("hit %d on a hanging store: allowed %v, want %v", i+1, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a hit on a hanging store did not come back: the store has no deadline of its own")
		}
	}
	if s.Failures() != 4 || !s.Down() {
		t.Fatalf("Failures() = %d, Down() = %v after 4 hits on a hanging store, want 4 and true", s.Failures(), s.Down())
	}
}

// Ensure a failure opens the breaker: for the cooldown no hit asks the
// store (each is counted in memory, the limit holding there), one hit
// asks it once the cooldown is over, and a probe that fails opens it for
// another cooldown. The opening is logged once, not per hit.
func TestShared_breaker_leaves_a_failed_store_alone_for_the_cooldown(t *testing.T) {
	t.Parallel()
	store := &hangingStore{}
	store.down.Store(true)
	clock, logs := newClock(), &syncBuffer{}
	s := newBreakerShared(t, store, clock, logs)

	mustAllowed(t, s, "k", true)
	mustCalls(t, store, 1, "after the first hit")
	mustAllowed(t, s, "k", true)
	mustAllowed(t, s, "k", true)
	for range 50 {
		mustAllowed(t, s, "k", false)
	}
	mustCalls(t, store, 1, "53 hits after a failure")
	if s.Failures() != 53 || !s.Down() {
		t.Fatalf("Failures() = %d, Down() = %v, want 53 and true", s.Failures(), s.Down())
	}

	clock.Advance(testCooldown - time.Nanosecond)
	mustAllowed(t, s, "other", true)
	mustCalls(t, store, 1, "just before the cooldown ends")

	clock.Advance(time.Nanosecond)
	mustAllowed(t, s, "other", true) // the probe, which fails
	mustCalls(t, store, 2, "once the cooldown is over")
	for i := range 10 {
		mustAllowed(t, s, "third"+strconv.Itoa(i), true)
		clock.Advance(testCooldown / 10)
	}
	mustCalls(t, store, 2, "during the cooldown after a failed probe")

	clock.Advance(time.Nanosecond)
	mustAllowed(t, s, "fourth", true)
	mustCalls(t, store, 3, "after the second cooldown")
	if n := strings.Count(logs.String(), "the shared store failed"); n != 1 {
		t.Fatalf("the opening was logged %d times, want once; logs:\n%s", n, logs)
	}
	if strings.Contains(logs.String(), "answers again") {
		t.Fatalf("a failed probe was logged as the return; logs:\n%s", logs)
	}
}

// Ensure a probe that is answered closes the breaker: the return is logged,
// and every hit asks the store again.
func TestShared_breaker_closes_when_the_probe_is_answered(t *testing.T) {
	t.Parallel()
	store := &hangingStore{}
	store.down.Store(true)
	clock, logs := newClock(), &syncBuffer{}
	s := newBreakerShared(t, store, clock, logs)
	mustAllowed(t, s, "k", true)

	store.down.Store(false)
	clock.Advance(testCooldown)
	mustAllowed(t, s, "k", true)
	mustCalls(t, store, 2, "after the probe")
	if s.Down() {
		t.Fatal("Down() after an answered probe")
	}
	for range 5 {
		mustAllowed(t, s, "k", true)
	}
	mustCalls(t, store, 7, "after the breaker closed")
	if s.Failures() != 1 {
		t.Fatalf("Failures() = %d, want the one hit the store failed", s.Failures())
	}
	if n := strings.Count(logs.String(), "the shared store answers again"); n != 1 {
		t.Fatalf("the return was logged %d times, want once; logs:\n%s", n, logs)
	}
}

// Ensure one hit at a time probes the store: while the probe waits, the
// other hits are counted in memory at once instead of waiting too.
func TestShared_breaker_probes_one_hit_at_a_time(t *testing.T) {
	t.Parallel()
	store := &hangingStore{entered: make(chan struct{}, 1), release: make(chan struct{})}
	store.down.Store(true)
	clock := newClock()
	s := ratelimit.NewShared(store, "test store", discard, ratelimit.SharedOptions{Timeout: time.Minute, Cooldown: testCooldown},
		ratelimit.WithClock(clock.Now))
	t.Cleanup(s.Close)

	opened := allowAsync(s, "k")
	<-store.entered
	store.release <- struct{}{}
	<-opened

	clock.Advance(testCooldown)
	probed := allowAsync(s, "k")
	<-store.entered // the probe is held by the store
	for i := range 20 {
		mustAllowed(t, s, "other"+strconv.Itoa(i), true)
	}
	mustCalls(t, store, 2, "while the probe waits")
	store.release <- struct{}{}
	<-probed
	if !s.Down() {
		t.Fatal("the breaker closed after a failed probe")
	}
}

// Ensure a hit whose caller went away (its request's context ended) neither
// opens the breaker nor keeps a probe's place: it says nothing of the store.
func TestShared_breaker_ignores_callers_that_go_away(t *testing.T) {
	t.Parallel()
	store := &hangingStore{}
	store.down.Store(true)
	clock := newClock()
	s := ratelimit.NewShared(store, "test store", discard, ratelimit.SharedOptions{Timeout: time.Minute, Cooldown: testCooldown},
		ratelimit.WithClock(clock.Now))
	t.Cleanup(s.Close)

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.Allow(gone, "k", 3, time.Minute); err != nil {
		t.Fatal(err)
	}
	if s.Down() {
		t.Fatal("a caller that went away opened the breaker")
	}

	// Opened by a failure, then probed by a caller that goes away: the
	// next hit probes in its place.
	sOpen := newBreakerShared(t, store, clock, &syncBuffer{})
	mustAllowed(t, sOpen, "k", true)
	clock.Advance(testCooldown)
	before := store.calls.Load()
	if _, _, err := sOpen.Allow(gone, "k", 3, time.Minute); err != nil {
		t.Fatal(err)
	}
	mustAllowed(t, sOpen, "k", true)
	mustCalls(t, store, before+2, "after an abandoned probe")
}
