package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/bootstrap"
)

const backupUsage = `Usage: gatehouse backup --to PATH [service flags]

Copies the SQLite database to the new file PATH while the service runs and
writes (SQLite's VACUUM INTO: the database as of one moment), then checks the
copy (PRAGMA integrity_check). PATH must not exist: a backup never overwrites
a file. The copy is mode 0600; it holds password hashes.

The backup does not hold the service secrets (GATEHOUSE_SECRET or
GATEHOUSE_SECRETS, or DATA_DIR/secret in development), which seal the
signing keys, second factors, webhook and provider secrets and mail in the
database: without them the backup cannot be used. Keep them too, apart from
the backup.

On PostgreSQL it refuses and names the pg_dump and pg_restore commands.
`

const restoreUsage = `Usage: gatehouse restore --from PATH [service flags]

Puts a SQLite backup in place of the database, with the service stopped. It
checks that PATH is a Gatehouse database (integrity check, migration table)
no newer than this binary, migrates a copy of it to this binary's version,
keeps the current database aside as DATABASE.before-restore-TIMESTAMP (never
deleted), and moves the copy into place. The backup file is only read. It
refuses while any process has the database open: stop the service first.

Start the service with the secrets it had when the backup was taken.

On PostgreSQL it refuses and names the pg_dump and pg_restore commands.
`

func backup(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 && (args[0] == "help" || isHelp(args[0])) {
		_, err := io.WriteString(stdout, backupUsage)
		return err
	}
	values, rest, err := takeFlags(args, "to")
	if err != nil {
		return err
	}
	if values["to"] == "" {
		_, _ = io.WriteString(stdout, backupUsage)
		return errors.New("backup needs --to PATH, a file that does not exist yet")
	}
	cfg, done, err := loadConfig("gatehouse backup", rest, getenv, stdout)
	if done || err != nil {
		return err
	}
	res, err := bootstrap.Backup(ctx, cfg, values["to"])
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes, migration version %d, integrity ok)\n",
		gormstore.Describe(gormstore.DatabaseURL(cfg.Database.URL)), res.Path, res.Bytes, res.Version)
	fmt.Fprintf(stdout, "keep the service secrets (%s) too, apart from this backup: it cannot be used without them\n", bootstrap.SecretLocation(cfg))
	return nil
}

func restore(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 && (args[0] == "help" || isHelp(args[0])) {
		_, err := io.WriteString(stdout, restoreUsage)
		return err
	}
	values, rest, err := takeFlags(args, "from")
	if err != nil {
		return err
	}
	if values["from"] == "" {
		_, _ = io.WriteString(stdout, restoreUsage)
		return errors.New("restore needs --from PATH, a file gatehouse backup wrote")
	}
	cfg, done, err := loadConfig("gatehouse restore", rest, getenv, stdout)
	if done || err != nil {
		return err
	}
	res, err := bootstrap.Restore(ctx, cfg, values["from"])
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, name := range res.Applied {
		fmt.Fprintln(stdout, "applied", name)
	}
	fmt.Fprintf(stdout, "restored %s from %s (migration version %d, now %d)\n", res.Database, values["from"], res.FromVersion, res.Version)
	if res.Aside != "" {
		fmt.Fprintf(stdout, "the previous database is kept at %s\n", res.Aside)
	}
	fmt.Fprintf(stdout, "start the service with the secrets it had when the backup was taken (%s)\n", bootstrap.SecretLocation(cfg))
	return nil
}
