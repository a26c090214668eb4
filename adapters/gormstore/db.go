package gormstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/libtnb/sqlite"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/gatehouse/gatehouse/domain"
)

// DatabaseURL selects and locates the database: "postgres://…" or
// "postgresql://…" for PostgreSQL; "sqlite:PATH" or "file:PATH" for SQLite,
// or for SQLite a bare path that has a directory part ("./gatehouse.db",
// "/var/lib/gatehouse/db") or ends in .db, .sqlite or .sqlite3. A bare word
// ("gatehouse", "not a url at all") is refused: it is more likely a mistake
// than the name of a file to create in the working directory.
type DatabaseURL string

// errNotDatabaseURL says which forms a database URL may take.
var errNotDatabaseURL = errors.New("not a database URL: use postgres://USER:PASSWORD@HOST:PORT/DATABASE, " +
	"sqlite:PATH, or a SQLite file path with a directory (./gatehouse.db) or ending in .db, .sqlite or .sqlite3")

// Dialect names a supported SQL dialect.
type Dialect string

// The supported dialects.
const (
	DialectSQLite   Dialect = "sqlite"
	DialectPostgres Dialect = "postgres"
)

// sqlitePragmas are applied to every SQLite connection. WAL lets readers run
// beside the writer; busy_timeout (added by parseDatabaseURL) makes a writer
// wait instead of failing; foreign keys are off in SQLite unless asked for on
// each connection; and immediate transactions take the write lock up front,
// because a deferred transaction that reads and then writes fails with
// SQLITE_BUSY in WAL mode whatever the timeout.
var sqlitePragmas = []string{"journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)"}

// ParseDatabaseURL returns the dialect of u and the DSN its driver expects.
func ParseDatabaseURL(u DatabaseURL) (Dialect, string, error) {
	return parseDatabaseURL(u, DefaultTimeout)
}

// parseDatabaseURL is ParseDatabaseURL with SQLite's busy_timeout set to
// busy unless u sets it: SQLite waits for the write lock (at BEGIN, taken up
// front) without looking at the statement's context, so the database
// timeout must bound that wait itself.
func parseDatabaseURL(u DatabaseURL, busy time.Duration) (Dialect, string, error) {
	s := strings.TrimSpace(string(u))
	switch {
	case s == "":
		return "", "", errors.New("empty database URL")
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		if _, err := url.Parse(s); err != nil {
			return "", "", errors.New("malformed PostgreSQL URL")
		}
		return DialectPostgres, s, nil
	case strings.Contains(s, "://"):
		return "", "", errors.New("unsupported scheme: use postgres://, sqlite: or a file path")
	}
	path, prefixed := strings.CutPrefix(s, "sqlite:")
	if !prefixed {
		path, prefixed = strings.CutPrefix(s, "file:")
	}
	path, rawQuery, _ := strings.Cut(path, "?")
	if path == "" || path == ":memory:" {
		return "", "", errors.New("SQLite needs a file path (an in-memory database is per connection)")
	}
	if !prefixed && !isSQLitePath(path) {
		return "", "", errNotDatabaseURL
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", "", errors.New("malformed SQLite options")
	}
	have := strings.Join(q["_pragma"], ",")
	for _, p := range append(sqlitePragmas, fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds())) {
		name, _, _ := strings.Cut(p, "(")
		if !strings.Contains(have, name) {
			q.Add("_pragma", p)
		}
	}
	if q.Get("_txlock") == "" {
		q.Set("_txlock", "immediate")
	}
	return DialectSQLite, "file:" + path + "?" + q.Encode(), nil
}

// isSQLitePath reports whether a bare path (no sqlite: or file: prefix)
// plainly names a SQLite file: it has a directory part or a SQLite extension.
func isSQLitePath(path string) bool {
	if strings.ContainsRune(path, '/') || strings.ContainsRune(path, filepath.Separator) {
		return true
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".db", ".sqlite", ".sqlite3":
		return true
	}
	return false
}

// SQLitePath returns the file of a SQLite database URL, and false for
// PostgreSQL or a URL ParseDatabaseURL refuses.
func SQLitePath(u DatabaseURL) (string, bool) {
	dialect, dsn, err := ParseDatabaseURL(u)
	if err != nil || dialect != DialectSQLite {
		return "", false
	}
	path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	return path, true
}

