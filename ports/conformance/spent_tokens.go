package conformance

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunSpentTokens runs the SpentTokens contract. newTokens returns two
// handles on one fresh, empty store, as two replicas would hold (the
// memory store may return one handle twice).
func RunSpentTokens(t *testing.T, newTokens func(t *testing.T) (a, b ports.SpentTokens)) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, a, b ports.SpentTokens)
	}{
		{"first_spend_wins_and_every_handle_refuses_the_second", testSpendOnce},
		{"hashes_are_independent", testSpendIndependent},
		{"expired_entry_may_be_spent_again", testSpendExpired},
		{"concurrent_spends_one_wins", testSpendConcurrent},
		{"delete_expired_removes_only_expired_entries", testSpendDeleteExpired},
		{"empty_hash_is_invalid", testSpendEmpty},
	}
	for _, tt := range tests {
		t.Run("contract=SpentTokens/"+tt.name, func(t *testing.T) {
			a, b := newTokens(t)
			tt.fn(t, a, b)
		})
	}
}

func tokenHash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// mustSpend spends the hash of token on s at now, valid for a minute, and
// fails unless the answer is want.
func mustSpend(t *testing.T, s ports.SpentTokens, token string, now time.Time, want bool) {
	t.Helper()
	got, err := s.Spend(context.Background(), tokenHash(token), now.Add(time.Minute), now)
	if err != nil {
		t.Fatalf("Spend(%s, %v): %v", token, now, err)
	}
	if got != want {
		t.Fatalf("Spend(%s, %v) = %v, want %v", token, now, got, want)
	}
}

func testSpendOnce(t *testing.T, a, b ports.SpentTokens) {
	mustSpend(t, a, "t1", baseTime, true)
	mustSpend(t, a, "t1", baseTime, false)
	mustSpend(t, b, "t1", baseTime.Add(time.Second), false)
	// A non-UTC clock names the same instants.
	mustSpend(t, b, "t1", baseTime.Add(30*time.Second).In(time.FixedZone("X", 5*3600)), false)
}

func testSpendIndependent(t *testing.T, a, b ports.SpentTokens) {
	mustSpend(t, a, "t1", baseTime, true)
	mustSpend(t, b, "t2", baseTime, true)
	mustSpend(t, a, "t2", baseTime, false)
}

func testSpendExpired(t *testing.T, a, b ports.SpentTokens) {
	mustSpend(t, a, "t1", baseTime, true)
	mustSpend(t, b, "t1", baseTime.Add(time.Minute-time.Millisecond), false)
	// The entry ends a minute on: the token is refused for its expiry by
	// then, and the entry may be replaced, once.
	mustSpend(t, b, "t1", baseTime.Add(time.Minute), true)
	mustSpend(t, a, "t1", baseTime.Add(time.Minute), false)
}

func testSpendConcurrent(t *testing.T, a, b ports.SpentTokens) {
	const n = 20
	wins := make([]bool, n)
	errs := runParallel(n, func(i int) error {
		s := a
		if i%2 == 1 {
			s = b
		}
		ok, err := s.Spend(context.Background(), tokenHash("race"), baseTime.Add(time.Minute), baseTime)
		wins[i] = ok
		return err
	})
	won := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Spend %d: %v", i, err)
		}
		if wins[i] {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent spends won, want 1", won)
	}
}

func testSpendDeleteExpired(t *testing.T, a, b ports.SpentTokens) {
	ctx := context.Background()
	mustSpend(t, a, "old", baseTime, true)                  // ends at +1m
	mustSpend(t, a, "new", baseTime.Add(time.Minute), true) // ends at +2m
	n, err := b.DeleteExpired(ctx, baseTime.Add(90*time.Second))
	if err != nil || n != 1 {
		t.Fatalf("DeleteExpired = %d, %v; want 1", n, err)
	}
	mustSpend(t, b, "new", baseTime.Add(90*time.Second), false)
}

func testSpendEmpty(t *testing.T, a, _ ports.SpentTokens) {
	_, err := a.Spend(context.Background(), nil, baseTime.Add(time.Minute), baseTime)
	if !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("Spend(empty) = %v, want kind Invalid", err)
	}
}
