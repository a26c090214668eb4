package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunUserRepository runs the UserRepository contract. newRepo must return an
// empty repository each time it is called.
func RunUserRepository(t *testing.T, newRepo func(t *testing.T) ports.UserRepository) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, repo ports.UserRepository)
	}{
		{"create_then_get_round_trips", testUserRoundTrip},
		{"missing_user_is_not_found", testUserNotFound},
		{"duplicate_email_is_conflict", testUserDuplicateEmail},
		{"duplicate_id_is_conflict", testUserDuplicateID},
		{"update_applies_fn", testUserUpdate},
		{"update_rolls_back_when_fn_fails", testUserUpdateRollback},
		{"update_of_missing_user_is_not_found", testUserUpdateMissing},
		{"concurrent_updates_lose_no_write", testUserUpdateParallel},
		{"times_keep_their_instant_across_zones", testUserTimezones},
		{"returned_values_are_copies", testUserCopies},
		{"delete_removes", testUserDelete},
		{"concurrent_creates_of_one_email_have_one_winner", testUserCreateRace},
		{"access_round_trips", testUserAccess},
		{"list_string_operators", testUserListStrings},
		{"list_search_is_case_insensitive_and_literal", testUserListSearch},
		{"list_role_matches_one_of_the_roles", testUserListRole},
		{"list_bool_operators", testUserListBools},
		{"list_time_operators", testUserListTimes},
		{"list_conditions_all_hold", testUserListAnd},
		{"list_sorts_with_id_tiebreak", testUserListSort},
		{"list_pages_and_counts_all_matches", testUserListPaging},
		{"list_unsupported_query_is_invalid", testUserListInvalid},
		{"list_returns_copies", testUserListCopies},
		{"metadata_round_trips", testUserMetadataRoundTrip},
	}
	for _, tt := range tests {
		t.Run("contract=UserRepository/"+tt.name, func(t *testing.T) {
			tt.fn(t, newRepo(t))
		})
	}
}

var baseTime = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

func mustUser(t *testing.T, id, email string) *domain.User {
	t.Helper()
	e, err := domain.NewEmail(email)
	if err != nil {
		t.Fatal(err)
	}
	u, err := domain.NewUser(domain.UserID(id), "User "+id, e, baseTime)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustCreateUser(t *testing.T, repo ports.UserRepository, u *domain.User) {
	t.Helper()
	if err := repo.Create(context.Background(), u); err != nil {
		t.Fatalf("Create(%s): %v", u.ID(), err)
	}
}

func assertSameUser(t *testing.T, got, want *domain.User) {
	t.Helper()
	if got.ID() != want.ID() || got.Name() != want.Name() || got.Email() != want.Email() ||
		got.EmailVerified() != want.EmailVerified() || got.Image() != want.Image() ||
		!got.CreatedAt().Equal(want.CreatedAt()) || !got.UpdatedAt().Equal(want.UpdatedAt()) || !sameAccess(got.Access(), want.Access()) ||
		!got.Metadata().Public.Equal(want.Metadata().Public) || !got.Metadata().Private.Equal(want.Metadata().Private) {
		t.Fatalf("user mismatch:\n got  %s\n want %s", describeUser(got), describeUser(want))
	}
	if exp := got.Access().BanExpires; !exp.IsZero() && exp.Location() != time.UTC {
		t.Fatalf("ban expiry not in UTC: %v", exp.Location())
	}
	if got.CreatedAt().Location() != time.UTC || got.UpdatedAt().Location() != time.UTC {
		t.Fatalf("times not in UTC: created %v updated %v", got.CreatedAt().Location(), got.UpdatedAt().Location())
	}
}

func describeUser(u *domain.User) string {
	a := u.Access()
	return fmt.Sprintf("{id=%s name=%q email=%s verified=%v image=%q roles=%v banned=%v reason=%q ban_expires=%s public=%s private=%s created=%s updated=%s}",
		u.ID(), u.Name(), u.Email(), u.EmailVerified(), u.Image(), a.Roles, a.Banned, a.BanReason, a.BanExpires.Format(time.RFC3339Nano),
		u.Metadata().Public, u.Metadata().Private, u.CreatedAt().Format(time.RFC3339Nano), u.UpdatedAt().Format(time.RFC3339Nano))
}

func sameAccess(a, b domain.UserAccess) bool {
	return slices.Equal(a.Roles, b.Roles) && a.Banned == b.Banned && a.BanReason == b.BanReason && a.BanExpires.Equal(b.BanExpires)
}

func mustBeKind(t *testing.T, err error, sentinel *domain.Error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error = %v (kind %v), want kind %v", err, domain.KindOf(err), sentinel.Kind)
	}
}

