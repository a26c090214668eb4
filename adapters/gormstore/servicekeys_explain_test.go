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

// TestServiceKeyLookup_uses_primary_keys proves that GetBySecretHash, the
// query of every trusted request, runs one statement, which reaches the
// secret through the primary key of service_key_secrets and its key through
// the primary key of service_keys: no table is scanned. The statement
// explained is the one the repository ran, captured as it ran, on 20,000
// keys (a tenth on SQLite: planRows).
func TestServiceKeyLookup_uses_primary_keys(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		seedServiceKeys(t, db, dialect, planRows(dialect, 20_000))
		capture := captureStatements(db)
		repo := gormstore.NewServiceKeyRepository(db)

		q := capture.one(t, func() {
			k, s, err := repo.GetBySecretHash(context.Background(), seededSecretHash(1234))
			if err != nil {
				t.Fatal(err)
			}
			if k.ID() != "sk-00001234" || s.KeyID != k.ID() {
				t.Fatalf("GetBySecretHash = key %s, secret of %s; want sk-00001234", k.ID(), s.KeyID)
			}
		})
		plan := explainStatement(t, db, dialect, q)
		t.Logf("query:\n%s\nplan:\n%s", q.sql, plan)
		switch dialect {
		case gormstore.DialectSQLite:
			// TEXT primary keys are kept in sqlite_autoindex_<table>_1, e.g.
			// "SEARCH s USING INDEX sqlite_autoindex_service_key_secrets_1 (hash=?)".
			assertPlanUses(t, plan, "sqlite_autoindex_service_key_secrets_1 (hash=?)", "sqlite_autoindex_service_keys_1 (id=?)")
			assertNoSQLiteScan(t, plan)
		default:
			assertPlanUses(t, plan, "service_key_secrets_pkey", "service_keys_pkey")
			assertNoSeqScan(t, plan)
		}
	})
}

// TestAuditList_uses_indexes proves that a page of the audit log, the first
// or one after a cursor, filtered or not, is read through an index: no table
// is scanned. SQLite always reads the filter's own index in the page's order
// (occurred_at DESC, id DESC). PostgreSQL picks by its statistics: for a
// busy actor it reads an index in order and stops after the page (no Sort);
// for a rare one it fetches the actor's few entries through
// audit_log_actor_id_idx and sorts them, which is cheaper. The log holds
// 20,000 entries (a tenth on SQLite: planRows).
func TestAuditList_uses_indexes(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		n := planRows(dialect, 20_000)
		seedAudit(t, db, dialect, n)
		capture := captureStatements(db)
		log := gormstore.NewAuditLog(db)
		// The cursor is the middle entry; since leaves out the first 18%
		// (an hour of PostgreSQL's log).
		cursor := &ports.AuditCursor{OccurredAt: auditSeedTime.Add(time.Duration(n/2) * time.Second), ID: fmt.Sprintf("audit-%08d", n/2)}
		since := auditSeedTime.Add(time.Duration(n*18/100) * time.Second)
		const byTime = "audit_log_occurred_at_idx"

		tests := []struct {
			name string
			q    ports.AuditQuery
			// sqlite is the index SQLite must use; postgres lists the ones
			// PostgreSQL may; sortOK allows PostgreSQL to sort the rows it
			// fetched.
			sqlite   string
			postgres []string
			sortOK   bool
		}{
			{"busy_actor", ports.AuditQuery{ActorID: "actor-7", Limit: 50},
				"audit_log_actor_id_idx", []string{"audit_log_actor_id_idx"}, false},
			{"busy_actor_after_cursor", ports.AuditQuery{ActorID: "actor-7", After: cursor, Limit: 50},
				"audit_log_actor_id_idx", []string{"audit_log_actor_id_idx", byTime}, false},
			{"busy_actor_since", ports.AuditQuery{ActorID: "actor-7", Since: since, Limit: 50},
				"audit_log_actor_id_idx", []string{"audit_log_actor_id_idx", byTime}, false},
			{"rare_actor", ports.AuditQuery{ActorID: "actor-rare", Limit: 50},
				"audit_log_actor_id_idx", []string{"audit_log_actor_id_idx"}, true},
			{"rare_actor_after_cursor", ports.AuditQuery{ActorID: "actor-rare", After: cursor, Limit: 50},
				"audit_log_actor_id_idx", []string{"audit_log_actor_id_idx"}, true},
			{"action_after_cursor", ports.AuditQuery{Action: "action-3", After: cursor, Limit: 50},
				"audit_log_action_idx", []string{"audit_log_action_idx", byTime}, false},
			{"target_after_cursor", ports.AuditQuery{TargetID: "target-4", After: cursor, Limit: 50},
				"audit_log_target_id_idx", []string{"audit_log_target_id_idx", byTime}, false},
			{"unfiltered_after_cursor", ports.AuditQuery{After: cursor, Limit: 50}, byTime, []string{byTime}, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				q := capture.one(t, func() {
					list, err := log.List(context.Background(), tt.q)
					if err != nil {
						t.Fatal(err)
					}
					if len(list) == 0 {
						t.Fatal("the query matched nothing: the seed does not exercise it")
					}
				})
				plan := explainStatement(t, db, dialect, q)
				t.Logf("query:\n%s\nplan:\n%s", q.sql, plan)
				switch dialect {
				case gormstore.DialectSQLite:
					assertPlanUses(t, plan, tt.sqlite)
					assertNoSQLiteScan(t, plan)
					if strings.Contains(plan, "TEMP B-TREE") {
						t.Errorf("the page is sorted, not read in index order")
					}
				default:
					if !slices.ContainsFunc(tt.postgres, func(idx string) bool { return strings.Contains(plan, idx) }) {
						t.Errorf("the plan uses none of %v", tt.postgres)
					}
					assertNoSeqScan(t, plan)
					if !tt.sortOK && strings.Contains(plan, "Sort") {
						t.Errorf("the page is sorted, not read in index order")
					}
				}
			})
		}
	})
}

