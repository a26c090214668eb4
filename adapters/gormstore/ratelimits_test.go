package gormstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/ports/conformance"
)

// mustConnect opens another pool on the migrated database at u, as another
// replica would, closed when the test ends. The pool is small: the suite
// opens one per case, all at once, on a server other tests share.
func mustConnect(t testing.TB, u gormstore.DatabaseURL) *gorm.DB {
	t.Helper()
	db, err := gormstore.Connect(u, gormtest.Timeout)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(4)
	t.Cleanup(func() { _ = sqlDB.Close() })
	return db
}

func mustRateLimiter(t testing.TB, db *gorm.DB) *gormstore.RateLimiter {
	t.Helper()
	rl, err := gormstore.NewRateLimiter(db)
	if err != nil {
		t.Fatal(err)
	}
	return rl
}

func TestRateLimiter_postgres(t *testing.T) {
	t.Parallel()
	u := gormtest.PostgresMigratedURL(t)
	conformance.RunSharedRateLimiter(t, func(t *testing.T) ports.RateLimiter {
		return mustRateLimiter(t, mustConnect(t, u))
	})
}

// Ensure the purge deletes the windows that ended and keeps the others,
// which go on counting.
func TestRateLimiter_deleteExpired(t *testing.T) {
	t.Parallel()
	db := gormtest.Open(t, gormtest.PostgresMigratedURL(t))
	rl := mustRateLimiter(t, db)
	ctx := context.Background()
	for _, k := range []string{"a", "b"} {
		if _, _, err := rl.Allow(ctx, k, 2, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := rl.Allow(ctx, "long", 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	n, err := rl.DeleteExpired(ctx)
	if err != nil || n != 2 {
		t.Fatalf("DeleteExpired = %d, %v; want the 2 ended windows", n, err)
	}
	var keys []string
	if err := db.Raw(`SELECT key FROM rate_limits`).Scan(&keys).Error; err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "60000:k:long" {
		t.Fatalf("rows left = %q, want [60000:k:long]", keys)
	}
	if ok, _, _ := rl.Allow(ctx, "long", 2, time.Minute); !ok {
		t.Fatal("second hit on the kept window refused, want allowed")
	}
	if ok, _, _ := rl.Allow(ctx, "long", 2, time.Minute); ok {
		t.Fatal("third hit on the kept window allowed, want refused: the purge reset its count")
	}
}

// Ensure long keys and keys PostgreSQL text cannot hold are kept as a
// digest, and no row holds them as they are.
func TestRateLimiter_keys(t *testing.T) {
	t.Parallel()
	db := gormtest.Open(t, gormtest.PostgresMigratedURL(t))
	rl := mustRateLimiter(t, db)
	ctx := context.Background()
	for _, k := range []string{"credentials|192.0.2.1", strings.Repeat("secret-looking-", 40), "nul\x00byte", "bad\xffutf8"} {
		if _, _, err := rl.Allow(ctx, k, 2, 10*time.Second); err != nil {
			t.Fatalf("Allow(%q): %v", k, err)
		}
	}
	var keys []string
	if err := db.Raw(`SELECT key FROM rate_limits ORDER BY key`).Scan(&keys).Error; err != nil {
		t.Fatal(err)
	}
	if len(keys) != 4 || keys[3] != "10000:k:credentials|192.0.2.1" {
		t.Fatalf("keys = %q, want three digests and the short key", keys)
	}
	for _, k := range keys[:3] {
		if len(k) != len("10000:h:")+64 || !strings.HasPrefix(k, "10000:h:") {
			t.Errorf("key %q is not a digest", k)
		}
	}
}

// Ensure the limiter refuses SQLite: one process counts in memory.
func TestRateLimiter_needsPostgres(t *testing.T) {
	t.Parallel()
	if _, err := gormstore.NewRateLimiter(gormtest.Open(t, gormtest.SQLiteURL(t))); err == nil {
		t.Fatal("NewRateLimiter on SQLite: no error")
	}
}
