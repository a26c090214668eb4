package conformance

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// organizationListingTests are the cases of OrganizationRepository.List, run
// by RunOrganizationRepository.
var organizationListingTests = []struct {
	name string
	fn   func(t *testing.T, s Stores)
}{
	{"list_of_an_empty_store_is_one_empty_page", testOrgListEmpty},
	{"list_is_newest_first_with_ids_in_byte_order", testOrgListOrder},
	{"list_pages_by_cursor_through_every_organization", testOrgListCursor},
	{"list_cursor_of_a_deleted_organization_still_places_the_page", testOrgListCursorDeleted},
	{"list_counts_the_members", testOrgListMemberCounts},
	{"list_refuses_a_bad_limit", testOrgListBadLimit},
	{"list_returns_copies", testOrgListCopies},
	{"list_keeps_the_organizations_whose_name_or_slug_contains_the_search", testOrgListContains},
}

// seedOrgListing creates organizations, each owned by user "lister":
// "old" first; "t-B", "t-_" and "t-a" created at one instant, a minute
// later (byte order: 'B' < '_' < 'a', which a locale's collation does not
// keep); "new" a minute after them. Newest first they are new, t-a, t-_,
// t-B, old.
func seedOrgListing(t *testing.T, s Stores) []domain.OrganizationID {
	t.Helper()
	mustCreateUsers(t, s, "lister")
	tie := baseTime.Add(time.Minute)
	for _, o := range []struct {
		id string
		at time.Time
	}{
		{"old", baseTime}, {"t-a", tie}, {"t-B", tie}, {"t-_", tie}, {"new", tie.Add(time.Minute)},
	} {
		mustCreateOrgAt(t, s, o.id, "lister", o.at)
	}
	return []domain.OrganizationID{"new", "t-a", "t-_", "t-B", "old"}
}

// mustCreateOrgAt creates organization id (slug: id lower-cased, with
// "_" as "u") owned by ownerID, who must exist, created at at.
func mustCreateOrgAt(t *testing.T, s Stores, id string, ownerID domain.UserID, at time.Time) *domain.Organization {
	t.Helper()
	slug := []byte(id)
	for i, c := range slug {
		switch {
		case c >= 'A' && c <= 'Z':
			slug[i] = c + 'a' - 'A'
		case c == '_':
			slug[i] = 'u'
		}
	}
	o := mustOrg(t, id, string(slug)+"-x", at)
	m := mustMember(t, id+"-"+string(ownerID), o.ID(), ownerID, rolesOwner, at)
	if err := s.Organizations.Create(context.Background(), o, m); err != nil {
		t.Fatalf("Create organization %s: %v", id, err)
	}
	return o
}

// mustListOrgs returns the ids of one page and its next position, checking
// that the next position is the page's last organization exactly when set.
func mustListOrgs(t *testing.T, s Stores, q ports.OrganizationQuery) ([]domain.OrganizationID, *domain.Position) {
	t.Helper()
	page, err := s.Organizations.List(context.Background(), q)
	if err != nil {
		t.Fatalf("List %+v: %v", q, err)
	}
	ids := make([]domain.OrganizationID, 0, len(page.Organizations))
	for _, oc := range page.Organizations {
		ids = append(ids, oc.Organization.ID())
	}
	if page.Next != nil {
		last := page.Organizations[len(page.Organizations)-1].Organization
		if page.Next.ID != string(last.ID()) || !page.Next.At.Equal(last.CreatedAt()) {
			t.Fatalf("List %+v: next = %+v, want the position of %s", q, *page.Next, describeOrg(last))
		}
	}
	return ids, page.Next
}

// walkOrgsByCursor reads every page of limit and returns the ids in order,
// failing if it takes more than max pages.
func walkOrgsByCursor(t *testing.T, s Stores, limit, max int) []domain.OrganizationID {
	t.Helper()
	var all []domain.OrganizationID
	q := ports.OrganizationQuery{Limit: limit}
	for range max + 1 {
		ids, next := mustListOrgs(t, s, q)
		all = append(all, ids...)
		if next == nil {
			return all
		}
		if len(ids) != limit {
			t.Fatalf("a page of %d before the last holds %d", limit, len(ids))
		}
		q.After = next
	}
	t.Fatalf("more than %d pages of %d", max, limit)
	return nil
}

