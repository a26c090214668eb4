package harness

import (
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Clock = (*Clock)(nil)

// Clock is the clock of an application the harness starts: the wall clock
// plus an offset that only Advance moves, so a test sees time pass (a
// lockout's cooldown, a session's fresh age, an expiry) without waiting for
// it. It never goes back, and it is safe for concurrent use.
//
// Only the application reads it: what runs outside (go-oidc, x/oauth2, the
// Node clients, the browser, the fake upstream providers) and the jobs'
// tickers keep the wall clock, so a test advances it only where what it
// asserts is the server's view of time. A test that compares a time the
// server wrote with the present asks Now, not time.Now.
//
// Every test of a shared application (Shared) sees its clock move: a test
// advances a shared application's clock by a few seconds at most, no more
// than the wall clock may jump for a test held up by a loaded machine; one
// that needs minutes keeps an application of its own (MustStart).
type Clock struct {
	offset atomic.Int64 // nanoseconds ahead of the wall clock
}

// NewClock returns a clock that says the wall clock's time until advanced.
func NewClock() *Clock { return &Clock{} }

// Now implements ports.Clock: UTC at microsecond precision, as the
// system clock.
func (c *Clock) Now() time.Time {
	return time.Now().Add(time.Duration(c.offset.Load())).UTC().Truncate(time.Microsecond)
}

// Advance moves the clock d ahead. A negative d is a mistake in the test
// and panics: the application's time never goes back.
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic("harness: Clock.Advance(" + d.String() + "): time does not go back")
	}
	c.offset.Add(int64(d))
}

// AdvancePast moves the clock just past t (by a millisecond), if it is not
// past it already: the moment after an expiry the server announced.
func (c *Clock) AdvancePast(t time.Time) {
	if d := t.Sub(c.Now()); d >= 0 {
		c.Advance(d + time.Millisecond)
	}
}
