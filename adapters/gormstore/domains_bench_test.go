package gormstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// BenchmarkDomainLookup measures every read of the domain store at 1,000
// and 100,000 domains (see seedDomains): Get by id, GetByHostname, the
// first page of List, a page deep in the listing (after a cursor near the
// oldest domain), a page of one organization's domains after a cursor, and
// the verifier's Due batch. Each reads through an index (see
// TestDomainQueries_use_indexes), so each should cost the same at both
// sizes.
//
//	go test -run '^$' -bench DomainLookup -benchtime 2000x ./adapters/gormstore/
func BenchmarkDomainLookup(b *testing.B) {
	for _, dialect := range []gormstore.Dialect{gormstore.DialectSQLite, gormstore.DialectPostgres} {
		for _, rows := range []int{1_000, 100_000} {
			b.Run(fmt.Sprintf("dialect=%s/rows=%d", dialect, rows), func(b *testing.B) {
				u := gormtest.SQLiteURL(b)
				if dialect == gormstore.DialectPostgres {
					u = gormtest.PostgresURL(b)
				}
				db := gormtest.Open(b, u)
				seedDomains(b, db, rows)
				benchDomainReads(b, gormstore.NewDomainRepository(db), rows)
			})
		}
	}
}

func benchDomainReads(b *testing.B, repo *gormstore.DomainRepository, rows int) {
	ctx := context.Background()
	// A cursor at the 50th domain from the oldest end: the page after it
	// is as deep as the listing goes.
	deep := &domain.Position{At: seededDomainCreatedAt(50), ID: seededDomainID(50)}
	page := func(q ports.DomainQuery) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				p, err := repo.List(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Domains) != q.Limit {
					b.Fatalf("page of %d domains, want %d", len(p.Domains), q.Limit)
				}
			}
		}
	}
	b.Run("op=get", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			id := domain.DomainID(seededDomainID(i * 7919 % rows))
			if d, err := repo.Get(ctx, id); err != nil || d.ID() != id {
				b.Fatalf("Get(%s) = %v, %v", id, d, err)
			}
		}
	})
	b.Run("op=get_by_hostname", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			host := seededDomainHost(i * 7919 % rows)
			if d, err := repo.GetByHostname(ctx, host); err != nil || d.Hostname() != host {
				b.Fatalf("GetByHostname(%s) = %v, %v", host, d, err)
			}
		}
	})
	b.Run("op=list_first_page", page(ports.DomainQuery{Limit: 20}))
	b.Run("op=list_deep_page", page(ports.DomainQuery{Limit: 20, After: deep}))
	// org-07 has 25 domains older than the 500th.
	b.Run("op=list_organization_deep_page", page(ports.DomainQuery{OrganizationID: "org-07", Limit: 20,
		After: &domain.Position{At: seededDomainCreatedAt(500), ID: seededDomainID(500)}}))
	b.Run("op=claim_due", func(b *testing.B) {
		// Each claim ends a millisecond on, when the next one runs, so the
		// queue never runs dry.
		for i := 0; b.Loop(); i++ {
			due, err := repo.ClaimDue(ctx, seededDomainNow(rows).Add(time.Duration(i)*time.Millisecond), time.Millisecond, 100)
			if err != nil || len(due) != 100 {
				b.Fatalf("ClaimDue = %d domains, %v; want 100", len(due), err)
			}
		}
	})
}
