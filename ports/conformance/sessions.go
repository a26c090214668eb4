package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunSessionRepository runs the SessionRepository contract. newStores must
// return empty repositories sharing one fresh database each time it is called.
func RunSessionRepository(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"create_then_get_round_trips", testSessionRoundTrip},
		{"missing_session_is_not_found", testSessionNotFound},
		{"duplicate_id_is_conflict", testSessionDuplicateID},
		{"duplicate_token_hash_is_conflict", testSessionDuplicateToken},
		{"unknown_user_is_not_found", testSessionUnknownUser},
		{"get_by_token_hash_returns_the_current_user", testSessionJoinsUser},
		{"list_by_user_is_live_sessions_newest_first", testSessionList},
		{"update_applies_fn", testSessionUpdate},
		{"authentication_round_trips", testSessionAuthentication},
		{"update_rolls_back_when_fn_fails", testSessionUpdateRollback},
		{"update_of_missing_session_is_not_found", testSessionUpdateMissing},
		{"concurrent_updates_lose_no_write", testSessionUpdateParallel},
		{"delete_needs_the_owner", testSessionDelete},
		{"delete_by_user_keeps_the_named_session", testSessionDeleteByUserKeep},
		{"delete_by_user_without_keep_removes_all", testSessionDeleteByUserAll},
		{"delete_expired_removes_only_expired", testSessionDeleteExpired},
		{"deleting_the_user_deletes_their_sessions", testSessionCascade},
		{"returned_values_are_copies", testSessionCopies},
		{"get_returns_the_session", testSessionGet},
		{"impersonation_round_trips", testSessionImpersonation},
		{"unknown_impersonator_is_not_found", testSessionUnknownImpersonator},
		{"deleting_the_impersonator_deletes_the_session", testSessionImpersonatorCascade},
		{"active_organization_round_trips", testSessionActiveOrganization},
		{"missing_active_organization_is_not_found", testSessionMissingOrganization},
		{"clear_organization_for_one_user", testSessionClearOrganizationUser},
		{"clear_organization_for_everyone", testSessionClearOrganizationAll},
		{"deleting_the_organization_clears_it", testSessionOrganizationDeleted},
	}
	for _, tt := range tests {
		t.Run("contract=SessionRepository/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

var sessionPolicy = domain.SessionPolicy{Lifetime: 7 * 24 * time.Hour, ShortLifetime: 24 * time.Hour, UpdateAge: 24 * time.Hour}

// makeSession returns session id of userID, created at createdAt and
// expiring at expiresAt, whose token is "token-<id>".
func makeSession(id string, userID domain.UserID, createdAt, expiresAt time.Time) *domain.Session {
	return domain.RehydrateSession(domain.SessionID(id), userID, domain.HashToken("token-"+id), true,
		"203.0.113.7", "test-agent/1.0", "", "", expiresAt, createdAt, createdAt, domain.PasswordAuthentication())
}

func mustCreateSession(t *testing.T, repo ports.SessionRepository, s *domain.Session) {
	t.Helper()
	if err := repo.Create(context.Background(), s); err != nil {
		t.Fatalf("Create session %s: %v", s.ID(), err)
	}
}

func mustGetSession(t *testing.T, repo ports.SessionRepository, h domain.TokenHash) (*domain.Session, *domain.User) {
	t.Helper()
	s, u, err := repo.GetByTokenHash(context.Background(), h)
	if err != nil {
		t.Fatalf("GetByTokenHash(%s): %v", h, err)
	}
	return s, u
}

func assertSameSession(t *testing.T, got, want *domain.Session) {
	t.Helper()
	if got.ID() != want.ID() || got.UserID() != want.UserID() || got.TokenHash() != want.TokenHash() ||
		got.RememberMe() != want.RememberMe() || got.IPAddress() != want.IPAddress() || got.UserAgent() != want.UserAgent() ||
		got.ActiveOrganizationID() != want.ActiveOrganizationID() || got.ImpersonatedBy() != want.ImpersonatedBy() {
		t.Fatalf("session mismatch:\n got  %s\n want %s", describeSession(got), describeSession(want))
	}
	assertTime(t, "ExpiresAt", got.ExpiresAt(), want.ExpiresAt())
	assertTime(t, "CreatedAt", got.CreatedAt(), want.CreatedAt())
	assertTime(t, "UpdatedAt", got.UpdatedAt(), want.UpdatedAt())
	ga, wa := got.Authentication(), want.Authentication()
	if !slices.Equal(ga.Methods, wa.Methods) {
		t.Fatalf("session %s methods = %v, want %v", got.ID(), ga.Methods, wa.Methods)
	}
	assertTime(t, "SecondFactorAt", ga.SecondFactorAt, wa.SecondFactorAt)
}

func describeSession(s *domain.Session) string {
	return fmt.Sprintf("{id=%s user=%s hash=%s remember=%v ip=%q ua=%q org=%q impersonator=%q expires=%s created=%s updated=%s}",
		s.ID(), s.UserID(), s.TokenHash(), s.RememberMe(), s.IPAddress(), s.UserAgent(), s.ActiveOrganizationID(), s.ImpersonatedBy(),
		s.ExpiresAt().Format(time.RFC3339Nano), s.CreatedAt().Format(time.RFC3339Nano), s.UpdatedAt().Format(time.RFC3339Nano))
}

func mustListSessions(t *testing.T, repo ports.SessionRepository, userID domain.UserID, now time.Time) []domain.SessionID {
	t.Helper()
	list, err := repo.ListByUser(context.Background(), userID, now)
	if err != nil {
		t.Fatalf("ListByUser(%s): %v", userID, err)
	}
	ids := make([]domain.SessionID, 0, len(list))
	for _, s := range list {
		ids = append(ids, s.ID())
	}
	return ids
}

func assertSessionGone(t *testing.T, repo ports.SessionRepository, id string) {
	t.Helper()
	_, _, err := repo.GetByTokenHash(context.Background(), domain.HashToken("token-"+id))
	mustBeKind(t, err, domain.ErrNotFound)
}

func testSessionRoundTrip(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	// A non-UTC instant with nanoseconds: it must come back as the same
	// instant at microsecond precision, in UTC.
	local := time.Date(2026, 7, 8, 9, 10, 11, 654321987, time.FixedZone("UTC+5:30", 5*60*60+30*60))
	remembered := domain.NewSession("s1", "u1", domain.HashToken("tok-1"), true, "2001:db8::1",
		"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", sessionPolicy, local)
	bare := domain.NewSession("s2", "u1", domain.HashToken("tok-2"), false, "", "", sessionPolicy, local.Add(time.Minute))
	mustCreateSession(t, s.Sessions, remembered)
	mustCreateSession(t, s.Sessions, bare)

	got, _ := mustGetSession(t, s.Sessions, remembered.TokenHash())
	assertSameSession(t, got, remembered)
	assertTime(t, "CreatedAt", got.CreatedAt(), local.Truncate(time.Microsecond))
	got, _ = mustGetSession(t, s.Sessions, bare.TokenHash())
	assertSameSession(t, got, bare)

	list, err := s.Sessions.ListByUser(context.Background(), "u1", local)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("ListByUser returned %d sessions, want 2", len(list))
	}
	assertSameSession(t, list[0], bare)
	assertSameSession(t, list[1], remembered)
}

func testSessionNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	_, _, err := s.Sessions.GetByTokenHash(ctx, domain.HashToken("nothing"))
	mustBeKind(t, err, domain.ErrNotFound)
	mustBeKind(t, s.Sessions.Delete(ctx, "u1", "nothing"), domain.ErrNotFound)
	if ids := mustListSessions(t, s.Sessions, "nobody", baseTime); len(ids) != 0 {
		t.Fatalf("ListByUser(nobody) = %v, want none", ids)
	}
}

