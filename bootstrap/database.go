package bootstrap

import (
	"context"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
)

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