func testOrgListEmpty(t *testing.T, s Stores) {
	ids, next := mustListOrgs(t, s, ports.OrganizationQuery{Limit: 10})
	if len(ids) != 0 || next != nil {
		t.Fatalf("List of an empty store = %v, next %v", ids, next)
	}
}

func testOrgListOrder(t *testing.T, s Stores) {
	want := seedOrgListing(t, s)
	if got, next := mustListOrgs(t, s, ports.OrganizationQuery{Limit: 10}); !slices.Equal(got, want) || next != nil {
		t.Fatalf("List = %v (next %v), want %v and no next page", got, next, want)
	}
	// A full last page has no next position either.
	if got, next := mustListOrgs(t, s, ports.OrganizationQuery{Limit: len(want)}); !slices.Equal(got, want) || next != nil {
		t.Fatalf("List(limit %d) = %v (next %v), want %v and no next page", len(want), got, next, want)
	}
}

func testOrgListCursor(t *testing.T, s Stores) {
	want := seedOrgListing(t, s)
	// Every page size, so that pages end inside the tie, on its edges and on
	// the very last organization.
	for limit := 1; limit <= len(want)+1; limit++ {
		if got := walkOrgsByCursor(t, s, limit, len(want)); !slices.Equal(got, want) {
			t.Fatalf("limit %d: pages gave %v, want %v", limit, got, want)
		}
	}
	tie := baseTime.Add(time.Minute)
	tests := []struct {
		after domain.Position
		want  []domain.OrganizationID
	}{
		{domain.Position{At: tie, ID: "t-a"}, []domain.OrganizationID{"t-_", "t-B"}},
		{domain.Position{At: tie, ID: "t-_"}, []domain.OrganizationID{"t-B", "old"}},
		{domain.Position{At: tie, ID: "t-B"}, []domain.OrganizationID{"old"}},
		// Positions between stored ids, before the first and after the last.
		{domain.Position{At: tie, ID: "t-Z"}, []domain.OrganizationID{"t-B", "old"}},
		{domain.Position{At: tie, ID: "t-b"}, []domain.OrganizationID{"t-a", "t-_"}},
		{domain.Position{At: tie.Add(time.Hour), ID: "a"}, []domain.OrganizationID{"new", "t-a"}},
		{domain.Position{At: baseTime, ID: "old"}, nil},
		{domain.Position{At: baseTime.Add(-time.Hour), ID: "zzz"}, nil},
	}
	for _, tt := range tests {
		got, _ := mustListOrgs(t, s, ports.OrganizationQuery{Limit: 2, After: &tt.after})
		if !slices.Equal(got, tt.want) && (len(got) != 0 || len(tt.want) != 0) {
			t.Fatalf("List(after %+v) = %v, want %v", tt.after, got, tt.want)
		}
	}
	// A time in another zone, or with nanoseconds below the stores'
	// microseconds, is the same position as its normalised value.
	local := domain.Position{At: tie.In(time.FixedZone("UTC+9", 9*60*60)).Add(999 * time.Nanosecond), ID: "t-a"}
	if got, _ := mustListOrgs(t, s, ports.OrganizationQuery{Limit: 2, After: &local}); !slices.Equal(got, []domain.OrganizationID{"t-_", "t-B"}) {
		t.Fatalf("List(after %+v) = %v, want [t-_ t-B]", local, got)
	}
}

func testOrgListCursorDeleted(t *testing.T, s Stores) {
	seedOrgListing(t, s)
	ids, next := mustListOrgs(t, s, ports.OrganizationQuery{Limit: 2})
	if !slices.Equal(ids, []domain.OrganizationID{"new", "t-a"}) || next == nil {
		t.Fatalf("first page = %v, next %v", ids, next)
	}
	if err := s.Organizations.Delete(context.Background(), "t-a"); err != nil {
		t.Fatal(err)
	}
	// An organization created after the first page was read comes before
	// the cursor: it does not shift the pages that follow.
	mustCreateOrgAt(t, s, "newer", "lister", baseTime.Add(time.Hour))
	if got, _ := mustListOrgs(t, s, ports.OrganizationQuery{Limit: 2, After: next}); !slices.Equal(got, []domain.OrganizationID{"t-_", "t-B"}) {
		t.Fatalf("page after the deleted t-a = %v, want [t-_ t-B]", got)
	}
}