func testSessionDuplicateID(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	first := makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour))
	mustCreateSession(t, s.Sessions, first)
	dup := domain.RehydrateSession("s1", "u1", domain.HashToken("another token"), false, "", "", "", "", baseTime.Add(2*time.Hour), baseTime, baseTime, domain.PasswordAuthentication())
	mustBeKind(t, s.Sessions.Create(context.Background(), dup), domain.ErrConflict)
	_, _, err := s.Sessions.GetByTokenHash(context.Background(), dup.TokenHash())
	mustBeKind(t, err, domain.ErrNotFound)
	got, _ := mustGetSession(t, s.Sessions, first.TokenHash())
	assertSameSession(t, got, first)
}

func testSessionDuplicateToken(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	first := makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour))
	mustCreateSession(t, s.Sessions, first)
	dup := domain.RehydrateSession("s2", "u2", first.TokenHash(), false, "", "", "", "", baseTime.Add(2*time.Hour), baseTime, baseTime, domain.PasswordAuthentication())
	mustBeKind(t, s.Sessions.Create(context.Background(), dup), domain.ErrConflict)
	got, u := mustGetSession(t, s.Sessions, first.TokenHash())
	assertSameSession(t, got, first)
	if u.ID() != "u1" {
		t.Fatalf("token now leads to user %s, want u1", u.ID())
	}
}

