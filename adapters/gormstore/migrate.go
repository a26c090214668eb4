package gormstore

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/gorm"
)

//go:embed migrations
var migrations embed.FS

// migrationLockID is the PostgreSQL advisory lock that serialises migrations,
// so replicas starting together migrate once. It is Gatehouse's own, so other
// goose users of the same database do not wait on it.
const migrationLockID int64 = 0x6761_7465_686f_7573 // "gatehous"

// Migrate applies every pending migration for db's dialect and returns the
// names of the files it applied.
func Migrate(ctx context.Context, db *gorm.DB) ([]string, error) {
	p, err := newMigrationProvider(db)
	if err != nil {
		return nil, err
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	applied := make([]string, 0, len(results))
	for _, r := range results {
		applied = append(applied, r.Source.Path)
	}
	return applied, nil
}

// MigrationsDigest returns a digest of the migrations of dialect d, their
// names and contents: two databases migrated by sets of the same digest
// have the same schema. Tests name the migrated template they copy by it.
func MigrationsDigest(d Dialect) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations, "migrations/"+string(d), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := migrations.ReadFile(path)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		_, _ = h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("migrations digest: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// MigrationVersion returns the newest applied migration version.
func MigrationVersion(ctx context.Context, db *gorm.DB) (int64, error) {
	p, err := newMigrationProvider(db)
	if err != nil {
		return 0, err
	}
	return p.GetDBVersion(ctx)
}

func newMigrationProvider(db *gorm.DB) (*goose.Provider, error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	dialect := DialectOf(db)
	fsys, err := fs.Sub(migrations, "migrations/"+string(dialect))
	if err != nil {
		return nil, err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	gooseDialect := goose.DialectSQLite3
	if dialect == DialectPostgres {
		gooseDialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	return goose.NewProvider(gooseDialect, sqlDB, fsys, opts...)
}
