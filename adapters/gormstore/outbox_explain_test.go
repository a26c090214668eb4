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
	"github.com/gatehouse/gatehouse/ports"
)

// TestOutboxClaim_uses_indexes proves that a relay's claim reads only the
// messages it takes: the due messages of its topic through
// outbox_messages_topic_available_at_idx, in claim order with no sort, and
// each claimed row through the primary key. On PostgreSQL that is one
// statement (the UPDATE whose CTE locks the rows FOR UPDATE SKIP LOCKED);
// on SQLite a SELECT and an UPDATE in one immediate transaction. The
// statements explained are the ones the repository ran, captured as it ran,
// on 20,000 messages (a tenth on SQLite: planRows) with fresh statistics,
// half of them due.
func TestOutboxClaim_uses_indexes(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		n, batch := planRows(dialect, 20_000), 50
		seedOutbox(t, db, n)
		capture := captureStatements(db)
		outbox := gormstore.NewOutbox(db)
		now := outboxSeedTime.Add(time.Duration(n/2) * time.Second)

		capture.mu.Lock()
		capture.seen = nil
		capture.mu.Unlock()
		got, err := outbox.Claim(context.Background(), ports.OutboxEvents, now, time.Minute, batch)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != batch || got[0].ID != seededOutboxID(0) {
			t.Fatalf("Claim took %d messages starting at %v: the seed does not exercise it", len(got), got)
		}
		capture.mu.Lock()
		seen := capture.seen
		capture.mu.Unlock()

		switch dialect {
		case gormstore.DialectSQLite:
			if len(seen) != 2 {
				t.Fatalf("the claim ran %d statements, want a SELECT and an UPDATE", len(seen))
			}
			plan := explainStatement(t, db, dialect, seen[0])
			t.Logf("select:\n%s\nplan:\n%s", seen[0].sql, plan)
			assertPlanUses(t, plan, "outbox_messages_topic_available_at_idx (topic=? AND available_at<?)")
			assertNoSQLiteScan(t, plan)
			if strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("the due messages are sorted, not read in index order")
			}
			plan = explainStatement(t, db, dialect, seen[1])
			t.Logf("update:\n%s\nplan:\n%s", seen[1].sql, plan)
			assertPlanUses(t, plan, "sqlite_autoindex_outbox_messages_1 (id=?)")
			assertNoSQLiteScan(t, plan)
		default:
			if len(seen) != 1 {
				t.Fatalf("the claim ran %d statements, want one", len(seen))
			}
			if !strings.Contains(seen[0].sql, "FOR UPDATE SKIP LOCKED") {
				t.Errorf("the claim does not skip locked rows:\n%s", seen[0].sql)
			}
			plan := explainStatement(t, db, dialect, seen[0])
			t.Logf("claim:\n%s\nplan:\n%s", seen[0].sql, plan)
			assertPlanUses(t, plan, "outbox_messages_topic_available_at_idx", "outbox_messages_pkey")
			assertNoSeqScan(t, plan)
			if strings.Contains(plan, "Sort") || strings.Contains(plan, "Bitmap") {
				t.Errorf("the due messages are sorted or gathered, not read in index order")
			}
		}
	})
}

// The seed of the outbox test: message i is msg-<i>, one in four of them
// mail and the rest events, created and due at outboxSeedTime plus i
// seconds, so that messages become due in the order of their ids.
var outboxSeedTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func seededOutboxID(i int) string { return fmt.Sprintf("msg-%08d", i) }

// seedOutbox adds n messages in batches of 1,000 rows, in one transaction
// (seedTx), and refreshes the statistics.
func seedOutbox(tb testing.TB, db *gorm.DB, n int) {
	tb.Helper()
	tx := beginSeed(tb, db)
	defer tx.rollback()
	cols := []string{"id", "topic", "type", "payload", "created_at", "available_at", "attempts", "last_error"}
	const batch = 1000
	rows := make([][]any, 0, batch)
	for i := range n {
		topic := string(ports.OutboxEvents)
		if i%4 == 3 {
			topic = string(ports.OutboxMail)
		}
		at := outboxSeedTime.Add(time.Duration(i) * time.Second)
		rows = append(rows, []any{seededOutboxID(i), topic, "user.created", []byte(`{"type":"user.created"}`), at, at, 0, ""})
		if len(rows) == batch || i == n-1 {
			tx.insert("outbox_messages", cols, rows)
			rows = rows[:0]
		}
	}
	tx.commit()
	analyze(db, "outbox_messages")
}
