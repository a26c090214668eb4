package gormstore_test

import (
	"context"
	"fmt"
	"testing"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
)

// BenchmarkUserLookup measures the hot lookups (by id, by e-mail) on tables
// of growing size. Each is one indexed query, so the cost should stay flat:
// compare the rows=1000 and rows=100000 results.
//
//	go test -run '^$' -bench UserLookup -benchtime 2000x ./adapters/gormstore/
func BenchmarkUserLookup(b *testing.B) {
	for _, rows := range []int{1_000, 100_000} {
		for _, dialect := range []gormstore.Dialect{gormstore.DialectSQLite, gormstore.DialectPostgres} {
			b.Run(fmt.Sprintf("dialect=%s/rows=%d", dialect, rows), func(b *testing.B) {
				u := gormtest.SQLiteURL(b)
				if dialect == gormstore.DialectPostgres {
					u = gormtest.PostgresURL(b)
				}
				db := gormtest.Open(b, u)
				repo := gormstore.NewUserRepository(db)
				seedUsers(b, db, dialect, rows)
				ctx := context.Background()
				b.Run("by_id", func(b *testing.B) {
					for i := 0; b.Loop(); i++ {
						if _, err := repo.Get(ctx, domain.UserID(fmt.Sprintf("user-%08d", i%rows))); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.Run("by_email", func(b *testing.B) {
					for i := 0; b.Loop(); i++ {
						if _, err := repo.GetByEmail(ctx, domain.Email(fmt.Sprintf("user%d@example.com", i%rows))); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
	}
}

// seedUsers fills the users table in one statement per dialect; inserting
// 100,000 rows one by one would dominate the benchmark's run time.
func seedUsers(b *testing.B, db *gorm.DB, dialect gormstore.Dialect, n int) {
	b.Helper()
	q := `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO users (id, name, email, email_verified, image, created_at, updated_at)
SELECT printf('user-%08d', i), 'User', 'user' || i || '@example.com', false, '', datetime('now'), datetime('now') FROM s`
	if dialect == gormstore.DialectPostgres {
		q = `INSERT INTO users (id, name, email, email_verified, image, created_at, updated_at)
SELECT 'user-' || lpad(i::text, 8, '0'), 'User', 'user' || i || '@example.com', false, '', now(), now()
FROM generate_series(0, ? - 1) AS i`
	}
	if err := db.Exec(q, n).Error; err != nil {
		b.Fatal(err)
	}
	if dialect == gormstore.DialectPostgres {
		_ = db.Exec("ANALYZE users").Error
	}
}
