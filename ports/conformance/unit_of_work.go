package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunUnitOfWork runs the UnitOfWork contract. newStores must return empty
// repositories sharing one fresh database each time it is called;
// UnitOfWork, Users, Sessions, Organizations, Audit and Outbox are used.
func RunUnitOfWork(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"commit_keeps_every_write", testUnitCommit},
		{"error_undoes_every_write", testUnitErrorRollsBack},
		{"panic_undoes_every_write", testUnitPanicRollsBack},
		{"reads_inside_see_the_units_writes", testUnitReadsOwnWrites},
		{"nested_do_joins_the_outer_unit", testUnitNestedJoins},
		{"nested_error_returned_by_the_outer_undoes_both", testUnitNestedErrorRollsBack},
		{"failed_update_inside_leaves_the_unit_usable", testUnitFailedUpdateInside},
		{"calls_outside_a_unit_never_see_its_undone_writes", testUnitIsolation},
		{"calls_without_a_unit_are_unchanged", testUnitNoUnit},
		{"concurrent_units_lose_no_update", testUnitParallel},
	}
	for _, tt := range tests {
		t.Run("contract=UnitOfWork/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

var errUnitBoom = errors.New("conformance: the unit fails")

// unitWrites writes through every repository the suite uses, with ctx: it
// renames the existing user u0, creates user u1 with a session, creates
// organization o1 owned by u1, deletes u0's session s0, appends an audit
// entry and an outbox message. seedUnit makes u0 and s0 first.
func unitWrites(ctx context.Context, s Stores) error {
	if err := s.Users.Update(ctx, "u0", func(u *domain.User) error { return u.Rename("Renamed", baseTime.Add(time.Minute)) }); err != nil {
		return fmt.Errorf("rename u0: %w", err)
	}
	e, _ := domain.NewEmail("u1@example.com")
	u1, err := domain.NewUser("u1", "User u1", e, baseTime)
	if err != nil {
		return err
	}
	if err := s.Users.Create(ctx, u1); err != nil {
		return fmt.Errorf("create u1: %w", err)
	}
	if err := s.Sessions.Create(ctx, makeSession("s1", "u1", baseTime, baseTime.Add(time.Hour))); err != nil {
		return fmt.Errorf("create s1: %w", err)
	}
	o, err := domain.NewOrganization("o1", "Org o1", "o1", "", "", baseTime)
	if err != nil {
		return err
	}
	m, err := domain.NewMember("o1-u1", "o1", "u1", rolesOwner, baseTime)
	if err != nil {
		return err
	}
	if err := s.Organizations.Create(ctx, o, m); err != nil {
		return fmt.Errorf("create o1: %w", err)
	}
	if err := s.Sessions.Delete(ctx, "u0", "s0"); err != nil {
		return fmt.Errorf("delete s0: %w", err)
	}
	if err := s.Audit.Append(ctx, auditEntry("a1", baseTime)); err != nil {
		return fmt.Errorf("append a1: %w", err)
	}
	if err := s.Outbox.Append(ctx, outboxMessage("m1", ports.OutboxEvents, baseTime)); err != nil {
		return fmt.Errorf("append m1: %w", err)
	}
	return nil
}

// seedUnit creates user u0 with session s0, outside any unit.
func seedUnit(t *testing.T, s Stores) {
	t.Helper()
	mustCreateUser(t, s.Users, mustUser(t, "u0", "u0@example.com"))
	mustCreateSession(t, s.Sessions, makeSession("s0", "u0", baseTime, baseTime.Add(time.Hour)))
}

// assertUnitKept fails unless every write of unitWrites is there.
func assertUnitKept(t *testing.T, s Stores) {
	t.Helper()
	ctx := context.Background()
	if u, err := s.Users.Get(ctx, "u0"); err != nil || u.Name() != "Renamed" {
		t.Errorf("u0 after the unit = %v, %v; want renamed", u, err)
	}
	if _, err := s.Users.Get(ctx, "u1"); err != nil {
		t.Errorf("u1 after the unit: %v", err)
	}
	if _, err := s.Sessions.Get(ctx, "s1"); err != nil {
		t.Errorf("s1 after the unit: %v", err)
	}
	if _, err := s.Sessions.Get(ctx, "s0"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("s0 after the unit = %v, want deleted", err)
	}
	if _, err := s.Organizations.Get(ctx, "o1"); err != nil {
		t.Errorf("o1 after the unit: %v", err)
	}
	if n, err := s.Organizations.CountMembers(ctx, "o1"); err != nil || n != 1 {
		t.Errorf("o1's members after the unit = %d, %v; want 1", n, err)
	}
	if got := mustListAudit(t, s.Audit, ports.AuditQuery{}); len(got) != 1 || got[0].ID != "a1" {
		t.Errorf("audit after the unit = %v, want a1", got)
	}
	if got := mustOutboxDepth(t, s, ports.OutboxEvents); got != 1 {
		t.Errorf("outbox depth after the unit = %d, want 1", got)
	}
}

// assertUnitUndone fails unless the store is as seedUnit left it.
func assertUnitUndone(t *testing.T, s Stores) {
	t.Helper()
	ctx := context.Background()
	if u, err := s.Users.Get(ctx, "u0"); err != nil || u.Name() != "User u0" {
		t.Errorf("u0 after the undone unit = %v, %v; want its old name", u, err)
	}
	if _, err := s.Users.Get(ctx, "u1"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("u1 after the undone unit = %v, want not found", err)
	}
	if _, err := s.Users.GetByEmail(ctx, "u1@example.com"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("u1 by e-mail after the undone unit = %v, want not found", err)
	}
	if _, err := s.Sessions.Get(ctx, "s1"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("s1 after the undone unit = %v, want not found", err)
	}
	if _, _, err := s.Sessions.GetByTokenHash(ctx, domain.HashToken("token-s1")); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("s1 by token after the undone unit = %v, want not found", err)
	}
	if _, err := s.Sessions.Get(ctx, "s0"); err != nil {
		t.Errorf("s0 after the undone unit: %v, want it kept", err)
	}
	if _, _, err := s.Sessions.GetByTokenHash(ctx, domain.HashToken("token-s0")); err != nil {
		t.Errorf("s0 by token after the undone unit: %v, want it kept", err)
	}
	if _, err := s.Organizations.Get(ctx, "o1"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("o1 after the undone unit = %v, want not found", err)
	}
	if taken, err := s.Organizations.SlugTaken(ctx, "o1"); err != nil || taken {
		t.Errorf("slug o1 after the undone unit taken = %v, %v; want free", taken, err)
	}
	if got := mustListAudit(t, s.Audit, ports.AuditQuery{}); len(got) != 0 {
		t.Errorf("audit after the undone unit = %v, want empty", got)
	}
	if got := mustOutboxDepth(t, s, ports.OutboxEvents); got != 0 {
		t.Errorf("outbox depth after the undone unit = %d, want 0", got)
	}
	// What the unit wrote can be written again: no index kept a ghost.
	if err := unitWrites(ctx, s); err != nil {
		t.Errorf("the same writes after the undone unit: %v", err)
	}
}

func testUnitCommit(t *testing.T, s Stores) {
	seedUnit(t, s)
	if err := s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error { return unitWrites(ctx, s) }); err != nil {
		t.Fatalf("Do: %v", err)
	}
	assertUnitKept(t, s)
}

