package gormstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// TestUserPage_uses_indexes proves that the trusted user listing reads
// through indexes at any depth: the first page and a page from a cursor near
// the list's end read users_created_at_idx backwards, in order (no sort),
// the cursor bounding the index scan rather than filtering the users before
// it; a lookup by address reads users_email_key. No plan reads the table
// whole. The plans are of the very statements the repository runs, captured
// through gorm's callbacks, on 20,000 users (a tenth on SQLite: planRows)
// with fresh statistics.
func TestUserPage_uses_indexes(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		rows := planRows(dialect, 20_000)
		seedPageUsers(t, db, dialect, rows)
		repo := gormstore.NewUserRepository(db)
		capture := captureOrgStatements(t, db)
		ctx := context.Background()
		page := func(q ports.UserPageQuery, want int) string {
			t.Helper()
			stmt := capture.matching(t, "FROM users", func() {
				p, err := repo.Page(ctx, q)
				if err != nil || len(p.Users) != want {
					t.Fatalf("Page(%+v) = %d users, %v; want %d", q, len(p.Users), err, want)
				}
			})
			return explainOrgStatement(t, db, dialect, stmt)
		}

		plan := page(ports.UserPageQuery{Limit: 20}, 20)
		t.Logf("first page:\n%s", plan)
		assertUserPagePlan(t, dialect, plan, "the first page")

		plan = page(ports.UserPageQuery{Limit: 20, After: seededPosition(100)}, 20)
		t.Logf("cursor page near the end:\n%s", plan)
		assertUserPagePlan(t, dialect, plan, "the cursor page")
		assertUserCursorInIndex(t, dialect, plan)

		plan = page(ports.UserPageQuery{Limit: 20, Email: domain.Email("user1234@example.com")}, 1)
		t.Logf("email lookup:\n%s", plan)
		assertOrgPlan(t, dialect, plan, "users_email_key")
	})
}

// assertUserPagePlan fails unless a page reads users_created_at_idx in
// order, without sorting, and no table whole (on SQLite a SCAN of the index
// in order is how a LIMIT reads its first rows).
func assertUserPagePlan(t *testing.T, dialect gormstore.Dialect, plan, what string) {
	t.Helper()
	if !strings.Contains(plan, "users_created_at_idx") {
		t.Errorf("%s does not read users_created_at_idx", what)
	}
	// The passkey count of each user reads the passkeys' index, never
	// the table.
	if !strings.Contains(plan, "passkeys_user_id_created_at_idx") {
		t.Errorf("%s does not count passkeys through passkeys_user_id_created_at_idx", what)
	}
	switch dialect {
	case gormstore.DialectSQLite:
		if strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("%s is sorted, not read in index order", what)
		}
		for _, line := range strings.Split(plan, "\n") {
			if line = strings.TrimSpace(line); strings.HasPrefix(line, "SCAN") && !strings.Contains(line, "USING INDEX users_created_at_idx") {
				t.Errorf("%s reads a table whole: %s", what, line)
			}
		}
	default:
		if strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
			t.Errorf("%s is sorted or reads the table sequentially", what)
		}
		if !strings.Contains(plan, "Index Scan Backward") {
			t.Errorf("%s does not read the index backwards", what)
		}
	}
}

// assertUserCursorInIndex fails unless the cursor's (created_at, id)
// condition bounds the index scan: on SQLite the SEARCH names it; on
// PostgreSQL it is the Index Cond, and no Filter follows.
func assertUserCursorInIndex(t *testing.T, dialect gormstore.Dialect, plan string) {
	t.Helper()
	if dialect == gormstore.DialectSQLite {
		if !strings.Contains(plan, "SEARCH users USING INDEX users_created_at_idx ((created_at,id)<(?,?))") {
			t.Errorf("the cursor does not bound the index search")
		}
		return
	}
	if !strings.Contains(plan, "Index Cond") || !strings.Contains(plan, "created_at") || strings.Contains(plan, "Filter") {
		t.Errorf("the cursor does not bound the index scan")
	}
}