func testSessionUnknownUser(t *testing.T, s Stores) {
	ghost := makeSession("s1", "ghost", baseTime, baseTime.Add(time.Hour))
	mustBeKind(t, s.Sessions.Create(context.Background(), ghost), domain.ErrNotFound)
	assertSessionGone(t, s.Sessions, "s1")
}

func testSessionJoinsUser(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateSession(t, s.Sessions, makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour)))
	mustCreateSession(t, s.Sessions, makeSession("s2", "u2", baseTime, baseTime.Add(time.Hour)))
	// The joined user is read with the session, so it reflects later changes.
	later := baseTime.Add(time.Minute)
	if err := s.Users.Update(ctx, "u1", func(u *domain.User) error {
		u.MarkEmailVerified(later)
		if err := u.SetImage("https://example.com/u1.png", later); err != nil {
			return err
		}
		if err := u.SetRoles([]domain.PlatformRole{domain.PlatformRoleUser, domain.PlatformRoleAdmin}, later); err != nil {
			return err
		}
		if err := u.Ban("abuse", later.Add(time.Hour), later); err != nil {
			return err
		}
		u.SetPublicMetadata(mustMetadata(t, `{"plan":"pro"}`), later)
		u.SetPrivateMetadata(mustMetadata(t, `{"crm":{"id":7}}`), later)
		return u.Rename("Renamed", later)
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []domain.UserID{"u1", "u2"} {
		want, err := s.Users.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		sid := map[domain.UserID]string{"u1": "s1", "u2": "s2"}[id]
		sess, u := mustGetSession(t, s.Sessions, domain.HashToken("token-"+sid))
		if sess.UserID() != id {
			t.Fatalf("session %s belongs to %s, want %s", sid, sess.UserID(), id)
		}
		assertSameUser(t, u, want)
	}
}

func testSessionList(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	now := baseTime.Add(2 * time.Hour)
	mustCreateSession(t, s.Sessions, makeSession("old", "u1", baseTime, now.Add(time.Hour)))
	mustCreateSession(t, s.Sessions, makeSession("new", "u1", baseTime.Add(time.Hour), now.Add(time.Hour)))
	mustCreateSession(t, s.Sessions, makeSession("mid", "u1", baseTime.Add(time.Minute), now.Add(time.Microsecond)))
	mustCreateSession(t, s.Sessions, makeSession("expired", "u1", baseTime.Add(90*time.Minute), now.Add(-time.Second)))
	mustCreateSession(t, s.Sessions, makeSession("ends_now", "u1", baseTime.Add(100*time.Minute), now))
	mustCreateSession(t, s.Sessions, makeSession("other", "u2", baseTime.Add(110*time.Minute), now.Add(time.Hour)))

	want := []domain.SessionID{"new", "mid", "old"}
	if got := mustListSessions(t, s.Sessions, "u1", now); !slices.Equal(got, want) {
		t.Fatalf("ListByUser(u1) = %v, want %v (live only, newest first)", got, want)
	}
	// now in another zone is the same instant.
	if got := mustListSessions(t, s.Sessions, "u1", now.In(time.FixedZone("UTC-7", -7*60*60))); !slices.Equal(got, want) {
		t.Fatalf("ListByUser(u1) with a zoned now = %v, want %v", got, want)
	}
	if got := mustListSessions(t, s.Sessions, "u2", now); !slices.Equal(got, []domain.SessionID{"other"}) {
		t.Fatalf("ListByUser(u2) = %v, want [other]", got)
	}
}

func testSessionUpdate(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	orig := makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour))
	mustCreateSession(t, s.Sessions, orig)
	later := baseTime.Add(30 * time.Minute)
	if err := s.Sessions.Update(context.Background(), "s1", func(s *domain.Session) error {
		s.Refresh(later, sessionPolicy)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, _ := mustGetSession(t, s.Sessions, orig.TokenHash())
	want := domain.RehydrateSession("s1", "u1", orig.TokenHash(), true, orig.IPAddress(), orig.UserAgent(), "", "",
		later.Add(sessionPolicy.Lifetime), baseTime, later, domain.PasswordAuthentication())
	assertSameSession(t, got, want)
}

// testSessionAuthentication: how the user signed in (the RFC 8176 methods
// and when a second factor was proven) is stored at creation, read back by
// the lookup, Get and ListByUser, and changed by Update (a step-up).
func testSessionAuthentication(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	pwd := makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour))
	passkey := makeSession("s2", "u1", baseTime.Add(time.Second), baseTime.Add(time.Hour))
	passkey.Authenticate(domain.PasskeyAuthentication(true, baseTime.Add(time.Second)))
	mustCreateSession(t, s.Sessions, pwd)
	mustCreateSession(t, s.Sessions, passkey)
	got, _ := mustGetSession(t, s.Sessions, passkey.TokenHash())
	assertSameSession(t, got, passkey)
	if a := got.Authentication(); !a.PhishingResistant() || a.ACR() != domain.ACRPhishingResistant {
		t.Fatalf("passkey session reads back as %+v", a)
	}
	stepUp := baseTime.Add(10 * time.Minute)
	if err := s.Sessions.Update(context.Background(), "s1", func(x *domain.Session) error {
		x.ProveSecondFactor(domain.MethodOTP, stepUp)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sessions.Get(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	a := got.Authentication()
	if want := []domain.AuthMethod{domain.MethodPassword, domain.MethodOTP, domain.MethodMultiFactor}; !slices.Equal(a.Methods, want) {
		t.Fatalf("after a step-up the methods are %v, want %v", a.Methods, want)
	}
	assertTime(t, "SecondFactorAt", a.SecondFactorAt, stepUp)
	list, err := s.Sessions.ListByUser(context.Background(), "u1", baseTime)
	if err != nil || len(list) != 2 {
		t.Fatalf("ListByUser = %d sessions, %v", len(list), err)
	}
	assertSameSession(t, list[0], passkey)
	if !list[1].Authentication().HasSecondFactor() {
		t.Fatal("ListByUser lost the step-up")
	}
}

func testSessionUpdateRollback(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	orig := makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour))
	mustCreateSession(t, s.Sessions, orig)
	boom := errors.New("boom")
	err := s.Sessions.Update(context.Background(), "s1", func(s *domain.Session) error {
		s.Refresh(baseTime.Add(time.Minute), sessionPolicy)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update error = %v, want the fn's error", err)
	}
	got, _ := mustGetSession(t, s.Sessions, orig.TokenHash())
	assertSameSession(t, got, orig)
}

func testSessionUpdateMissing(t *testing.T, s Stores) {
	called := false
	err := s.Sessions.Update(context.Background(), "nothing", func(*domain.Session) error { called = true; return nil })
	mustBeKind(t, err, domain.ErrNotFound)
	if called {
		t.Fatal("fn was called for a missing session")
	}
}

func testSessionUpdateParallel(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	orig := makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour))
	mustCreateSession(t, s.Sessions, orig)
	const workers = 20
	// Each update moves updatedAt one second past what it read, so a lost
	// write leaves it short of workers seconds.
	errs := runParallel(workers, func(int) error {
		return s.Sessions.Update(context.Background(), "s1", func(s *domain.Session) error {
			s.Refresh(s.UpdatedAt().Add(time.Second), sessionPolicy)
			return nil
		})
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Update: %v", err)
		}
	}
	got, _ := mustGetSession(t, s.Sessions, orig.TokenHash())
	if want := baseTime.Add(workers * time.Second); !got.UpdatedAt().Equal(want) {
		t.Fatalf("UpdatedAt = %s after %d updates, want %s: writes were lost", got.UpdatedAt(), workers, want)
	}
}

