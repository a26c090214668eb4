package bootstrap

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
)

// settableClock is a clock tests move by hand.
type settableClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *settableClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *settableClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Ensure a singleton job runs on one replica at a time: the holder keeps it
// while it renews at each run, and another replica takes over once the
// holder has stopped renewing for the lease's length.
func TestSingleton_one_replica_runs_each_pass(t *testing.T) {
	leases := memory.NewLeases()
	clock := &settableClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	runs := map[string]int{}
	const interval = time.Hour
	run := map[string]func(context.Context) error{}
	for _, name := range []string{"a", "b"} {
		a := &App{leases: leases, clock: clock, replica: name}
		run[name] = a.singleton(leasePurge, 2*interval, func(context.Context) error { runs[name]++; return nil })
	}
	pass := func(who ...string) {
		t.Helper()
		for _, name := range who {
			if err := run[name](t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for range 5 { // a and b tick every interval; a holds the lease
		pass("a", "b")
		clock.advance(interval)
	}
	if runs["a"] != 5 || runs["b"] != 0 {
		t.Fatalf("runs = %v, want a 5 and b none", runs)
	}
	// a dies: b is refused until the lease ends, two intervals after a's
	// last run, then runs every pass.
	pass("b")
	if runs["b"] != 0 {
		t.Fatalf("b ran within a's lease: %v", runs)
	}
	clock.advance(interval)
	pass("b")
	clock.advance(interval)
	pass("b", "a")
	if runs["b"] != 2 || runs["a"] != 5 {
		t.Fatalf("runs = %v, want b to have taken over (2) and a (back) refused", runs)
	}
}

// Ensure a replica waiting for the start lease gets it as soon as the
// holder releases it.
func TestWaitLease_waits_for_the_holder(t *testing.T) {
	leases := memory.NewLeases()
	clock := &settableClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	release, err := waitLease(t.Context(), leases, clock, leaseStart, "a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		releaseB, err := waitLease(t.Context(), leases, clock, leaseStart, "b", time.Minute)
		if err == nil {
			releaseB()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("b took the lease a holds: %v", err)
	case <-time.After(3 * leasePoll):
	}
	release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b never took the released lease")
	}
	// A cancelled wait ends with the context's error.
	if _, err := waitLease(t.Context(), leases, clock, leaseStart, "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := waitLease(ctx, leases, clock, leaseStart, "b", time.Minute); err == nil {
		t.Fatal("a cancelled wait took the lease")
	}
}
