// Package gormtest gives tests fresh, isolated SQL databases: a SQLite file in
// the test's temporary directory (a copy of one migrated once per process),
// or a PostgreSQL schema of its own on the server named by
// GATEHOUSE_TEST_POSTGRES_URL. It is imported by tests only.
package gormtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
)

// PostgresEnv names the variable that enables the PostgreSQL suites.
const PostgresEnv = "GATEHOUSE_TEST_POSTGRES_URL"

// SQLiteURL returns the URL of a new SQLite database file under t.TempDir(),
// with every migration applied: a copy of a database migrated once per test
// process (opening it applies nothing more). Migrating an empty file costs
// about two seconds under the race detector, and the suites open hundreds.
func SQLiteURL(t testing.TB) gormstore.DatabaseURL {
	t.Helper()
	template, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("migrated SQLite template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "gatehouse.db")
	if err := os.WriteFile(path, template, 0o600); err != nil {
		t.Fatalf("copy the SQLite template: %v", err)
	}
	return gormstore.DatabaseURL("sqlite:" + path)
}

// sqliteTemplate returns the bytes of a SQLite database with every
// migration applied, made on first use.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "gormtest-sqlite-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "template.db")
	db, cleanup, err := gormstore.Open(context.Background(), gormstore.DatabaseURL("sqlite:"+path), Timeout)
	if err != nil {
		return nil, err
	}
	// Everything into the main file, so that the file alone is the
	// database (the write-ahead log is not copied).
	err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)").Error
	cleanup()
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path) // #nosec G304 -- a file this function made
})

// PostgresURL returns the URL of a new, empty database on the test server,
// dropped when the test ends, whose sessions commit without waiting for the
// disk (except in benchmarks). It skips the test when
// GATEHOUSE_TEST_POSTGRES_URL is unset or -short is given, except under CI,
// where a skipped PostgreSQL suite is a failure. A database of its own, not
// a schema of a shared one, so that its migrations take their advisory lock
// (which PostgreSQL scopes to one database) without waiting on other tests'.
func PostgresURL(t testing.TB) gormstore.DatabaseURL {
	t.Helper()
	return postgresDatabase(t, "")
}

// PostgresMigratedURL is PostgresURL with every migration applied: a copy
// (CREATE DATABASE … TEMPLATE, a few tens of milliseconds) of a template
// database migrated once and named by the migrations' digest, so that every
// test process and later run with the same migrations copies the same one.
// Migrating an empty database costs about a second under the race detector,
// and the suites start hundreds.
func PostgresMigratedURL(t testing.TB) gormstore.DatabaseURL {
	t.Helper()
	postgresBase(t)
	template, err := postgresTemplate()
	if err != nil {
		t.Fatalf("migrated PostgreSQL template: %v", err)
	}
	return postgresDatabase(t, template)
}

// postgresBase returns GATEHOUSE_TEST_POSTGRES_URL, skipping (or under CI
// failing) the test when it cannot be used.
func postgresBase(t testing.TB) string {
	t.Helper()
	// -short (make test-short) asks for the PostgreSQL suites to be
	// skipped, under CI too; what CI may not do is skip them for want of a
	// server.
	if testing.Short() {
		t.Skip("PostgreSQL suite skipped under -short")
	}
	base := os.Getenv(PostgresEnv)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s must be set in CI: the PostgreSQL suites may not be skipped", PostgresEnv)
		}
		t.Skipf("PostgreSQL suite skipped: set %s to run it", PostgresEnv)
	}
	return base
}

// postgresAdmin is one connection pool to the test server's own database,
// for creating and dropping the tests' databases.
var postgresAdmin = sync.OnceValues(func() (*gorm.DB, error) {
	db, err := gorm.Open(postgres.Open(os.Getenv(PostgresEnv)), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(4)
	return db, nil
})

// postgresDatabase creates a database for t, a copy of template when it is
// not "", and returns its URL; the database is dropped when t ends.
func postgresDatabase(t testing.TB, template string) gormstore.DatabaseURL {
	t.Helper()
	base := postgresBase(t)
	admin, err := postgresAdmin()
	if err != nil {
		t.Fatalf("connect to %s: %v", PostgresEnv, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "gh_test_" + hex.EncodeToString(b[:])
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if err := admin.Exec(create).Error; err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() { _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error })
	return databaseURL(t, base, name)
}

// databaseURL returns base naming the database name, whose sessions commit
// without waiting for the disk, except in benchmarks.
func databaseURL(t testing.TB, base, name string) gormstore.DatabaseURL {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresEnv, err)
	}
	u.Path = "/" + name
	q := u.Query()
	if _, bench := t.(*testing.B); !bench {
		// A commit does not wait for its WAL to reach the disk: only a
		// crash of the PostgreSQL server itself could lose what the tests
		// wrote, and no test crashes it. Every migration and write of the
		// suites commits, so this takes minutes off a run. Benchmarks keep
		// the server's own setting, as production does.
		q.Set("synchronous_commit", "off")
	}
	u.RawQuery = q.Encode()
	return gormstore.DatabaseURL(u.String())
}