func testSessionDelete(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateSession(t, s.Sessions, makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour)))

	// Another user cannot revoke it, and cannot tell it exists.
	mustBeKind(t, s.Sessions.Delete(ctx, "u2", "s1"), domain.ErrNotFound)
	mustGetSession(t, s.Sessions, domain.HashToken("token-s1"))

	if err := s.Sessions.Delete(ctx, "u1", "s1"); err != nil {
		t.Fatal(err)
	}
	assertSessionGone(t, s.Sessions, "s1")
	mustBeKind(t, s.Sessions.Delete(ctx, "u1", "s1"), domain.ErrNotFound)
}

// seedSessionsForDelete gives u1 sessions a, b and c, and u2 session d.
func seedSessionsForDelete(t *testing.T, s Stores) {
	t.Helper()
	mustCreateUsers(t, s, "u1", "u2")
	for i, id := range []string{"a", "b", "c"} {
		mustCreateSession(t, s.Sessions, makeSession(id, "u1", baseTime.Add(time.Duration(i)*time.Minute), baseTime.Add(time.Hour)))
	}
	mustCreateSession(t, s.Sessions, makeSession("d", "u2", baseTime, baseTime.Add(time.Hour)))
}

func testSessionDeleteByUserKeep(t *testing.T, s Stores) {
	seedSessionsForDelete(t, s)
	n, err := s.Sessions.DeleteByUser(context.Background(), "u1", "b")
	if err != nil || n != 2 {
		t.Fatalf("DeleteByUser(u1, keep b) = %d, %v; want 2, nil", n, err)
	}
	if got := mustListSessions(t, s.Sessions, "u1", baseTime); !slices.Equal(got, []domain.SessionID{"b"}) {
		t.Fatalf("u1 keeps %v, want [b]", got)
	}
	if got := mustListSessions(t, s.Sessions, "u2", baseTime); !slices.Equal(got, []domain.SessionID{"d"}) {
		t.Fatalf("u2 keeps %v, want [d]", got)
	}
	// Keeping another user's session protects nothing of u1's.
	n, err = s.Sessions.DeleteByUser(context.Background(), "u1", "d")
	if err != nil || n != 1 {
		t.Fatalf("DeleteByUser(u1, keep d) = %d, %v; want 1, nil", n, err)
	}
}

