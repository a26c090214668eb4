package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
)

// postgresTools is the refusal of backup and restore on PostgreSQL: the
// database's own tools do it better, and the secrets are kept apart either
// way.
const postgresTools = `gatehouse %s works on SQLite only; on PostgreSQL use the database's own tools:
  back up:  pg_dump --format=custom --file=gatehouse.dump "$GATEHOUSE_DATABASE_URL"
  restore:  pg_restore --clean --if-exists --no-owner --exit-on-error --dbname="$GATEHOUSE_DATABASE_URL" gatehouse.dump
(with every Gatehouse replica stopped for the restore; see docs/operations.md, "Backup" and "Restore").
A backup is useless without the service secrets (GATEHOUSE_SECRET or GATEHOUSE_SECRETS): keep them too, apart from it`

// SecretLocation says where the configuration's service secrets come from,
// for the lines that remind the operator to keep them: the variable that
// set them, or in development without one the file in the data directory.
func SecretLocation(c Config) string {
	if len(c.Secrets) > 0 && c.SecretSource != "" {
		return c.SecretSource
	}
	return filepath.Join(c.DataDir, secretFile)
}

// Backup copies the configured SQLite database, while the service may run,
// to the new file to (see gormstore.Backup). On PostgreSQL it refuses,
// naming pg_dump and pg_restore. It creates nothing but the copy: a
// database that does not exist is an error, not an empty backup.
func Backup(ctx context.Context, c Config, to string) (gormstore.BackupResult, error) {
	u := databaseURL(c)
	path, ok := gormstore.SQLitePath(u)
	if !ok {
		return gormstore.BackupResult{}, fmt.Errorf(postgresTools, "backup")
	}
	if ok, err := fileExists(path); err != nil || !ok {
		return gormstore.BackupResult{}, fmt.Errorf("no database to back up at %s (set GATEHOUSE_DATA_DIR or GATEHOUSE_DATABASE_URL as the service has them)", path)
	}
	db, err := gormstore.Connect(u, databaseTimeout(c))
	if err != nil {
		return gormstore.BackupResult{}, err
	}
	if sqlDB, err := db.DB(); err == nil {
		defer sqlDB.Close()
	}
	return gormstore.Backup(ctx, db, to)
}

// Restore puts the SQLite backup from in place of the configured database,
// with the service stopped (see gormstore.Restore), and creates the data
// directory when the database lives there. On PostgreSQL it refuses, naming
// pg_dump and pg_restore.
func Restore(ctx context.Context, c Config, from string) (gormstore.RestoreResult, error) {
	u := databaseURL(c)
	if _, ok := gormstore.SQLitePath(u); !ok {
		return gormstore.RestoreResult{}, fmt.Errorf(postgresTools, "restore")
	}
	if c.sqliteInDataDir() {
		if _, err := EnsureDataDir(c); err != nil {
			return gormstore.RestoreResult{}, err
		}
	}
	return gormstore.Restore(ctx, u, from, time.Now())
}

func fileExists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
