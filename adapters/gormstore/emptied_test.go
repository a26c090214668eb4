package gormstore_test

import (
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
)

// emptiedURL returns the function that gives each subtest of a conformance
// suite (run under t) an empty, migrated database of newURL's dialect.
//
// On SQLite that is newURL itself: a copy of the migrated template file,
// under a millisecond. A PostgreSQL database of its own costs each subtest
// a CREATE DATABASE and, when it ends, a DROP DATABASE, which forces a
// checkpoint: a tenth of a second or more each (seconds on a busy server),
// for each of the several hundred subtests of these suites, which write a
// few rows apiece. So on PostgreSQL the suite makes one database, and each
// subtest gets it emptied first: every table's rows deleted in one
// transaction, a millisecond or two. The schema, and the migrations'
// record, stay as migrated, so the subtest starts from what a new copy
// would hold. The subtests run one at a time; a subtest that asks while
// another still holds the database fails.
func emptiedURL(t *testing.T, newURL gormtest.NewURLFunc) gormtest.NewURLFunc {
	t.Helper()
	u := newURL(t)
	if dialect, _, err := gormstore.ParseDatabaseURL(u); err != nil || dialect != gormstore.DialectPostgres {
		return newURL
	}
	db := gormtest.Open(t, u)
	empty := emptyStatement(t, db)
	var held sync.Mutex
	return func(tb testing.TB) gormstore.DatabaseURL {
		tb.Helper()
		if !held.TryLock() {
			tb.Fatal("two subtests at once ask for the suite's one PostgreSQL database")
		}
		tb.Cleanup(held.Unlock)
		if err := db.Exec(empty).Error; err != nil {
			tb.Fatalf("empty the suite's database: %v", err)
		}
		return u
	}
}

// emptyStatement returns the statement that deletes every row of every
// table of db's PostgreSQL schema but the migrations' record: statements
// sent together without parameters, as one simple query, which PostgreSQL
// runs as one transaction. Referencing tables go before the tables they
// reference, so that no foreign key refuses a deletion whatever its
// action. The audit log's append-only trigger refuses every DELETE, so the
// transaction disables it and enables it again; no other session can see
// it disabled.
func emptyStatement(t *testing.T, db *gorm.DB) string {
	t.Helper()
	var tables []string
	if err := db.Raw(`SELECT tablename FROM pg_tables
WHERE schemaname = current_schema() AND tablename <> 'goose_db_version' ORDER BY tablename`).Scan(&tables).Error; err != nil {
		t.Fatal(err)
	}
	var refs []struct{ Child, Parent string }
	if err := db.Raw(`SELECT conrelid::regclass::text AS child, confrelid::regclass::text AS parent
FROM pg_constraint WHERE contype = 'f' AND conrelid <> confrelid`).Scan(&refs).Error; err != nil {
		t.Fatal(err)
	}
	// Each round takes the tables no remaining table references.
	var order []string
	done := map[string]bool{}
	for len(order) < len(tables) {
		before := len(order)
		for _, table := range tables {
			if done[table] {
				continue
			}
			referenced := false
			for _, r := range refs {
				referenced = referenced || r.Parent == table && !done[r.Child]
			}
			if !referenced {
				done[table] = true
				order = append(order, table)
			}
		}
		if len(order) == before {
			t.Fatalf("the foreign keys among %v form a cycle", tables)
		}
	}
	var b strings.Builder
	b.WriteString("ALTER TABLE audit_log DISABLE TRIGGER USER; ")
	for _, table := range order {
		b.WriteString("DELETE FROM " + table + "; ")
	}
	b.WriteString("ALTER TABLE audit_log ENABLE TRIGGER USER")
	return b.String()
}
