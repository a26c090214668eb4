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

// TestWebhookQueries_use_indexes proves that the senders' claim, which
// every replica runs every second, finds the due deliveries through the
// partial index webhook_deliveries_due_idx (pending deliveries only), and
// that an endpoint's deliveries page through
// webhook_deliveries_endpoint_created_idx or its status twin, with their
// messages and latest attempts by primary key: no table is scanned. The
// statements explained are the ones the store ran, captured as it ran, on
// 20,000 deliveries (a tenth on SQLite: planRows) of which one in twenty is
// pending, with fresh statistics.
func TestWebhookQueries_use_indexes(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		n := planRows(dialect, 20_000)
		seedWebhooks(t, db, n)
		capture := captureStatements(db)
		q := gormstore.NewWebhookQueue(db)
		ctx := context.Background()

		tests := []struct {
			name string
			run  func(t *testing.T)
			// verb picks the statement to explain among those run.
			verb             string
			sqlite, postgres []string
		}{
			{"claim", func(t *testing.T) {
				c, err := q.Claim(ctx, webhookSeedTime.Add(time.Duration(n)*time.Second), time.Minute, 50)
				if err != nil || len(c) != 50 {
					t.Fatalf("Claim = %d deliveries, %v; want 50", len(c), err)
				}
			}, "UPDATE", []string{"webhook_deliveries_due_idx (next_attempt_at<?)"}, []string{"webhook_deliveries_due_idx"}},
			{"list_first_page", func(t *testing.T) {
				mustPage(t, q, ports.WebhookDeliveryQuery{Endpoint: "ep-3", Limit: 20})
			}, "SELECT", []string{"webhook_deliveries_endpoint_created_idx (endpoint_id=?)"},
				[]string{"webhook_deliveries_endpoint_created_idx", "webhook_messages_pkey", "webhook_attempts_pkey"}},
			{"list_after_cursor", func(t *testing.T) {
				mustPage(t, q, ports.WebhookDeliveryQuery{Endpoint: "ep-3", Limit: 20,
					After: &domain.Position{At: webhookSeedTime.Add(time.Duration(n/2) * time.Second), ID: seededMessageID(n / 2)}})
			}, "SELECT", []string{"webhook_deliveries_endpoint_created_idx (endpoint_id=? AND (created_at,message_id)<(?,?))"},
				[]string{"webhook_deliveries_endpoint_created_idx", "webhook_messages_pkey", "webhook_attempts_pkey"}},
			{"list_by_status", func(t *testing.T) {
				mustPage(t, q, ports.WebhookDeliveryQuery{Endpoint: "ep-3", Status: domain.WebhookFailed, Limit: 20})
			}, "SELECT", []string{"webhook_deliveries_endpoint_status_idx (endpoint_id=? AND status=?)"},
				[]string{"webhook_deliveries_endpoint_status_idx", "webhook_messages_pkey", "webhook_attempts_pkey"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := capture.first(t, tt.verb, func() { tt.run(t) })
				plan := explainStatement(t, db, dialect, s)
				t.Logf("query:\n%s\nplan:\n%s", s.sql, plan)
				if dialect == gormstore.DialectSQLite {
					assertPlanUses(t, plan, tt.sqlite...)
					for _, line := range strings.Split(plan, "\n") {
						// The claim's subquery is a list of keys SQLite
						// builds; the table itself is never scanned.
						if l := strings.TrimSpace(line); strings.HasPrefix(l, "SCAN") && !strings.HasPrefix(l, "SCAN CONSTANT ROW") {
							t.Errorf("the query scans: %s", line)
						}
					}
					if strings.Contains(plan, "TEMP B-TREE FOR ORDER BY") && tt.verb == "SELECT" {
						t.Errorf("the page is sorted, not read in index order")
					}
					return
				}
				assertPlanUses(t, plan, tt.postgres...)
				assertNoSeqScan(t, plan)
				if tt.verb == "SELECT" && strings.Contains(plan, "Sort") {
					t.Errorf("the page is sorted, not read in index order")
				}
			})
		}
	})
}

func mustPage(t *testing.T, q *gormstore.WebhookQueue, f ports.WebhookDeliveryQuery) {
	t.Helper()
	list, next, err := q.ListDeliveries(context.Background(), f)
	if err != nil || len(list) != f.Limit || next == nil {
		t.Fatalf("ListDeliveries(%+v) = %d, %v: the seed does not exercise it", f, len(list), err)
	}
}

// first runs fn and returns the first statement it ran that starts with
// verb.
func (c *statementCapture) first(t *testing.T, verb string, fn func()) statement {
	t.Helper()
	c.mu.Lock()
	c.seen = nil
	c.mu.Unlock()
	fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.seen {
		if strings.HasPrefix(strings.TrimSpace(s.sql), verb) {
			return s
		}
	}
	t.Fatalf("no %s statement among %d", verb, len(c.seen))
	return statement{}
}

// The seed of the webhook tests: ten endpoints ep-0 … ep-9; message i,
// msg-<i>, created i seconds after webhookSeedTime, delivered to endpoint
// ep-<i mod 10>. One delivery in twenty is pending, due i seconds after the
// seed time; of the rest, a third of ep-3's failed and the others succeeded, each
// with one attempt.
var webhookSeedTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func seededMessageID(i int) string { return fmt.Sprintf("msg-%08d", i) }

func seedWebhooks(tb testing.TB, db *gorm.DB, n int) {
	tb.Helper()
	tx := beginSeed(tb, db)
	defer tx.rollback()
	var endpoints [][]any
	for e := range 10 {
		endpoints = append(endpoints, []any{fmt.Sprintf("ep-%d", e), "https://hooks.example.com/", "[]", true, []byte("sealed"), webhookSeedTime, webhookSeedTime})
	}
	tx.insert("webhook_endpoints", []string{"id", "url", "event_types", "enabled", "sealed_secret", "created_at", "updated_at"}, endpoints)
	const batch = 1000
	var msgs, deliveries, attempts [][]any
	flush := func() {
		tx.insert("webhook_messages", []string{"id", "type", "payload", "created_at"}, msgs)
		tx.insert("webhook_deliveries", []string{"endpoint_id", "message_id", "status", "attempts", "next_attempt_at", "created_at", "last_attempt_id"}, deliveries)
		if len(attempts) > 0 {
			tx.insert("webhook_attempts", []string{"id", "endpoint_id", "message_id", "attempted_at", "status_code", "latency_ms"}, attempts)
		}
		msgs, deliveries, attempts = msgs[:0], deliveries[:0], attempts[:0]
	}
	for i := range n {
		at := webhookSeedTime.Add(time.Duration(i) * time.Second)
		id, ep := seededMessageID(i), fmt.Sprintf("ep-%d", i%10)
		msgs = append(msgs, []any{id, "user.created", []byte(`{"type":"user.created"}`), at})
		switch {
		case i%20 == 7:
			deliveries = append(deliveries, []any{ep, id, "pending", 0, at, at, nil})
		default:
			status, code := "succeeded", 200
			if i%30 == 3 {
				status, code = "failed", 500
			}
			aid := fmt.Sprintf("att-%08d", i)
			deliveries = append(deliveries, []any{ep, id, status, 1, nil, at, aid})
			attempts = append(attempts, []any{aid, ep, id, at, code, 12})
		}
		if len(msgs) == batch || i == n-1 {
			flush()
		}
	}
	tx.commit()
	for _, table := range []string{"webhook_endpoints", "webhook_messages", "webhook_deliveries", "webhook_attempts"} {
		analyze(db, table)
	}
}