func testOrgListMemberCounts(t *testing.T, s Stores) {
	seedOrgListing(t, s)
	mustAddMember(t, s, "t-a", "m1", rolesMember, baseTime)
	mustAddMember(t, s, "t-a", "m2", rolesAdmin, baseTime)
	mustAddMember(t, s, "old", "m1", rolesMember, baseTime)
	if _, err := s.Organizations.RemoveMember(context.Background(), "t-a", "t-a-m2"); err != nil {
		t.Fatal(err)
	}
	// Deleting a user takes their memberships out of the counts too.
	mustDeleteUser(t, s, "m1")
	mustAddMember(t, s, "new", "m3", rolesMember, baseTime)
	page, err := s.Organizations.List(context.Background(), ports.OrganizationQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := map[domain.OrganizationID]int{"new": 2, "t-a": 1, "t-_": 1, "t-B": 1, "old": 1}
	for _, oc := range page.Organizations {
		if oc.MemberCount != want[oc.Organization.ID()] {
			t.Fatalf("%s has MemberCount %d, want %d", oc.Organization.ID(), oc.MemberCount, want[oc.Organization.ID()])
		}
		if n := mustCountMembers(t, s, oc.Organization.ID()); n != oc.MemberCount {
			t.Fatalf("%s: List counts %d members, CountMembers %d", oc.Organization.ID(), oc.MemberCount, n)
		}
	}
	if len(page.Organizations) != len(want) {
		t.Fatalf("List gave %d organizations, want %d", len(page.Organizations), len(want))
	}
}

func testOrgListBadLimit(t *testing.T, s Stores) {
	seedOrgListing(t, s)
	for _, limit := range []int{-1, 0, 1001} {
		_, err := s.Organizations.List(context.Background(), ports.OrganizationQuery{Limit: limit})
		if !errors.Is(err, domain.ErrInvalid) {
			t.Fatalf("List(limit %d) error = %v, want kind invalid", limit, err)
		}
	}
	if ids, _ := mustListOrgs(t, s, ports.OrganizationQuery{Limit: 1000}); len(ids) != 5 {
		t.Fatalf("List(limit 1000) = %v, want all 5", ids)
	}
}

func testOrgListCopies(t *testing.T, s Stores) {
	seedOrgListing(t, s)
	page, err := s.Organizations.List(context.Background(), ports.OrganizationQuery{Limit: 1})
	if err != nil || len(page.Organizations) != 1 {
		t.Fatalf("List = %+v, %v", page, err)
	}
	got := page.Organizations[0].Organization
	want := mustGetOrg(t, s, got.ID())
	assertSameOrg(t, got, want)
	if err := got.Rename("Changed", baseTime.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	assertSameOrg(t, mustGetOrg(t, s, got.ID()), want)
}

// testOrgListContains: the search matches names and slugs whatever the
// case, pages by cursor, and takes LIKE's wildcards literally.
func testOrgListContains(t *testing.T, s Stores) {
	seedOrgListing(t, s)
	for _, tt := range []struct {
		search string
		want   []domain.OrganizationID
	}{
		{"T-", []domain.OrganizationID{"t-a", "t-_", "t-B"}}, // slugs t-a-x, t-u-x, t-b-x
		{"ORG T-_", []domain.OrganizationID{"t-_"}},          // the name, "_" literally
		{"new-x", []domain.OrganizationID{"new"}},
		{"%", nil},
		{"nothing", nil},
	} {
		got, _ := mustListOrgs(t, s, ports.OrganizationQuery{Limit: 10, Contains: tt.search})
		if !slices.Equal(got, tt.want) {
			t.Errorf("List(contains %q) = %v, want %v", tt.search, got, tt.want)
		}
	}
	first, next := mustListOrgs(t, s, ports.OrganizationQuery{Limit: 2, Contains: "t-"})
	rest, last := mustListOrgs(t, s, ports.OrganizationQuery{Limit: 2, Contains: "t-", After: next})
	if got := append(first, rest...); !slices.Equal(got, []domain.OrganizationID{"t-a", "t-_", "t-B"}) || next == nil || last != nil {
		t.Errorf("List(contains t-) by pages of 2 = %v", got)
	}
}
