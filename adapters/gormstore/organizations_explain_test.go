package gormstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// orgSeed is the size of seedOrganizationMembers' seed: users users;
// small organizations of about users/small members each; org-big, whose
// members are the first big users; and the joiner, the last user, who is a
// member of every small organization and of nothing else.
type orgSeed struct{ users, small, big int }

// orgSeedOn returns the seed's size on dialect: 20,000 users, 1,000 small
// organizations and 10,000 members of org-big (a tenth on SQLite:
// planRows).
func orgSeedOn(dialect gormstore.Dialect) orgSeed {
	return orgSeed{users: planRows(dialect, 20_000), small: planRows(dialect, 1_000), big: planRows(dialect, 10_000)}
}

func (s orgSeed) joiner() domain.UserID { return domain.UserID(fmt.Sprintf("user-%08d", s.users-1)) }

// TestOrganizationMemberQueries_use_indexes proves that the queries which guard and list
// an organization read through indexes, whatever the organization's size:
// a page of members comes in order from members_organization_id_created_at_idx
// (no sort, either direction) with each user by primary key;
// GetMemberByUser is one index lookup, through
// members_organization_id_user_id_key whenever the user's own index would
// not be as selective; and ListByUser starts from members_user_id_idx. The plans are of the very
// statements the repository runs, captured through gorm's callbacks.
func TestOrganizationMemberQueries_use_indexes(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		seed := orgSeedOn(dialect)
		seedOrganizationMembers(t, db, dialect, seed)
		repo := gormstore.NewOrganizationRepository(db)
		capture := captureOrgStatements(t, db)
		ctx := context.Background()

		for _, org := range []domain.OrganizationID{"org-big", "org-0042"} {
			for _, desc := range []bool{false, true} {
				q := ports.MemberQuery{Limit: 50, SortDesc: desc}
				stmt := capture.matching(t, "JOIN users", func() {
					page, err := repo.ListMembers(ctx, org, q)
					if err != nil || len(page.Members) == 0 || page.Total == 0 {
						t.Fatalf("ListMembers(%s) = %d members of %d, %v", org, len(page.Members), page.Total, err)
					}
				})
				plan := explainOrgStatement(t, db, dialect, stmt)
				t.Logf("member page of %s, desc=%v:\n%s", org, desc, plan)
				assertMemberPagePlan(t, dialect, plan, fmt.Sprintf("the member page of %s (desc=%v)", org, desc))
				if org != "org-big" {
					continue
				}
				// A cursor page deep in the list, 200 members from its end:
				// the cursor condition is a range of the index after the
				// equality on organization_id, not a filter over the members
				// before it.
				at := domain.MemberID(fmt.Sprintf("big-%08d", seed.big-200))
				if desc {
					at = domain.MemberID(fmt.Sprintf("big-%08d", 200))
				}
				m, err := repo.GetMember(ctx, org, at)
				if err != nil {
					t.Fatal(err)
				}
				deep := ports.MemberCursor{CreatedAt: m.CreatedAt(), ID: m.ID()}
				q.After = &deep
				stmt = capture.matching(t, "JOIN users", func() {
					page, err := repo.ListMembers(ctx, org, q)
					if err != nil || len(page.Members) != 50 || page.Total != seed.big {
						t.Fatalf("ListMembers(%s, after %+v) = %d members of %d, %v", org, deep, len(page.Members), page.Total, err)
					}
				})
				plan = explainOrgStatement(t, db, dialect, stmt)
				t.Logf("cursor page of %s, desc=%v:\n%s", org, desc, plan)
				what := fmt.Sprintf("the cursor page of %s (desc=%v)", org, desc)
				assertMemberPagePlan(t, dialect, plan, what)
				assertCursorInIndex(t, dialect, plan, what)
			}
		}

		// The total is the organization's kept count, read by primary key.
		stmt := capture.matching(t, "member_count", func() {
			if n, err := repo.CountMembers(ctx, "org-big"); err != nil || n != seed.big {
				t.Fatalf("CountMembers(org-big) = %d, %v; want %d", n, err, seed.big)
			}
		})
		plan := explainOrgStatement(t, db, dialect, stmt)
		t.Logf("CountMembers:\n%s", plan)
		assertOrgPlan(t, dialect, plan, "organizations_pkey", "sqlite_autoindex_organizations_1")

		// For a user of two organizations either index finds the row at
		// once, and PostgreSQL may take the smaller; for a user of every
		// organization only the unique key on the pair is selective.
		lookups := []struct {
			org     domain.OrganizationID
			user    domain.UserID
			indexes []string
		}{
			{"org-big", "user-00000234", []string{"members_organization_id_user_id_key", "members_user_id_idx"}},
			{"org-0042", seed.joiner(), []string{"members_organization_id_user_id_key"}},
		}
		for _, l := range lookups {
			stmt := capture.matching(t, "user_id", func() {
				if _, err := repo.GetMemberByUser(ctx, l.org, l.user); err != nil {
					t.Fatal(err)
				}
			})
			plan := explainOrgStatement(t, db, dialect, stmt)
			t.Logf("GetMemberByUser(%s, %s):\n%s", l.org, l.user, plan)
			assertOrgPlan(t, dialect, plan, l.indexes...)
		}

		stmt = capture.matching(t, "JOIN members", func() {
			if list, err := repo.ListByUser(ctx, "user-00000234"); err != nil || len(list) != 2 {
				t.Fatalf("ListByUser = %d organizations, %v; want 2", len(list), err)
			}
		})
		plan = explainOrgStatement(t, db, dialect, stmt)
		t.Logf("ListByUser:\n%s", plan)
		assertOrgPlan(t, dialect, plan, "members_user_id_idx")
	})
}