// TestAuditLog_is_append_only_in_SQL proves that the database itself, not
// only the port, refuses to change or delete audit entries, whoever asks.
func TestAuditLog_is_append_only_in_SQL(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		log := gormstore.NewAuditLog(db)
		ctx := context.Background()
		for i := range 3 {
			e := domain.AuditEntry{ID: fmt.Sprintf("a%d", i), OccurredAt: auditSeedTime.Add(time.Duration(i) * time.Second),
				ActorType: domain.ActorCLI, Action: "service-key.create", Outcome: domain.OutcomeSuccess}
			if err := log.Append(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		statements := []string{
			"UPDATE audit_log SET action = 'forged' WHERE id = 'a1'",
			"UPDATE audit_log SET occurred_at = occurred_at",
			"DELETE FROM audit_log WHERE id = 'a1'",
			"DELETE FROM audit_log",
		}
		if gormstore.DialectOf(db) == gormstore.DialectPostgres {
			statements = append(statements, "TRUNCATE audit_log")
		}
		for _, stmt := range statements {
			err := db.Exec(stmt).Error
			if err == nil {
				t.Errorf("%s succeeded, want it refused", stmt)
			} else if !strings.Contains(err.Error(), "append-only") {
				t.Errorf("%s failed with %v, want the trigger's refusal", stmt, err)
			}
		}
		// Inside a transaction too.
		err := db.Transaction(func(tx *gorm.DB) error {
			return tx.Exec("DELETE FROM audit_log WHERE id = 'a0'").Error
		})
		if err == nil {
			t.Error("DELETE in a transaction succeeded, want it refused")
		}
		list, err := log.List(ctx, ports.AuditQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 3 || list[1].ID != "a1" || list[1].Action != "service-key.create" {
			t.Fatalf("entries after the refused statements: %+v, want a2, a1, a0 unchanged", list)
		}
	})
}

// auditSeedTime is when seedAudit's first entry occurred.
var auditSeedTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// seededSecretHash is the hash seedServiceKeys gives key i's secret: the
// shape of a real one (43 characters).
func seededSecretHash(i int) domain.TokenHash {
	return domain.TokenHash(fmt.Sprintf("skh-%039d", i))
}

// seedServiceKeys adds n service keys sk-00000000, … with one secret each,
// in two INSERT … SELECT statements, and refreshes the statistics.
func seedServiceKeys(t *testing.T, db *gorm.DB, dialect gormstore.Dialect, n int) {
	t.Helper()
	now := domain.Timestamp(time.Now())
	var stmts []string
	var args [][]any
	if dialect == gormstore.DialectPostgres {
		stmts = []string{
			`INSERT INTO service_keys (id, name, scopes, last4, created_by, created_at)
SELECT 'sk-' || lpad(i::text, 8, '0'), 'Key', 'users:read users:write', '0000', 'cli', ? FROM generate_series(0, ? - 1) AS i`,
			`INSERT INTO service_key_secrets (hash, key_id, created_at)
SELECT 'skh-' || lpad(i::text, 39, '0'), 'sk-' || lpad(i::text, 8, '0'), ? FROM generate_series(0, ? - 1) AS i`,
		}
		args = [][]any{{now, n}, {now, n}}
	} else {
		const series = `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?) `
		stmts = []string{
			series + `INSERT INTO service_keys (id, name, scopes, last4, created_by, created_at)
SELECT printf('sk-%08d', i), 'Key', 'users:read users:write', '0000', 'cli', ? FROM s`,
			series + `INSERT INTO service_key_secrets (hash, key_id, created_at)
SELECT printf('skh-%039d', i), printf('sk-%08d', i), ? FROM s`,
		}
		args = [][]any{{n, now}, {n, now}}
	}
	for i, q := range stmts {
		if err := db.Exec(q, args[i]...).Error; err != nil {
			t.Fatal(err)
		}
	}
	analyze(db, "service_keys")
	analyze(db, "service_key_secrets")
}

// seedAudit appends n entries audit-00000000, … one second apart, in one
// INSERT … SELECT. They are spread over 8 busy actors, 5 actions and 10
// targets, so that each filter matches thousands of entries, as a busy
// service key does: a plan that fetched them all and sorted them would not
// scale. One entry in 500 is by the rare actor-rare instead.
func seedAudit(t *testing.T, db *gorm.DB, dialect gormstore.Dialect, n int) {
	t.Helper()
	q := `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO audit_log (id, occurred_at, actor_type, actor_id, action, target_type, target_id, outcome)
SELECT printf('audit-%08d', i), strftime('%Y-%m-%d %H:%M:%f+00:00', ?, '+' || i || ' seconds'),
 'user', CASE WHEN i % 500 = 3 THEN 'actor-rare' ELSE 'actor-' || (i % 8) END, 'action-' || (i % 5), 'user', 'target-' || (i % 10), 'success' FROM s`
	args := []any{n, auditSeedTime.Format("2006-01-02 15:04:05")}
	if dialect == gormstore.DialectPostgres {
		q = `INSERT INTO audit_log (id, occurred_at, actor_type, actor_id, action, target_type, target_id, outcome)
SELECT 'audit-' || lpad(i::text, 8, '0'), ?::timestamptz + i * interval '1 second',
 'user', CASE WHEN i % 500 = 3 THEN 'actor-rare' ELSE 'actor-' || (i % 8) END, 'action-' || (i % 5), 'user', 'target-' || (i % 10), 'success'
FROM generate_series(0, ? - 1) AS i`
		args = []any{auditSeedTime, n}
	}
	if err := db.Exec(q, args...).Error; err != nil {
		t.Fatal(err)
	}
	analyze(db, "audit_log")
}

// statement is one SQL statement as gorm sent it to the driver.
type statement struct {
	sql  string
	vars []any
}

// statementCapture records every statement run on a database.
type statementCapture struct {
	mu   sync.Mutex
	seen []statement
}

// captureStatements records every statement that db, and every repository
// on it, runs from now on, through gorm's callbacks.
func captureStatements(db *gorm.DB) *statementCapture {
	c := &statementCapture{}
	record := func(tx *gorm.DB) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.seen = append(c.seen, statement{sql: tx.Statement.SQL.String(), vars: slices.Clone(tx.Statement.Vars)})
	}
	const name = "gatehouse_test:capture"
	cb := db.Callback()
	_ = cb.Create().After("gorm:create").Register(name, record)
	_ = cb.Query().After("gorm:query").Register(name, record)
	_ = cb.Update().After("gorm:update").Register(name, record)
	_ = cb.Delete().After("gorm:delete").Register(name, record)
	_ = cb.Row().After("gorm:row").Register(name, record)
	_ = cb.Raw().After("gorm:raw").Register(name, record)
	return c
}