func testSessionDeleteByUserAll(t *testing.T, s Stores) {
	seedSessionsForDelete(t, s)
	n, err := s.Sessions.DeleteByUser(context.Background(), "u1", "")
	if err != nil || n != 3 {
		t.Fatalf("DeleteByUser(u1) = %d, %v; want 3, nil", n, err)
	}
	if got := mustListSessions(t, s.Sessions, "u1", baseTime); len(got) != 0 {
		t.Fatalf("u1 keeps %v, want none", got)
	}
	if got := mustListSessions(t, s.Sessions, "u2", baseTime); !slices.Equal(got, []domain.SessionID{"d"}) {
		t.Fatalf("u2 keeps %v, want [d]", got)
	}
	n, err = s.Sessions.DeleteByUser(context.Background(), "nobody", "")
	if err != nil || n != 0 {
		t.Fatalf("DeleteByUser(nobody) = %d, %v; want 0, nil", n, err)
	}
}

func testSessionDeleteExpired(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	now := baseTime.Add(time.Hour)
	mustCreateSession(t, s.Sessions, makeSession("past", "u1", baseTime, now.Add(-time.Minute)))
	mustCreateSession(t, s.Sessions, makeSession("ends_now", "u2", baseTime, now))
	mustCreateSession(t, s.Sessions, makeSession("live", "u1", baseTime, now.Add(time.Microsecond)))

	n, err := s.Sessions.DeleteExpired(context.Background(), now.In(time.FixedZone("UTC-7", -7*60*60)))
	if err != nil || n != 2 {
		t.Fatalf("DeleteExpired = %d, %v; want 2, nil", n, err)
	}
	assertSessionGone(t, s.Sessions, "past")
	assertSessionGone(t, s.Sessions, "ends_now")
	mustGetSession(t, s.Sessions, domain.HashToken("token-live"))
}

func testSessionCascade(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateSession(t, s.Sessions, makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour)))
	mustCreateSession(t, s.Sessions, makeSession("s2", "u1", baseTime, baseTime.Add(time.Hour)))
	mustCreateSession(t, s.Sessions, makeSession("s3", "u2", baseTime, baseTime.Add(time.Hour)))
	mustDeleteUser(t, s, "u1")
	assertSessionGone(t, s.Sessions, "s1")
	assertSessionGone(t, s.Sessions, "s2")
	if got := mustListSessions(t, s.Sessions, "u1", baseTime); len(got) != 0 {
		t.Fatalf("deleted user still lists %v", got)
	}
	mustGetSession(t, s.Sessions, domain.HashToken("token-s3"))
	// The freed ids and tokens may be used again.
	mustCreateUsers(t, s, "u1")
	mustCreateSession(t, s.Sessions, makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour)))
}

