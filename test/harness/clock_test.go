package harness

import (
	"sync"
	"testing"
	"time"
)

// Ensure the clock says the wall clock's time until advanced, then that much
// later, at the system clock's precision, with concurrent advances all
// counted.
func TestClock_advance(t *testing.T) {
	c := NewClock()
	if d := time.Since(c.Now()); d < 0 || d > time.Second {
		t.Fatalf("a new clock is %v behind the wall clock", d)
	}
	if now := c.Now(); now.Location() != time.UTC || now.Nanosecond()%1000 != 0 {
		t.Fatalf("Now = %v, want UTC in microseconds", now)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			c.Advance(time.Minute)
			_ = c.Now()
		})
	}
	wg.Wait()
	if d := time.Until(c.Now()); d < 10*time.Minute-time.Second || d > 10*time.Minute {
		t.Fatalf("after ten advances of a minute the clock is %v ahead", d)
	}
	target := c.Now().Add(time.Hour)
	c.AdvancePast(target)
	if now := c.Now(); !now.After(target) || now.Sub(target) > time.Second {
		t.Fatalf("AdvancePast(%v): now %v", target, now)
	}
	before := c.Now()
	c.AdvancePast(before.Add(-time.Hour))
	if d := c.Now().Sub(before); d > time.Second {
		t.Fatalf("AdvancePast of a past time moved the clock %v", d)
	}
}
