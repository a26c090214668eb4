package bootstrap

import (
	"context"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/ratelimit"
)

// DatabaseConfig is the section of the stores: the database, and the Redis
// that replicas may share their rate limits through.
type DatabaseConfig struct {
	URL         string // see gormstore.DatabaseURL; default DATA_DIR/gatehouse.db
	Timeout     time.Duration
	RedisURL    string // "" for none; see ratelimit.ParseRedisURL
	RedisPrefix string // in front of every key in Redis
	// RateLimitStoreTimeout bounds each rate-limit hit on the shared store
	// (Redis, or PostgreSQL without Redis); see ratelimit.SharedOptions.
	RateLimitStoreTimeout time.Duration
}

var databaseSettingList settingList

var (
	settingDatabaseURL     = databaseSettingList.add("GATEHOUSE_DATABASE_URL", "database-url", "", "postgres://USER:PASSWORD@HOST:PORT/DATABASE for PostgreSQL; sqlite:PATH, or a path with a directory or ending in .db, .sqlite or .sqlite3, for SQLite, whose directory must exist (default: DATA_DIR/gatehouse.db)")
	settingDatabaseTimeout = databaseSettingList.add("GATEHOUSE_DATABASE_TIMEOUT", "database-timeout", "5s", "longest a database statement or transaction may take, waiting for a connection included; past it the request answers 503 with Retry-After")
	settingRedisURL        = databaseSettingList.add("GATEHOUSE_REDIS_URL", "redis-url", "", "redis://[USER:PASSWORD@]HOST[:PORT][/DB], or rediss:// for TLS: the rate limits are counted there, shared by every replica (unset: in PostgreSQL on PostgreSQL, else in process memory)")
	settingRedisPrefix     = databaseSettingList.add("GATEHOUSE_REDIS_PREFIX", "redis-prefix", ratelimit.DefaultRedisPrefix, "start of every key Gatehouse keeps in Redis, so that several deployments can share one Redis")
	settingStoreTimeout    = databaseSettingList.add("GATEHOUSE_RATE_LIMIT_STORE_TIMEOUT", "rate-limit-store-timeout", ratelimit.DefaultStoreTimeout.String(), "longest a rate-limit hit may wait for the shared store (Redis, or PostgreSQL without Redis); past it, or on any failure, the replica counts in its own memory and leaves the store alone for 5s")
)

// load reads the database URL (see gormstore.DatabaseURL for its forms)
// and timeout. A SQLite file's directory must exist, unless it is the data
// directory dataDir, which start-up creates (EnsureDataDir).
func (d *DatabaseConfig) load(r *reader, dataDir string) {
	d.loadURL(r, dataDir)
	d.Timeout = r.durationOr(settingDatabaseTimeout, 100*time.Millisecond, 5*time.Minute, "must be a duration from 100ms to 5m, such as 5s")
	if d.RedisURL = r.text(settingRedisURL); d.RedisURL != "" {
		if _, err := ratelimit.ParseRedisURL(d.RedisURL); err != nil {
			r.fail(settingRedisURL, err.Error())
		}
	}
	if d.RedisPrefix = r.text(settingRedisPrefix); d.RedisPrefix == "" || len(d.RedisPrefix) > 64 || strings.ContainsFunc(d.RedisPrefix, func(c rune) bool { return unicode.IsSpace(c) || !unicode.IsPrint(c) }) {
		r.fail(settingRedisPrefix, "must be 1 to 64 printable bytes without spaces, such as gatehouse:")
	}
	d.RateLimitStoreTimeout = r.durationOr(settingStoreTimeout, 10*time.Millisecond, 5*time.Second, "must be a duration from 10ms to 5s, such as 200ms")
}

func (d *DatabaseConfig) loadURL(r *reader, dataDir string) {
	raw := r.text(settingDatabaseURL)
	d.URL = raw
	if raw == "" {
		if dataDir != "" {
			d.URL = "sqlite:" + filepath.Join(dataDir, "gatehouse.db")
		}
		return
	}
	u := gormstore.DatabaseURL(raw)
	if _, _, err := gormstore.ParseDatabaseURL(u); err != nil {
		r.fail(settingDatabaseURL, err.Error())
		return
	}
	if d.sqliteIn(dataDir) {
		return
	}
	if err := gormstore.CheckSQLiteDir(u); err != nil {
		r.fail(settingDatabaseURL, err.Error()+" (Gatehouse creates "+settingDataDir.env+" only; create it, or leave "+settingDatabaseURL.env+" unset for DATA_DIR/gatehouse.db)")
	}
}

// sqliteIn reports whether the database is a SQLite file directly in dir.
func (d DatabaseConfig) sqliteIn(dir string) bool {
	path, ok := gormstore.SQLitePath(gormstore.DatabaseURL(d.URL))
	return ok && dir != "" && filepath.Clean(filepath.Dir(path)) == filepath.Clean(dir)
}

func databaseURL(c Config) gormstore.DatabaseURL { return gormstore.DatabaseURL(c.Database.URL) }

func databaseTimeout(c Config) gormstore.Timeout { return gormstore.Timeout(c.Database.Timeout) }

// Database describes the store a wired Gatehouse uses, for the start-up
// lines.
type Database struct {
	Store   string   // "SQLite PATH", "PostgreSQL USER@HOST:PORT/DATABASE" (never a password) or "memory"
	Version int64    // the newest applied migration; 0 in memory
	Applied []string // the migrations this start applied
}

// sqlStore is the opened SQL database with what opening it did.
type sqlStore struct {
	db   *gorm.DB
	info Database
}

// openSQL connects to the database, applies the pending migrations and
// notes which, and returns the store with a cleanup that closes the pool.
func openSQL(ctx context.Context, u gormstore.DatabaseURL, timeout gormstore.Timeout) (*sqlStore, func(), error) {
	db, err := gormstore.Connect(u, timeout)
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	}
	applied, err := gormstore.Migrate(ctx, db)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	version, err := gormstore.MigrationVersion(ctx, db)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return &sqlStore{db: db, info: Database{Store: gormstore.Describe(u), Version: version, Applied: applied}}, cleanup, nil
}

func sqlDB(s *sqlStore) *gorm.DB { return s.db }

func sqlDatabase(s *sqlStore) Database { return s.info }

func memoryDatabase() Database { return Database{Store: "memory"} }