func testUnitErrorRollsBack(t *testing.T, s Stores) {
	seedUnit(t, s)
	err := s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		if err := unitWrites(ctx, s); err != nil {
			t.Errorf("writes inside the unit: %v", err)
		}
		return fmt.Errorf("wrapped: %w", errUnitBoom)
	})
	if !errors.Is(err, errUnitBoom) {
		t.Fatalf("Do = %v, want fn's error", err)
	}
	assertUnitUndone(t, s)
}

func testUnitPanicRollsBack(t *testing.T, s Stores) {
	seedUnit(t, s)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want fn's panic to go through Do", r)
			}
		}()
		_ = s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
			if err := unitWrites(ctx, s); err != nil {
				t.Errorf("writes inside the unit: %v", err)
			}
			panic("boom")
		})
	}()
	assertUnitUndone(t, s)
}

func testUnitReadsOwnWrites(t *testing.T, s Stores) {
	seedUnit(t, s)
	err := s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		if err := unitWrites(ctx, s); err != nil {
			return err
		}
		if u, err := s.Users.Get(ctx, "u0"); err != nil || u.Name() != "Renamed" {
			t.Errorf("u0 inside the unit = %v, %v; want renamed", u, err)
		}
		if _, u, err := s.Sessions.GetByTokenHash(ctx, domain.HashToken("token-s1")); err != nil || u.ID() != "u1" {
			t.Errorf("s1 inside the unit = %v, %v", u, err)
		}
		if _, err := s.Sessions.Get(ctx, "s0"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("s0 inside the unit = %v, want deleted", err)
		}
		if got, err := s.Audit.List(ctx, ports.AuditQuery{}); err != nil || len(got) != 1 {
			t.Errorf("audit inside the unit = %v, %v", got, err)
		}
		if st, err := s.Outbox.Stats(ctx); err != nil || st[ports.OutboxEvents].Depth != 1 {
			t.Errorf("outbox inside the unit = %v, %v", st, err)
		}
		return errUnitBoom
	})
	if !errors.Is(err, errUnitBoom) {
		t.Fatalf("Do = %v", err)
	}
	assertUnitUndone(t, s)
}

