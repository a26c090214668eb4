package conformance

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunSignInStats runs the SignInStats contract. newStats returns two
// handles on one fresh, empty store, as two replicas would hold (the memory
// store may return one handle twice).
func RunSignInStats(t *testing.T, newStats func(t *testing.T) (a, b ports.SignInStats)) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, a, b ports.SignInStats)
	}{
		{"sign_ins_count_into_their_hour_by_success_or_failure", testSignInHours},
		{"days_sum_their_hours_and_empty_steps_are_zero", testSignInDays},
		{"range_starts_at_the_truncated_from_and_ends_before_to", testSignInRange},
		{"non_utc_times_count_in_the_same_hour", testSignInTimezone},
		{"handles_on_one_store_share_the_counts_and_lose_no_concurrent_write", testSignInConcurrent},
		{"delete_before_removes_only_older_hours", testSignInDelete},
		{"bad_request_is_invalid", testSignInInvalid},
	}
	for _, tt := range tests {
		t.Run("contract=SignInStats/"+tt.name, func(t *testing.T) {
			a, b := newStats(t)
			tt.fn(t, a, b)
		})
	}
}

// statsHour is the start of the hour holding baseTime.
var statsHour = baseTime.Truncate(time.Hour)

func mustRecordSignIn(t *testing.T, s ports.SignInStats, at time.Time, outcome ports.SignInOutcome) {
	t.Helper()
	if err := s.Record(context.Background(), at, outcome, 1); err != nil {
		t.Fatalf("Record(%v, %s): %v", at, outcome, err)
	}
}

// wantBucket is a bucket's expected counts.
type wantBucket struct{ ok, failed int }

// assertSeries fails unless the series from..to by step is want, given as
// {succeeded, failed} pairs, each bucket starting one step after the
// previous one from start.
func assertSeries(t *testing.T, s ports.SignInStats, from, to time.Time, step time.Duration, start time.Time, want []wantBucket) {
	t.Helper()
	got, err := s.Series(context.Background(), from, to, step)
	if err != nil {
		t.Fatalf("Series(%v, %v, %v): %v", from, to, step, err)
	}
	if len(got) != len(want) {
		t.Fatalf("Series(%v, %v, %v) has %d buckets, want %d: %+v", from, to, step, len(got), len(want), got)
	}
	for i, b := range got {
		if at := start.Add(time.Duration(i) * step); !b.Start.Equal(at) || b.Start.Location() != time.UTC {
			t.Errorf("bucket %d starts at %v, want %v in UTC", i, b.Start, at)
		}
	}
	for i, w := range want {
		if g := got[i]; g.Succeeded != w.ok || g.Failed != w.failed {
			t.Errorf("bucket %d (%v) = %d succeeded, %d failed; want %d, %d", i, g.Start, g.Succeeded, g.Failed, w.ok, w.failed)
		}
	}
}

func testSignInHours(t *testing.T, a, _ ports.SignInStats) {
	mustRecordSignIn(t, a, statsHour.Add(time.Minute), ports.SignInSuccess)
	mustRecordSignIn(t, a, statsHour.Add(59*time.Minute+59*time.Second), ports.SignInSuccess)
	// Every outcome but success is a failure.
	for _, o := range []ports.SignInOutcome{ports.SignInFailure, ports.SignInLocked, ports.SignInBanned, ports.SignInEmailNotVerified} {
		mustRecordSignIn(t, a, statsHour.Add(30*time.Minute), o)
	}
	mustRecordSignIn(t, a, statsHour.Add(2*time.Hour), ports.SignInFailure)
	assertSeries(t, a, statsHour, statsHour.Add(3*time.Hour), ports.StepHour, statsHour,
		[]wantBucket{{2, 4}, {0, 0}, {0, 1}})
}

func testSignInDays(t *testing.T, a, _ ports.SignInStats) {
	day := statsHour.Truncate(24 * time.Hour)
	mustRecordSignIn(t, a, day, ports.SignInSuccess)
	mustRecordSignIn(t, a, day.Add(23*time.Hour), ports.SignInSuccess)
	mustRecordSignIn(t, a, day.Add(23*time.Hour), ports.SignInFailure)
	mustRecordSignIn(t, a, day.Add(48*time.Hour+5*time.Hour), ports.SignInFailure)
	assertSeries(t, a, day.Add(12*time.Hour), day.Add(4*24*time.Hour), ports.StepDay, day,
		[]wantBucket{{2, 1}, {0, 0}, {0, 1}, {0, 0}})
}