// Describe names the database u selects, for start-up lines and logs:
// "SQLite PATH" or "PostgreSQL USER@HOST:PORT/DATABASE". It never includes
// a password.
func Describe(u DatabaseURL) string {
	if path, ok := SQLitePath(u); ok {
		return "SQLite " + path
	}
	pu, err := url.Parse(strings.TrimSpace(string(u)))
	if err != nil {
		return "PostgreSQL (malformed URL)"
	}
	q := pu.Query()
	host, port := pu.Hostname(), pu.Port()
	if host == "" {
		host = q.Get("host")
	}
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		if port = q.Get("port"); port == "" {
			port = "5432"
		}
	}
	user := q.Get("user")
	if pu.User != nil {
		user = pu.User.Username()
	}
	if user != "" {
		user += "@"
	}
	return "PostgreSQL " + user + net.JoinHostPort(host, port) + "/" + strings.TrimPrefix(pu.Path, "/")
}

// checkSQLiteDir refuses a SQLite file whose directory does not exist:
// Gatehouse creates no directory on its own here (the operator's data
// directory is created, and announced, by whoever configures it).
func checkSQLiteDir(path string) error {
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the SQLite database's directory %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("the SQLite database's directory %s: %w", dir, err)
	case !info.IsDir():
		return fmt.Errorf("the SQLite database's directory %s is not a directory", dir)
	}
	return nil
}

// CheckSQLiteDir returns an error if u is a SQLite database whose directory
// does not exist; Connect refuses such a database.
func CheckSQLiteDir(u DatabaseURL) error {
	if path, ok := SQLitePath(u); ok {
		return checkSQLiteDir(path)
	}
	return nil
}

// Open connects to the database named by u, applies pending migrations and
// returns the handle with a cleanup that closes it. Every statement and
// transaction on the handle is bounded by timeout (see Connect).
func Open(ctx context.Context, u DatabaseURL, timeout Timeout) (*gorm.DB, func(), error) {
	db, err := Connect(u, timeout)
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	}
	if _, err := Migrate(ctx, db); err != nil {
		cleanup()
		return nil, nil, err
	}
	return db, cleanup, nil
}

// Connect opens a connection pool without migrating. On PostgreSQL each
// statement and each transaction run through the handle gets a deadline of
// timeout (zero: DefaultTimeout), whatever its caller's context says, so a
// database that stops answering fails requests with KindUnavailable instead
// of holding them; on SQLite the busy timeout, set to the same value, bounds
// the wait for the write lock. Migrations run on the raw pool and are not
// bounded by it.
func Connect(u DatabaseURL, timeout Timeout) (*gorm.DB, error) {
	dialect, dsn, err := parseDatabaseURL(u, timeout.duration())
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	cfg := &gorm.Config{
		TranslateError: true,
		Logger:         logger.Discard,
		NowFunc:        func() time.Time { return domain.Timestamp(time.Now()) },
	}
	var dialector gorm.Dialector
	switch dialect {
	case DialectPostgres:
		pool, err := openPostgres(dsn, timeout.duration())
		if err != nil {
			return nil, fmt.Errorf("open %s database: %w", dialect, redactDSNError(err, dsn))
		}
		dialector = postgres.New(postgres.Config{Conn: pool})
	default:
		path := strings.TrimPrefix(strings.SplitN(dsn, "?", 2)[0], "file:")
		if err := checkSQLiteDir(path); err != nil {
			return nil, err
		}
		dialector = sqlite.Open(dsn)
	}
	db, err := gorm.Open(dialector, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", dialect, redactDSNError(err, dsn))
	}
	// Only PostgreSQL statements get a context deadline: its connections
	// cross a network that can be cut. SQLite is a file in the process, and
	// what can hold it (the write lock) is bounded by its busy_timeout,
	// which parseDatabaseURL sets to the same timeout. A deadline there
	// would cost every statement a goroutine watching the context (about
	// 40 µs, a third of a key lookup) for nothing.
	if dialect == DialectPostgres {
		if err := db.Use(&deadlines{timeout: timeout.duration()}); err != nil {
			return nil, err
		}
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	switch dialect {
	case DialectPostgres:
		sqlDB.SetMaxOpenConns(25)
		sqlDB.SetMaxIdleConns(25)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
		sqlDB.SetConnMaxLifetime(time.Hour)
	default:
		// One writer at a time anyway; a few connections let reads proceed in WAL mode.
		sqlDB.SetMaxOpenConns(8)
		sqlDB.SetMaxIdleConns(8)
	}
	return db, nil
}

// DialectOf reports which dialect db speaks.
func DialectOf(db *gorm.DB) Dialect {
	if db.Dialector.Name() == "postgres" {
		return DialectPostgres
	}
	return DialectSQLite
}

// redactDSNError keeps a password in the DSN out of error messages and logs.
func redactDSNError(err error, dsn string) error {
	u, perr := url.Parse(dsn)
	if perr != nil || u.User == nil {
		return err
	}
	if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(err.Error(), pw) {
		return errors.New(strings.ReplaceAll(err.Error(), pw, "***"))
	}
	return err
}
