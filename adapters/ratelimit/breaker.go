package ratelimit

import (
	"sync"
	"time"
)

// breaker is the circuit breaker of a Shared: it decides, for each hit,
// whether the store is asked. Closed, every hit asks. The first failure
// opens it: for the cooldown no hit asks, so an outage costs one hit the
// store's deadline, not every hit. Once the cooldown is over it is half
// open: one hit at a time (the probe) asks, the others do not; the probe's
// success closes it, its failure opens it for another cooldown. Its clock is
// injected, so its tests move time instead of waiting.
type breaker struct {
	now      func() time.Time
	cooldown time.Duration

	mu      sync.Mutex
	open    bool      // the store failed and has not answered since
	until   time.Time // while open, no probe before this
	probing bool      // while open, a probe is asking the store
}

// pass is what allow decided for one hit.
type pass int

const (
	skip  pass = iota // do not ask the store
	ask               // ask it: the breaker is closed
	probe             // ask it as the one probe of an open breaker
)

// allow says whether a hit may ask the store now.
func (b *breaker) allow() pass {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !b.open:
		return ask
	case b.probing || b.now().Before(b.until):
		return skip
	default:
		b.probing = true
		return probe
	}
}

// succeeded notes that a hit allowed as p was answered, and reports whether
// that closed the breaker. Only the probe closes it: an answer to a hit
// asked before the breaker opened says nothing about the store since.
func (b *breaker) succeeded(p pass) (closed bool) {
	if p != probe {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open, b.probing = false, false
	return true
}

// failed notes that the store failed a hit allowed as p, and reports
// whether that opened a closed breaker. A failed probe, or a failure of a
// hit asked while the breaker was still closed, starts the cooldown again.
func (b *breaker) failed(p pass) (opened bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	opened = !b.open
	b.open, b.until = true, b.now().Add(b.cooldown)
	if p == probe {
		b.probing = false
	}
	return opened
}

// abandoned notes that a hit allowed as p gave up for a reason of its own
// (its caller went away), which says nothing about the store: a probe's
// place goes to the next hit.
func (b *breaker) abandoned(p pass) {
	if p != probe {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
}

// isOpen reports whether the store is being left alone, or probed, after
// failing.
func (b *breaker) isOpen() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}
