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

// TestDomainQueries_use_indexes proves that every read of the domain store
// runs one statement that reaches its rows through an index, in the order
// asked, with no table scanned and no rows sorted: Get through the primary
// key, GetByHostname through domains_hostname_key, each page of List through
// the index whose leading columns are its filter's equality followed by
// (created_at, id), and ClaimDue through the partial index on
// next_check_at, then each claimed row through the primary key.
// The statements explained are the ones the repository ran, captured as it
// ran, on 20,000 domains (a tenth on SQLite: planRows) with fresh
// statistics.
func TestDomainQueries_use_indexes(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		n := planRows(dialect, 20_000)
		seedDomains(t, db, n)
		capture := captureStatements(db)
		repo := gormstore.NewDomainRepository(db)
		ctx := context.Background()
		cursor := &domain.Position{At: seededDomainCreatedAt(n / 2), ID: seededDomainID(n / 2)}

		// list runs q and checks its first domain, first.
		list := func(q ports.DomainQuery, first int) func(t *testing.T) {
			return func(t *testing.T) {
				page, err := repo.List(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Domains) != q.Limit || page.Next == nil {
					t.Fatalf("List(%+v) returned %d domains: the seed does not exercise it", q, len(page.Domains))
				}
				if got := page.Domains[0].ID(); got != domain.DomainID(seededDomainID(first)) {
					t.Fatalf("List(%+v) starts at %s, want %s", q, got, seededDomainID(first))
				}
			}
		}
		tests := []struct {
			name string
			run  func(t *testing.T)
			// sqlite and postgres name the index each dialect must read.
			sqlite, postgres string
			// walk allows SQLite's "SCAN domains USING INDEX …" with no
			// search term: the first page, which reads the index from its
			// newest end and stops after the page (the LIMIT).
			walk bool
			// byKey also requires the primary key, through which an
			// UPDATE reaches the rows its subquery chose.
			byKey bool
		}{
			{"get", func(t *testing.T) {
				if d, err := repo.Get(ctx, domain.DomainID(seededDomainID(1234))); err != nil || d.Hostname() != seededDomainHost(1234) {
					t.Fatalf("Get = %v, %v", d, err)
				}
			}, "sqlite_autoindex_domains_1 (id=?)", "domains_pkey", false, false},
			{"get_by_hostname", func(t *testing.T) {
				if d, err := repo.GetByHostname(ctx, seededDomainHost(1321)); err != nil || d.ID() != domain.DomainID(seededDomainID(1321)) {
					t.Fatalf("GetByHostname = %v, %v", d, err)
				}
			}, "domains_hostname_key (hostname=?)", "domains_hostname_key", false, false},
			{"list_first_page", list(ports.DomainQuery{Limit: 20}, n-1),
				"domains_created_at_idx", "domains_created_at_idx", true, false},
			{"list_after_cursor", list(ports.DomainQuery{Limit: 20, After: cursor}, n/2-1),
				"domains_created_at_idx ((created_at,id)<(?,?))", "domains_created_at_idx", false, false},
			{"list_by_organization", list(ports.DomainQuery{OrganizationID: "org-07", Limit: 20}, n-13),
				"domains_organization_id_created_at_idx (organization_id=?)", "domains_organization_id_created_at_idx", false, false},
			{"list_by_organization_after_cursor", list(ports.DomainQuery{OrganizationID: "org-07", Limit: 20, After: cursor}, n/2-13),
				"domains_organization_id_created_at_idx (organization_id=? AND (created_at,id)<(?,?))", "domains_organization_id_created_at_idx", false, false},
			{"list_by_organization_and_status", list(ports.DomainQuery{OrganizationID: "org-07", Status: domain.DomainPending, Limit: 20}, n-13),
				"domains_organization_id_created_at_idx (organization_id=?)", "domains_organization_id_created_at_idx", false, false},
			{"list_by_status_after_cursor", list(ports.DomainQuery{Status: domain.DomainFailed, Limit: 20, After: cursor}, n/2-1),
				"domains_status_created_at_idx (status=? AND (created_at,id)<(?,?))", "domains_status_created_at_idx", false, false},
			{"claim_due", func(t *testing.T) {
				due, err := repo.ClaimDue(ctx, seededDomainNow(n), time.Minute, 100)
				if err != nil || len(due) != 100 {
					t.Fatalf("ClaimDue = %d domains, %v; want 100", len(due), err)
				}
			}, "domains_next_check_at_idx (next_check_at>? AND next_check_at<?)", "domains_next_check_at_idx", false, true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				q := capture.one(t, func() { tt.run(t) })
				plan := explainStatement(t, db, dialect, q)
				t.Logf("query:\n%s\nplan:\n%s", q.sql, plan)
				switch dialect {
				case gormstore.DialectSQLite:
					assertPlanUses(t, plan, tt.sqlite)
					if tt.byKey {
						assertPlanUses(t, plan, "sqlite_autoindex_domains_1 (id=?)")
					}
					if !tt.walk || strings.TrimSpace(plan) != "SCAN domains USING INDEX "+tt.sqlite {
						assertNoSQLiteScan(t, plan)
					}
					if strings.Contains(plan, "TEMP B-TREE") {
						t.Errorf("the rows are sorted, not read in index order")
					}
				default:
					assertPlanUses(t, plan, tt.postgres)
					if tt.byKey {
						assertPlanUses(t, plan, "domains_pkey")
					}
					assertNoSeqScan(t, plan)
					if strings.Contains(plan, "Sort") || strings.Contains(plan, "Bitmap") {
						t.Errorf("the rows are sorted or gathered, not read in index order")
					}
				}
			})
		}
	})
}

