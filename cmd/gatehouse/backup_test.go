package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure backup and restore are in the summary, print their usage, need
// their path, and on PostgreSQL refuse before connecting, naming pg_dump and
// pg_restore and the secrets.
func TestBackupRestore_commands(t *testing.T) {
	summary, err := runArgs(t, "help")
	if err != nil || !strings.Contains(summary, "backup --to PATH") || !strings.Contains(summary, "restore --from PATH") {
		t.Fatalf("help = %q, %v", summary, err)
	}
	for _, cmd := range []string{"backup", "restore"} {
		if out, err := runArgs(t, cmd, "-h"); err != nil || !strings.Contains(out, "Usage: gatehouse "+cmd) {
			t.Fatalf("%s -h = %q, %v", cmd, out, err)
		}
		if _, err := runArgs(t, cmd); err == nil || !strings.Contains(err.Error(), "needs --") {
			t.Fatalf("%s without its path: %v", cmd, err)
		}
		env := map[string]string{"GATEHOUSE_DATABASE_URL": "postgres://gatehouse@127.0.0.1:1/none"}
		var out strings.Builder
		flag := map[string]string{"backup": "--to", "restore": "--from"}[cmd]
		err := run(context.Background(), []string{"gatehouse", cmd, flag, filepath.Join(t.TempDir(), "x")}, func(k string) string { return env[k] }, strings.NewReader(""), &out)
		if err == nil || !strings.Contains(err.Error(), "pg_dump --format=custom") || !strings.Contains(err.Error(), "pg_restore ") || !strings.Contains(err.Error(), "GATEHOUSE_SECRET") {
			t.Fatalf("%s on PostgreSQL: %v", cmd, err)
		}
	}
}

// Ensure backup refuses a data directory without a database instead of
// creating one, and creates nothing.
func TestBackup_without_a_database(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	to := filepath.Join(t.TempDir(), "b.db")
	if _, err := runArgs(t, "backup", "--data-dir", dir, "--to", to); err == nil || !strings.Contains(err.Error(), "no database to back up") {
		t.Fatalf("backup without a database: %v", err)
	}
	for _, p := range []string{dir, to} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s exists after a refused backup (%v)", p, err)
		}
	}
}
