package framework

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/harness"
)

// A large organization, on the SQL stores: members are seeded straight
// through the storage port (ports.OrganizationRepository.AddMember) on a
// second pool to the server's database, as signing up ten thousand users
// over HTTP would take minutes. The memory store cannot be seeded from here
// (InitializeMemory keeps its tables private).

// seedOrgMembers adds n members (with their users) to org through the
// storage ports, joining one millisecond apart after start, in transactions
// of seedBatch members: each AddMember is then a savepoint instead of a
// commit. Not all in one: every member added updates the organization's row
// (its member_count), and on PostgreSQL the versions one transaction leaves
// of a row cannot be pruned before it ends, so each update of the row would
// walk all those before it, and the seeding would slow down with every
// member.
func seedOrgMembers(tb testing.TB, db *gorm.DB, org domain.OrganizationID, n int, start time.Time) {
	tb.Helper()
	const seedBatch = 50
	// A batch is one transaction, and the store gives a transaction 5 s as
	// a whole, as a request's: on two saturated cores batches of 250 members
	// took longer now and then (CI saw database.unavailable), so a batch is
	// 50.
	ctx := tb.Context()
	for first := 0; first < n; first += seedBatch {
		err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			users, orgs := gormstore.NewUserRepository(tx), gormstore.NewOrganizationRepository(tx)
			for i := first; i < min(first+seedBatch, n); i++ {
				at := start.Add(time.Duration(i+1) * time.Millisecond)
				email, err := domain.NewEmail(fmt.Sprintf("member%05d@example.com", i))
				if err != nil {
					return err
				}
				u, err := domain.NewUser(domain.UserID(fmt.Sprintf("seed-user-%05d", i)), fmt.Sprintf("Member %d", i), email, at)
				if err != nil {
					return err
				}
				if err := users.Create(ctx, u); err != nil {
					return fmt.Errorf("user %d: %w", i, err)
				}
				m, err := domain.NewMember(domain.MemberID(fmt.Sprintf("seed-member-%05d", i)), org, u.ID(), []domain.OrgRole{domain.OrgRoleMember}, at)
				if err != nil {
					return err
				}
				if err := orgs.AddMember(ctx, m); err != nil {
					return fmt.Errorf("member %d: %w", i, err)
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	if gormstore.DialectOf(db) == gormstore.DialectPostgres {
		_ = db.Exec("ANALYZE members").Error
		_ = db.Exec("ANALYZE users").Error
	}
}

// Ensure list-members over an organization of 10,000 members: pages of the
// largest size are disjoint, in joining order, each with total 10000, and
// together hold every member once. Correctness only; BenchmarkListMembers
// measures the cost. Seeding takes a few seconds on SQLite and about half a
// minute on PostgreSQL (one savepoint and organization lock per member), so
// -short skips it.
// It keeps a fresh application: it seeds at scale and measures.
func TestOrganization_scale_list_members(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("seeds 10,000 members")
	}
	const size = 10_000
	harness.ForStores(t, harness.SQLOnly(harness.StoresThatMatter), harness.FwQuick, func(t *testing.T, app *harness.App) {
		owner := app.NewClient(t)
		harness.MustSignUp(t, owner, "Owner", "owner@example.com", harness.OrgPassword)
		created := harness.MustCreateOrg(t, owner, "Big", "big")
		org, _ := created["id"].(string)
		ownerJoined, err := time.Parse(time.RFC3339, created["createdAt"].(string))
		if err != nil {
			t.Fatal(err)
		}
		seedOrgMembers(t, harness.MustDB(t, app), domain.OrganizationID(org), size-1, ownerJoined)

		seen := map[string]bool{}
		var last string
		for offset := 0; offset < size; offset += 1000 {
			page := harness.MustOK(t, owner.Get(fmt.Sprintf("%s?limit=1000&offset=%d", harness.OrgPath("list-members"), offset)))
			if page["total"] != float64(size) {
				t.Fatalf("offset %d: total = %v, want %d", offset, page["total"], size)
			}
			members, _ := page["members"].([]any)
			if len(members) != 1000 {
				t.Fatalf("offset %d: %d members, want 1000", offset, len(members))
			}
			for _, m := range members {
				mm := m.(map[string]any)
				id, _ := mm["id"].(string)
				if seen[id] {
					t.Fatalf("member %s on two pages", id)
				}
				seen[id] = true
				if created, _ := mm["createdAt"].(string); created < last {
					t.Fatalf("member %s joined %s, before the previous one (%s)", id, created, last)
				} else {
					last = created
				}
				if u, _ := mm["user"].(map[string]any); u["id"] != mm["userId"] {
					t.Fatalf("member %v has another user", mm)
				}
			}
		}
		if len(seen) != size {
			t.Fatalf("pages held %d members, want %d", len(seen), size)
		}
		if ms := harness.MustOK(t, owner.Get(harness.OrgPath("list-members")+"?offset=10000"))["members"].([]any); len(ms) != 0 {
			t.Fatalf("page past the end has %d members", len(ms))
		}
		// Newest first starts with the last seeded member and ends with the owner.
		newest := harness.MustOK(t, owner.Get(harness.OrgPath("list-members")+"?sortDirection=desc&limit=1"))["members"].([]any)
		if newest[0].(map[string]any)["id"] != fmt.Sprintf("seed-member-%05d", size-2) {
			t.Fatalf("newest member = %v", newest[0])
		}
		oldest := harness.MustOK(t, owner.Get(harness.OrgPath("list-members")+"?sortDirection=desc&limit=1&offset=9999"))["members"].([]any)
		if oldest[0].(map[string]any)["role"] != "owner" {
			t.Fatalf("oldest member = %v, want the owner", oldest[0])
		}
		// get-full-organization lists the first 100 only.
		if ms := harness.MustOK(t, owner.Get(harness.OrgPath("get-full-organization")))["members"].([]any); len(ms) != 100 {
			t.Fatalf("get-full-organization has %d members, want 100", len(ms))
		}
	})
}

// BenchmarkListMembers measures one list-members page of 100 in an
// organization of 1k and of 10k members: the first page, the last page by
// offset, and the last page by cursor (cursor-deep: the nextCursor of the
// page before it). The first and the cursor page should cost the same at
// both sizes; the last page by offset pays for the members it skips.
//
//	go test -run '^$' -bench ListMembers -benchmem ./test/
func BenchmarkListMembers(b *testing.B) {
	for _, s := range []harness.Store{harness.StoreSQLite, harness.StorePostgres} {
		b.Run("store="+string(s), func(b *testing.B) {
			for _, n := range []int{1_000, 10_000} {
				app := harness.MustStartBench(b, s)
				cookie := app.MustSignUp(b)
				org := app.MustCreateOrg(b, cookie)
				seedOrgMembers(b, app.DB, domain.OrganizationID(org), n-1, time.Now())
				list := func(b *testing.B, query string) *httptest.ResponseRecorder {
					r := httptest.NewRequest(http.MethodGet, harness.OrgPath("list-members")+"?organizationId="+org+"&limit=100&"+query, nil)
					r.Header.Set("Cookie", app.Cookie+"="+cookie)
					w := app.Serve(r)
					if w.Code != http.StatusOK {
						b.Fatalf("list-members?%s: status %d: %s", query, w.Code, w.Body)
					}
					return w
				}
				// The cursor of the last page: where the page before it ends.
				var before struct {
					NextCursor *string `json:"nextCursor"`
				}
				if err := json.Unmarshal(list(b, fmt.Sprintf("offset=%d", n-200)).Body.Bytes(), &before); err != nil || before.NextCursor == nil {
					b.Fatalf("the page before the last has no nextCursor (%v)", err)
				}
				for _, page := range []struct {
					name, query string
				}{
					{"first", "offset=0"},
					{"last", fmt.Sprintf("offset=%d", n-100)},
					{"cursor-deep", "cursor=" + url.QueryEscape(*before.NextCursor)},
				} {
					b.Run(fmt.Sprintf("members=%s/page=%s", harness.BenchSizeName(n), page.name), func(b *testing.B) {
						var got struct {
							Members    []json.RawMessage `json:"members"`
							Total      int               `json:"total"`
							NextCursor *string           `json:"nextCursor"`
						}
						if err := json.Unmarshal(list(b, page.query).Body.Bytes(), &got); err != nil || len(got.Members) != 100 || got.Total != n {
							b.Fatalf("page %s: %d members of %d (%v), want 100 of %d", page.name, len(got.Members), got.Total, err, n)
						}
						if page.name != "first" && got.NextCursor != nil {
							b.Fatalf("page %s is the last, yet has a nextCursor", page.name)
						}
						b.ReportAllocs()
						for b.Loop() {
							list(b, page.query)
						}
					})
				}
			}
		})
	}
}