// assertMemberPagePlan fails unless a member page reads
// members_organization_id_created_at_idx in order, without sorting.
func assertMemberPagePlan(t *testing.T, dialect gormstore.Dialect, plan, what string) {
	t.Helper()
	assertOrgPlan(t, dialect, plan, "members_organization_id_created_at_idx")
	if dialect == gormstore.DialectSQLite && strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("%s is sorted, not read in index order", what)
	}
	if dialect == gormstore.DialectPostgres && strings.Contains(plan, "Sort") {
		t.Errorf("%s is sorted, not read in index order", what)
	}
}

// assertCursorInIndex fails unless the cursor's (created_at, id) condition
// bounds the index scan: on SQLite the SEARCH of the index names it; on
// PostgreSQL it is in the Index Cond, and nothing filters rows after.
func assertCursorInIndex(t *testing.T, dialect gormstore.Dialect, plan, what string) {
	t.Helper()
	for _, line := range strings.Split(plan, "\n") {
		switch {
		case dialect == gormstore.DialectSQLite && strings.Contains(line, "members_organization_id_created_at_idx"):
			if strings.Contains(line, "(created_at,id)") {
				return
			}
		case dialect == gormstore.DialectPostgres && strings.Contains(line, "Index Cond") && strings.Contains(line, "created_at"):
			if !strings.Contains(plan, "Filter") {
				return
			}
		}
	}
	t.Errorf("%s does not bound the index scan by the cursor", what)
}

