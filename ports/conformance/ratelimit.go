package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

// RunRateLimiter runs the RateLimiter contract on a limiter of one process.
// newLimiter must return an empty limiter that reads the time from now
// only; the suite owns that clock and moves it forward, so no test sleeps.
func RunRateLimiter(t *testing.T, newLimiter func(t *testing.T, now func() time.Time) ports.RateLimiter) {
	t.Helper()
	for _, tc := range limiterCases {
		t.Run("contract=RateLimiter/"+tc.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
			tc.fn(t, &limiterEnv{rl: newLimiter(t, clock.Now), advance: clock.Advance, fake: true,
				short: time.Minute, long: time.Hour})
		})
	}
}

// RunSharedRateLimiter runs the RateLimiter contract on limiters over a
// store that replicas share (Redis, PostgreSQL), plus the cases that only
// such a store passes: what one replica counts, the others see. These
// limiters count time by the store's clock, which no test can move: the
// suite waits for real, with windows of a few seconds, and runs its cases
// at once, each on keys of its own, so the store need not be empty. (They
// run from goroutines rather than as parallel subtests: they mostly
// sleep, and -parallel would run them a few at a time.) Each call of
// newLimiter must return a new client of the same store, as another
// replica would hold one.
func RunSharedRateLimiter(t *testing.T, newLimiter func(t *testing.T) ports.RateLimiter) {
	t.Helper()
	var wg sync.WaitGroup
	for _, tc := range append(limiterCases[:len(limiterCases):len(limiterCases)], sharedLimiterCases...) {
		wg.Go(func() {
			t.Run("contract=RateLimiter/"+tc.name, func(t *testing.T) {
				var b [6]byte
				_, _ = rand.Read(b[:])
				tc.fn(t, &limiterEnv{rl: newLimiter(t), replica: func() ports.RateLimiter { return newLimiter(t) },
					advance: time.Sleep, slack: 250 * time.Millisecond, short: 4 * time.Second, long: time.Minute,
					prefix: "conformance-" + hex.EncodeToString(b[:]) + "/"})
			})
		})
	}
	wg.Wait()
}

// limiterEnv is what a case runs against: the limiter, the time it counts
// by and the windows to use. short is a window the case waits out; long one
// it never outlives.
type limiterEnv struct {
	rl          ports.RateLimiter
	replica     func() ports.RateLimiter // another client of the same store; nil for a limiter of one process
	advance     func(time.Duration)      // lets time pass: a fake clock moves, a real one sleeps
	fake        bool                     // advance costs nothing
	slack       time.Duration            // added to a wait for a window to end, for a store's clock a few milliseconds behind the suite's
	short, long time.Duration
	prefix      string // in front of every key, so that cases sharing a store do not meet
}

// waitOut lets at least d pass by the store's clock.
func (e *limiterEnv) waitOut(d time.Duration) { e.advance(d + e.slack) }

// key returns the case's own key for name.
func (e *limiterEnv) key(name string) string { return e.prefix + name }

type limiterCase struct {
	name string
	fn   func(t *testing.T, e *limiterEnv)
}

var limiterCases = []limiterCase{
	{"allows_up_to_limit_then_refuses", testLimiterAllowsUpToLimit},
	{"retry_after_is_within_window", testLimiterRetryAfter},
	{"keys_are_independent", testLimiterIndependentKeys},
	{"long_and_odd_keys_are_independent", testLimiterLongAndOddKeys},
	{"new_window_allows_again", testLimiterNewWindow},
	{"waiting_retry_after_reopens_the_key", testLimiterWaitRetryAfter},
	{"refused_hits_keep_the_key_closed", testLimiterRefusedHitsCounted},
	{"limit_of_one", testLimiterLimitOfOne},
	{"concurrent_hits_allow_exactly_limit", testLimiterConcurrent},
	{"limits_and_windows_per_key_are_respected", testLimiterPerKeyLimits},
}

var sharedLimiterCases = []limiterCase{
	{"replicas_share_counts", testLimiterReplicasShareCounts},
	{"replicas_share_windows", testLimiterReplicasShareWindows},
	{"concurrent_hits_on_replicas_allow_exactly_limit", testLimiterReplicasConcurrent},
}

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func mustAllow(t *testing.T, rl ports.RateLimiter, key string, limit int, window time.Duration) (bool, time.Duration) {
	t.Helper()
	ok, retry, err := rl.Allow(context.Background(), key, limit, window)
	if err != nil {
		t.Fatalf("Allow(%q, %d, %v): %v", key, limit, window, err)
	}
	if ok && retry != 0 {
		t.Fatalf("Allow(%q) allowed with retryAfter %v, want 0", key, retry)
	}
	return ok, retry
}

