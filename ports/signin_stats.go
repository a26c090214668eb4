package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// SignInStats counts sign-ins durably, in buckets of one hour (UTC) by
// outcome, so that every replica on one store counts into the same series
// (the Prometheus metrics count per process and forget at restart).
// Implementations are safe for concurrent use, from this process and from
// every process sharing the store.
type SignInStats interface {
	// Record adds n sign-ins that ended with outcome to the hour bucket
	// holding at: one upsert, whatever the outcome and n (the caller
	// gathers a few seconds of sign-ins in memory and writes them at
	// once, usecase.SignInCounter). An outcome other than SignInSuccess
	// counts as a failure in Series (the caller does not record
	// SignInSecondFactorRequired: the sign-in goes on). No outcome, or n
	// below 1, is domain.KindInvalid.
	Record(ctx context.Context, at time.Time, outcome SignInOutcome, n int) error
	// Series returns the counts of the buckets [from, to) by step, oldest
	// first, zero-filled: one SignInBucket per step, from truncated to the
	// step. A step other than StepHour or StepDay, to not after from, or
	// more than MaxSignInBuckets buckets is domain.KindInvalid.
	Series(ctx context.Context, from, to time.Time, step time.Duration) ([]SignInBucket, error)
	// DeleteBefore removes the hour buckets that start before before and
	// returns how many rows it removed.
	DeleteBefore(ctx context.Context, before time.Time) (int, error)
}

// The steps of SignInStats.Series: days start at midnight UTC.
const (
	StepHour = time.Hour
	StepDay  = 24 * time.Hour
)

// MaxSignInBuckets is the most buckets one Series returns.
const MaxSignInBuckets = 1000

// SignInBucket is one step of a series: its start (UTC), how many
// sign-ins succeeded and how many failed in it.
type SignInBucket struct {
	Start     time.Time
	Succeeded int
	Failed    int
}

// SignInHour is one stored hour's counts, as a store reads them before
// SignInSeries buckets them.
type SignInHour struct {
	Hour      time.Time
	Succeeded int
	Failed    int
}

var errSignInSeries = domain.Invalid("sign_in_stats.invalid_series", "A series needs a step of an hour or a day, and at most 1000 buckets")

// SignInSeries checks a Series request and returns its zero-filled
// buckets, with the hours that fall in each added. Stores call it on the
// hours they read between the first bucket's start and to.
func SignInSeries(from, to time.Time, step time.Duration, hours []SignInHour) ([]SignInBucket, error) {
	first, n, err := SignInSpan(from, to, step)
	if err != nil {
		return nil, err
	}
	out := make([]SignInBucket, n)
	for i := range out {
		out[i].Start = first.Add(time.Duration(i) * step)
	}
	for _, h := range hours {
		i := int(h.Hour.Sub(first) / step)
		if h.Hour.Before(first) || i >= n {
			continue
		}
		out[i].Succeeded += h.Succeeded
		out[i].Failed += h.Failed
	}
	return out, nil
}

// SignInSpan checks a Series request and returns the first bucket's start
// (from truncated to step, in UTC) and how many buckets reach to.
func SignInSpan(from, to time.Time, step time.Duration) (time.Time, int, error) {
	if (step != StepHour && step != StepDay) || !to.After(from) {
		return time.Time{}, 0, errSignInSeries
	}
	first := from.UTC().Truncate(step)
	n := int((to.Sub(first) + step - 1) / step)
	if n > MaxSignInBuckets {
		return time.Time{}, 0, errSignInSeries
	}
	return first, n, nil
}

// CheckSignInRecord returns domain.KindInvalid unless a Record of n
// sign-ins with outcome is well formed: an outcome, and n at least 1.
func CheckSignInRecord(outcome SignInOutcome, n int) error {
	if outcome == "" {
		return domain.Invalid("sign_in_stats.invalid_outcome", "A sign-in is counted by its outcome")
	}
	if n < 1 {
		return domain.Invalid("sign_in_stats.invalid_count", "A record adds at least one sign-in")
	}
	return nil
}
