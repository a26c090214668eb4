package gormstore_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// overviewClock is the benchmark's now: after every seeded row.
type overviewClock struct{ now time.Time }

func (c overviewClock) Now() time.Time { return c.now }

// BenchmarkOverview measures the administrators' overview
// (admin.Dashboard) with 1,000 and 100,000 users: as many sessions
// (half of them expired), a tenth as many organizations, a hundredth as
// many domains, as many audit entries, and 90 days of hourly sign-in
// counts. The overview counts users, organizations and active sessions,
// which on PostgreSQL reads every counted row (from an index where one
// serves): compare rows=1000 with rows=100000. Each count is measured
// alone too.
//
//	go test -run '^$' -bench Overview -benchtime 200x ./adapters/gormstore/
func BenchmarkOverview(b *testing.B) {
	atScales(b, func(b *testing.B, db *gorm.DB, dialect gormstore.Dialect, rows int) {
		now := seedOverview(b, db, dialect, rows)
		ctx := context.Background()
		users, orgs := gormstore.NewUserRepository(db), gormstore.NewOrganizationRepository(db)
		domains, sessions := gormstore.NewDomainRepository(db), gormstore.NewSessionRepository(db)
		stats := gormstore.NewSignInStats(db)
		h := admin.NewDashboard(users, orgs, domains, sessions, stats, gormstore.NewAuditLog(db),
			overviewClock{now}, domain.PlatformAdmins{UserIDs: []domain.UserID{"user-00000000"}})
		operator, err := users.Get(ctx, "user-00000000")
		if err != nil {
			b.Fatal(err)
		}
		b.Run("overview", func(b *testing.B) {
			for b.Loop() {
				o, err := h.Overview(ctx, operator)
				if err != nil {
					b.Fatal(err)
				}
				if o.Users != rows || o.ActiveSessions != rows/2 || len(o.RecentAudit) != admin.OverviewAuditEntries {
					b.Fatalf("%d users, %d active sessions, %d audit entries", o.Users, o.ActiveSessions, len(o.RecentAudit))
				}
			}
		})
		for name, count := range map[string]func() error{
			"count_users":           func() error { _, err := users.Count(ctx); return err },
			"count_organizations":   func() error { _, err := orgs.Count(ctx); return err },
			"count_domains":         func() error { _, err := domains.CountByStatus(ctx); return err },
			"count_active_sessions": func() error { _, err := sessions.CountActive(ctx, now); return err },
			"sign_ins_30_days": func() error { // the overview's one read of them
				_, err := stats.Series(ctx, now.Add(-30*24*time.Hour), now, ports.StepHour)
				return err
			},
		} {
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					if err := count(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}

// seedOverview fills the tables the overview reads for n users and
// returns a now after every row.
func seedOverview(tb testing.TB, db *gorm.DB, dialect gormstore.Dialect, n int) time.Time {
	tb.Helper()
	seedPageUsers(tb, db, dialect, n)
	seedOrganizations(tb, db, n/10)
	seedDomains(tb, db, n/100)
	now := domain.Timestamp(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	// Session i of user i: the even ones live, the odd ones expired.
	sessions := `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO sessions (id, user_id, token_hash, remember_me, ip_address, user_agent, expires_at, created_at, updated_at)
SELECT printf('session-%08d', i), printf('user-%08d', i), printf('hash-%038d', i), true, '203.0.113.7', 'bench',
 CASE WHEN i % 2 = 0 THEN ? ELSE ? END, ?, ? FROM s`
	args := []any{n, now.Add(24 * time.Hour), now.Add(-time.Hour), now.Add(-48 * time.Hour), now.Add(-48 * time.Hour)}
	audit := `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO audit_log (id, occurred_at, actor_type, actor_id, action, target_type, target_id, outcome)
SELECT printf('audit-%08d', i), strftime('%Y-%m-%d %H:%M:%f+00:00', ?, '-' || i || ' seconds'),
 'user', 'actor-' || (i % 8), 'action-' || (i % 5), 'user', 'target-' || (i % 10), 'success' FROM s`
	auditArgs := []any{n, now.Format("2006-01-02 15:04:05")}
	// 90 days of hours, two outcomes each.
	counts := `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO sign_in_counts (hour, outcome, total)
SELECT strftime('%Y-%m-%d %H:%M:%S+00:00', ?, '-' || (i / 2) || ' hours'), CASE WHEN i % 2 = 0 THEN 'success' ELSE 'failure' END, 1 + i % 7 FROM s`
	countArgs := []any{90 * 24 * 2, now.Add(-time.Hour).Format("2006-01-02 15:04:05")}
	if dialect == gormstore.DialectPostgres {
		sessions = `INSERT INTO sessions (id, user_id, token_hash, remember_me, ip_address, user_agent, expires_at, created_at, updated_at)
SELECT 'session-' || lpad(i::text, 8, '0'), 'user-' || lpad(i::text, 8, '0'), 'hash-' || lpad(i::text, 38, '0'), true, '203.0.113.7', 'bench',
 CASE WHEN i % 2 = 0 THEN ?::timestamptz ELSE ?::timestamptz END, ?, ?
FROM generate_series(0, ?::int - 1) AS i`
		args = append(args[1:], n)
		audit = `INSERT INTO audit_log (id, occurred_at, actor_type, actor_id, action, target_type, target_id, outcome)
SELECT 'audit-' || lpad(i::text, 8, '0'), ?::timestamptz - i * interval '1 second',
 'user', 'actor-' || (i % 8), 'action-' || (i % 5), 'user', 'target-' || (i % 10), 'success'
FROM generate_series(0, ?::int - 1) AS i`
		auditArgs = []any{now, n}
		counts = `INSERT INTO sign_in_counts (hour, outcome, total)
SELECT ?::timestamptz - (i / 2) * interval '1 hour', CASE WHEN i % 2 = 0 THEN 'success' ELSE 'failure' END, 1 + i % 7
FROM generate_series(0, ?::int - 1) AS i`
		countArgs = []any{now.Add(-time.Hour), 90 * 24 * 2}
	}
	for _, s := range []struct {
		table string
		q     string
		args  []any
	}{{"sessions", sessions, args}, {"audit_log", audit, auditArgs}, {"sign_in_counts", counts, countArgs}} {
		if err := db.Exec(s.q, s.args...).Error; err != nil {
			tb.Fatalf("seed %s: %v", s.table, err)
		}
		analyze(db, s.table)
	}
	if dialect == gormstore.DialectPostgres {
		// As autovacuum would after a bulk load: the visibility map lets
		// the counts read the indexes alone.
		for _, t := range []string{"users", "organizations", "domains", "sessions"} {
			_ = db.Exec("VACUUM " + t).Error
		}
	}
	return now
}
