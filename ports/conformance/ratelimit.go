package conformance

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

// RunRateLimiter runs the RateLimiter contract. newLimiter must return an
// empty limiter that reads the time from now only; the suite owns that clock
// and moves it forward, so no test sleeps.
func RunRateLimiter(t *testing.T, newLimiter func(t *testing.T, now func() time.Time) ports.RateLimiter) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, rl ports.RateLimiter, clock *fakeClock)
	}{
		{"allows_up_to_limit_then_refuses", testLimiterAllowsUpToLimit},
		{"retry_after_is_within_window", testLimiterRetryAfter},
		{"keys_are_independent", testLimiterIndependentKeys},
		{"new_window_allows_again", testLimiterNewWindow},
		{"waiting_retry_after_reopens_the_key", testLimiterWaitRetryAfter},
		{"refused_hits_keep_the_key_closed", testLimiterRefusedHitsCounted},
		{"limit_of_one", testLimiterLimitOfOne},
		{"concurrent_hits_allow_exactly_limit", testLimiterConcurrent},
		{"limits_and_windows_per_key_are_respected", testLimiterPerKeyLimits},
	}
	for _, tt := range tests {
		t.Run("contract=RateLimiter/"+tt.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
			tt.fn(t, newLimiter(t, clock.Now), clock)
		})
	}
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
	if retry < time.Second || retry > window {
		t.Fatalf("Allow(%q) retryAfter = %v, want within [1s, %v]", key, retry, window)
	}
	return retry
}

func testLimiterAllowsUpToLimit(t *testing.T, rl ports.RateLimiter, _ *fakeClock) {
	expectAllowed(t, rl, "k", 5, time.Minute, 5)
	expectRefused(t, rl, "k", 5, time.Minute)
}

func testLimiterRetryAfter(t *testing.T, rl ports.RateLimiter, clock *fakeClock) {
	const window = time.Minute
	expectAllowed(t, rl, "k", 2, window, 2)
	first := expectRefused(t, rl, "k", 2, window)
	clock.Advance(20 * time.Second)
	later := expectRefused(t, rl, "k", 2, window)
	if later > first {
		t.Fatalf("retryAfter grew from %v to %v as time passed", first, later)
	}
	if later > window-20*time.Second+time.Second {
		t.Fatalf("retryAfter = %v after 20s of a %v window, want at most %v", later, window, window-19*time.Second)
	}
}

func testLimiterIndependentKeys(t *testing.T, rl ports.RateLimiter, _ *fakeClock) {
	expectAllowed(t, rl, "a", 3, time.Minute, 3)
	expectRefused(t, rl, "a", 3, time.Minute)
	expectAllowed(t, rl, "b", 3, time.Minute, 3)
	expectRefused(t, rl, "b", 3, time.Minute)
}

func testLimiterNewWindow(t *testing.T, rl ports.RateLimiter, clock *fakeClock) {
	expectAllowed(t, rl, "k", 3, time.Minute, 3)
	expectRefused(t, rl, "k", 3, time.Minute)
	clock.Advance(time.Minute)
	expectAllowed(t, rl, "k", 3, time.Minute, 3)
	expectRefused(t, rl, "k", 3, time.Minute)
}

func testLimiterWaitRetryAfter(t *testing.T, rl ports.RateLimiter, clock *fakeClock) {
	expectAllowed(t, rl, "k", 1, time.Minute, 1)
	clock.Advance(25 * time.Second)
	retry := expectRefused(t, rl, "k", 1, time.Minute)
	clock.Advance(retry)
	expectAllowed(t, rl, "k", 1, time.Minute, 1)
}

func testLimiterRefusedHitsCounted(t *testing.T, rl ports.RateLimiter, clock *fakeClock) {
	const window = time.Minute
	expectAllowed(t, rl, "k", 3, window, 3)
	// Hammer the closed key across the whole window: it must stay closed.
	for range 59 {
		for range 10 {
			expectRefused(t, rl, "k", 3, window)
		}
		clock.Advance(time.Second)
	}
	expectRefused(t, rl, "k", 3, window)
}

func testLimiterLimitOfOne(t *testing.T, rl ports.RateLimiter, clock *fakeClock) {
	expectAllowed(t, rl, "k", 1, time.Hour, 1)
	expectRefused(t, rl, "k", 1, time.Hour)
	clock.Advance(time.Hour)
	expectAllowed(t, rl, "k", 1, time.Hour, 1)
	expectRefused(t, rl, "k", 1, time.Hour)
}

func testLimiterConcurrent(t *testing.T, rl ports.RateLimiter, _ *fakeClock) {
	const goroutines, limit = 100, 50
	var allowed, refused atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range goroutines {
		wg.Go(func() {
			<-start
			ok, _, err := rl.Allow(context.Background(), "hot", limit, time.Minute)
			switch {
			case err != nil:
				t.Error(err)
			case ok:
				allowed.Add(1)
			default:
				refused.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if got := allowed.Load(); got != limit {
		t.Fatalf("allowed %d of %d concurrent hits, want exactly %d", got, goroutines, limit)
	}
	if got := refused.Load(); got != goroutines-limit {
		t.Fatalf("refused %d, want %d", got, goroutines-limit)
	}
}

func testLimiterPerKeyLimits(t *testing.T, rl ports.RateLimiter, clock *fakeClock) {
	// Two policies for one client, as the HTTP edge uses them: a tight
	// per-minute limit on sign-in and a looser hourly one on sign-up.
	const client = "192.0.2.1"
	signIn, signUp := "sign-in:"+client, "sign-up:"+client
	expectAllowed(t, rl, signIn, 3, time.Minute, 3)
	expectRefused(t, rl, signIn, 3, time.Minute)
	expectAllowed(t, rl, signUp, 10, time.Hour, 5)

	clock.Advance(time.Minute)
	expectAllowed(t, rl, signIn, 3, time.Minute, 3)
	expectRefused(t, rl, signIn, 3, time.Minute)
	expectAllowed(t, rl, signUp, 10, time.Hour, 5)
	retry := expectRefused(t, rl, signUp, 10, time.Hour)
	if retry <= time.Minute {
		t.Fatalf("sign-up retryAfter = %v, want the rest of its hour, not a minute", retry)
	}

	clock.Advance(time.Hour - time.Minute)
	expectAllowed(t, rl, signUp, 10, time.Hour, 10)
	for i := range 3 {
		key := fmt.Sprintf("other-%d:%s", i, client)
		expectAllowed(t, rl, key, 1, time.Second, 1)
		expectRefused(t, rl, key, 1, time.Second)
	}
}
