package memory

import (
	"context"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.SignInStats = (*SignInStats)(nil)

// SignInStats holds the hour buckets in a map. It stands apart from DB: a
// count is not part of any unit of work.
type SignInStats struct {
	mu    sync.Mutex
	hours map[signInKey]int
}

type signInKey struct {
	hour    time.Time
	outcome ports.SignInOutcome
}

// NewSignInStats returns an empty SignInStats.
func NewSignInStats() *SignInStats {
	return &SignInStats{hours: map[signInKey]int{}}
}

// Record implements ports.SignInStats.
func (s *SignInStats) Record(_ context.Context, at time.Time, outcome ports.SignInOutcome, n int) error {
	if err := ports.CheckSignInRecord(outcome, n); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hours[signInKey{hour: at.UTC().Truncate(time.Hour), outcome: outcome}] += n
	return nil
}

// Series implements ports.SignInStats.
func (s *SignInStats) Series(_ context.Context, from, to time.Time, step time.Duration) ([]ports.SignInBucket, error) {
	first, _, err := ports.SignInSpan(from, to, step)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	hours := make([]ports.SignInHour, 0, len(s.hours))
	for k, n := range s.hours {
		if k.hour.Before(first) || !k.hour.Before(to) {
			continue
		}
		h := ports.SignInHour{Hour: k.hour}
		if k.outcome == ports.SignInSuccess {
			h.Succeeded = n
		} else {
			h.Failed = n
		}
		hours = append(hours, h)
	}
	s.mu.Unlock()
	return ports.SignInSeries(from, to, step, hours)
}

// DeleteBefore implements ports.SignInStats.
func (s *SignInStats) DeleteBefore(_ context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.hours {
		if k.hour.Before(before) {
			delete(s.hours, k)
			n++
		}
	}
	return n, nil
}
