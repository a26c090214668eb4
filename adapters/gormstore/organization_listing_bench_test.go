package gormstore_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// BenchmarkOrganizationList measures a page of 20 organizations, newest
// first: the first page, and a page read from a cursor near the end of the
// list (the 200 oldest organizations follow it). Both are read by keyset
// through organizations_created_at_idx, so each should cost the same at
// rows=1000 and rows=100000, and the deep page as much as the first.
//
//	go test -run '^$' -bench OrganizationList -benchtime 2000x ./adapters/gormstore/
func BenchmarkOrganizationList(b *testing.B) {
	atScales(b, func(b *testing.B, db *gorm.DB, dialect gormstore.Dialect, rows int) {
		base := seedOrganizations(b, db, rows)
		repo := gormstore.NewOrganizationRepository(db)
		ctx := context.Background()
		deep := domain.Position{At: base.Add(200 * time.Second), ID: string(seededOrgID(200))}
		for _, bc := range []struct {
			name  string
			after *domain.Position
			first domain.OrganizationID
		}{
			{"first_page", nil, seededOrgID(rows - 1)},
			{"deep_cursor_page", &deep, seededOrgID(199)},
		} {
			b.Run(bc.name, func(b *testing.B) {
				for b.Loop() {
					page, err := repo.List(ctx, ports.OrganizationQuery{Limit: 20, After: bc.after})
					if err != nil {
						b.Fatal(err)
					}
					if len(page.Organizations) != 20 || page.Organizations[0].Organization.ID() != bc.first {
						b.Fatalf("page of %d starting at %v", len(page.Organizations), page.Organizations)
					}
				}
			})
		}
	})
}
