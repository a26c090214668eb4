package gormstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// BackupResult says what Backup wrote.
type BackupResult struct {
	Path    string // the copy
	Bytes   int64  // its size
	Version int64  // its migration version
}

// Backup writes a consistent copy of the SQLite database db to the new file
// to, while the service may be reading and writing it: VACUUM INTO reads
// the database in one read transaction, so the copy is the database as of
// one moment, and in WAL mode writers go on meanwhile. The file is created
// here (mode 0600: it holds password hashes) and must not exist; a failed
// backup removes it. The copy is then checked (PRAGMA integrity_check) and
// its migration version read. PostgreSQL has pg_dump; Backup refuses it.
func Backup(ctx context.Context, db *gorm.DB, to string) (BackupResult, error) {
	if DialectOf(db) != DialectSQLite {
		return BackupResult{}, errors.New("backup copies SQLite databases only (use pg_dump for PostgreSQL)")
	}
	if to == "" || strings.HasPrefix(to, "file:") || strings.ContainsRune(to, '?') {
		return BackupResult{}, fmt.Errorf("backup file %q: give a plain file path", to)
	}
	if err := checkSQLiteDir(to); err != nil {
		return BackupResult{}, fmt.Errorf("backup file %s: %w", to, err)
	}
	// O_EXCL refuses an existing file, whatever it is; VACUUM INTO writes
	// into a file that exists only when it is empty, as this one is.
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) // #nosec G304 -- the operator's --to path
	if errors.Is(err, fs.ErrExist) {
		return BackupResult{}, fmt.Errorf("%s already exists: a backup never overwrites a file; name a new one", to)
	}
	if err != nil {
		return BackupResult{}, fmt.Errorf("backup file: %w", err)
	}
	_ = f.Close()
	done := false
	defer func() {
		if !done {
			_ = os.Remove(to)
		}
	}()
	if err := db.WithContext(ctx).Exec("VACUUM INTO ?", to).Error; err != nil {
		return BackupResult{}, fmt.Errorf("copy the database: %w", err)
	}
	if err := syncFile(to); err != nil {
		return BackupResult{}, err
	}
	version, err := checkCopy(ctx, to)
	if err != nil {
		return BackupResult{}, fmt.Errorf("the copy %s %w", to, err)
	}
	info, err := os.Stat(to)
	if err != nil {
		return BackupResult{}, err
	}
	done = true
	return BackupResult{Path: to, Bytes: info.Size(), Version: version}, nil
}

// RestoreResult says what Restore did.
type RestoreResult struct {
	Database    string   // the database file restored
	Aside       string   // where the database it replaced was kept; "" if there was none
	FromVersion int64    // the backup's migration version
	Version     int64    // the restored database's migration version
	Applied     []string // the migrations applied to the backup
}

// errInUse says the database is open in another process.
var errInUse = errors.New("is in use: stop every Gatehouse process using it (serve, and any other command) and try again")