func testUnitNestedJoins(t *testing.T, s Stores) {
	seedUnit(t, s)
	err := s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		return s.UnitOfWork.Do(ctx, func(ctx context.Context) error { return unitWrites(ctx, s) })
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	assertUnitKept(t, s)
}

func testUnitNestedErrorRollsBack(t *testing.T, s Stores) {
	seedUnit(t, s)
	// The inner unit succeeds, the outer fails: the inner's writes are the
	// outer's, and go with it.
	err := s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		if err := s.UnitOfWork.Do(ctx, func(ctx context.Context) error { return unitWrites(ctx, s) }); err != nil {
			t.Errorf("inner Do: %v", err)
		}
		return errUnitBoom
	})
	if !errors.Is(err, errUnitBoom) {
		t.Fatalf("Do = %v", err)
	}
	assertUnitUndone(t, s) // writes them again, outside a unit

	// The inner unit fails and the outer returns its error.
	s2 := Stores{UnitOfWork: s.UnitOfWork, Users: s.Users}
	err = s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		if err := s2.Users.Update(ctx, "u0", func(u *domain.User) error { return u.Rename("Outer", baseTime) }); err != nil {
			return err
		}
		return s2.UnitOfWork.Do(ctx, func(ctx context.Context) error {
			if err := s2.Users.Update(ctx, "u1", func(u *domain.User) error { return u.Rename("Inner", baseTime) }); err != nil {
				t.Errorf("rename in the inner unit: %v", err)
			}
			return errUnitBoom
		})
	})
	if !errors.Is(err, errUnitBoom) {
		t.Fatalf("Do = %v", err)
	}
	for id, want := range map[domain.UserID]string{"u0": "Renamed", "u1": "User u1"} {
		if u, err := s.Users.Get(context.Background(), id); err != nil || u.Name() != want {
			t.Errorf("%s after the undone units = %v, %v; want name %q", id, u, err, want)
		}
	}
}

