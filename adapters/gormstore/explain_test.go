package gormstore_test

import (
	"database/sql"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
)

// TestSessionLookup_uses_indexes proves that the session lookup, the query of
// every authenticated request, reaches the session through the token_hash
// index and its user through the primary key: no table is scanned. The tables
// hold enough rows (20,000 sessions, a tenth on SQLite: planRows), with fresh
// statistics, that PostgreSQL would not choose a sequential scan for want of
// data.
func TestSessionLookup_uses_indexes(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		seedSessions(t, db, dialect, planRows(dialect, 20_000))
		plan := explain(t, db, dialect, gormstore.SessionLookupSQL, string(seededTokenHash(1234)))
		t.Logf("plan:\n%s", plan)
		switch dialect {
		case gormstore.DialectSQLite:
			// e.g. "SEARCH s USING INDEX sessions_token_hash_key (token_hash=?)".
			if !strings.Contains(plan, "USING INDEX sessions_token_hash_key") &&
				!strings.Contains(plan, "USING COVERING INDEX sessions_token_hash_key") {
				t.Errorf("the lookup does not use sessions_token_hash_key")
			}
			for _, line := range strings.Split(plan, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "SCAN") {
					t.Errorf("the lookup scans a table: %s", line)
				}
			}
		default:
			if !strings.Contains(plan, "sessions_token_hash_key") {
				t.Errorf("the lookup does not use sessions_token_hash_key")
			}
			if strings.Contains(plan, "Seq Scan") {
				t.Errorf("the lookup scans a table sequentially")
			}
		}
	})
}

// planRows returns how many rows of a kind a query-plan test seeds on
// dialect, given the number PostgreSQL gets. PostgreSQL's planner weighs a
// table's size: with half of these numbers some of its plans change (the
// outbox's claim joins by hash over a sequential scan, a busy actor's audit
// page leaves audit_log_actor_id_idx for the time index, a member lookup
// takes members_user_id_idx), so it gets them all. SQLite's planner chose
// the very same plan for every statement of these tests with a quarter, a
// tenth and about a twentieth of each seed as with the whole, statistics
// fresh each time; and seeding costs most there, its engine being Go code
// that the race detector instruments. So SQLite gets a tenth.
func planRows(dialect gormstore.Dialect, postgres int) int {
	if dialect == gormstore.DialectSQLite {
		return postgres / 10
	}
	return postgres
}

// explain returns the query plan of q, one step per line.
func explain(t *testing.T, db *gorm.DB, dialect gormstore.Dialect, q string, args ...any) string {
	t.Helper()
	prefix := "EXPLAIN "
	if dialect == gormstore.DialectSQLite {
		prefix = "EXPLAIN QUERY PLAN "
	}
	rows, err := db.Raw(prefix+q, args...).Rows()
	if err != nil {
		t.Fatal(err)
	}
	return readPlan(t, rows)
}

// readPlan reads an EXPLAIN result into its plan text, one step per line,
// and closes rows.
func readPlan(t *testing.T, rows *sql.Rows) string {
	t.Helper()
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		// The plan text is the last column: "detail" on SQLite, "QUERY PLAN" on PostgreSQL.
		switch v := vals[len(vals)-1].(type) {
		case string:
			lines = append(lines, v)
		case []byte:
			lines = append(lines, string(v))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestSignInLookup_uses_indexes proves that a password sign-in's one read
// reaches the user through users_email_key and the credential through its
// primary key: no table is scanned, only the one-row probe it starts from.
func TestSignInLookup_uses_indexes(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		seedPageUsers(t, db, dialect, planRows(dialect, 20_000))
		if err := db.Exec(`INSERT INTO credentials (user_id, hash, failed_attempts, updated_at)
SELECT id, 'hash', 0, created_at FROM users`).Error; err != nil {
			t.Fatal(err)
		}
		analyze(db, "users")
		analyze(db, "credentials")
		plan := explain(t, db, dialect, gormstore.SignInLookupSQL, "user1234@example.com")
		t.Logf("plan:\n%s", plan)
		if !strings.Contains(plan, "users_email_key") {
			t.Errorf("the lookup does not use users_email_key")
		}
		if !strings.Contains(plan, "credentials_pkey") && !strings.Contains(plan, "sqlite_autoindex_credentials_1") {
			t.Errorf("the lookup does not reach the credential through its primary key")
		}
		switch dialect {
		case gormstore.DialectSQLite:
			for _, line := range strings.Split(plan, "\n") {
				if l := strings.TrimSpace(line); strings.HasPrefix(l, "SCAN") && !strings.HasPrefix(l, "SCAN p") && !strings.Contains(l, "CONSTANT ROW") {
					t.Errorf("the lookup scans a table: %s", line)
				}
			}
		default:
			if strings.Contains(plan, "Seq Scan") {
				t.Errorf("the lookup scans a table sequentially")
			}
		}
	})
}
