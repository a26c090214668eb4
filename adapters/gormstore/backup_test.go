package gormstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
)

// countUsers counts the users of the SQLite file path.
func countUsers(t *testing.T, path string) int {
	t.Helper()
	db := gormtest.Open(t, gormstore.DatabaseURL("sqlite:"+path))
	var n int
	if err := db.Raw("SELECT count(*) FROM users").Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	if sqlDB, err := db.DB(); err == nil {
		_ = sqlDB.Close()
	}
	return n
}

// Ensure Backup copies a SQLite database while another connection keeps
// writing, into a new file only, and that Restore puts it in place of the
// database with the old one kept aside, refuses while the database is open
// elsewhere, and refuses files that are not Gatehouse databases.
func TestBackupRestore_sqlite(t *testing.T) {
	t.Parallel()
	u := gormtest.SQLiteURL(t)
	path, _ := gormstore.SQLitePath(u)
	db := gormtest.Open(t, u)
	for range 5 {
		if err := db.Exec("INSERT INTO users (id, name, email, email_verified, created_at, updated_at) VALUES (lower(hex(randomblob(16))), 'U', lower(hex(randomblob(8))) || '@example.com', false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)").Error; err != nil {
			t.Fatal(err)
		}
	}

	// A writer keeps inserting while the backup runs.
	var wrote atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := db.Exec("INSERT INTO users (id, name, email, email_verified, created_at, updated_at) VALUES (lower(hex(randomblob(16))), 'W', lower(hex(randomblob(8))) || '@example.com', false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)").Error; err != nil {
				t.Error(err)
				return
			}
			wrote.Add(1)
		}
	})
	for wrote.Load() < 20 {
		time.Sleep(time.Millisecond)
	}
	to := filepath.Join(t.TempDir(), "backup.db")
	res, err := gormstore.Backup(t.Context(), db, to)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup while writing: %v", err)
	}
	latest, err := gormstore.LatestMigrationVersion(gormstore.DialectSQLite)
	if err != nil || res.Version != latest || res.Bytes == 0 {
		t.Fatalf("backup = %+v, latest %d (%v)", res, latest, err)
	}
	if info, err := os.Stat(to); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v, %v", info, err)
	}
	backedUp := countUsers(t, to)
	if backedUp < 25 {
		t.Fatalf("the backup holds %d users, want the 5 and the 20 written before it", backedUp)
	}

	// Never over an existing file.
	before, _ := os.ReadFile(to)
	if _, err := gormstore.Backup(t.Context(), db, to); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("backup over an existing file: %v", err)
	}
	if after, _ := os.ReadFile(to); string(after) != string(before) {
		t.Fatal("a refused backup changed the existing file")
	}

	// Not while the database is open.
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	if _, err := gormstore.Restore(t.Context(), u, to, now); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("restore while the database is open: %v", err)
	}
	sqlDB, _ := db.DB()
	_ = sqlDB.Close()
	live := countUsers(t, path)

	// Not a file that is not a Gatehouse database; the database is untouched.
	junk := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a database ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{junk: "not a SQLite database", empty: "not a Gatehouse one", filepath.Join(t.TempDir(), "none.db"): "no such file"} {
		if _, err := gormstore.Restore(t.Context(), u, file, now); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("restore from %s: %v, want %q", file, err, want)
		}
	}
	if n := countUsers(t, path); n != live {
		t.Fatalf("a refused restore changed the database: %d users, had %d", n, live)
	}
	if left, _ := filepath.Glob(path + ".*"); len(left) != 0 {
		t.Fatalf("a refused restore left %v", left)
	}

	got, err := gormstore.Restore(t.Context(), u, to, now)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if got.Aside != path+".before-restore-20260304T050607Z" || got.Database != path || got.Version != latest || got.FromVersion != latest || len(got.Applied) != 0 {
		t.Fatalf("restore = %+v", got)
	}
	if n := countUsers(t, path); n != backedUp {
		t.Fatalf("the restored database holds %d users, the backup %d", n, backedUp)
	}
	if n := countUsers(t, got.Aside); n != live {
		t.Fatalf("the database kept aside holds %d users, had %d", n, live)
	}
	if after, _ := os.ReadFile(to); string(after) != string(before) {
		t.Fatal("restore changed the backup file")
	}
}

// Ensure Restore migrates an older backup to this binary's version, and
// refuses one newer than this binary's migrations.
func TestBackupRestore_sqlite_versions(t *testing.T) {
	t.Parallel()
	u := gormtest.SQLiteURL(t)
	latest, err := gormstore.LatestMigrationVersion(gormstore.DialectSQLite)
	if err != nil {
		t.Fatal(err)
	}
	db := gormtest.Open(t, u)
	newer := filepath.Join(t.TempDir(), "newer.db")
	if _, err := gormstore.Backup(t.Context(), db, newer); err != nil {
		t.Fatal(err)
	}
	older := filepath.Join(t.TempDir(), "older.db")
	if _, err := gormstore.Backup(t.Context(), db, older); err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	_ = sqlDB.Close()

	edit := func(path, stmt string) {
		d := gormtest.Open(t, gormstore.DatabaseURL("sqlite:"+path))
		if err := d.Exec(stmt).Error; err != nil {
			t.Fatal(err)
		}
		if s, err := d.DB(); err == nil {
			_ = s.Close()
		}
	}
	edit(newer, "INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)")
	if _, err := gormstore.Restore(t.Context(), u, newer, time.Now()); err == nil || !strings.Contains(err.Error(), "newer than this binary's") {
		t.Fatalf("restore of a newer backup: %v", err)
	}
	// The newest migration undone, as a backup of the previous version.
	edit(older, "DROP TABLE factor_lockouts; DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)")
	got, err := gormstore.Restore(t.Context(), u, older, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got.FromVersion != latest-1 || got.Version != latest || len(got.Applied) != 1 {
		t.Fatalf("restore of an older backup = %+v", got)
	}
}
