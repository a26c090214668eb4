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
	"github.com/gatehouse/gatehouse/ports"
)

// pageSeedBase is when the first user seedPageUsers creates was created;
// user i was created i seconds later.
var pageSeedBase = gormtest.SeedBase

// seedPageUsers fills the users table with n users (for every benchmark
// and plan test that needs many): gormtest.SeedUsers. The times are written
// as the SQLite driver writes them ("2006-01-02 15:04:05+00:00"), so that
// text comparisons with the cursor's time hold.
func seedPageUsers(tb testing.TB, db *gorm.DB, _ gormstore.Dialect, n int) {
	tb.Helper()
	gormtest.SeedUsers(tb, db, n)
}

// seededPosition is the position of user i of seedPageUsers.
func seededPosition(i int) *domain.Position {
	return &domain.Position{At: pageSeedBase.Add(time.Duration(i) * time.Second), ID: fmt.Sprintf("user-%08d", i)}
}

// BenchmarkListUsers measures the trusted user listing (UserRepository.Page)
// on tables of growing size: the first page, a page from a cursor deep in
// the list (near its oldest end), and a lookup by address (a one-user page
// filtered on email). Each reads through an index, so the cost should stay
// flat: compare the rows=1000 and rows=100000 results. Lookups by id and by
// address through Get and GetByEmail are BenchmarkUserLookup.
//
//	go test -run '^$' -bench ListUsers -benchtime 2000x ./adapters/gormstore/
func BenchmarkListUsers(b *testing.B) {
	atScales(b, func(b *testing.B, db *gorm.DB, dialect gormstore.Dialect, rows int) {
		repo := gormstore.NewUserRepository(db)
		seedPageUsers(b, db, dialect, rows)
		ctx := context.Background()
		page := func(b *testing.B, q ports.UserPageQuery, want int) {
			b.Helper()
			p, err := repo.Page(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			if len(p.Users) != want {
				b.Fatalf("page of %d users, want %d", len(p.Users), want)
			}
		}
		b.Run("first_page", func(b *testing.B) {
			for b.Loop() {
				page(b, ports.UserPageQuery{Limit: 20}, 20)
			}
		})
		b.Run("deep_cursor_page", func(b *testing.B) {
			// 100 users from the oldest end: all but 100 users lie
			// before the cursor in the listing's order.
			after := seededPosition(100)
			for b.Loop() {
				page(b, ports.UserPageQuery{Limit: 20, After: after}, 20)
			}
		})
		b.Run("email_page", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				page(b, ports.UserPageQuery{Limit: 20, Email: domain.Email(fmt.Sprintf("user%d@example.com", i%rows))}, 1)
			}
		})
	})
}