func testSessionCopies(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	orig := makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour))
	want := makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour))
	mustCreateSession(t, s.Sessions, orig)
	orig.Refresh(baseTime.Add(time.Minute), sessionPolicy) // the caller's value is not the stored one

	got, u := mustGetSession(t, s.Sessions, want.TokenHash())
	assertSameSession(t, got, want)
	got.Refresh(baseTime.Add(2*time.Minute), sessionPolicy)
	_ = u.Rename("Mutated after get", baseTime)

	list, err := s.Sessions.ListByUser(ctx, "u1", baseTime)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListByUser = %d sessions, %v; want 1", len(list), err)
	}
	assertSameSession(t, list[0], want)
	list[0].Refresh(baseTime.Add(3*time.Minute), sessionPolicy)

	var inFn *domain.Session
	if err := s.Sessions.Update(ctx, "s1", func(s *domain.Session) error { inFn = s; return errors.New("no") }); err == nil {
		t.Fatal("Update with a failing fn succeeded")
	}
	inFn.Refresh(baseTime.Add(4*time.Minute), sessionPolicy)

	again, u := mustGetSession(t, s.Sessions, want.TokenHash())
	assertSameSession(t, again, want)
	if u.Name() != "User u1" {
		t.Fatalf("stored user changed with a returned value: %q", u.Name())
	}
}

func testSessionGet(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	want := makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour))
	mustCreateSession(t, s.Sessions, want)
	mustCreateSession(t, s.Sessions, makeSession("s2", "u1", baseTime, baseTime.Add(time.Hour)))
	got, err := s.Sessions.Get(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	assertSameSession(t, got, want)
	// A copy: changing it changes nothing stored.
	got.Refresh(baseTime.Add(time.Minute), sessionPolicy)
	if again := mustGetSessionByID(t, s.Sessions, "s1"); !again.UpdatedAt().Equal(want.UpdatedAt()) {
		t.Fatalf("stored session changed with a returned value: %s", describeSession(again))
	}
	_, err = s.Sessions.Get(ctx, "nothing")
	mustBeKind(t, err, domain.ErrNotFound)
	// Expired sessions are returned; the caller decides.
	mustCreateSession(t, s.Sessions, makeSession("old", "u1", baseTime.Add(-2*time.Hour), baseTime.Add(-time.Hour)))
	mustGetSessionByID(t, s.Sessions, "old")
}

func mustGetSessionByID(t *testing.T, repo ports.SessionRepository, id domain.SessionID) *domain.Session {
	t.Helper()
	got, err := repo.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get session %s: %v", id, err)
	}
	return got
}

// assertSessionEverywhere checks that the session want reads back the same
// through Get, GetByTokenHash and ListByUser at now.
func assertSessionEverywhere(t *testing.T, repo ports.SessionRepository, want *domain.Session, now time.Time) {
	t.Helper()
	assertSameSession(t, mustGetSessionByID(t, repo, want.ID()), want)
	got, u := mustGetSession(t, repo, want.TokenHash())
	assertSameSession(t, got, want)
	if u.ID() != want.UserID() {
		t.Fatalf("session %s came with user %s, want %s", want.ID(), u.ID(), want.UserID())
	}
	list, err := repo.ListByUser(context.Background(), want.UserID(), now)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		if l.ID() == want.ID() {
			assertSameSession(t, l, want)
			return
		}
	}
	t.Fatalf("ListByUser(%s) lacks session %s", want.UserID(), want.ID())
}