// one runs fn and returns the statement it ran, failing unless it ran
// exactly one.
func (c *statementCapture) one(t *testing.T, fn func()) statement {
	t.Helper()
	c.mu.Lock()
	c.seen = nil
	c.mu.Unlock()
	fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.seen) != 1 {
		var sqls []string
		for _, s := range c.seen {
			sqls = append(sqls, s.sql)
		}
		t.Fatalf("ran %d statements, want exactly one:\n%s", len(c.seen), strings.Join(sqls, "\n"))
	}
	return c.seen[0]
}

// explainStatement returns the query plan of a captured statement, one step
// per line. The statement already carries the dialect's placeholders, so it
// goes to database/sql as it is rather than through gorm's own binding.
func explainStatement(t *testing.T, db *gorm.DB, dialect gormstore.Dialect, s statement) string {
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
		t.Fatal(err)
	}
	return readPlan(t, rows)
}

func assertPlanUses(t *testing.T, plan string, indexes ...string) {
	t.Helper()
	for _, idx := range indexes {
		if !strings.Contains(plan, idx) {
			t.Errorf("the plan does not use %s", idx)
		}
	}
}

// assertNoSQLiteScan fails if a SQLite plan reads a whole table ("SCAN t";
// a "SCAN t USING INDEX" without a search term would read a whole index).
func assertNoSQLiteScan(t *testing.T, plan string) {
	t.Helper()
	for _, line := range strings.Split(plan, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "SCAN") {
			t.Errorf("the query scans: %s", line)
		}
	}
}

func assertNoSeqScan(t *testing.T, plan string) {
	t.Helper()
	if strings.Contains(plan, "Seq Scan") {
		t.Errorf("the query scans a table sequentially")
	}
}