// postgresTemplate returns the name of the migrated template database on
// the server at base, creating it when no test process has yet. Processes
// that start together take turns by an advisory lock of the server's own
// database; the one that creates it migrates it and disconnects, as a
// template must have no sessions to be copied.
var postgresTemplate = sync.OnceValues(makePostgresTemplate)

func makePostgresTemplate() (string, error) {
	digest, err := gormstore.MigrationsDigest(gormstore.DialectPostgres)
	if err != nil {
		return "", err
	}
	name := "gh_template_" + digest[:16]
	admin, err := postgresAdmin()
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	// One connection for the lock and everything under it.
	conn, err := admin.DB()
	if err != nil {
		return "", err
	}
	c, err := conn.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }()
	const lockID = 0x6768_7465_6d70_6c74 // "ghtemplt"
	if _, err := c.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(lockID)); err != nil {
		return "", err
	}
	defer func() { _, _ = c.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", int64(lockID)) }()
	var exists bool
	if err := c.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	// Made under another name and renamed once migrated, so that a
	// process that died half way leaves no half-migrated template.
	work := name + "_new"
	if _, err := c.ExecContext(ctx, "DROP DATABASE IF EXISTS "+work+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := c.ExecContext(ctx, "CREATE DATABASE "+work); err != nil {
		return "", err
	}
	u, err := url.Parse(os.Getenv(PostgresEnv))
	if err != nil {
		return "", err
	}
	u.Path = "/" + work
	_, cleanup, err := gormstore.Open(ctx, gormstore.DatabaseURL(u.String()), Timeout)
	if err != nil {
		return "", err
	}
	cleanup()
	// The migration's sessions end a moment after their pool closes, and
	// a database with sessions cannot be renamed.
	for tries := 0; ; tries++ {
		_, err = c.ExecContext(ctx, "ALTER DATABASE "+work+" RENAME TO "+name)
		if err == nil || tries == 100 {
			return name, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NewURLFunc returns the URL of a new, empty database for the test.
type NewURLFunc func(t testing.TB) gormstore.DatabaseURL

// Dialects runs fn once per SQL dialect, as subtests named dialect=sqlite and
// dialect=postgres, with the function that makes fresh, migrated databases
// of that dialect (SQLiteURL or PostgresMigratedURL).
func Dialects(t *testing.T, fn func(t *testing.T, newURL NewURLFunc)) {
	t.Helper()
	t.Run("dialect=sqlite", func(t *testing.T) { fn(t, SQLiteURL) })
	t.Run("dialect=postgres", func(t *testing.T) { fn(t, PostgresMigratedURL) })
}

// Timeout is the database timeout of the handles Open returns: generous,
// because tests seed tables of many thousand rows in one statement, under
// the race detector, on busy machines. Tests of the timeout open their own.
const Timeout = gormstore.Timeout(time.Minute)

// Open opens and migrates the database at u, closed when the test ends.
func Open(t testing.TB, u gormstore.DatabaseURL) *gorm.DB {
	t.Helper()
	db, cleanup, err := gormstore.Open(t.Context(), u, Timeout)
	if err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	t.Cleanup(cleanup)
	return db
}

// SeedBase is the creation time of SeedUsers' first user; user i is i
// seconds younger.
var SeedBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// SeedUsers fills the users table with n users straight through SQL, for
// benchmarks on large tables: user i has the id user-%08d, the name
// "User i", the address user{i}@example.com (unverified) and was created
// SeedBase + i seconds. It inserts 50,000 rows a statement and analyzes the
// table, as autovacuum would after a bulk load.
func SeedUsers(tb testing.TB, db *gorm.DB, n int) {
	tb.Helper()
	const batch = 50_000
	postgres := gormstore.DialectOf(db) == gormstore.DialectPostgres
	for from := 0; from < n; from += batch {
		to := min(from+batch, n)
		q := `WITH RECURSIVE s(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO users (id, name, email, email_verified, image, created_at, updated_at)
SELECT printf('user-%08d', i), 'User ' || i, 'user' || i || '@example.com', false, '',
 datetime('2026-01-01 00:00:00', '+' || i || ' seconds') || '+00:00', datetime('2026-01-01 00:00:00', '+' || i || ' seconds') || '+00:00' FROM s`
		args := []any{from, to}
		if postgres {
			q = `INSERT INTO users (id, name, email, email_verified, image, created_at, updated_at)
SELECT 'user-' || lpad(i::text, 8, '0'), 'User ' || i, 'user' || i || '@example.com', false, '',
 ?::timestamptz + i * interval '1 second', ?::timestamptz + i * interval '1 second'
FROM generate_series(?::int, ?::int - 1) AS i`
			args = []any{SeedBase, SeedBase, from, to}
		}
		if err := db.Exec(q, args...).Error; err != nil {
			tb.Fatal(err)
		}
	}
	_ = db.Exec("ANALYZE users").Error
}
