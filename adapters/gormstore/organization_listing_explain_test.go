package gormstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// TestOrganizationList_uses_the_index proves that a page of every
// organization, newest first, is read in order from
// organizations_created_at_idx, backwards and without a sort, so that it
// stops after the page: the first page from the index's end, a page deep in
// the list from the cursor's position, as a range of the index (not a
// filter over the organizations before it). The plans are of the very
// statements the repository runs, captured through gorm's callbacks, on
// 20,000 organizations (a tenth on SQLite: planRows).
func TestOrganizationList_uses_the_index(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		n := planRows(dialect, 20_000)
		base := seedOrganizations(t, db, n)
		repo := gormstore.NewOrganizationRepository(db)
		capture := captureOrgStatements(t, db)
		ctx := context.Background()

		stmt := capture.matching(t, "ORDER BY", func() {
			page, err := repo.List(ctx, ports.OrganizationQuery{Limit: 20})
			if err != nil || len(page.Organizations) != 20 || page.Organizations[0].Organization.ID() != seededOrgID(n-1) {
				t.Fatalf("first page = %d organizations, %v", len(page.Organizations), err)
			}
		})
		plan := explainOrgStatement(t, db, dialect, stmt)
		t.Logf("first page:\n%s", plan)
		assertListPlan(t, dialect, plan, "the first page", false)

		// 200 organizations from the end of the list (the oldest).
		deep := domain.Position{At: base.Add(200 * time.Second), ID: string(seededOrgID(200))}
		stmt = capture.matching(t, "ORDER BY", func() {
			page, err := repo.List(ctx, ports.OrganizationQuery{Limit: 20, After: &deep})
			if err != nil || len(page.Organizations) != 20 || page.Organizations[0].Organization.ID() != seededOrgID(199) {
				t.Fatalf("deep page = %d organizations, %v", len(page.Organizations), err)
			}
		})
		plan = explainOrgStatement(t, db, dialect, stmt)
		t.Logf("cursor page:\n%s", plan)
		assertListPlan(t, dialect, plan, "the cursor page", true)
	})
}

// assertListPlan fails unless plan reads organizations_created_at_idx in
// order, never sorts and never scans the table; with a cursor, the cursor's
// (created_at, id) bounds the index scan. On SQLite the first page is a
// SCAN of the index, in order, which the LIMIT stops after the page.
func assertListPlan(t *testing.T, dialect gormstore.Dialect, plan, what string, cursor bool) {
	t.Helper()
	if !strings.Contains(plan, "organizations_created_at_idx") {
		t.Errorf("%s does not use organizations_created_at_idx", what)
	}
	switch dialect {
	case gormstore.DialectSQLite:
		if strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("%s is sorted, not read in index order", what)
		}
		for _, line := range strings.Split(plan, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "SCAN") && !strings.Contains(line, "INDEX organizations_created_at_idx") {
				t.Errorf("%s reads a whole table: %s", what, line)
			}
		}
		if cursor && !strings.Contains(plan, "SEARCH organizations USING INDEX organizations_created_at_idx ((created_at,id)<(?,?))") &&
			!strings.Contains(plan, "SEARCH organizations USING COVERING INDEX organizations_created_at_idx ((created_at,id)<(?,?))") {
			t.Errorf("%s does not bound the index scan by the cursor", what)
		}
	default:
		if strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
			t.Errorf("%s sorts or scans the table", what)
		}
		if !strings.Contains(plan, "Index Scan Backward using organizations_created_at_idx") {
			t.Errorf("%s is not read backwards from the index", what)
		}
		if cursor && (!strings.Contains(plan, "Index Cond") || strings.Contains(plan, "Filter")) {
			t.Errorf("%s does not bound the index scan by the cursor", what)
		}
	}
}

// seededOrgID is the id of the i-th organization seedOrganizations creates.
func seededOrgID(i int) domain.OrganizationID {
	return domain.OrganizationID(fmt.Sprintf("org-%08d", i))
}

// seedOrganizations inserts n organizations, the i-th (seededOrgID(i))
// created i seconds after the returned base time, in batches of 1,000
// (seedTx) whose times the driver writes as the repository does, then
// refreshes the planner's statistics.
func seedOrganizations(tb testing.TB, db *gorm.DB, n int) time.Time {
	tb.Helper()
	base := domain.Timestamp(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tx := beginSeed(tb, db)
	defer tx.rollback()
	cols := []string{"id", "name", "slug", "logo", "metadata", "created_at", "updated_at"}
	const batch = 1000
	rows := make([][]any, 0, batch)
	for i := range n {
		at := base.Add(time.Duration(i) * time.Second)
		rows = append(rows, []any{string(seededOrgID(i)), "Org", fmt.Sprintf("org-%08d", i), "", "", at, at})
		if len(rows) == batch || i == n-1 {
			tx.insert("organizations", cols, rows)
			rows = rows[:0]
		}
	}
	tx.commit()
	analyze(db, "organizations")
	return base
}
