package gormstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
)

// shortTimeout is the database timeout of these tests. Their waits are
// bounded by patience, far above it, never asserted as timings. The tests
// do not call t.Parallel, so they run before the package's parallel tests
// rather than beside them: some statements must still finish within
// shortTimeout (the session lookup once the lock is gone).
const (
	shortTimeout = 200 * time.Millisecond
	patience     = 30 * time.Second
)

// mustOpenShort opens the migrated database at u with shortTimeout.
func mustOpenShort(t *testing.T, u gormstore.DatabaseURL) *gorm.DB {
	t.Helper()
	db, cleanup, err := gormstore.Open(t.Context(), u, gormstore.Timeout(shortTimeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	return db
}

// mustHoldLock takes, on a connection of its own, the lock an update of the
// user id needs (the row on PostgreSQL, the write lock on SQLite) and keeps
// it until the test ends.
func mustHoldLock(t *testing.T, db *gorm.DB, id domain.UserID) {
	t.Helper()
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlDB.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{"BEGIN IMMEDIATE"}
	if gormstore.DialectOf(db) == gormstore.DialectPostgres {
		stmts = []string{"BEGIN", "SELECT 1 FROM users WHERE id = '" + string(id) + "' FOR UPDATE"}
	}
	for _, s := range stmts {
		if _, err := conn.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		_ = conn.Close()
	})
}

// Ensure a repository call the database does not answer (it waits on a
// lock another connection holds) fails with KindUnavailable once the
// database timeout has passed, though its caller's context has no deadline,
// instead of waiting as long as the lock is held.
func TestTimeout_bounds_a_call_that_waits_on_a_lock(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		u := newURL(t)
		db := gormtest.Open(t, u)
		user, err := domain.NewUser("u1", "Ada", "ada@example.com", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := gormstore.NewUserRepository(db).Create(t.Context(), user); err != nil {
			t.Fatal(err)
		}
		users := gormstore.NewUserRepository(mustOpenShort(t, u))
		mustHoldLock(t, db, user.ID())

		done := make(chan error, 1)
		go func() {
			done <- users.Update(context.Background(), user.ID(), func(u *domain.User) error { return nil })
		}()
		select {
		case err := <-done:
			if got, want := domain.KindOf(err), domain.KindUnavailable; got != want {
				t.Fatalf("update behind a held lock: kind %v, want %v (err %v)", got, want, err)
			}
			if !errors.Is(err, domain.ErrUnavailable) || err.Error() == "" {
				t.Fatalf("err = %v", err)
			}
		case <-time.After(patience):
			t.Fatalf("the update still waits on the lock after %s", patience)
		}
	})
}

