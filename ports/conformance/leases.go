package conformance

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunLeases runs the Leases contract. newLeases returns two handles on one
// fresh, empty store, as two replicas would hold (the memory store may
// return one handle twice).
func RunLeases(t *testing.T, newLeases func(t *testing.T) (a, b ports.Leases)) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, a, b ports.Leases)
	}{
		{"free_lease_is_taken_and_refused_to_others_until_it_ends", testLeaseTakeAndExpire},
		{"holder_renews_its_lease", testLeaseRenew},
		{"release_frees_the_lease_for_others_only_when_the_holder_releases", testLeaseRelease},
		{"names_are_independent", testLeaseNames},
		{"concurrent_takers_of_a_free_lease_get_it_once", testLeaseConcurrent},
		{"bad_request_is_invalid", testLeaseInvalid},
	}
	for _, tt := range tests {
		t.Run("contract=Leases/"+tt.name, func(t *testing.T) {
			a, b := newLeases(t)
			tt.fn(t, a, b)
		})
	}
}

// mustAcquire asks l for the lease name for holder at now, for a minute,
// and fails unless the answer is want.
func mustAcquire(t *testing.T, l ports.Leases, name, holder string, now time.Time, want bool) {
	t.Helper()
	got, err := l.Acquire(context.Background(), name, holder, now, time.Minute)
	if err != nil {
		t.Fatalf("Acquire(%s, %s, %v): %v", name, holder, now, err)
	}
	if got != want {
		t.Fatalf("Acquire(%s, %s, %v) = %v, want %v", name, holder, now, got, want)
	}
}

func testLeaseTakeAndExpire(t *testing.T, a, b ports.Leases) {
	mustAcquire(t, a, "purge", "r1", baseTime, true)
	mustAcquire(t, b, "purge", "r2", baseTime, false)
	mustAcquire(t, b, "purge", "r2", baseTime.Add(time.Minute-time.Microsecond), false)
	// It ends a minute on: then another holder takes it, and the first
	// one is refused in turn.
	mustAcquire(t, b, "purge", "r2", baseTime.Add(time.Minute), true)
	mustAcquire(t, a, "purge", "r1", baseTime.Add(time.Minute), false)
	mustAcquire(t, a, "purge", "r1", baseTime.Add(90*time.Second), false)
}

func testLeaseRenew(t *testing.T, a, b ports.Leases) {
	mustAcquire(t, a, "purge", "r1", baseTime, true)
	// Renewed 50 s on, it runs until 110 s.
	mustAcquire(t, a, "purge", "r1", baseTime.Add(50*time.Second), true)
	mustAcquire(t, b, "purge", "r2", baseTime.Add(61*time.Second), false)
	mustAcquire(t, b, "purge", "r2", baseTime.Add(110*time.Second-time.Microsecond), false)
	mustAcquire(t, b, "purge", "r2", baseTime.Add(110*time.Second), true)
	// A holder renewing through the other handle is the same holder.
	mustAcquire(t, a, "purge", "r2", baseTime.Add(120*time.Second), true)
}

func testLeaseRelease(t *testing.T, a, b ports.Leases) {
	ctx := context.Background()
	if err := a.Release(ctx, "purge", "r1"); err != nil {
		t.Fatalf("Release of a lease no one holds: %v", err)
	}
	mustAcquire(t, a, "purge", "r1", baseTime, true)
	if err := b.Release(ctx, "purge", "r2"); err != nil {
		t.Fatalf("Release by another holder: %v", err)
	}
	mustAcquire(t, b, "purge", "r2", baseTime.Add(time.Second), false)
	if err := a.Release(ctx, "purge", "r1"); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, b, "purge", "r2", baseTime.Add(time.Second), true)
	mustAcquire(t, a, "purge", "r1", baseTime.Add(2*time.Second), false)
}

func testLeaseNames(t *testing.T, a, b ports.Leases) {
	mustAcquire(t, a, "purge", "r1", baseTime, true)
	mustAcquire(t, b, "report", "r2", baseTime, true)
	mustAcquire(t, b, "purge", "r2", baseTime, false)
	mustAcquire(t, a, "report", "r1", baseTime, false)
}

func testLeaseConcurrent(t *testing.T, a, b ports.Leases) {
	const takers, rounds = 8, 10
	for round := range rounds {
		name := fmt.Sprintf("job-%d", round)
		won := make([]bool, takers)
		errs := make([]error, takers)
		var wg sync.WaitGroup
		for i := range takers {
			l := a
			if i%2 == 1 {
				l = b
			}
			wg.Go(func() {
				won[i], errs[i] = l.Acquire(context.Background(), name, fmt.Sprintf("r%d", i), baseTime, time.Minute)
			})
		}
		wg.Wait()
		n := 0
		for i := range takers {
			if errs[i] != nil {
				t.Fatalf("%s: Acquire by r%d: %v", name, i, errs[i])
			}
			if won[i] {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%s: %d of %d concurrent takers got the lease, want 1", name, n, takers)
		}
	}
}

func testLeaseInvalid(t *testing.T, a, _ ports.Leases) {
	for _, tt := range []struct {
		name, holder string
		ttl          time.Duration
	}{
		{"", "r1", time.Minute},
		{"purge", "", time.Minute},
		{"purge", "r1", 0},
		{"purge", "r1", time.Microsecond},
	} {
		ok, err := a.Acquire(context.Background(), tt.name, tt.holder, baseTime, tt.ttl)
		if ok {
			t.Fatalf("Acquire(%q, %q, %v) granted", tt.name, tt.holder, tt.ttl)
		}
		mustBeKind(t, err, domain.ErrInvalid)
	}
	// None of them took the lease.
	mustAcquire(t, a, "purge", "r2", baseTime, true)
}
