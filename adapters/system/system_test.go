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

func TestTokenGenerator_shape_and_uniqueness(t *testing.T) {
	g := system.NewTokenGenerator()
	seen := map[string]bool{}
	for range 10000 {
		tok := g.NewToken()
		if len(tok) != 32 {
			t.Fatalf("token %q has %d characters, want 32", tok, len(tok))
		}
		for _, c := range tok {
			if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
				t.Fatalf("token %q holds %q, outside [A-Za-z0-9]", tok, c)
			}
		}
		if seen[tok] {
			t.Fatalf("duplicate token %s", tok)
		}
		seen[tok] = true
	}
}

// Ensure every character is equally likely: a generator taking random bytes
// modulo 62 makes the first 8 characters of the alphabet 25% likelier, which
// this test sees at about 25 standard deviations.
func TestTokenGenerator_is_unbiased(t *testing.T) {
	g := system.NewTokenGenerator()
	const tokens = 20000
	counts := map[rune]int{}
	for range tokens {
		for _, c := range g.NewToken() {
			counts[c]++
		}
	}
	if len(counts) != 62 {
		t.Fatalf("%d distinct characters, want 62", len(counts))
	}
	want := float64(tokens*32) / 62 // about 10,300; one standard deviation is about 100
	for c, got := range counts {
		if d := float64(got) - want; d > 0.05*want || d < -0.05*want {
			t.Errorf("character %q drawn %d times, want %.0f ± 5%%", c, got, want)
		}
	}
}