func testSignInRange(t *testing.T, a, _ ports.SignInStats) {
	mustRecordSignIn(t, a, statsHour.Add(-time.Minute), ports.SignInSuccess) // the hour before: out
	mustRecordSignIn(t, a, statsHour, ports.SignInSuccess)
	mustRecordSignIn(t, a, statsHour.Add(2*time.Hour), ports.SignInFailure) // the hour of to: out
	// from within the hour starts at the hour; to ends the series before
	// its own hour's bucket when it is on the hour.
	assertSeries(t, a, statsHour.Add(20*time.Minute), statsHour.Add(2*time.Hour), ports.StepHour, statsHour,
		[]wantBucket{{1, 0}, {0, 0}})
	assertSeries(t, a, statsHour.Add(20*time.Minute), statsHour.Add(2*time.Hour+time.Second), ports.StepHour, statsHour,
		[]wantBucket{{1, 0}, {0, 0}, {0, 1}})
}

func testSignInTimezone(t *testing.T, a, _ ports.SignInStats) {
	zone := time.FixedZone("UTC+05:30", 5*3600+1800)
	mustRecordSignIn(t, a, statsHour.Add(10*time.Minute).In(zone), ports.SignInSuccess)
	mustRecordSignIn(t, a, statsHour.Add(50*time.Minute), ports.SignInSuccess)
	assertSeries(t, a, statsHour.In(zone), statsHour.Add(time.Hour).In(zone), ports.StepHour, statsHour, []wantBucket{{2, 0}})
}

func testSignInConcurrent(t *testing.T, a, b ports.SignInStats) {
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, o := a, ports.SignInSuccess
			if i%2 == 1 {
				s, o = b, ports.SignInFailure
			}
			errs <- s.Record(context.Background(), statsHour.Add(time.Duration(i)*time.Second), o, i+1)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Record: %v", err)
		}
	}
	// Write i adds i+1: the even i (successes) add 1+3+…+19, the odd ones
	// 2+4+…+20.
	want := []wantBucket{{n * n / 4, n*n/4 + n/2}}
	assertSeries(t, a, statsHour, statsHour.Add(time.Hour), ports.StepHour, statsHour, want)
	assertSeries(t, b, statsHour, statsHour.Add(time.Hour), ports.StepHour, statsHour, want)
}

func testSignInDelete(t *testing.T, a, _ ports.SignInStats) {
	ctx := context.Background()
	mustRecordSignIn(t, a, statsHour.Add(-2*time.Hour), ports.SignInSuccess)
	mustRecordSignIn(t, a, statsHour.Add(-2*time.Hour), ports.SignInFailure)
	mustRecordSignIn(t, a, statsHour.Add(-time.Hour), ports.SignInSuccess)
	mustRecordSignIn(t, a, statsHour, ports.SignInSuccess)
	n, err := a.DeleteBefore(ctx, statsHour.Add(-time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("DeleteBefore = %d, %v; want the 2 rows of the oldest hour", n, err)
	}
	assertSeries(t, a, statsHour.Add(-2*time.Hour), statsHour.Add(time.Hour), ports.StepHour, statsHour.Add(-2*time.Hour),
		[]wantBucket{{0, 0}, {1, 0}, {1, 0}})
}

func testSignInInvalid(t *testing.T, a, _ ports.SignInStats) {
	ctx := context.Background()
	if err := a.Record(ctx, statsHour, "", 1); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("Record with no outcome = %v, want invalid", err)
	}
	for _, n := range []int{0, -1} {
		if err := a.Record(ctx, statsHour, ports.SignInSuccess, n); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("Record of %d sign-ins = %v, want invalid", n, err)
		}
	}
	assertSeries(t, a, statsHour, statsHour.Add(time.Hour), ports.StepHour, statsHour, []wantBucket{{0, 0}})
	for _, c := range []struct {
		name     string
		from, to time.Time
		step     time.Duration
	}{
		{"step_of_two_hours", statsHour, statsHour.Add(4 * time.Hour), 2 * time.Hour},
		{"to_before_from", statsHour, statsHour.Add(-time.Hour), ports.StepHour},
		{"to_at_from", statsHour, statsHour, ports.StepHour},
		{"too_many_buckets", statsHour, statsHour.Add((ports.MaxSignInBuckets + 1) * time.Hour), ports.StepHour},
	} {
		if _, err := a.Series(ctx, c.from, c.to, c.step); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%s: Series = %v, want invalid", c.name, err)
		}
	}
}