// Ensure a transaction is bounded as a whole: statements that each finish
// within the timeout still fail once the transaction has lasted longer.
func TestTimeout_bounds_a_whole_transaction(t *testing.T) {
	db := mustOpenShort(t, gormtest.PostgresURL(t))
	step := shortTimeout / 2
	var steps int
	err := gormstore.Transaction(context.Background(), db, func(tx *gorm.DB) error {
		for steps = 0; steps < 4; steps++ {
			if err := tx.Exec("SELECT pg_sleep(?)", step.Seconds()).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("four steps of %s in a transaction bounded by %s: err %v after %d steps, want the deadline", step, shortTimeout, err, steps)
	}
}

// Ensure known long work can ask for a longer bound: a statement that
// outlasts the timeout fails, and succeeds under WithTimeout.
func TestTimeout_can_be_lengthened_for_long_work(t *testing.T) {
	db := mustOpenShort(t, gormtest.PostgresURL(t))
	slow := func(ctx context.Context) error {
		return db.WithContext(ctx).Exec("SELECT pg_sleep(?)", (2 * shortTimeout).Seconds()).Error
	}
	if err := slow(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a statement of twice the timeout: err %v, want the deadline", err)
	}
	if err := slow(gormstore.WithTimeout(context.Background(), patience)); err != nil {
		t.Fatalf("under WithTimeout: %v", err)
	}
	// The raw pool (migrations) keeps its own context.
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlDB.ExecContext(context.Background(), "SELECT pg_sleep($1)", (2 * shortTimeout).Seconds()); err != nil {
		t.Fatalf("raw pool: %v", err)
	}
}

// Ensure the deadlines hold inside a unit of work: a statement of the unit
// that waits on a lock another connection holds fails with KindUnavailable
// once the timeout has passed (on SQLite the unit's BEGIN IMMEDIATE is what
// waits), and the unit as a whole is bounded like a transaction.
func TestTimeout_bounds_a_unit_of_work(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		u := newURL(t)
		db := gormtest.Open(t, u)
		user, err := domain.NewUser("u1", "Ada", "ada@example.com", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := gormstore.NewUserRepository(db).Create(t.Context(), user); err != nil {
			t.Fatal(err)
		}
		short := mustOpenShort(t, u)
		users, unit := gormstore.NewUserRepository(short), gormstore.NewUnitOfWork(short)
		mustHoldLock(t, db, user.ID())

		done := make(chan error, 1)
		go func() {
			done <- unit.Do(context.Background(), func(ctx context.Context) error {
				if _, err := users.Get(ctx, user.ID()); err != nil {
					return err
				}
				return users.Update(ctx, user.ID(), func(u *domain.User) error { return nil })
			})
		}()
		select {
		case err := <-done:
			if got, want := domain.KindOf(err), domain.KindUnavailable; got != want {
				t.Fatalf("a unit behind a held lock: kind %v, want %v (err %v)", got, want, err)
			}
		case <-time.After(patience):
			t.Fatalf("the unit still waits on the lock after %s", patience)
		}
	})
	db := mustOpenShort(t, gormtest.PostgresURL(t))
	step := shortTimeout / 2
	var steps int
	err := gormstore.NewUnitOfWork(db).Do(context.Background(), func(ctx context.Context) error {
		for steps = 0; steps < 4; steps++ {
			if _, err := gormstore.NewUserRepository(db).Get(ctx, "nobody"); !errors.Is(err, domain.ErrNotFound) {
				return err
			}
			time.Sleep(step) // work between statements counts too
		}
		return nil
	})
	if !errors.Is(err, domain.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("four steps of %s in a unit bounded by %s: err %v after %d steps, want the deadline", step, shortTimeout, err, steps)
	}
}

// Ensure the session lookup, which runs beside gorm rather than through it,
// is bounded like every other statement: behind a lock that keeps it from
// reading the sessions table it fails with KindUnavailable once the
// database timeout has passed, and finds the session once the lock is gone.
func TestTimeout_bounds_the_session_lookup(t *testing.T) {
	u := gormtest.PostgresMigratedURL(t)
	db := gormtest.Open(t, u)
	now := time.Now()
	user, err := domain.NewUser("u1", "Ada", "ada@example.com", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := gormstore.NewUserRepository(db).Create(t.Context(), user); err != nil {
		t.Fatal(err)
	}
	s := domain.NewSession("s1", user.ID(), domain.HashToken("token"), true, "", "", domain.SessionPolicy{Lifetime: time.Hour}, now)
	if err := gormstore.NewSessionRepository(db).Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	sessions := gormstore.NewSessionRepository(mustOpenShort(t, u))

	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlDB.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	for _, stmt := range []string{"BEGIN", "LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE"} {
		if _, err := conn.ExecContext(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := sessions.GetByTokenHash(context.Background(), s.TokenHash())
		done <- err
	}()
	select {
	case err := <-done:
		if got, want := domain.KindOf(err), domain.KindUnavailable; got != want {
			t.Fatalf("lookup behind a held lock: kind %v, want %v (err %v)", got, want, err)
		}
	case <-time.After(patience):
		t.Fatalf("the lookup still waits on the lock after %s", patience)
	}
	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	got, gotUser, err := sessions.GetByTokenHash(context.Background(), s.TokenHash())
	if err != nil {
		t.Fatalf("lookup after the lock: %v", err)
	}
	if got.ID() != s.ID() || gotUser.ID() != user.ID() {
		t.Fatalf("lookup after the lock: session %s of user %s", got.ID(), gotUser.ID())
	}
}