// A repository's own atomic step that fails (an Update whose fn refuses, a
// missing row) undoes only itself; the unit goes on and commits the rest.
func testUnitFailedUpdateInside(t *testing.T, s Stores) {
	seedUnit(t, s)
	errRefused := errors.New("refused")
	err := s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		if err := unitWrites(ctx, s); err != nil {
			return err
		}
		err := s.Users.Update(ctx, "u1", func(u *domain.User) error {
			_ = u.Rename("Never", baseTime)
			return errRefused
		})
		if !errors.Is(err, errRefused) {
			t.Errorf("refused Update = %v", err)
		}
		if err := s.Users.Update(ctx, "nobody", func(*domain.User) error { return nil }); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Update of a missing user = %v, want not found", err)
		}
		if _, err := s.Users.Get(ctx, "nobody"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Get of a missing user = %v, want not found", err)
		}
		return s.Audit.Append(ctx, auditEntry("a2", baseTime))
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if u, err := s.Users.Get(context.Background(), "u1"); err != nil || u.Name() != "User u1" {
		t.Errorf("u1 = %v, %v; want the refused rename not applied", u, err)
	}
	if got := mustListAudit(t, s.Audit, ports.AuditQuery{}); len(got) != 2 {
		t.Errorf("audit = %v, want a1 and a2", got)
	}
}

// A call made outside the unit while it is open never sees a write the
// unit then undoes. Stores that serialise units (memory) make the call
// wait for the unit; the SQL stores answer it from the committed state. The
// unit waits for the outside call's answer a little, then gives up waiting
// and fails; either way the answer must be "not found".
func testUnitIsolation(t *testing.T, s Stores) {
	seedUnit(t, s)
	answer := make(chan error, 1)
	err := s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		if err := unitWrites(ctx, s); err != nil {
			return err
		}
		go func() { // #nosec G118 -- the read must come from outside the unit, which ctx would join
			_, err := s.Users.GetByEmail(context.Background(), "u1@example.com")
			answer <- err
		}()
		select {
		case err := <-answer:
			answer <- err
		case <-time.After(200 * time.Millisecond):
		}
		return errUnitBoom
	})
	if !errors.Is(err, errUnitBoom) {
		t.Fatalf("Do = %v", err)
	}
	select {
	case err := <-answer:
		if !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("a read outside the open unit = %v, want not found", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a read outside the unit never answered")
	}
	assertUnitUndone(t, s)
}

func testUnitNoUnit(t *testing.T, s Stores) {
	seedUnit(t, s)
	// Each call commits on its own: a later failure undoes nothing before it.
	ctx := context.Background()
	if err := unitWrites(ctx, s); err != nil {
		t.Fatalf("writes without a unit: %v", err)
	}
	if err := s.Audit.Append(ctx, auditEntry("a1", baseTime)); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("duplicate audit entry = %v, want conflict", err)
	}
	assertUnitKept(t, s)
}

// Twenty units at once each rename one shared user through Update and
// append an audit entry and an outbox message: every rename and every
// entry is kept.
func testUnitParallel(t *testing.T, s Stores) {
	mustCreateUser(t, s.Users, mustUser(t, "u0", "u0@example.com"))
	const n = 20
	errs := runParallel(n, func(i int) error {
		return s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
			err := s.Users.Update(ctx, "u0", func(u *domain.User) error { return u.Rename(u.Name()+"+", baseTime) })
			if err != nil {
				return err
			}
			id := fmt.Sprintf("p%02d", i)
			if err := s.Audit.Append(ctx, auditEntry(id, baseTime)); err != nil {
				return err
			}
			return s.Outbox.Append(ctx, outboxMessage(id, ports.OutboxEvents, baseTime))
		})
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("unit %d: %v", i, err)
		}
	}
	u, err := s.Users.Get(context.Background(), "u0")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(u.Name(), "+"); got != n {
		t.Errorf("renames kept = %d, want %d", got, n)
	}
	if got := mustListAudit(t, s.Audit, ports.AuditQuery{Limit: 100}); len(got) != n {
		t.Errorf("audit entries = %d, want %d", len(got), n)
	}
	if got := mustOutboxDepth(t, s, ports.OutboxEvents); got != n {
		t.Errorf("outbox depth = %d, want %d", got, n)
	}
}