// seedOrganizationMembers fills users, organizations and members in a few
// statements per dialect, then refreshes the planner's statistics.
func seedOrganizationMembers(t *testing.T, db *gorm.DB, dialect gormstore.Dialect, seed orgSeed) {
	t.Helper()
	seedPageUsers(t, db, dialect, seed.users)
	now := domain.Timestamp(time.Now())
	stmts := []struct {
		q    string
		args []any
	}{
		{`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO organizations (id, name, slug, logo, metadata, created_at, updated_at)
SELECT printf('org-%04d', i), 'Org', printf('org-%04d', i), '', '', ?, ? FROM s`, []any{seed.small, now, now}},
		{`INSERT INTO organizations (id, name, slug, logo, metadata, created_at, updated_at)
VALUES ('org-big', 'Big', 'org-big', '', '', ?, ?)`, []any{now, now}},
		// The members of one organization joined a second apart, in id order.
		{`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO members (id, organization_id, user_id, role, created_at)
SELECT printf('member-%08d', i), printf('org-%04d', i % ?), printf('user-%08d', i), 'member', datetime(?, '+' || i || ' seconds') FROM s`,
			[]any{seed.users - 1, seed.small, now}},
		{`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO members (id, organization_id, user_id, role, created_at)
SELECT printf('joiner-%04d', i), printf('org-%04d', i), ?, 'member', datetime(?, '+1 day') FROM s`,
			[]any{seed.small, string(seed.joiner()), now}},
		{`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO members (id, organization_id, user_id, role, created_at)
SELECT printf('big-%08d', i), 'org-big', printf('user-%08d', i), CASE WHEN i = 0 THEN 'owner' ELSE 'member' END,
 datetime(?, '+' || i || ' seconds') FROM s`, []any{seed.big, now}},
	}
	if dialect == gormstore.DialectPostgres {
		stmts = []struct {
			q    string
			args []any
		}{
			{`INSERT INTO organizations (id, name, slug, logo, metadata, created_at, updated_at)
SELECT 'org-' || lpad(i::text, 4, '0'), 'Org', 'org-' || lpad(i::text, 4, '0'), '', '', ?, ?
FROM generate_series(0, ? - 1) AS i`, []any{now, now, seed.small}},
			{`INSERT INTO organizations (id, name, slug, logo, metadata, created_at, updated_at)
VALUES ('org-big', 'Big', 'org-big', '', '', ?, ?)`, []any{now, now}},
			{`INSERT INTO members (id, organization_id, user_id, role, created_at)
SELECT 'member-' || lpad(i::text, 8, '0'), 'org-' || lpad((i % ?)::text, 4, '0'), 'user-' || lpad(i::text, 8, '0'), 'member',
 ?::timestamptz + i * interval '1 second'
FROM generate_series(0, ? - 1) AS i`, []any{seed.small, now, seed.users - 1}},
			{`INSERT INTO members (id, organization_id, user_id, role, created_at)
SELECT 'joiner-' || lpad(i::text, 4, '0'), 'org-' || lpad(i::text, 4, '0'), ?, 'member', ?::timestamptz + interval '1 day'
FROM generate_series(0, ? - 1) AS i`, []any{string(seed.joiner()), now, seed.small}},
			{`INSERT INTO members (id, organization_id, user_id, role, created_at)
SELECT 'big-' || lpad(i::text, 8, '0'), 'org-big', 'user-' || lpad(i::text, 8, '0'), CASE WHEN i = 0 THEN 'owner' ELSE 'member' END,
 ?::timestamptz + i * interval '1 second'
FROM generate_series(0, ? - 1) AS i`, []any{now, seed.big}},
		}
	}
	for _, s := range stmts {
		if err := db.Exec(s.q, s.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	analyze(db, "organizations")
	analyze(db, "members")
}

// orgStatement is one SQL statement as gorm sent it to the driver.
type orgStatement struct {
	sql  string
	vars []any
}

// orgStatementCapture records the statements run on a database.
type orgStatementCapture struct {
	mu   sync.Mutex
	seen []orgStatement
}

// captureOrgStatements records every query that db, and every repository on
// it, runs from now on, through gorm's callbacks.
func captureOrgStatements(t *testing.T, db *gorm.DB) *orgStatementCapture {
	t.Helper()
	c := &orgStatementCapture{}
	record := func(tx *gorm.DB) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.seen = append(c.seen, orgStatement{sql: tx.Statement.SQL.String(), vars: slices.Clone(tx.Statement.Vars)})
	}
	const name = "gatehouse_test:capture_org"
	cb := db.Callback()
	for _, err := range []error{
		cb.Query().After("gorm:query").Register(name, record),
		cb.Row().After("gorm:row").Register(name, record),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// matching runs fn and returns the one statement it ran that contains
// substr, failing unless there is exactly one.
func (c *orgStatementCapture) matching(t *testing.T, substr string, fn func()) orgStatement {
	t.Helper()
	c.mu.Lock()
	c.seen = nil
	c.mu.Unlock()
	fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	var found []orgStatement
	for _, s := range c.seen {
		if strings.Contains(s.sql, substr) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var all []string
		for _, s := range c.seen {
			all = append(all, s.sql)
		}
		t.Fatalf("ran %d statements containing %q, want exactly one; ran:\n%s", len(found), substr, strings.Join(all, "\n"))
	}
	return found[0]
}

// explainOrgStatement returns the plan of a captured statement, one step per
// line. The statement carries the dialect's own placeholders, so it goes to
// database/sql as it is.
func explainOrgStatement(t *testing.T, db *gorm.DB, dialect gormstore.Dialect, s orgStatement) string {
	t.Helper()
	prefix := "EXPLAIN "
	if dialect == gormstore.DialectSQLite {
		prefix = "EXPLAIN QUERY PLAN "
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sqlDB.Query(prefix+s.sql, s.vars...)
	if err != nil {
		t.Fatalf("explain %s: %v", s.sql, err)
	}
	return readPlan(t, rows)
}

// assertOrgPlan fails unless plan uses one of indexes and reads no table
// whole: no "SCAN" step on SQLite (a SCAN, even of an index, reads all of
// it), no sequential scan on PostgreSQL.
func assertOrgPlan(t *testing.T, dialect gormstore.Dialect, plan string, indexes ...string) {
	t.Helper()
	if !slices.ContainsFunc(indexes, func(idx string) bool { return strings.Contains(plan, idx) }) {
		t.Errorf("the plan uses none of %v", indexes)
	}
	for _, line := range strings.Split(plan, "\n") {
		line = strings.TrimSpace(line)
		if dialect == gormstore.DialectSQLite && strings.HasPrefix(line, "SCAN") ||
			dialect == gormstore.DialectPostgres && strings.Contains(line, "Seq Scan") {
			t.Errorf("the plan reads a whole table: %s", line)
		}
	}
}