func testSessionImpersonation(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "admin")
	imp := domain.NewImpersonationSession("s1", "u1", "admin", domain.HashToken("tok-imp"), "198.51.100.1", "admin-agent", time.Hour, baseTime)
	mustCreateSession(t, s.Sessions, imp)
	if imp.ImpersonatedBy() != "admin" {
		t.Fatalf("NewImpersonationSession set impersonator %q", imp.ImpersonatedBy())
	}
	assertSessionEverywhere(t, s.Sessions, imp, baseTime)

	// Update keeps the impersonator.
	later := baseTime.Add(time.Minute)
	if err := s.Sessions.Update(ctx, "s1", func(s *domain.Session) error {
		s.Refresh(later, domain.SessionPolicy{Lifetime: time.Hour})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := domain.RehydrateSession("s1", "u1", imp.TokenHash(), false, imp.IPAddress(), imp.UserAgent(), "", "admin",
		later.Add(time.Hour), baseTime, later, domain.Authentication{})
	assertSessionEverywhere(t, s.Sessions, want, later)

	// An ordinary session has no impersonator.
	plain := makeSession("s2", "u1", baseTime, baseTime.Add(time.Hour))
	mustCreateSession(t, s.Sessions, plain)
	if got := mustGetSessionByID(t, s.Sessions, "s2"); got.ImpersonatedBy() != "" {
		t.Fatalf("plain session impersonated by %q", got.ImpersonatedBy())
	}
}

func testSessionUnknownImpersonator(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	imp := domain.NewImpersonationSession("s1", "u1", "ghost", domain.HashToken("tok-imp"), "", "", time.Hour, baseTime)
	mustBeKind(t, s.Sessions.Create(context.Background(), imp), domain.ErrNotFound)
	_, err := s.Sessions.Get(context.Background(), "s1")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testSessionImpersonatorCascade(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "admin")
	mustCreateSession(t, s.Sessions, domain.NewImpersonationSession("imp", "u1", "admin", domain.HashToken("token-imp"), "", "", time.Hour, baseTime))
	mustCreateSession(t, s.Sessions, makeSession("own", "u1", baseTime, baseTime.Add(time.Hour)))
	mustCreateSession(t, s.Sessions, makeSession("admins", "admin", baseTime, baseTime.Add(time.Hour)))
	mustDeleteUser(t, s, "admin")
	assertSessionGone(t, s.Sessions, "imp")
	assertSessionGone(t, s.Sessions, "admins")
	if got := mustListSessions(t, s.Sessions, "u1", baseTime); !slices.Equal(got, []domain.SessionID{"own"}) {
		t.Fatalf("u1 keeps %v after the impersonator was deleted, want [own]", got)
	}
}

// needOrganizations skips a test that needs organizations when the store
// under test has no organization repository wired into Stores yet.
func needOrganizations(t *testing.T, s Stores) {
	t.Helper()
	if s.Organizations == nil {
		t.Skip("Stores.Organizations is nil: a session's active organization must refer to a stored organization")
	}
}

// createOrgsForSessions creates organizations o1, o2, … owned by owner.
func createOrgsForSessions(t *testing.T, s Stores, owner domain.UserID, ids ...domain.OrganizationID) {
	t.Helper()
	for _, id := range ids {
		org, err := domain.NewOrganization(id, "Org "+string(id), "org-"+string(id), "", "", baseTime)
		if err != nil {
			t.Fatal(err)
		}
		m, err := domain.NewMember(domain.MemberID("m-"+string(id)), id, owner, []domain.OrgRole{domain.OrgRoleOwner}, baseTime)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Organizations.Create(context.Background(), org, m); err != nil {
			t.Fatalf("Create organization %s: %v", id, err)
		}
	}
}

// makeOrgSession is makeSession working in org.
func makeOrgSession(id string, userID domain.UserID, org domain.OrganizationID) *domain.Session {
	return domain.RehydrateSession(domain.SessionID(id), userID, domain.HashToken("token-"+id), true,
		"203.0.113.7", "test-agent/1.0", org, "", baseTime.Add(time.Hour), baseTime, baseTime, domain.PasswordAuthentication())
}

// assertActiveOrganization fails unless session id works in org.
func assertActiveOrganization(t *testing.T, repo ports.SessionRepository, id domain.SessionID, org domain.OrganizationID) {
	t.Helper()
	if got := mustGetSessionByID(t, repo, id).ActiveOrganizationID(); got != org {
		t.Fatalf("session %s works in %q, want %q", id, got, org)
	}
}

func testSessionActiveOrganization(t *testing.T, s Stores) {
	needOrganizations(t, s)
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	createOrgsForSessions(t, s, "u1", "o1", "o2")

	// Created working in o1.
	created := makeOrgSession("s1", "u1", "o1")
	mustCreateSession(t, s.Sessions, created)
	assertSessionEverywhere(t, s.Sessions, created, baseTime)

	// Moved to o2.
	later := baseTime.Add(time.Minute)
	if err := s.Sessions.Update(ctx, "s1", func(s *domain.Session) error {
		s.SetActiveOrganization("o2", later)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	moved := domain.RehydrateSession("s1", "u1", created.TokenHash(), true, created.IPAddress(), created.UserAgent(), "o2", "",
		created.ExpiresAt(), baseTime, later, domain.PasswordAuthentication())
	assertSessionEverywhere(t, s.Sessions, moved, baseTime)

	// And out of any organization.
	if err := s.Sessions.Update(ctx, "s1", func(s *domain.Session) error {
		s.SetActiveOrganization("", later)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cleared := domain.RehydrateSession("s1", "u1", created.TokenHash(), true, created.IPAddress(), created.UserAgent(), "", "",
		created.ExpiresAt(), baseTime, later, domain.PasswordAuthentication())
	assertSessionEverywhere(t, s.Sessions, cleared, baseTime)

	// An impersonation session may work in an organization too.
	mustCreateUsers(t, s, "admin")
	imp := domain.NewImpersonationSession("s2", "u1", "admin", domain.HashToken("tok-imp"), "", "", time.Hour, baseTime)
	imp.SetActiveOrganization("o1", baseTime)
	mustCreateSession(t, s.Sessions, imp)
	assertSessionEverywhere(t, s.Sessions, imp, baseTime)
}

func testSessionMissingOrganization(t *testing.T, s Stores) {
	needOrganizations(t, s)
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	createOrgsForSessions(t, s, "u1", "o1")
	mustBeKind(t, s.Sessions.Create(ctx, makeOrgSession("s1", "u1", "nowhere")), domain.ErrNotFound)
	_, err := s.Sessions.Get(ctx, "s1")
	mustBeKind(t, err, domain.ErrNotFound)

	mustCreateSession(t, s.Sessions, makeOrgSession("s2", "u1", "o1"))
	err = s.Sessions.Update(ctx, "s2", func(s *domain.Session) error {
		s.SetActiveOrganization("nowhere", baseTime.Add(time.Minute))
		return nil
	})
	mustBeKind(t, err, domain.ErrNotFound)
	assertSameSession(t, mustGetSessionByID(t, s.Sessions, "s2"), makeOrgSession("s2", "u1", "o1"))
}

// seedOrgSessions gives u1 sessions a (in o1) and b (in o2), and u2
// sessions c (in o1) and d (in none).
func seedOrgSessions(t *testing.T, s Stores) {
	t.Helper()
	needOrganizations(t, s)
	mustCreateUsers(t, s, "u1", "u2")
	createOrgsForSessions(t, s, "u1", "o1", "o2")
	for _, sess := range []*domain.Session{
		makeOrgSession("a", "u1", "o1"), makeOrgSession("b", "u1", "o2"),
		makeOrgSession("c", "u2", "o1"), makeOrgSession("d", "u2", ""),
	} {
		mustCreateSession(t, s.Sessions, sess)
	}
}

func testSessionClearOrganizationUser(t *testing.T, s Stores) {
	seedOrgSessions(t, s)
	if err := s.Sessions.ClearOrganization(context.Background(), "o1", "u1"); err != nil {
		t.Fatal(err)
	}
	// Only the active organization changes: not even updatedAt.
	assertSameSession(t, mustGetSessionByID(t, s.Sessions, "a"), makeOrgSession("a", "u1", ""))
	assertActiveOrganization(t, s.Sessions, "b", "o2")
	assertActiveOrganization(t, s.Sessions, "c", "o1")
	assertActiveOrganization(t, s.Sessions, "d", "")
	// Nothing to clear is not an error.
	if err := s.Sessions.ClearOrganization(context.Background(), "o1", "u1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Sessions.ClearOrganization(context.Background(), "nowhere", "nobody"); err != nil {
		t.Fatal(err)
	}
	assertActiveOrganization(t, s.Sessions, "c", "o1")
}

func testSessionClearOrganizationAll(t *testing.T, s Stores) {
	seedOrgSessions(t, s)
	if err := s.Sessions.ClearOrganization(context.Background(), "o1", ""); err != nil {
		t.Fatal(err)
	}
	assertSameSession(t, mustGetSessionByID(t, s.Sessions, "a"), makeOrgSession("a", "u1", ""))
	assertSameSession(t, mustGetSessionByID(t, s.Sessions, "c"), makeOrgSession("c", "u2", ""))
	assertActiveOrganization(t, s.Sessions, "b", "o2")
	assertActiveOrganization(t, s.Sessions, "d", "")
}

func testSessionOrganizationDeleted(t *testing.T, s Stores) {
	seedOrgSessions(t, s)
	if err := s.Organizations.Delete(context.Background(), "o1"); err != nil {
		t.Fatal(err)
	}
	// The sessions live on, in no organization.
	assertSameSession(t, mustGetSessionByID(t, s.Sessions, "a"), makeOrgSession("a", "u1", ""))
	assertSameSession(t, mustGetSessionByID(t, s.Sessions, "c"), makeOrgSession("c", "u2", ""))
	assertActiveOrganization(t, s.Sessions, "b", "o2")
}
