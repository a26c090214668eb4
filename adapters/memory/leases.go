package memory

import (
	"context"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Leases = (*Leases)(nil)

// Leases holds leases in a map. It stands apart from DB: a lease is not
// part of any unit of work.
type Leases struct {
	mu     sync.Mutex
	leases map[string]lease
}

type lease struct {
	holder  string
	expires time.Time
}

// NewLeases returns an empty Leases.
func NewLeases() *Leases {
	return &Leases{leases: map[string]lease{}}
}

// Acquire implements ports.Leases.
func (l *Leases) Acquire(_ context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	if err := ports.ValidateLease(name, holder, ttl); err != nil {
		return false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.leases[name]; ok && cur.holder != holder && cur.expires.After(now) {
		return false, nil
	}
	l.leases[name] = lease{holder: holder, expires: now.Add(ttl)}
	return true, nil
}

// Release implements ports.Leases.
func (l *Leases) Release(_ context.Context, name, holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.leases[name]; ok && cur.holder == holder {
		delete(l.leases, name)
	}
	return nil
}
