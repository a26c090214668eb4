package system_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/system"
)

func TestClock_is_utc_microseconds(t *testing.T) {
	now := system.NewClock().Now()
	if now.Location() != time.UTC {
		t.Fatalf("location = %v, want UTC", now.Location())
	}
	if now.Nanosecond()%1000 != 0 {
		t.Fatalf("%v has sub-microsecond digits", now)
	}
}

func TestIDGenerator_unique_and_ordered(t *testing.T) {
	g := system.NewIDGenerator()
	seen := map[string]bool{}
	prev := ""
	for range 10000 {
		id := g.NewID()
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
		if id < prev {
			t.Fatalf("id %s sorts before the previous %s", id, prev)
		}
		prev = id
	}
}