// Restore replaces the SQLite database u with a copy of the backup from,
// with every Gatehouse process on u stopped. It checks that from is a
// Gatehouse database (integrity, the migration table) no newer than this
// binary's migrations, migrates a copy of it beside u, then renames the
// current database (and its -wal and -shm files, if any) aside to
// DATABASE.before-restore-TIMESTAMP, which it never deletes, and moves the
// copy into place. The backup file itself is only read. It refuses while a
// process holds u open (SQLite's file locks; see holdExclusive).
func Restore(ctx context.Context, u DatabaseURL, from string, now time.Time) (RestoreResult, error) {
	target, ok := SQLitePath(u)
	if !ok {
		return RestoreResult{}, errors.New("restore writes SQLite databases only (use pg_restore for PostgreSQL)")
	}
	if err := checkSQLiteDir(target); err != nil {
		return RestoreResult{}, err
	}
	src, err := os.Stat(from)
	if err != nil {
		return RestoreResult{}, fmt.Errorf("backup file: %w", err)
	}
	if !src.Mode().IsRegular() {
		return RestoreResult{}, fmt.Errorf("backup file %s is not a regular file", from)
	}
	if dst, err := os.Stat(target); err == nil && os.SameFile(src, dst) {
		return RestoreResult{}, fmt.Errorf("backup file %s is the database itself", from)
	}
	current, err := exists(target)
	if err != nil {
		return RestoreResult{}, err
	}
	if current {
		if err := holdExclusive(ctx, target); err != nil {
			return RestoreResult{}, err
		}
	}

	// A copy beside the database, so the rename into place is atomic and the
	// backup is never written to.
	tmp, err := copyBeside(from, target)
	if err != nil {
		return RestoreResult{}, err
	}
	placed := false
	defer func() {
		if !placed {
			removeSQLite(tmp)
		}
	}()
	res := RestoreResult{Database: target}
	if res.FromVersion, err = checkCopy(ctx, tmp); err != nil {
		return RestoreResult{}, fmt.Errorf("%s %w", from, err)
	}
	latest, err := LatestMigrationVersion(DialectSQLite)
	if err != nil {
		return RestoreResult{}, err
	}
	if res.FromVersion > latest {
		return RestoreResult{}, fmt.Errorf("%s is at migration version %d, newer than this binary's %d: restore it with the Gatehouse version that made it", from, res.FromVersion, latest)
	}
	if res.Applied, res.Version, err = migrateFile(ctx, tmp); err != nil {
		return RestoreResult{}, fmt.Errorf("migrate the backup: %w", err)
	}

	if current {
		// Checked again just before the swap: a service may have started
		// since. Closing the last connection checkpoints the WAL into the
		// file; the -wal and -shm files left by a crash move with it.
		if err := holdExclusive(ctx, target); err != nil {
			return RestoreResult{}, err
		}
		res.Aside = target + ".before-restore-" + now.UTC().Format("20060102T150405Z")
		if ok, err := exists(res.Aside); err != nil || ok {
			return RestoreResult{}, fmt.Errorf("cannot keep the current database aside: %s exists", res.Aside)
		}
		for _, suffix := range []string{"-wal", "-shm", ""} {
			err := os.Rename(target+suffix, res.Aside+suffix)
			if err != nil && !(suffix != "" && errors.Is(err, fs.ErrNotExist)) {
				return RestoreResult{}, fmt.Errorf("keep the current database aside: %w", err)
			}
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return RestoreResult{}, fmt.Errorf("put the backup in place (the previous database is at %s): %w", res.Aside, err)
	}
	placed = true
	if d, err := os.Open(filepath.Dir(target)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return res, nil
}

// LatestMigrationVersion returns the version of the newest migration of
// dialect d this binary holds: the version its databases migrate to.
func LatestMigrationVersion(d Dialect) (int64, error) {
	entries, err := fs.ReadDir(migrations, "migrations/"+string(d))
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, e := range entries {
		var v int64
		if _, err := fmt.Sscanf(e.Name(), "%d_", &v); err == nil && v > latest {
			latest = v
		}
	}
	return latest, nil
}

// openFile opens the SQLite file path as it is, with none of the service's
// pragmas (no switch to WAL), and extra pragmas if given.
func openFile(path string, pragmas ...string) (*gorm.DB, func(), error) {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	db, err := gorm.Open(sqlite.Open("file:"+path+"?"+q.Encode()), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, nil, err
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, nil, err
	}
	sqlDB.SetMaxOpenConns(1)
	return db, func() { _ = sqlDB.Close() }, nil
}

// checkCopy checks that the SQLite file path is whole and a Gatehouse
// database, and returns its migration version.
func checkCopy(ctx context.Context, path string) (int64, error) {
	var rows []string
	db, closeDB, err := openFile(path, "busy_timeout(5000)")
	if err == nil {
		defer closeDB()
		err = db.WithContext(ctx).Raw("PRAGMA integrity_check").Scan(&rows).Error
	}
	if err != nil {
		if strings.Contains(err.Error(), "not a database") {
			return 0, errors.New("is not a SQLite database, so not a Gatehouse backup")
		}
		return 0, fmt.Errorf("fails the integrity check: %w", err)
	}
	if len(rows) != 1 || rows[0] != "ok" {
		return 0, fmt.Errorf("is damaged: the integrity check reports %s", strings.Join(rows, "; "))
	}
	var tables []string
	if err := db.WithContext(ctx).Raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('goose_db_version', 'users')").Scan(&tables).Error; err != nil {
		return 0, err
	}
	if len(tables) != 2 {
		return 0, errors.New("is a SQLite database but not a Gatehouse one (it has no Gatehouse migration table and users)")
	}
	return MigrationVersion(ctx, db)
}

// migrateFile applies the pending migrations to the SQLite file path and
// returns them and the version it is at.
func migrateFile(ctx context.Context, path string) ([]string, int64, error) {
	db, closeDB, err := openFile(path, "foreign_keys(1)", "busy_timeout(5000)")
	if err != nil {
		return nil, 0, err
	}
	defer closeDB()
	applied, err := Migrate(ctx, db)
	if err != nil {
		return nil, 0, err
	}
	version, err := MigrationVersion(ctx, db)
	return applied, version, err
}

// holdExclusive reports errInUse when another connection, in this process
// or another, has the SQLite database path open. Every connection of a
// database in WAL mode holds a shared lock on its file for as long as it is
// open; in exclusive locking mode the first read asks for an exclusive
// lock, which fails at once (busy_timeout 0) while any other connection is
// there. Closing, as the last connection, checkpoints the WAL into the
// file.
func holdExclusive(ctx context.Context, path string) error {
	db, closeDB, err := openFile(path, "locking_mode(EXCLUSIVE)", "busy_timeout(0)")
	if err == nil {
		defer closeDB()
		var n int
		err = db.WithContext(ctx).Raw("SELECT count(*) FROM sqlite_master").Scan(&n).Error
	}
	if err == nil {
		// A database not in WAL mode takes its exclusive lock on writing.
		err = db.WithContext(ctx).Exec("BEGIN EXCLUSIVE; COMMIT").Error
	}
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "locked") || strings.Contains(err.Error(), "busy"):
		return fmt.Errorf("the database %s %w", path, errInUse)
	default:
		return fmt.Errorf("the database %s: %w", path, err)
	}
}

// copyBeside copies the file from into a new file beside target, mode 0600,
// synced, and returns its name.
func copyBeside(from, target string) (string, error) {
	in, err := os.Open(from) // #nosec G304 -- the operator's --from path
	if err != nil {
		return "", fmt.Errorf("backup file: %w", err)
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(target), filepath.Base(target)+".restoring-*")
	if err != nil {
		return "", fmt.Errorf("copy the backup beside the database: %w", err)
	}
	if _, err = io.Copy(out, in); err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(out.Name())
		return "", fmt.Errorf("copy the backup beside the database: %w", err)
	}
	return out.Name(), nil
}

// removeSQLite removes the SQLite file path and its -wal and -shm files.
func removeSQLite(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		_ = os.Remove(path + suffix)
	}
}

func exists(path string) (bool, error) {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, err
	}
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0) // #nosec G304 -- the file Backup just created
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
