package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunCredentialRepository runs the CredentialRepository contract. newStores
// must return empty repositories sharing one fresh database each time it is
// called.
func RunCredentialRepository(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"create_user_then_get_round_trips", testCredentialRoundTrip},
		{"locked_until_round_trips_set_and_cleared", testCredentialLockedUntil},
		{"missing_credential_is_not_found", testCredentialNotFound},
		{"duplicate_email_stores_neither_row", testCredentialDuplicateEmail},
		{"duplicate_id_is_conflict", testCredentialDuplicateID},
		{"credential_of_another_user_stores_nothing", testCredentialMismatch},
		{"update_applies_fn", testCredentialUpdate},
		{"update_rolls_back_when_fn_fails", testCredentialUpdateRollback},
		{"update_of_missing_credential_is_not_found", testCredentialUpdateMissing},
		{"concurrent_failures_are_all_counted", testCredentialUpdateParallel},
		{"deleting_the_user_deletes_their_credential", testCredentialCascade},
		{"returned_values_are_copies", testCredentialCopies},
		{"put_creates_then_replaces_the_credential", testCredentialPut},
		{"put_for_a_missing_user_is_not_found", testCredentialPutMissingUser},
		{"get_by_email_returns_the_user_and_their_credential", testCredentialGetByEmail},
		{"get_by_email_of_a_user_without_password_has_no_credential", testCredentialGetByEmailNoPassword},
		{"get_by_email_of_an_unknown_address_is_not_found", testCredentialGetByEmailUnknown},
	}
	for _, tt := range tests {
		t.Run("contract=CredentialRepository/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

const testHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"

var lockout = domain.LockoutPolicy{Threshold: 3, Cooldown: 15 * time.Minute}

func mustCreateUserWithPassword(t *testing.T, s Stores, id string) *domain.Credential {
	t.Helper()
	c := domain.NewCredential(domain.UserID(id), testHash, baseTime)
	if err := s.Credentials.CreateUser(context.Background(), mustUser(t, id, id+"@example.com"), c); err != nil {
		t.Fatalf("CreateUser(%s): %v", id, err)
	}
	return c
}

func mustGetCredential(t *testing.T, repo ports.CredentialRepository, id domain.UserID) *domain.Credential {
	t.Helper()
	c, err := repo.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get credential %s: %v", id, err)
	}
	return c
}

func assertSameCredential(t *testing.T, got, want *domain.Credential) {
	t.Helper()
	if got.UserID() != want.UserID() || got.Hash() != want.Hash() || got.FailedAttempts() != want.FailedAttempts() {
		t.Fatalf("credential mismatch:\n got  %s\n want %s", describeCredential(got), describeCredential(want))
	}
	assertTime(t, "LockedUntil", got.LockedUntil(), want.LockedUntil())
	assertTime(t, "UpdatedAt", got.UpdatedAt(), want.UpdatedAt())
}

func describeCredential(c *domain.Credential) string {
	return fmt.Sprintf("{user=%s hash=%q failed=%d locked=%s updated=%s}", c.UserID(), c.Hash(), c.FailedAttempts(),
		c.LockedUntil().Format(time.RFC3339Nano), c.UpdatedAt().Format(time.RFC3339Nano))
}

func testCredentialRoundTrip(t *testing.T, s Stores) {
	ctx := context.Background()
	local := time.Date(2026, 7, 8, 9, 10, 11, 654321987, time.FixedZone("UTC-7", -7*60*60))
	u := mustUser(t, "u1", "ada@example.com")
	c := domain.NewCredential("u1", testHash, local)
	if err := s.Credentials.CreateUser(ctx, u, c); err != nil {
		t.Fatal(err)
	}
	gotUser, err := s.Users.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	assertSameUser(t, gotUser, u)
	got := mustGetCredential(t, s.Credentials, "u1")
	assertSameCredential(t, got, c)
	assertTime(t, "UpdatedAt", got.UpdatedAt(), local.Truncate(time.Microsecond))
	if !got.LockedUntil().IsZero() {
		t.Fatalf("LockedUntil = %s, want the zero time", got.LockedUntil())
	}
}

func testCredentialLockedUntil(t *testing.T, s Stores) {
	ctx := context.Background()
	locked := time.Date(2026, 7, 8, 9, 10, 11, 123456000, time.FixedZone("UTC+9", 9*60*60))
	c := domain.RehydrateCredential("u1", testHash, 7, locked, baseTime)
	if err := s.Credentials.CreateUser(ctx, mustUser(t, "u1", "ada@example.com"), c); err != nil {
		t.Fatal(err)
	}
	got := mustGetCredential(t, s.Credentials, "u1")
	assertSameCredential(t, got, c)
	if !got.IsLocked(locked.Add(-time.Second)) {
		t.Fatal("credential is not locked before LockedUntil")
	}
	// Clearing the lock stores no time at all, which reads back as zero.
	later := baseTime.Add(time.Hour)
	if err := s.Credentials.Update(ctx, "u1", func(c *domain.Credential) error { c.RecordSuccess(later); return nil }); err != nil {
		t.Fatal(err)
	}
	got = mustGetCredential(t, s.Credentials, "u1")
	assertSameCredential(t, got, domain.RehydrateCredential("u1", testHash, 0, time.Time{}, later))
	if !got.LockedUntil().IsZero() {
		t.Fatalf("LockedUntil = %s after clearing, want the zero time", got.LockedUntil())
	}
}

func testCredentialNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	_, err := s.Credentials.Get(ctx, "nobody")
	mustBeKind(t, err, domain.ErrNotFound)
	// A user without a password has no credential.
	mustCreateUsers(t, s, "u1")
	_, err = s.Credentials.Get(ctx, "u1")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testCredentialDuplicateEmail(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUserWithPassword(t, s, "u1")
	err := s.Credentials.CreateUser(ctx, mustUser(t, "u2", "U1@example.com"), domain.NewCredential("u2", "other", baseTime))
	mustBeKind(t, err, domain.ErrConflict)
	_, err = s.Users.Get(ctx, "u2")
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Credentials.Get(ctx, "u2")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testCredentialDuplicateID(t *testing.T, s Stores) {
	ctx := context.Background()
	first := mustCreateUserWithPassword(t, s, "u1")
	err := s.Credentials.CreateUser(ctx, mustUser(t, "u1", "other@example.com"), domain.NewCredential("u1", "other", baseTime))
	mustBeKind(t, err, domain.ErrConflict)
	assertSameCredential(t, mustGetCredential(t, s.Credentials, "u1"), first)
	_, err = s.Users.GetByEmail(ctx, "other@example.com")
	mustBeKind(t, err, domain.ErrNotFound)

	// A user created without a password holds the id too.
	mustCreateUsers(t, s, "u2")
	err = s.Credentials.CreateUser(ctx, mustUser(t, "u2", "third@example.com"), domain.NewCredential("u2", "other", baseTime))
	mustBeKind(t, err, domain.ErrConflict)
	_, err = s.Credentials.Get(ctx, "u2")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testCredentialMismatch(t *testing.T, s Stores) {
	ctx := context.Background()
	err := s.Credentials.CreateUser(ctx, mustUser(t, "u1", "ada@example.com"), domain.NewCredential("u2", testHash, baseTime))
	if err == nil {
		t.Fatal("CreateUser accepted the credential of another user")
	}
	_, err = s.Users.Get(ctx, "u1")
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Credentials.Get(ctx, "u2")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testCredentialUpdate(t *testing.T, s Stores) {
	mustCreateUserWithPassword(t, s, "u1")
	at := baseTime.Add(time.Hour)
	if err := s.Credentials.Update(context.Background(), "u1", func(c *domain.Credential) error {
		for range lockout.Threshold {
			c.RecordFailure(at, lockout)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got := mustGetCredential(t, s.Credentials, "u1")
	assertSameCredential(t, got, domain.RehydrateCredential("u1", testHash, 3, at.Add(lockout.Cooldown), at))

	if err := s.Credentials.Update(context.Background(), "u1", func(c *domain.Credential) error {
		c.SetHash("new-hash", at.Add(time.Minute))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got = mustGetCredential(t, s.Credentials, "u1")
	assertSameCredential(t, got, domain.RehydrateCredential("u1", "new-hash", 0, time.Time{}, at.Add(time.Minute)))
}

func testCredentialUpdateRollback(t *testing.T, s Stores) {
	orig := mustCreateUserWithPassword(t, s, "u1")
	boom := errors.New("boom")
	err := s.Credentials.Update(context.Background(), "u1", func(c *domain.Credential) error {
		c.SetHash("changed", baseTime.Add(time.Hour))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update error = %v, want the fn's error", err)
	}
	assertSameCredential(t, mustGetCredential(t, s.Credentials, "u1"), orig)
}

func testCredentialUpdateMissing(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1") // a user, but no password
	for _, id := range []domain.UserID{"nobody", "u1"} {
		called := false
		err := s.Credentials.Update(context.Background(), id, func(*domain.Credential) error { called = true; return nil })
		mustBeKind(t, err, domain.ErrNotFound)
		if called {
			t.Fatalf("fn was called for the missing credential of %s", id)
		}
	}
}

func testCredentialUpdateParallel(t *testing.T, s Stores) {
	mustCreateUserWithPassword(t, s, "u1")
	const workers = 20
	errs := runParallel(workers, func(int) error {
		return s.Credentials.Update(context.Background(), "u1", func(c *domain.Credential) error {
			c.RecordFailure(baseTime, domain.LockoutPolicy{})
			return nil
		})
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Update: %v", err)
		}
	}
	if got := mustGetCredential(t, s.Credentials, "u1").FailedAttempts(); got != workers {
		t.Fatalf("FailedAttempts = %d after %d concurrent failures: writes were lost", got, workers)
	}
}

func testCredentialCascade(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUserWithPassword(t, s, "u1")
	mustCreateUserWithPassword(t, s, "u2")
	mustDeleteUser(t, s, "u1")
	_, err := s.Credentials.Get(ctx, "u1")
	mustBeKind(t, err, domain.ErrNotFound)
	mustGetCredential(t, s.Credentials, "u2")
	// The id is free again, with a new password.
	mustCreateUserWithPassword(t, s, "u1")
}

func testCredentialCopies(t *testing.T, s Stores) {
	ctx := context.Background()
	c := domain.NewCredential("u1", testHash, baseTime)
	if err := s.Credentials.CreateUser(ctx, mustUser(t, "u1", "ada@example.com"), c); err != nil {
		t.Fatal(err)
	}
	want := domain.NewCredential("u1", testHash, baseTime)
	c.RecordFailure(baseTime, lockout) // the caller's value is not the stored one

	got := mustGetCredential(t, s.Credentials, "u1")
	assertSameCredential(t, got, want)
	got.SetHash("mutated after get", baseTime)

	var inFn *domain.Credential
	if err := s.Credentials.Update(ctx, "u1", func(c *domain.Credential) error { inFn = c; return errors.New("no") }); err == nil {
		t.Fatal("Update with a failing fn succeeded")
	}
	inFn.RecordFailure(baseTime, lockout)

	assertSameCredential(t, mustGetCredential(t, s.Credentials, "u1"), want)
}

func testCredentialPut(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	if _, err := s.Credentials.Get(ctx, "u1"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("Get before Put: %v, want not found", err)
	}
	first := domain.NewCredential("u1", testHash, baseTime)
	if err := s.Credentials.Put(ctx, first); err != nil {
		t.Fatal(err)
	}
	assertSameCredential(t, mustGetCredential(t, s.Credentials, "u1"), first)
	locked := domain.RehydrateCredential("u1", testHash, 9, baseTime.Add(time.Hour), baseTime)
	if err := s.Credentials.Put(ctx, locked); err != nil {
		t.Fatal(err)
	}
	second := domain.NewCredential("u1", testHash+"x", baseTime.Add(time.Minute))
	if err := s.Credentials.Put(ctx, second); err != nil {
		t.Fatal(err)
	}
	got := mustGetCredential(t, s.Credentials, "u1")
	assertSameCredential(t, got, second)
	if got.FailedAttempts() != 0 || !got.LockedUntil().IsZero() {
		t.Fatalf("after Put: %s, want the lockout cleared", describeCredential(got))
	}
}

func testCredentialPutMissingUser(t *testing.T, s Stores) {
	err := s.Credentials.Put(context.Background(), domain.NewCredential("ghost", testHash, baseTime))
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("Put for a missing user: %v, want not found", err)
	}
}

func testCredentialGetByEmail(t *testing.T, s Stores) {
	ctx := context.Background()
	locked := time.Date(2026, 7, 8, 9, 10, 11, 123456000, time.UTC)
	u := mustUser(t, "u1", "ada@example.com")
	c := domain.RehydrateCredential("u1", testHash, 2, locked, baseTime)
	if err := s.Credentials.CreateUser(ctx, u, c); err != nil {
		t.Fatal(err)
	}
	mustCreateUserWithPassword(t, s, "u2") // another user, another credential
	gotUser, got, err := s.Credentials.GetByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	assertSameUser(t, gotUser, u)
	if got == nil {
		t.Fatal("credential = nil, want ada's")
	}
	assertSameCredential(t, got, c)
}

func testCredentialGetByEmailNoPassword(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateUserWithPassword(t, s, "u2")
	u, c, err := s.Credentials.GetByEmail(context.Background(), "u1@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if u == nil || u.ID() != "u1" {
		t.Fatalf("user = %v, want u1", u)
	}
	if c != nil {
		t.Fatalf("credential = %s, want none: u1 has no password", describeCredential(c))
	}
}

func testCredentialGetByEmailUnknown(t *testing.T, s Stores) {
	ctx := context.Background()
	_, _, err := s.Credentials.GetByEmail(ctx, "nobody@example.com")
	mustBeKind(t, err, domain.ErrNotFound)
	mustCreateUserWithPassword(t, s, "u1")
	u, c, err := s.Credentials.GetByEmail(ctx, "nobody@example.com")
	mustBeKind(t, err, domain.ErrNotFound)
	if u != nil || c != nil {
		t.Fatalf("GetByEmail(unknown) = %v, %v; want nothing", u, c)
	}
}