func expectAllowed(t *testing.T, rl ports.RateLimiter, key string, limit int, window time.Duration, times int) {
	t.Helper()
	for i := range times {
		if ok, retry := mustAllow(t, rl, key, limit, window); !ok {
			t.Fatalf("Allow(%q) #%d refused (retryAfter %v), want allowed", key, i+1, retry)
		}
	}
}

func expectRefused(t *testing.T, rl ports.RateLimiter, key string, limit int, window time.Duration) time.Duration {
	t.Helper()
	ok, retry := mustAllow(t, rl, key, limit, window)
	if ok {
		t.Fatalf("Allow(%q) allowed, want refused", key)
	}
	if retry < time.Second || retry > window || retry%time.Second != 0 {
		t.Fatalf("Allow(%q) retryAfter = %v, want whole seconds within [1s, %v]", key, retry, window)
	}
	return retry
}

func testLimiterAllowsUpToLimit(t *testing.T, e *limiterEnv) {
	k := e.key("k")
	expectAllowed(t, e.rl, k, 5, e.long, 5)
	expectRefused(t, e.rl, k, 5, e.long)
}

func testLimiterRetryAfter(t *testing.T, e *limiterEnv) {
	k, window, waited := e.key("k"), e.long, e.short/3
	expectAllowed(t, e.rl, k, 2, window, 2)
	first := expectRefused(t, e.rl, k, 2, window)
	e.advance(waited)
	later := expectRefused(t, e.rl, k, 2, window)
	if later > first {
		t.Fatalf("retryAfter grew from %v to %v as time passed", first, later)
	}
	if most := window - waited + time.Second; later > most {
		t.Fatalf("retryAfter = %v after %v of a %v window, want at most %v", later, waited, window, most)
	}
}

func testLimiterIndependentKeys(t *testing.T, e *limiterEnv) {
	a, b := e.key("a"), e.key("b")
	expectAllowed(t, e.rl, a, 3, e.long, 3)
	expectRefused(t, e.rl, a, 3, e.long)
	expectAllowed(t, e.rl, b, 3, e.long, 3)
	expectRefused(t, e.rl, b, 3, e.long)
}

// A store may keep long keys as a digest: keys sharing a long prefix must
// not share a count (as they would if the store cut them short), and keys
// of any bytes are counted.
func testLimiterLongAndOddKeys(t *testing.T, e *limiterEnv) {
	long := e.key(strings.Repeat("x", 4096))
	keys := []string{long + "1", long + "2", e.key("\x00\xff\xfe é|:*?"), e.key("sha256:" + strings.Repeat("0", 64)), e.key("")}
	for _, k := range keys {
		expectAllowed(t, e.rl, k, 2, e.long, 2)
		expectRefused(t, e.rl, k, 2, e.long)
	}
}

func testLimiterNewWindow(t *testing.T, e *limiterEnv) {
	k := e.key("k")
	expectAllowed(t, e.rl, k, 3, e.short, 3)
	expectRefused(t, e.rl, k, 3, e.short)
	e.waitOut(e.short)
	expectAllowed(t, e.rl, k, 3, e.short, 3)
	expectRefused(t, e.rl, k, 3, e.short)
}

func testLimiterWaitRetryAfter(t *testing.T, e *limiterEnv) {
	k := e.key("k")
	expectAllowed(t, e.rl, k, 1, e.short, 1)
	e.advance(e.short * 5 / 12)
	retry := expectRefused(t, e.rl, k, 1, e.short)
	e.waitOut(retry)
	expectAllowed(t, e.rl, k, 1, e.short, 1)
}

// Hammering a closed key keeps it closed to the end of its window, and
// no longer: refused hits count, and do not move the window.
func testLimiterRefusedHitsCounted(t *testing.T, e *limiterEnv) {
	k, window := e.key("k"), e.short
	expectAllowed(t, e.rl, k, 3, window, 3)
	const steps = 20
	for range steps {
		for range 5 {
			expectRefused(t, e.rl, k, 3, window)
		}
		e.advance(window * 2 / 3 / steps)
	}
	expectRefused(t, e.rl, k, 3, window)
	e.waitOut(window - window*2/3)
	expectAllowed(t, e.rl, k, 3, window, 3)
	expectRefused(t, e.rl, k, 3, window)
}

