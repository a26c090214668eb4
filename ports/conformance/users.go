package conformance

import (
	"context"
	"errors"
	"fmt"
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
		!got.CreatedAt().Equal(want.CreatedAt()) || !got.UpdatedAt().Equal(want.UpdatedAt()) {
		t.Fatalf("user mismatch:\n got  %s\n want %s", describeUser(got), describeUser(want))
	}
	if got.CreatedAt().Location() != time.UTC || got.UpdatedAt().Location() != time.UTC {
		t.Fatalf("times not in UTC: created %v updated %v", got.CreatedAt().Location(), got.UpdatedAt().Location())
	}
}

func describeUser(u *domain.User) string {
	return fmt.Sprintf("{id=%s name=%q email=%s verified=%v image=%q created=%s updated=%s}",
		u.ID(), u.Name(), u.Email(), u.EmailVerified(), u.Image(),
		u.CreatedAt().Format(time.RFC3339Nano), u.UpdatedAt().Format(time.RFC3339Nano))
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
	u.SetImage("https://example.com/ada.png", baseTime.Add(time.Second))
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
				return u.Rename(u.Name()+string(rune('a'+i)), baseTime)
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