// The seed of the domain tests and benchmarks: domain i is dom-<i>, with
// hostname host-<i>.example.com, created at seededDomainCreatedAt(i) (two
// domains each second, so ties are broken by id), in organization
// org-<i mod 20> or, one in five, none. Seven in ten are verified, two
// pending and one failed (no check scheduled); the checks of the others are
// spread over n seconds in an order unrelated to their ids.
var domainSeedTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func seededDomainID(i int) string   { return fmt.Sprintf("dom-%08d", i) }
func seededDomainHost(i int) string { return fmt.Sprintf("host-%08d.example.com", i) }

func seededDomainCreatedAt(i int) time.Time {
	return domainSeedTime.Add(time.Duration(i/2)*time.Second + 123456*time.Microsecond)
}

// seededDomainNow is a time at which about half the scheduled domains of a
// seed of n are due.
func seededDomainNow(n int) time.Time { return domainSeedTime.Add(time.Duration(n) * time.Second) }

// seedDomains adds 20 organizations and n domains in batches of 1,000 rows,
// in one transaction (seedTx), and refreshes the statistics.
func seedDomains(tb testing.TB, db *gorm.DB, n int) {
	tb.Helper()
	tx := beginSeed(tb, db)
	defer tx.rollback()
	orgCols := []string{"id", "name", "slug", "created_at", "updated_at"}
	var orgRows [][]any
	for o := range 20 {
		id := fmt.Sprintf("org-%02d", o)
		orgRows = append(orgRows, []any{id, "Org " + id, id, domainSeedTime, domainSeedTime})
	}
	tx.insert("organizations", orgCols, orgRows)

	cols := []string{"id", "hostname", "organization_id", "status", "token", "records", "attempts",
		"last_checked_at", "next_check_at", "window_start", "missing_since", "verified_at", "failed_at",
		"manual_reason", "created_at", "updated_at"}
	const batch = 1000
	rows := make([][]any, 0, batch)
	for i := range n {
		created := seededDomainCreatedAt(i)
		checked := created.Add(time.Hour)
		var org any
		if i%5 != 0 {
			org = fmt.Sprintf("org-%02d", i%20)
		}
		token := fmt.Sprintf("%032x", i)
		records := fmt.Sprintf(`[{"type":"TXT","name":"_gatehouse-challenge.%[1]s","value":"gatehouse-verification=%[2]s","required":true,`+
			`"status":"found","observed":["gatehouse-verification=%[2]s"],"lastCheckedAt":%[3]q},`+
			`{"type":"CNAME","name":"%[1]s","value":"edge.gatehouse.example","required":true,"status":"found",`+
			`"observed":["edge.gatehouse.example."],"lastCheckedAt":%[3]q}]`, seededDomainHost(i), token, checked.Format(time.RFC3339Nano))
		status, attempts := "verified", 0
		next := any(domainSeedTime.Add(time.Duration((i*7919)%n) * time.Second))
		var verified, failed any = checked, nil
		switch i % 10 {
		case 7, 8:
			status, attempts, verified = "pending", 3, nil
		case 9:
			status, attempts, verified, failed, next = "failed", 12, nil, checked, nil
		}
		rows = append(rows, []any{seededDomainID(i), seededDomainHost(i), org, status, token, records, attempts,
			checked, next, created, nil, verified, failed, "", created, checked})
		if len(rows) == batch || i == n-1 {
			tx.insert("domains", cols, rows)
			rows = rows[:0]
		}
	}
	tx.commit()
	analyze(db, "organizations")
	analyze(db, "domains")
}
