package gormstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
)

// atScales runs fn as a sub-benchmark on a fresh database of each dialect
// (SQLite; PostgreSQL when GATEHOUSE_TEST_POSTGRES_URL is set) for each
// table size the hot-path benchmarks compare: their cost should be the same
// at rows=1000 as at rows=100000. fn seeds rows rows of its own.
func atScales(b *testing.B, fn func(b *testing.B, db *gorm.DB, dialect gormstore.Dialect, rows int)) {
	for _, rows := range []int{1_000, 100_000} {
		for _, dialect := range []gormstore.Dialect{gormstore.DialectSQLite, gormstore.DialectPostgres} {
			b.Run(fmt.Sprintf("dialect=%s/rows=%d", dialect, rows), func(b *testing.B) {
				u := gormtest.SQLiteURL(b)
				if dialect == gormstore.DialectPostgres {
					u = gormtest.PostgresURL(b)
				}
				fn(b, gormtest.Open(b, u), dialect, rows)
			})
		}
	}
}

// BenchmarkUserLookup measures the hot lookups (by id, by e-mail) on tables
// of growing size. Each is one indexed query, so the cost should stay flat:
// compare the rows=1000 and rows=100000 results.
//
//	go test -run '^$' -bench UserLookup -benchtime 2000x ./adapters/gormstore/
func BenchmarkUserLookup(b *testing.B) {
	atScales(b, func(b *testing.B, db *gorm.DB, dialect gormstore.Dialect, rows int) {
		repo := gormstore.NewUserRepository(db)
		seedPageUsers(b, db, dialect, rows)
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

// BenchmarkCredentialLookup measures the password sign-in's one read
// (CredentialRepository.GetByEmail) for a known and an unknown address on
// tables of growing size: the cost should stay flat from rows=1000 to
// rows=100000, and the two should cost about the same (the row against
// NULLs; the timing test's margin quotes the gap).
//
//	go test -run '^$' -bench CredentialLookup -benchtime 2000x ./adapters/gormstore/
func BenchmarkCredentialLookup(b *testing.B) {
	atScales(b, func(b *testing.B, db *gorm.DB, dialect gormstore.Dialect, rows int) {
		repo := gormstore.NewCredentialRepository(db)
		seedPageUsers(b, db, dialect, rows)
		ctx := context.Background()
		known := domain.NewCredential("user-00000007", "$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g", time.Now())
		if err := repo.Put(ctx, known); err != nil {
			b.Fatal(err)
		}
		b.Run("known", func(b *testing.B) {
			for b.Loop() {
				if _, c, err := repo.GetByEmail(ctx, "user7@example.com"); err != nil || c == nil {
					b.Fatalf("GetByEmail(known) = %v, %v", c, err)
				}
			}
		})
		b.Run("unknown", func(b *testing.B) {
			for b.Loop() {
				if _, _, err := repo.GetByEmail(ctx, "nobody@example.com"); err == nil {
					b.Fatal("GetByEmail(unknown) found someone")
				}
			}
		})
	})
}

// BenchmarkSessionLookup measures GetByTokenHash, which every authenticated
// request runs: one query joining the session to its user through two unique
// indexes, so the cost should stay flat from rows=1000 to rows=100000.
//
//	go test -run '^$' -bench SessionLookup -benchtime 2000x ./adapters/gormstore/
func BenchmarkSessionLookup(b *testing.B) {
	atScales(b, func(b *testing.B, db *gorm.DB, dialect gormstore.Dialect, rows int) {
		repo := gormstore.NewSessionRepository(db)
		seedSessions(b, db, dialect, rows)
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			s, user, err := repo.GetByTokenHash(ctx, seededTokenHash(i%rows))
			if err != nil {
				b.Fatal(err)
			}
			if user.ID() != s.UserID() {
				b.Fatalf("session %s of %s came with user %s", s.ID(), s.UserID(), user.ID())
			}
		}
	})
}

// seededTokenHash is the token hash seedSessions gives session i: the shape
// of a real one (43 characters), so the index holds keys of realistic size.
func seededTokenHash(i int) domain.TokenHash {
	return domain.TokenHash(fmt.Sprintf("hash-%038d", i))
}

// seedSessions fills the sessions table with n sessions of n/10 users (at
// least one), each a single INSERT … SELECT, like seedUsers.
func seedSessions(tb testing.TB, db *gorm.DB, dialect gormstore.Dialect, n int) {
	tb.Helper()
	users := max(n/10, 1)
	seedPageUsers(tb, db, dialect, users)
	now := domain.Timestamp(time.Now())
	q := `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO sessions (id, user_id, token_hash, remember_me, ip_address, user_agent, expires_at, created_at, updated_at)
SELECT printf('session-%08d', i), printf('user-%08d', i % ?), printf('hash-%038d', i), true, '203.0.113.7', 'bench', ?, ?, ? FROM s`
	if dialect == gormstore.DialectPostgres {
		q = `INSERT INTO sessions (id, user_id, token_hash, remember_me, ip_address, user_agent, expires_at, created_at, updated_at)
SELECT 'session-' || lpad(i::text, 8, '0'), 'user-' || lpad((i % ?)::text, 8, '0'), 'hash-' || lpad(i::text, 38, '0'),
 true, '203.0.113.7', 'bench', ?, ?, ?
FROM generate_series(0, ? - 1) AS i`
	}
	args := []any{n, users, now.Add(24 * time.Hour), now, now}
	if dialect == gormstore.DialectPostgres {
		args = []any{users, now.Add(24 * time.Hour), now, now, n}
	}
	if err := db.Exec(q, args...).Error; err != nil {
		tb.Fatal(err)
	}
	analyze(db, "sessions")
}

// analyze refreshes the planner's statistics of table, as autovacuum would
// soon after a bulk load.
func analyze(db *gorm.DB, table string) {
	_ = db.Exec("ANALYZE " + table).Error
}