func testUserRoundTrip(t *testing.T, repo ports.UserRepository) {
	ctx := context.Background()
	u := mustUser(t, "u1", "ada@example.com")
	if err := u.SetImage("https://example.com/ada.png", baseTime.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	mustCreateUser(t, repo, u)

	got, err := repo.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	assertSameUser(t, got, u)

	got, err = repo.GetByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	assertSameUser(t, got, u)
}

func testUserNotFound(t *testing.T, repo ports.UserRepository) {
	ctx := context.Background()
	_, err := repo.Get(ctx, "nobody")
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = repo.GetByEmail(ctx, "nobody@example.com")
	mustBeKind(t, err, domain.ErrNotFound)
	mustBeKind(t, repo.Delete(ctx, "nobody"), domain.ErrNotFound)
}

func testUserDuplicateEmail(t *testing.T, repo ports.UserRepository) {
	mustCreateUser(t, repo, mustUser(t, "u1", "ada@example.com"))
	err := repo.Create(context.Background(), mustUser(t, "u2", "ADA@example.com"))
	mustBeKind(t, err, domain.ErrConflict)
}

func testUserDuplicateID(t *testing.T, repo ports.UserRepository) {
	mustCreateUser(t, repo, mustUser(t, "u1", "ada@example.com"))
	err := repo.Create(context.Background(), mustUser(t, "u1", "grace@example.com"))
	mustBeKind(t, err, domain.ErrConflict)
}

func testUserUpdate(t *testing.T, repo ports.UserRepository) {
	ctx := context.Background()
	mustCreateUser(t, repo, mustUser(t, "u1", "ada@example.com"))
	later := baseTime.Add(time.Hour)
	err := repo.Update(ctx, "u1", func(u *domain.User) error {
		u.MarkEmailVerified(later)
		return u.Rename("Ada Lovelace", later)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := repo.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name() != "Ada Lovelace" || !got.EmailVerified() || !got.UpdatedAt().Equal(later) {
		t.Fatalf("update not saved: %s", describeUser(got))
	}
}

func testUserUpdateRollback(t *testing.T, repo ports.UserRepository) {
	ctx := context.Background()
	u := mustUser(t, "u1", "ada@example.com")
	mustCreateUser(t, repo, u)
	boom := errors.New("boom")
	err := repo.Update(ctx, "u1", func(u *domain.User) error {
		_ = u.Rename("Changed", baseTime.Add(time.Hour))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update error = %v, want the fn's error", err)
	}
	got, err := repo.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	assertSameUser(t, got, u)
}

func testUserUpdateMissing(t *testing.T, repo ports.UserRepository) {
	called := false
	err := repo.Update(context.Background(), "nobody", func(*domain.User) error { called = true; return nil })
	mustBeKind(t, err, domain.ErrNotFound)
	if called {
		t.Fatal("fn was called for a missing user")
	}
}

func testUserUpdateParallel(t *testing.T, repo ports.UserRepository) {
	ctx := context.Background()
	mustCreateUser(t, repo, mustUser(t, "u1", "ada@example.com"))
	const workers = 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- repo.Update(ctx, "u1", func(u *domain.User) error {
				return u.Rename(u.Name()+string(rune('a'+i)), baseTime) // #nosec G115 -- i counts 20 goroutines
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Update: %v", err)
		}
	}
	got, err := repo.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if added := len(strings.TrimPrefix(got.Name(), "User u1")); added != workers {
		t.Fatalf("name %q carries %d of %d updates: writes were lost", got.Name(), added, workers)
	}
}

func testUserTimezones(t *testing.T, repo ports.UserRepository) {
	ctx := context.Background()
	zone := time.FixedZone("UTC-7", -7*60*60)
	local := time.Date(2026, 7, 8, 9, 10, 11, 654321000, zone)
	e, _ := domain.NewEmail("tz@example.com")
	u, err := domain.NewUser("u1", "Zoned", e, local)
	if err != nil {
		t.Fatal(err)
	}
	mustCreateUser(t, repo, u)
	got, err := repo.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt().Equal(local) {
		t.Fatalf("CreatedAt = %s, want the instant %s", got.CreatedAt(), local)
	}
	if got.CreatedAt().Location() != time.UTC {
		t.Fatalf("CreatedAt location = %v, want UTC", got.CreatedAt().Location())
	}
}

func testUserCopies(t *testing.T, repo ports.UserRepository) {
	ctx := context.Background()
	u := mustUser(t, "u1", "ada@example.com")
	mustCreateUser(t, repo, u)
	_ = u.Rename("Mutated after create", baseTime) // the caller's value is not the stored one

	got, err := repo.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name() != "User u1" {
		t.Fatalf("stored user changed with the caller's value: %q", got.Name())
	}
	_ = got.Rename("Mutated after get", baseTime)
	again, err := repo.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if again.Name() != "User u1" {
		t.Fatalf("stored user changed with a returned value: %q", again.Name())
	}
}

func testUserDelete(t *testing.T, repo ports.UserRepository) {
	ctx := context.Background()
	mustCreateUser(t, repo, mustUser(t, "u1", "ada@example.com"))
	if err := repo.Delete(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	_, err := repo.Get(ctx, "u1")
	mustBeKind(t, err, domain.ErrNotFound)
	// The address is free again.
	mustCreateUser(t, repo, mustUser(t, "u2", "ada@example.com"))
}

func testUserCreateRace(t *testing.T, repo ports.UserRepository) {
	const workers = 10
	var wg sync.WaitGroup
	results := make(chan error, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- repo.Create(context.Background(), mustUser(t, fmt.Sprintf("u%d", i), "same@example.com"))
		}()
	}
	wg.Wait()
	close(results)
	wins := 0
	for err := range results {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, domain.ErrConflict):
		default:
			t.Fatalf("racing Create: %v (kind %v), want success or conflict", err, domain.KindOf(err))
		}
	}
	if wins != 1 {
		t.Fatalf("%d creates of one e-mail succeeded, want exactly 1", wins)
	}
}

func testUserAccess(t *testing.T, repo ports.UserRepository) {
	ctx := context.Background()
	u := mustUser(t, "u1", "ada@example.com")
	if err := u.SetRoles([]domain.PlatformRole{domain.PlatformRoleAdmin, domain.PlatformRoleUser}, baseTime); err != nil {
		t.Fatal(err)
	}
	// An expiry in another zone, with nanoseconds: it comes back as the
	// same instant at microsecond precision, in UTC.
	expires := time.Date(2026, 9, 1, 2, 3, 4, 567891234, time.FixedZone("UTC+2", 2*60*60))
	if err := u.Ban("spam, again", expires, baseTime); err != nil {
		t.Fatal(err)
	}
	mustCreateUser(t, repo, u)
	got, err := repo.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	assertSameUser(t, got, u)
	a := got.Access()
	if !slices.Equal(a.Roles, []domain.PlatformRole{"admin", "user"}) || !a.Banned || a.BanReason != "spam, again" {
		t.Fatalf("access = %+v, want roles [admin user], banned for %q", a, "spam, again")
	}
	assertTime(t, "BanExpires", a.BanExpires, expires.Truncate(time.Microsecond))

	// Unbanned, and back to the default role.
	later := baseTime.Add(time.Hour)
	if err := repo.Update(ctx, "u1", func(u *domain.User) error {
		u.Unban(later)
		return u.SetRoles([]domain.PlatformRole{domain.PlatformRoleUser}, later)
	}); err != nil {
		t.Fatal(err)
	}
	got, err = repo.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if a := got.Access(); a.Banned || a.BanReason != "" || !a.BanExpires.IsZero() || !slices.Equal(a.Roles, []domain.PlatformRole{"user"}) {
		t.Fatalf("after unban: %s", describeUser(got))
	}

	// Banned until unbanned: no expiry.
	if err := repo.Update(ctx, "u1", func(u *domain.User) error { return u.Ban("", time.Time{}, later) }); err != nil {
		t.Fatal(err)
	}
	got, err = repo.GetByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if a := got.Access(); !a.Banned || a.BanReason != "" || !a.BanExpires.IsZero() {
		t.Fatalf("after a ban without expiry: %s", describeUser(got))
	}
	if !got.IsBanned(later.Add(100 * 365 * 24 * time.Hour)) {
		t.Fatal("a ban without expiry lifted by itself")
	}

	// A new user has the default role and no ban.
	mustCreateUser(t, repo, mustUser(t, "u2", "grace@example.com"))
	fresh, err := repo.Get(ctx, "u2")
	if err != nil {
		t.Fatal(err)
	}
	if a := fresh.Access(); !slices.Equal(a.Roles, []domain.PlatformRole{domain.DefaultPlatformRole}) || a.Banned {
		t.Fatalf("new user: %s", describeUser(fresh))
	}
}

// seedUsersForList stores five users chosen so that every operator has
// something to tell apart. By created_at: u1, u2, then u3 and u4 (a tie), u5.
//
//	id  name             email                 verified roles           banned          created  updated
//	u1  Ada Lovelace     ada@example.com       yes      user            no              t        t+10h
//	u2  Grace Hopper     grace@example.com     no       admin,user      no              t+1h     t+9h
//	u3  alan turing      alan@example.org      yes      user,admin      until t+100h    t+2h     t+8h
//	u4  100%_sure        percent@example.com   no       user            until unbanned  t+2h     t+7h
//	u5  Barbara 1000x \  a_b@example.net       no       superadmin,user no              t+3h     t+10h
func seedUsersForList(t *testing.T, repo ports.UserRepository) {
	t.Helper()
	type seed struct {
		id, name, email string
		verified        bool
		roles           []domain.PlatformRole
		banned          bool
		banExpires      time.Time
		created         time.Duration
		updated         time.Duration
	}
	user := []domain.PlatformRole{"user"}
	for _, sd := range []seed{
		{"u1", "Ada Lovelace", "ada@example.com", true, user, false, time.Time{}, 0, 10 * time.Hour},
		{"u2", "Grace Hopper", "grace@example.com", false, []domain.PlatformRole{"admin", "user"}, false, time.Time{}, time.Hour, 9 * time.Hour},
		{"u3", "alan turing", "alan@example.org", true, []domain.PlatformRole{"user", "admin"}, true, baseTime.Add(100 * time.Hour), 2 * time.Hour, 8 * time.Hour},
		{"u4", "100%_sure", "percent@example.com", false, user, true, time.Time{}, 2 * time.Hour, 7 * time.Hour},
		{"u5", `Barbara 1000x \`, "a_b@example.net", false, []domain.PlatformRole{"superadmin", "user"}, false, time.Time{}, 3 * time.Hour, 10 * time.Hour},
	} {
		access := domain.UserAccess{Roles: sd.roles, Banned: sd.banned, BanExpires: sd.banExpires}
		if sd.banned {
			access.BanReason = "reason " + sd.id
		}
		mustCreateUser(t, repo, domain.RehydrateUser(domain.UserID(sd.id), sd.name, domain.Email(sd.email), sd.verified, "",
			access, domain.UserMetadata{}, baseTime.Add(sd.created), baseTime.Add(sd.updated)))
	}
}

// listIDs runs q and returns the ids of the page and the total.
func listIDs(t *testing.T, repo ports.UserRepository, q ports.UserQuery) ([]domain.UserID, int) {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 100
	}
	users, total, err := repo.List(context.Background(), q)
	if err != nil {
		t.Fatalf("List(%+v): %v", q, err)
	}
	ids := make([]domain.UserID, 0, len(users))
	for _, u := range users {
		ids = append(ids, u.ID())
	}
	return ids, total
}

// listCase is one condition and the ids it selects, in the default order
// (created_at, then id).
type listCase struct {
	field ports.UserField
	op    ports.Operator
	value any
	want  []domain.UserID
}

func runListCases(t *testing.T, repo ports.UserRepository, cases []listCase) {
	t.Helper()
	for _, c := range cases {
		q := ports.UserQuery{Conditions: []ports.UserCondition{{Field: c.field, Operator: c.op, Value: c.value}}}
		got, total := listIDs(t, repo, q)
		if !slices.Equal(got, c.want) || total != len(c.want) {
			t.Errorf("%s %s %#v = %v (total %d), want %v", c.field, c.op, c.value, got, total, c.want)
		}
	}
}

func testUserListStrings(t *testing.T, repo ports.UserRepository) {
	seedUsersForList(t, repo)
	// Text is ordered byte by byte: digits, then upper case, then "_", then
	// lower case, whatever the database's locale.
	runListCases(t, repo, []listCase{
		{ports.UserFieldEmail, ports.OpEq, "alan@example.org", []domain.UserID{"u3"}},
		{ports.UserFieldEmail, ports.OpEq, "ALAN@example.org", nil},
		{ports.UserFieldEmail, ports.OpNe, "alan@example.org", []domain.UserID{"u1", "u2", "u4", "u5"}},
		{ports.UserFieldEmail, ports.OpLt, "alan@example.org", []domain.UserID{"u1", "u5"}},
		{ports.UserFieldEmail, ports.OpLte, "alan@example.org", []domain.UserID{"u1", "u3", "u5"}},
		{ports.UserFieldEmail, ports.OpGt, "alan@example.org", []domain.UserID{"u2", "u4"}},
		{ports.UserFieldEmail, ports.OpGte, "alan@example.org", []domain.UserID{"u2", "u3", "u4"}},
		{ports.UserFieldEmail, ports.OpContains, "EXAMPLE.COM", []domain.UserID{"u1", "u2", "u4"}},
		{ports.UserFieldEmail, ports.OpStartsWith, "Grace@", []domain.UserID{"u2"}},
		{ports.UserFieldEmail, ports.OpEndsWith, ".ORG", []domain.UserID{"u3"}},
		{ports.UserFieldName, ports.OpEq, "Grace Hopper", []domain.UserID{"u2"}},
		{ports.UserFieldName, ports.OpNe, "Grace Hopper", []domain.UserID{"u1", "u3", "u4", "u5"}},
		{ports.UserFieldName, ports.OpLt, "B", []domain.UserID{"u1", "u4"}},
		{ports.UserFieldName, ports.OpLte, "Barbara 1000x \\", []domain.UserID{"u1", "u4", "u5"}},
		{ports.UserFieldName, ports.OpGt, "Z", []domain.UserID{"u3"}},
		{ports.UserFieldName, ports.OpGte, "Grace Hopper", []domain.UserID{"u2", "u3"}},
		{ports.UserFieldName, ports.OpContains, "LOVE", []domain.UserID{"u1"}},
		{ports.UserFieldName, ports.OpStartsWith, "ALAN", []domain.UserID{"u3"}},
		{ports.UserFieldName, ports.OpEndsWith, "HOPPER", []domain.UserID{"u2"}},
		{ports.UserFieldID, ports.OpEq, "u3", []domain.UserID{"u3"}},
		{ports.UserFieldID, ports.OpNe, "u3", []domain.UserID{"u1", "u2", "u4", "u5"}},
		{ports.UserFieldID, ports.OpLt, "u3", []domain.UserID{"u1", "u2"}},
		{ports.UserFieldID, ports.OpLte, "u3", []domain.UserID{"u1", "u2", "u3"}},
		{ports.UserFieldID, ports.OpGt, "u3", []domain.UserID{"u4", "u5"}},
		{ports.UserFieldID, ports.OpGte, "u3", []domain.UserID{"u3", "u4", "u5"}},
		{ports.UserFieldID, ports.OpContains, "U", []domain.UserID{"u1", "u2", "u3", "u4", "u5"}},
		{ports.UserFieldID, ports.OpStartsWith, "u", []domain.UserID{"u1", "u2", "u3", "u4", "u5"}},
		{ports.UserFieldID, ports.OpEndsWith, "5", []domain.UserID{"u5"}},
	})
}

func testUserListSearch(t *testing.T, repo ports.UserRepository) {
	seedUsersForList(t, repo)
	// % and _ are literal: as wildcards, "100%" would match "1000x" too,
	// and "a_" would match "ada@" and "alan@".
	runListCases(t, repo, []listCase{
		{ports.UserFieldName, ports.OpContains, "100%", []domain.UserID{"u4"}},
		{ports.UserFieldName, ports.OpContains, "%_S", []domain.UserID{"u4"}},
		{ports.UserFieldName, ports.OpContains, "%", []domain.UserID{"u4"}},
		{ports.UserFieldName, ports.OpContains, "_", []domain.UserID{"u4"}},
		{ports.UserFieldEmail, ports.OpStartsWith, "a_", []domain.UserID{"u5"}},
		{ports.UserFieldEmail, ports.OpEndsWith, "_", nil},
		{ports.UserFieldName, ports.OpEndsWith, `x \`, []domain.UserID{"u5"}},
		{ports.UserFieldName, ports.OpContains, `\`, []domain.UserID{"u5"}},
		{ports.UserFieldName, ports.OpContains, `\%`, nil},
		{ports.UserFieldName, ports.OpContains, "aDa LoVeLaCe", []domain.UserID{"u1"}},
		{ports.UserFieldName, ports.OpContains, "", []domain.UserID{"u1", "u2", "u3", "u4", "u5"}},
		{ports.UserFieldName, ports.OpContains, "nobody", nil},
	})
}

func testUserListRole(t *testing.T, repo ports.UserRepository) {
	seedUsersForList(t, repo)
	// admin is u2's first role and u3's last; superadmin ends in "admin"
	// but is not admin; a prefix matches no role.
	runListCases(t, repo, []listCase{
		{ports.UserFieldRole, ports.OpEq, "admin", []domain.UserID{"u2", "u3"}},
		{ports.UserFieldRole, ports.OpNe, "admin", []domain.UserID{"u1", "u4", "u5"}},
		{ports.UserFieldRole, ports.OpEq, "user", []domain.UserID{"u1", "u2", "u3", "u4", "u5"}},
		{ports.UserFieldRole, ports.OpEq, "superadmin", []domain.UserID{"u5"}},
		{ports.UserFieldRole, ports.OpEq, "adm", nil},
		{ports.UserFieldRole, ports.OpEq, "%", nil},
		{ports.UserFieldRole, ports.OpNe, "adm", []domain.UserID{"u1", "u2", "u3", "u4", "u5"}},
	})
}

func testUserListBools(t *testing.T, repo ports.UserRepository) {
	seedUsersForList(t, repo)
	runListCases(t, repo, []listCase{
		{ports.UserFieldBanned, ports.OpEq, true, []domain.UserID{"u3", "u4"}},
		{ports.UserFieldBanned, ports.OpEq, false, []domain.UserID{"u1", "u2", "u5"}},
		{ports.UserFieldBanned, ports.OpNe, true, []domain.UserID{"u1", "u2", "u5"}},
		{ports.UserFieldVerified, ports.OpEq, true, []domain.UserID{"u1", "u3"}},
		{ports.UserFieldVerified, ports.OpNe, true, []domain.UserID{"u2", "u4", "u5"}},
		{ports.UserFieldVerified, ports.OpNe, false, []domain.UserID{"u1", "u3"}},
	})
}

func testUserListTimes(t *testing.T, repo ports.UserRepository) {
	seedUsersForList(t, repo)
	t2 := baseTime.Add(2 * time.Hour)
	// The same instant in another zone, and with nanoseconds below the
	// stored precision, selects the same users.
	t2zoned := t2.In(time.FixedZone("UTC-7", -7*60*60)).Add(999 * time.Nanosecond)
	runListCases(t, repo, []listCase{
		{ports.UserFieldCreatedAt, ports.OpEq, t2, []domain.UserID{"u3", "u4"}},
		{ports.UserFieldCreatedAt, ports.OpEq, t2zoned, []domain.UserID{"u3", "u4"}},
		{ports.UserFieldCreatedAt, ports.OpNe, t2, []domain.UserID{"u1", "u2", "u5"}},
		{ports.UserFieldCreatedAt, ports.OpLt, t2, []domain.UserID{"u1", "u2"}},
		{ports.UserFieldCreatedAt, ports.OpLte, t2zoned, []domain.UserID{"u1", "u2", "u3", "u4"}},
		{ports.UserFieldCreatedAt, ports.OpGt, t2, []domain.UserID{"u5"}},
		{ports.UserFieldCreatedAt, ports.OpGte, t2, []domain.UserID{"u3", "u4", "u5"}},
		{ports.UserFieldCreatedAt, ports.OpGt, t2.Add(-time.Microsecond), []domain.UserID{"u3", "u4", "u5"}},
		{ports.UserFieldCreatedAt, ports.OpLt, t2.Add(time.Microsecond), []domain.UserID{"u1", "u2", "u3", "u4"}},
		{ports.UserFieldUpdatedAt, ports.OpEq, baseTime.Add(10 * time.Hour), []domain.UserID{"u1", "u5"}},
		{ports.UserFieldUpdatedAt, ports.OpNe, baseTime.Add(10 * time.Hour), []domain.UserID{"u2", "u3", "u4"}},
		{ports.UserFieldUpdatedAt, ports.OpLt, baseTime.Add(8 * time.Hour), []domain.UserID{"u4"}},
		{ports.UserFieldUpdatedAt, ports.OpLte, baseTime.Add(8 * time.Hour), []domain.UserID{"u3", "u4"}},
		{ports.UserFieldUpdatedAt, ports.OpGt, baseTime.Add(9 * time.Hour), []domain.UserID{"u1", "u5"}},
		{ports.UserFieldUpdatedAt, ports.OpGte, baseTime.Add(9 * time.Hour), []domain.UserID{"u1", "u2", "u5"}},
	})
}

func testUserListAnd(t *testing.T, repo ports.UserRepository) {
	seedUsersForList(t, repo)
	q := ports.UserQuery{Conditions: []ports.UserCondition{
		{Field: ports.UserFieldBanned, Operator: ports.OpEq, Value: true},
		{Field: ports.UserFieldRole, Operator: ports.OpEq, Value: "admin"},
	}}
	if got, total := listIDs(t, repo, q); !slices.Equal(got, []domain.UserID{"u3"}) || total != 1 {
		t.Fatalf("banned admins = %v (total %d), want [u3]", got, total)
	}
	q.Conditions = append(q.Conditions, ports.UserCondition{Field: ports.UserFieldEmail, Operator: ports.OpEndsWith, Value: ".com"})
	if got, total := listIDs(t, repo, q); len(got) != 0 || total != 0 {
		t.Fatalf("banned admins at .com = %v (total %d), want none", got, total)
	}
}

func testUserListSort(t *testing.T, repo ports.UserRepository) {
	seedUsersForList(t, repo)
	tests := []struct {
		by   ports.UserField
		desc bool
		want []domain.UserID
	}{
		{"", false, []domain.UserID{"u1", "u2", "u3", "u4", "u5"}},
		{"", true, []domain.UserID{"u5", "u4", "u3", "u2", "u1"}},
		{ports.UserFieldCreatedAt, false, []domain.UserID{"u1", "u2", "u3", "u4", "u5"}},
		{ports.UserFieldCreatedAt, true, []domain.UserID{"u5", "u4", "u3", "u2", "u1"}},
		{ports.UserFieldUpdatedAt, false, []domain.UserID{"u4", "u3", "u2", "u1", "u5"}},
		{ports.UserFieldUpdatedAt, true, []domain.UserID{"u5", "u1", "u2", "u3", "u4"}},
		{ports.UserFieldEmail, false, []domain.UserID{"u5", "u1", "u3", "u2", "u4"}},
		{ports.UserFieldEmail, true, []domain.UserID{"u4", "u2", "u3", "u1", "u5"}},
		// Byte order: "100%_sure" < "Ada…" < "Barbara…" < "Grace…" < "alan…".
		{ports.UserFieldName, false, []domain.UserID{"u4", "u1", "u5", "u2", "u3"}},
		{ports.UserFieldName, true, []domain.UserID{"u3", "u2", "u5", "u1", "u4"}},
	}
	for _, tt := range tests {
		got, total := listIDs(t, repo, ports.UserQuery{SortBy: tt.by, SortDesc: tt.desc})
		if !slices.Equal(got, tt.want) || total != 5 {
			t.Errorf("sort by %q desc=%v = %v (total %d), want %v", tt.by, tt.desc, got, total, tt.want)
		}
	}
	// Ties in a text field are broken by id too.
	mustCreateUser(t, repo, domain.RehydrateUser("u0", "Grace Hopper", "grace0@example.com", false, "", domain.UserAccess{}, domain.UserMetadata{}, baseTime, baseTime))
	q := ports.UserQuery{Conditions: []ports.UserCondition{{Field: ports.UserFieldName, Operator: ports.OpEq, Value: "Grace Hopper"}}, SortBy: ports.UserFieldName}
	if got, _ := listIDs(t, repo, q); !slices.Equal(got, []domain.UserID{"u0", "u2"}) {
		t.Errorf("name tie ascending = %v, want [u0 u2]", got)
	}
	q.SortDesc = true
	if got, _ := listIDs(t, repo, q); !slices.Equal(got, []domain.UserID{"u2", "u0"}) {
		t.Errorf("name tie descending = %v, want [u2 u0]", got)
	}
}

func testUserListPaging(t *testing.T, repo ports.UserRepository) {
	seedUsersForList(t, repo)
	tests := []struct {
		limit, offset int
		desc          bool
		want          []domain.UserID
	}{
		{2, 0, false, []domain.UserID{"u1", "u2"}},
		{2, 1, false, []domain.UserID{"u2", "u3"}},
		{2, 2, false, []domain.UserID{"u3", "u4"}},
		{2, 4, false, []domain.UserID{"u5"}},
		{2, 5, false, nil},
		{3, 100, false, nil},
		{1, 2, true, []domain.UserID{"u3"}},
		{1000, 0, false, []domain.UserID{"u1", "u2", "u3", "u4", "u5"}},
	}
	for _, tt := range tests {
		got, total := listIDs(t, repo, ports.UserQuery{Limit: tt.limit, Offset: tt.offset, SortDesc: tt.desc})
		if !slices.Equal(got, tt.want) || total != 5 {
			t.Errorf("limit %d offset %d desc=%v = %v (total %d), want %v (total 5)", tt.limit, tt.offset, tt.desc, got, total, tt.want)
		}
	}
	// The total counts the matches, not the page.
	q := ports.UserQuery{Conditions: []ports.UserCondition{{Field: ports.UserFieldBanned, Operator: ports.OpEq, Value: false}}, Limit: 1, Offset: 1}
	if got, total := listIDs(t, repo, q); !slices.Equal(got, []domain.UserID{"u2"}) || total != 3 {
		t.Fatalf("second unbanned user = %v (total %d), want [u2] (total 3)", got, total)
	}
	// Walking the pages visits every user once, in order.
	var walked []domain.UserID
	for off := 0; off < 5; off += 2 {
		page, _ := listIDs(t, repo, ports.UserQuery{SortBy: ports.UserFieldName, Limit: 2, Offset: off})
		walked = append(walked, page...)
	}
	if want := []domain.UserID{"u4", "u1", "u5", "u2", "u3"}; !slices.Equal(walked, want) {
		t.Fatalf("pages by name = %v, want %v", walked, want)
	}
}

func testUserListInvalid(t *testing.T, repo ports.UserRepository) {
	seedUsersForList(t, repo)
	cond := func(f ports.UserField, op ports.Operator, v any) ports.UserQuery {
		return ports.UserQuery{Conditions: []ports.UserCondition{{Field: f, Operator: op, Value: v}}, Limit: 10}
	}
	tests := map[string]ports.UserQuery{
		"role contains":         cond(ports.UserFieldRole, ports.OpContains, "adm"),
		"role lt":               cond(ports.UserFieldRole, ports.OpLt, "admin"),
		"role list value":       cond(ports.UserFieldRole, ports.OpEq, "admin,user"),
		"role bool":             cond(ports.UserFieldRole, ports.OpEq, true),
		"banned string":         cond(ports.UserFieldBanned, ports.OpEq, "true"),
		"banned lt":             cond(ports.UserFieldBanned, ports.OpLt, true),
		"verified contains":     cond(ports.UserFieldVerified, ports.OpContains, true),
		"createdAt string":      cond(ports.UserFieldCreatedAt, ports.OpGt, "2026-01-01T00:00:00Z"),
		"createdAt contains":    cond(ports.UserFieldCreatedAt, ports.OpContains, baseTime),
		"updatedAt starts_with": cond(ports.UserFieldUpdatedAt, ports.OpStartsWith, baseTime),
		"email bool":            cond(ports.UserFieldEmail, ports.OpEq, true),
		"name time":             cond(ports.UserFieldName, ports.OpLt, baseTime),
		"id nil":                cond(ports.UserFieldID, ports.OpEq, nil),
		"unknown field":         cond("image", ports.OpEq, ""),
		"unknown operator":      cond(ports.UserFieldEmail, "like", "a%"),
		"sort by role":          {SortBy: ports.UserFieldRole, Limit: 10},
		"sort by id":            {SortBy: ports.UserFieldID, Limit: 10},
		"sort by unknown":       {SortBy: "image", Limit: 10},
		"zero limit":            {Limit: 0},
		"limit over 1000":       {Limit: 1001},
		"negative offset":       {Limit: 10, Offset: -1},
	}
	for name, q := range tests {
		users, _, err := repo.List(context.Background(), q)
		if !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%s: List = %d users, %v (kind %v); want kind invalid", name, len(users), err, domain.KindOf(err))
		}
	}
}

func testUserListCopies(t *testing.T, repo ports.UserRepository) {
	seedUsersForList(t, repo)
	users, _, err := repo.List(context.Background(), ports.UserQuery{Limit: 10})
	if err != nil || len(users) != 5 {
		t.Fatalf("List = %d users, %v; want 5", len(users), err)
	}
	for _, u := range users {
		_ = u.Rename("Mutated after list", baseTime)
		_ = u.SetRoles([]domain.PlatformRole{domain.PlatformRoleAdmin}, baseTime)
	}
	got, err := repo.Get(context.Background(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name() != "Ada Lovelace" || !slices.Equal(got.Roles(), []domain.PlatformRole{"user"}) {
		t.Fatalf("stored user changed with a listed value: %s", describeUser(got))
	}
}