func testLimiterLimitOfOne(t *testing.T, e *limiterEnv) {
	k := e.key("k")
	expectAllowed(t, e.rl, k, 1, e.short, 1)
	expectRefused(t, e.rl, k, 1, e.short)
	e.waitOut(e.short)
	expectAllowed(t, e.rl, k, 1, e.short, 1)
	expectRefused(t, e.rl, k, 1, e.short)
}

// hitConcurrently makes goroutines hits on key at once, spread over
// limiters, and returns how many were allowed.
func hitConcurrently(t *testing.T, limiters []ports.RateLimiter, key string, goroutines, limit int, window time.Duration) (allowed, refused int) {
	t.Helper()
	var ok, no atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range goroutines {
		rl := limiters[i%len(limiters)]
		wg.Go(func() {
			<-start
			allowed, _, err := rl.Allow(context.Background(), key, limit, window)
			switch {
			case err != nil:
				t.Error(err)
			case allowed:
				ok.Add(1)
			default:
				no.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	return int(ok.Load()), int(no.Load())
}

func testLimiterConcurrent(t *testing.T, e *limiterEnv) {
	const goroutines, limit = 100, 50
	allowed, refused := hitConcurrently(t, []ports.RateLimiter{e.rl}, e.key("hot"), goroutines, limit, e.long)
	if allowed != limit || refused != goroutines-limit {
		t.Fatalf("allowed %d and refused %d of %d concurrent hits, want exactly %d allowed", allowed, refused, goroutines, limit)
	}
}

func testLimiterPerKeyLimits(t *testing.T, e *limiterEnv) {
	// Two policies for one client, as the HTTP edge uses them: a tight
	// limit on sign-in and a looser one over a longer window on sign-up.
	client := e.key("192.0.2.1")
	signIn, signUp := "sign-in:"+client, "sign-up:"+client
	expectAllowed(t, e.rl, signIn, 3, e.short, 3)
	expectRefused(t, e.rl, signIn, 3, e.short)
	expectAllowed(t, e.rl, signUp, 10, e.long, 5)

	e.waitOut(e.short)
	expectAllowed(t, e.rl, signIn, 3, e.short, 3)
	expectRefused(t, e.rl, signIn, 3, e.short)
	expectAllowed(t, e.rl, signUp, 10, e.long, 5)
	retry := expectRefused(t, e.rl, signUp, 10, e.long)
	if retry <= e.short {
		t.Fatalf("sign-up retryAfter = %v, want the rest of its %v, more than %v", retry, e.long, e.short)
	}

	if e.fake {
		e.advance(e.long - e.short)
		expectAllowed(t, e.rl, signUp, 10, e.long, 10)
	}
	for i := range 3 {
		key := fmt.Sprintf("other-%d:%s", i, client)
		expectAllowed(t, e.rl, key, 1, time.Second, 1)
		expectRefused(t, e.rl, key, 1, time.Second)
	}
}

// Hits spread over two replicas count together: together they get limit,
// and then each refuses.
func testLimiterReplicasShareCounts(t *testing.T, e *limiterEnv) {
	other := e.replica()
	k := e.key("k")
	for i := range 4 {
		rl := e.rl
		if i%2 == 1 {
			rl = other
		}
		expectAllowed(t, rl, k, 4, e.long, 1)
	}
	expectRefused(t, e.rl, k, 4, e.long)
	expectRefused(t, other, k, 4, e.long)
}

// A window opened on one replica closes and ends for every replica at once.
func testLimiterReplicasShareWindows(t *testing.T, e *limiterEnv) {
	other := e.replica()
	k := e.key("k")
	expectAllowed(t, e.rl, k, 1, e.short, 1)
	retry := expectRefused(t, other, k, 1, e.short)
	e.waitOut(retry)
	expectAllowed(t, other, k, 1, e.short, 1)
	expectRefused(t, e.rl, k, 1, e.short)
}

func testLimiterReplicasConcurrent(t *testing.T, e *limiterEnv) {
	const goroutines, limit = 90, 40
	limiters := []ports.RateLimiter{e.rl, e.replica(), e.replica()}
	allowed, refused := hitConcurrently(t, limiters, e.key("hot"), goroutines, limit, e.long)
	if allowed != limit || refused != goroutines-limit {
		t.Fatalf("allowed %d and refused %d of %d concurrent hits on three replicas, want exactly %d allowed", allowed, refused, goroutines, limit)
	}
}
