package domain_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/domain"
)

var policy = domain.SessionPolicy{Lifetime: 7 * 24 * time.Hour, ShortLifetime: 24 * time.Hour, UpdateAge: 24 * time.Hour, FreshAge: 24 * time.Hour}

func TestSession_lifetimes(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	s := domain.NewSession("s1", "u1", domain.HashToken("t"), true, "", "", policy, now)
	if !s.ExpiresAt().Equal(now.Add(7 * 24 * time.Hour)) {
		t.Fatalf("expires = %v", s.ExpiresAt())
	}
	if s.NeedsRefresh(now.Add(23*time.Hour), policy) || !s.NeedsRefresh(now.Add(24*time.Hour), policy) {
		t.Fatal("a remembered session is refreshed once UpdateAge has passed, not before")
	}
	if !s.IsFresh(now.Add(23*time.Hour), policy) || s.IsFresh(now.Add(24*time.Hour), policy) {
		t.Fatal("freshness ends at FreshAge after sign-in")
	}
	s.Refresh(now.Add(24*time.Hour), policy)
	if s.IsFresh(now.Add(25*time.Hour), policy) {
		t.Fatal("a refresh does not make a session fresh: freshness counts from sign-in")
	}
	if s.IsExpired(now.Add(8*24*time.Hour-time.Microsecond)) || !s.IsExpired(now.Add(8*24*time.Hour)) {
		t.Fatal("a refreshed session expires Lifetime after the refresh")
	}
	short := domain.NewSession("s2", "u1", domain.HashToken("u"), false, "", "", policy, now)
	if !short.ExpiresAt().Equal(now.Add(24*time.Hour)) || short.NeedsRefresh(now.Add(23*time.Hour+59*time.Minute), policy) {
		t.Fatal("a session that is not remembered lives ShortLifetime and is never refreshed")
	}
}

func TestCredential_lockout(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	p := domain.LockoutPolicy{Threshold: 3, Cooldown: time.Minute}
	c := domain.NewCredential("u1", "hash", now)
	for range 2 {
		c.RecordFailure(now, p)
	}
	if c.IsLocked(now) {
		t.Fatal("locked before the threshold")
	}
	c.RecordFailure(now, p)
	if !c.IsLocked(now) || c.IsLocked(now.Add(time.Minute)) {
		t.Fatal("the third failure locks for exactly the cooldown")
	}
	c.RecordFailure(now.Add(time.Minute), p)
	if !c.IsLocked(now.Add(time.Minute)) {
		t.Fatal("a failure after the cooldown locks again at once")
	}
	c.SetHash("new", now)
	if c.IsLocked(now) || c.FailedAttempts() != 0 {
		t.Fatal("setting a password lifts the lockout")
	}
}

// Ensure a failure given back (an attempt counted before its answer, which
// was no answer) restores the count and the lockout it started, and leaves
// a lockout it did not start alone; a factor lockout counts the same way.
func TestCredential_refund_failure(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	p := domain.LockoutPolicy{Threshold: 3, Cooldown: time.Minute}
	c := domain.NewCredential("u1", "hash", now)
	var l domain.FactorLockout
	for range 2 {
		c.RecordFailure(now, p)
		l.RecordFailure(now, p)
	}
	later := now.Add(time.Second)
	c.RecordFailure(later, p)
	l.RecordFailure(later, p)
	if !c.IsLocked(later) || !l.IsLocked(later) {
		t.Fatal("the third failure locks")
	}
	c.RefundFailure(later, time.Time{}, p)
	l.RefundFailure(later, time.Time{}, p)
	if c.IsLocked(later) || c.FailedAttempts() != 2 || l.IsLocked(later) || l.FailedAttempts != 2 {
		t.Fatalf("after the refund: credential %d locked %v, factor %+v; want 2 failures, unlocked", c.FailedAttempts(), c.IsLocked(later), l)
	}
	c.RecordFailure(later, p)            // locks until later+1m
	c.RecordFailure(later, p)            // a concurrent one
	c.RefundFailure(now, time.Time{}, p) // an older attempt's refund: not its lockout
	if !c.IsLocked(later) || c.FailedAttempts() != 3 {
		t.Fatal("a refund lifted a lockout another failure started")
	}
	l.RecordSuccess(later)
	if l.IsLocked(later) || l.FailedAttempts != 0 {
		t.Fatal("a success forgets the failures")
	}
}

// Ensure a long User-Agent is cut at a character boundary, so what is
// stored stays valid UTF-8 (PostgreSQL refuses half a character).
func TestSession_user_agent_cut_at_character(t *testing.T) {
	ua := strings.Repeat("a", 511) + "é and more"
	s := domain.NewSession("s1", "u1", domain.HashToken("t"), true, "", ua, policy, time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	if got, want := s.UserAgent(), strings.Repeat("a", 511); got != want || !utf8.ValidString(got) {
		t.Fatalf("user agent = %q (%d bytes), want 511 bytes of a", got, len(got))
	}
}
