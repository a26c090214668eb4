package memory

import (
	"context"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.SpentTokens = (*SpentTokens)(nil)

// SpentTokens holds spent tokens in a map. It stands apart from DB: a
// spent token is part of no unit of work.
type SpentTokens struct {
	mu      sync.Mutex
	expires map[string]time.Time
}

// NewSpentTokens returns an empty SpentTokens.
func NewSpentTokens() *SpentTokens {
	return &SpentTokens{expires: map[string]time.Time{}}
}

// Spend implements ports.SpentTokens.
func (s *SpentTokens) Spend(_ context.Context, hash []byte, expiresAt, now time.Time) (bool, error) {
	if err := ports.ValidateSpend(hash); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if end, ok := s.expires[string(hash)]; ok && end.After(now) {
		return false, nil
	}
	s.expires[string(hash)] = expiresAt
	return true, nil
}

// DeleteExpired implements ports.SpentTokens.
func (s *SpentTokens) DeleteExpired(_ context.Context, before time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, end := range s.expires {
		if !end.After(before) {
			delete(s.expires, k)
			n++
		}
	}
	return n, nil
}
