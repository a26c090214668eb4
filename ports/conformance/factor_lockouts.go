package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// The second-factor lockout of TwoFactorRepository (GetLockout,
// UpdateLockout), run by RunMFARepositories.

var lockoutPolicy = domain.LockoutPolicy{Threshold: 10, Cooldown: 15 * time.Minute}

func testFactorLockoutRoundTrip(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	if l, err := s.TwoFactor.GetLockout(ctx, "u1"); err != nil || l != (domain.FactorLockout{UserID: "u1"}) {
		t.Fatalf("GetLockout before any = %+v, %v; want the zero one of u1", l, err)
	}
	at := baseTime.In(time.FixedZone("UTC+5", 5*3600))
	for range lockoutPolicy.Threshold {
		if err := s.TwoFactor.UpdateLockout(ctx, "u1", func(l *domain.FactorLockout) error {
			l.RecordFailure(at, lockoutPolicy)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.TwoFactor.GetLockout(ctx, "u1")
	if err != nil || l.FailedAttempts != lockoutPolicy.Threshold || !l.LockedUntil.Equal(at.Add(lockoutPolicy.Cooldown)) || !l.IsLocked(at) {
		t.Fatalf("GetLockout = %+v, %v; want %d failures, locked until %v", l, err, lockoutPolicy.Threshold, at.Add(lockoutPolicy.Cooldown))
	}
	if other, _ := s.TwoFactor.GetLockout(ctx, "u2"); other.FailedAttempts != 0 {
		t.Fatalf("u2's lockout = %+v, want none", other)
	}
	// A refused fn stores nothing; a success lifts the lockout (NULL).
	refused := errors.New("refused")
	if err := s.TwoFactor.UpdateLockout(ctx, "u1", func(l *domain.FactorLockout) error { l.FailedAttempts = 99; return refused }); !errors.Is(err, refused) {
		t.Fatalf("UpdateLockout(refusing fn) = %v, want its error", err)
	}
	if err := s.TwoFactor.UpdateLockout(ctx, "u1", func(l *domain.FactorLockout) error { l.RecordSuccess(at); return nil }); err != nil {
		t.Fatal(err)
	}
	if l, err := s.TwoFactor.GetLockout(ctx, "u1"); err != nil || l.FailedAttempts != 0 || !l.LockedUntil.IsZero() {
		t.Fatalf("GetLockout after a success = %+v, %v; want none", l, err)
	}
	err = s.TwoFactor.UpdateLockout(ctx, "nobody", func(l *domain.FactorLockout) error { return nil })
	mustBeKind(t, err, domain.ErrUserNotFound)
	mustDeleteUser(t, s, "u1")
	if l, err := s.TwoFactor.GetLockout(ctx, "u1"); err != nil || l.FailedAttempts != 0 {
		t.Fatalf("GetLockout of a deleted user = %+v, %v; want none", l, err)
	}
}

func testFactorLockoutParallel(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	const n = 20
	errs := runParallel(n, func(int) error {
		return s.TwoFactor.UpdateLockout(context.Background(), "u1", func(l *domain.FactorLockout) error {
			l.RecordFailure(baseTime, lockoutPolicy)
			return nil
		})
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	if l, err := s.TwoFactor.GetLockout(context.Background(), "u1"); err != nil || l.FailedAttempts != n {
		t.Fatalf("GetLockout = %+v, %v; want %d failures, none lost", l, err, n)
	}
}
