package conformance

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunUserPage runs the contract of UserRepository.Page, the trusted API's
// user listing: newest first, keyset paging, and its filters. It needs
// Stores because one filter is membership of an organization.
func RunUserPage(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"newest_first_with_byte_order_id_tiebreak", testUserPageOrder},
		{"cursor_pages_every_user_once", testUserPageCursor},
		{"cursor_needs_no_user_at_its_position", testUserPageCursorGone},
		{"email_is_exact", testUserPageEmail},
		{"contains_is_case_insensitive_and_literal", testUserPageContains},
		{"banned_filter", testUserPageBanned},
		{"verified_filter", testUserPageVerified},
		{"organization_filter", testUserPageOrganization},
		{"created_range_is_exclusive", testUserPageCreatedRange},
		{"filters_combine_with_the_cursor", testUserPageFiltersWithCursor},
		{"bad_limit_is_invalid", testUserPageLimit},
		{"returns_copies_with_metadata", testUserPageCopies},
		{"counts_each_users_passkeys", testUserPagePasskeys},
	}
	for _, tt := range tests {
		t.Run("contract=UserRepository.Page/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// mustMetadata returns the metadata object raw.
func mustMetadata(t *testing.T, raw string) domain.Metadata {
	t.Helper()
	m, err := domain.NewMetadata("metadata", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func testUserMetadataRoundTrip(t *testing.T, repo ports.UserRepository) {
	ctx := context.Background()
	u := mustUser(t, "u1", "ada@example.com")
	if !u.Metadata().Public.IsEmpty() || !u.Metadata().Private.IsEmpty() {
		t.Fatal("a new user has metadata")
	}
	mustCreateUser(t, repo, u)
	got, err := repo.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Metadata().Public.String() != "{}" || got.Metadata().Private.String() != "{}" {
		t.Fatalf("stored empty metadata reads back as %s and %s", got.Metadata().Public, got.Metadata().Private)
	}

	// Nested values of every JSON type, non-ASCII text, escapes and numbers
	// written in several ways come back as the same object.
	public := mustMetadata(t, `{"plan":"pro","seats":12,"ratio":0.25,"big":1e21,"tags":["a","b"],"nested":{"ok":true,"none":null},"text":"Ünïcode \"quoted\" \\ /"}`)
	private := mustMetadata(t, `{"stripeCustomer":"cus_123","notes":[{"at":"2026-01-01"}]}`)
	later := baseTime.Add(time.Minute)
	if err := repo.Update(ctx, "u1", func(u *domain.User) error {
		u.SetPublicMetadata(public, later)
		u.SetPrivateMetadata(private, later)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func() (*domain.User, error){
		func() (*domain.User, error) { return repo.Get(ctx, "u1") },
		func() (*domain.User, error) { return repo.GetByEmail(ctx, "ada@example.com") },
	} {
		got, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if !got.Metadata().Public.Equal(public) || !got.Metadata().Private.Equal(private) {
			t.Fatalf("metadata = %s / %s, want %s / %s", got.Metadata().Public, got.Metadata().Private, public, private)
		}
		// Whatever a store does to the spelling, what it returns is valid
		// metadata again, compact and the same object.
		again, err := domain.NewMetadata("x", got.Metadata().Public.JSON())
		if err != nil || again.String() != got.Metadata().Public.String() || !again.Equal(public) {
			t.Fatalf("stored metadata %s is not compact valid metadata: %v", got.Metadata().Public, err)
		}
	}
	// An update that leaves the metadata alone keeps it; clearing it stores {}.
	if err := repo.Update(ctx, "u1", func(u *domain.User) error { return u.Rename("Ada L.", later) }); err != nil {
		t.Fatal(err)
	}
	got, _ = repo.Get(ctx, "u1")
	if !got.Metadata().Public.Equal(public) || !got.Metadata().Private.Equal(private) {
		t.Fatalf("a rename lost the metadata: %s / %s", got.Metadata().Public, got.Metadata().Private)
	}
	if err := repo.Update(ctx, "u1", func(u *domain.User) error {
		u.SetPublicMetadata(domain.Metadata{}, later)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, _ = repo.Get(ctx, "u1")
	if !got.Metadata().Public.IsEmpty() || !got.Metadata().Private.Equal(private) {
		t.Fatalf("after clearing the public metadata: %s / %s", got.Metadata().Public, got.Metadata().Private)
	}
}

// pageSeed is a user of the page suite.
type pageSeed struct {
	id, name, email string
	created         time.Duration // after baseTime
	banned          bool
}

// mustSeedPageUsers creates users with exact creation times.
func mustSeedPageUsers(t *testing.T, s Stores, seeds ...pageSeed) {
	t.Helper()
	for _, sd := range seeds {
		access := domain.UserAccess{Banned: sd.banned}
		if sd.banned {
			access.BanReason = "reason " + sd.id
		}
		at := baseTime.Add(sd.created)
		mustCreateUser(t, s.Users, domain.RehydrateUser(domain.UserID(sd.id), sd.name, domain.Email(sd.email), false, "",
			access, domain.UserMetadata{}, at, at))
	}
}

// pageSeeds are users with distinct names and addresses; b1, B1, b2 and
// a1 share one creation time.
var pageSeeds = []pageSeed{
	{"a0", "Ada Lovelace", "ada@example.com", 0, false},
	{"a1", "Grace Hopper", "grace@example.com", time.Hour, true},
	{"b1", "alan turing", "alan@example.org", time.Hour, false},
	{"B1", "100%_sure", "percent@example.com", time.Hour, true},
	{"b2", `Barbara 1000x \`, "a_b@example.net", time.Hour, false},
	{"c0", "Edsger Dijkstra", "axb@example.net", 2 * time.Hour, false},
	{"d0", "Margaret Hamilton", "margaret@example.com", 3*time.Hour + time.Microsecond, false},
}

// mustPage runs q and returns the page's ids and its next position.
func mustPage(t *testing.T, s Stores, q ports.UserPageQuery) ([]domain.UserID, *domain.Position) {
	t.Helper()
	page, err := s.Users.Page(context.Background(), q)
	if err != nil {
		t.Fatalf("Page(%+v): %v", q, err)
	}
	ids := make([]domain.UserID, len(page.Users))
	for i, u := range page.Users {
		ids[i] = u.ID()
	}
	return ids, page.Next
}

// mustPageAll follows the cursor from q's first page to the last, and
// returns every id in order.
func mustPageAll(t *testing.T, s Stores, q ports.UserPageQuery) []domain.UserID {
	t.Helper()
	var all []domain.UserID
	for range 100 {
		ids, next := mustPage(t, s, q)
		if len(ids) > q.Limit {
			t.Fatalf("page of %d users, limit %d", len(ids), q.Limit)
		}
		all = append(all, ids...)
		if next == nil {
			return all
		}
		if len(ids) != q.Limit {
			t.Fatalf("a page of %d users (limit %d) has a next page", len(ids), q.Limit)
		}
		if last := ids[len(ids)-1]; next.ID != string(last) {
			t.Fatalf("next position %+v is not the last user %s", *next, last)
		}
		q.After = next
	}
	t.Fatal("paging does not end")
	return nil
}

func testUserPageOrder(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	// Newest first; within one instant ids descend byte by byte, so the
	// lower-case b1 and b2 come before the upper-case B1 and a1.
	want := []domain.UserID{"d0", "c0", "b2", "b1", "a1", "B1", "a0"}
	ids, next := mustPage(t, s, ports.UserPageQuery{Limit: 10})
	if !slices.Equal(ids, want) || next != nil {
		t.Fatalf("page = %v (next %v), want %v and no next page", ids, next, want)
	}
	// A page that ends exactly at the last user has no next page.
	ids, next = mustPage(t, s, ports.UserPageQuery{Limit: len(want)})
	if !slices.Equal(ids, want) || next != nil {
		t.Fatalf("full page = %v (next %v), want %v and no next page", ids, next, want)
	}
	ids, next = mustPage(t, s, ports.UserPageQuery{Limit: 3})
	if !slices.Equal(ids, want[:3]) || next == nil {
		t.Fatalf("first page = %v (next %v), want %v and a next page", ids, next, want[:3])
	}
	assertTime(t, "next position", next.At, baseTime.Add(time.Hour))
	if next.ID != "b2" {
		t.Fatalf("next position id = %s, want b2", next.ID)
	}
}

func testUserPageCursor(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	want := []domain.UserID{"d0", "c0", "b2", "b1", "a1", "B1", "a0"}
	for limit := 1; limit <= 8; limit++ {
		if got := mustPageAll(t, s, ports.UserPageQuery{Limit: limit}); !slices.Equal(got, want) {
			t.Fatalf("paging by %d = %v, want %v", limit, got, want)
		}
	}
	// A user created after the first page was read is not on later pages:
	// the cursor is a position, not an offset.
	ids, next := mustPage(t, s, ports.UserPageQuery{Limit: 2})
	mustSeedPageUsers(t, s, pageSeed{"e0", "Newcomer", "new@example.com", 4 * time.Hour, false})
	rest := mustPageAll(t, s, ports.UserPageQuery{Limit: 2, After: next})
	if got := append(ids, rest...); !slices.Equal(got, want) {
		t.Fatalf("paging across a creation = %v, want %v", got, want)
	}
}

func testUserPageCursorGone(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	_, next := mustPage(t, s, ports.UserPageQuery{Limit: 3}) // ends at b2
	mustDeleteUser(t, s, "b2")
	if ids, _ := mustPage(t, s, ports.UserPageQuery{Limit: 10, After: next}); !slices.Equal(ids, []domain.UserID{"b1", "a1", "B1", "a0"}) {
		t.Fatalf("page after a deleted user = %v, want [b1 a1 B1 a0]", ids)
	}
	// A position between users, at an instant no user has.
	between := &domain.Position{At: baseTime.Add(90 * time.Minute), ID: "zzz"}
	if ids, _ := mustPage(t, s, ports.UserPageQuery{Limit: 10, After: between}); !slices.Equal(ids, []domain.UserID{"b1", "a1", "B1", "a0"}) {
		t.Fatalf("page after an instant = %v, want [b1 a1 B1 a0]", ids)
	}
	// A position with the id "" at an instant comes after every user of it.
	at := &domain.Position{At: baseTime.Add(time.Hour), ID: ""}
	if ids, _ := mustPage(t, s, ports.UserPageQuery{Limit: 10, After: at}); !slices.Equal(ids, []domain.UserID{"a0"}) {
		t.Fatalf("page after (1h, \"\") = %v, want [a0]", ids)
	}
}

func testUserPageEmail(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	tests := []struct {
		email domain.Email
		want  []domain.UserID
	}{
		{"grace@example.com", []domain.UserID{"a1"}},
		{"a_b@example.net", []domain.UserID{"b2"}},
		{"axb@example.net", []domain.UserID{"c0"}},
		{"example.com", nil},
		{"race@example.com", nil},
		{"nobody@example.com", nil},
	}
	for _, tt := range tests {
		ids, next := mustPage(t, s, ports.UserPageQuery{Email: tt.email, Limit: 20})
		if !slices.Equal(ids, tt.want) || next != nil {
			t.Errorf("email %s = %v (next %v), want %v", tt.email, ids, next, tt.want)
		}
	}
}

func testUserPageContains(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	tests := []struct {
		name         string
		email, named string
		want         []domain.UserID
	}{
		{"email_part", "EXAMPLE.NET", "", []domain.UserID{"c0", "b2"}},
		{"underscore_is_literal", "a_b", "", []domain.UserID{"b2"}},
		{"percent_matches_nothing_else", "%", "", nil},
		{"name_case_insensitive", "", "ALAN", []domain.UserID{"b1"}},
		{"name_percent_is_literal", "", "100%", []domain.UserID{"B1"}},
		{"name_underscore_is_literal", "", "%_", []domain.UserID{"B1"}},
		{"name_backslash_is_literal", "", `x \`, []domain.UserID{"b2"}},
		{"both_must_hold", "example.com", "a", []domain.UserID{"d0", "a1", "a0"}},
		{"name_and_email_apart", "example.org", "hopper", nil},
	}
	for _, tt := range tests {
		ids, _ := mustPage(t, s, ports.UserPageQuery{EmailContains: tt.email, NameContains: tt.named, Limit: 20})
		if !slices.Equal(ids, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, ids, tt.want)
		}
	}
}

func testUserPageBanned(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	yes, no := true, false
	if ids, _ := mustPage(t, s, ports.UserPageQuery{Banned: &yes, Limit: 20}); !slices.Equal(ids, []domain.UserID{"a1", "B1"}) {
		t.Errorf("banned = %v, want [a1 B1]", ids)
	}
	if ids, _ := mustPage(t, s, ports.UserPageQuery{Banned: &no, Limit: 20}); !slices.Equal(ids, []domain.UserID{"d0", "c0", "b2", "b1", "a0"}) {
		t.Errorf("not banned = %v, want [d0 c0 b2 b1 a0]", ids)
	}
	// A ban and its lifting show at once.
	ctx := context.Background()
	if err := s.Users.Update(ctx, "a1", func(u *domain.User) error { u.Unban(baseTime); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Users.Update(ctx, "d0", func(u *domain.User) error { return u.Ban("spam", time.Time{}, baseTime) }); err != nil {
		t.Fatal(err)
	}
	if ids, _ := mustPage(t, s, ports.UserPageQuery{Banned: &yes, Limit: 20}); !slices.Equal(ids, []domain.UserID{"d0", "B1"}) {
		t.Errorf("banned after changes = %v, want [d0 B1]", ids)
	}
}

func testUserPageVerified(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	ctx := context.Background()
	for _, id := range []domain.UserID{"a1", "c0"} {
		if err := s.Users.Update(ctx, id, func(u *domain.User) error { u.MarkEmailVerified(baseTime); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	yes, no := true, false
	if ids, _ := mustPage(t, s, ports.UserPageQuery{EmailVerified: &yes, Limit: 20}); !slices.Equal(ids, []domain.UserID{"c0", "a1"}) {
		t.Errorf("verified = %v, want [c0 a1]", ids)
	}
	if ids, _ := mustPage(t, s, ports.UserPageQuery{EmailVerified: &no, Limit: 20}); !slices.Equal(ids, []domain.UserID{"d0", "b2", "b1", "B1", "a0"}) {
		t.Errorf("unverified = %v, want [d0 b2 b1 B1 a0]", ids)
	}
	if ids, _ := mustPage(t, s, ports.UserPageQuery{EmailVerified: &no, Banned: &yes, Limit: 20}); !slices.Equal(ids, []domain.UserID{"B1"}) {
		t.Errorf("unverified and banned = %v, want [B1]", ids)
	}
}

func testUserPageOrganization(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	mustCreateOrg(t, s, "org1", "owner1")
	mustCreateOrg(t, s, "org2", "owner2")
	for _, id := range []domain.UserID{"a0", "b1", "B1", "d0"} {
		mustAddMember(t, s, "org1", id, []domain.OrgRole{domain.OrgRoleMember}, baseTime)
	}
	mustAddMember(t, s, "org2", "b1", []domain.OrgRole{domain.OrgRoleMember}, baseTime)
	// The owners were created at baseTime by mustCreateOrg, with a0.
	if got := mustPageAll(t, s, ports.UserPageQuery{OrganizationID: "org1", Limit: 2}); !slices.Equal(got, []domain.UserID{"d0", "b1", "B1", "owner1", "a0"}) {
		t.Errorf("members of org1 = %v, want [d0 b1 B1 owner1 a0]", got)
	}
	if ids, _ := mustPage(t, s, ports.UserPageQuery{OrganizationID: "org2", Limit: 20}); !slices.Equal(ids, []domain.UserID{"b1", "owner2"}) {
		t.Errorf("members of org2 = %v, want [b1 owner2]", ids)
	}
	if ids, _ := mustPage(t, s, ports.UserPageQuery{OrganizationID: "no-such-org", Limit: 20}); len(ids) != 0 {
		t.Errorf("members of a missing organization = %v, want none", ids)
	}
	// Leaving the organization leaves its listing.
	m, err := s.Organizations.GetMemberByUser(context.Background(), "org1", "B1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Organizations.RemoveMember(context.Background(), "org1", m.ID()); err != nil {
		t.Fatal(err)
	}
	if ids, _ := mustPage(t, s, ports.UserPageQuery{OrganizationID: "org1", EmailContains: "example.com", Limit: 20}); !slices.Equal(ids, []domain.UserID{"d0", "owner1", "a0"}) {
		t.Errorf("members of org1 at example.com after a removal = %v, want [d0 owner1 a0]", ids)
	}
}

func testUserPageCreatedRange(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	hour := baseTime.Add(time.Hour)
	tests := []struct {
		name          string
		after, before time.Time
		want          []domain.UserID
	}{
		{"after_is_exclusive", hour, time.Time{}, []domain.UserID{"d0", "c0"}},
		{"before_is_exclusive", time.Time{}, hour, []domain.UserID{"a0"}},
		{"both", baseTime, baseTime.Add(2 * time.Hour).Add(time.Microsecond), []domain.UserID{"c0", "b2", "b1", "a1", "B1"}},
		{"microseconds_count", baseTime.Add(3 * time.Hour), time.Time{}, []domain.UserID{"d0"}},
		{"other_zones_are_the_same_instant", hour.In(time.FixedZone("UTC+5", 5*3600)), time.Time{}, []domain.UserID{"d0", "c0"}},
		{"empty_range", hour, hour, nil},
	}
	for _, tt := range tests {
		ids, _ := mustPage(t, s, ports.UserPageQuery{CreatedAfter: tt.after, CreatedBefore: tt.before, Limit: 20})
		if !slices.Equal(ids, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, ids, tt.want)
		}
	}
}

func testUserPageFiltersWithCursor(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	no := false
	q := ports.UserPageQuery{Banned: &no, EmailContains: "example", CreatedBefore: baseTime.Add(3 * time.Hour), Limit: 1}
	if got := mustPageAll(t, s, q); !slices.Equal(got, []domain.UserID{"c0", "b2", "b1", "a0"}) {
		t.Fatalf("filtered paging = %v, want [c0 b2 b1 a0]", got)
	}
	// The email lookup with a cursor past its user is empty.
	ids, _ := mustPage(t, s, ports.UserPageQuery{Email: "ada@example.com", Limit: 1, After: &domain.Position{At: baseTime, ID: "a0"}})
	if len(ids) != 0 {
		t.Fatalf("email lookup after its user = %v, want none", ids)
	}
}

func testUserPageLimit(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds[0])
	for _, limit := range []int{0, -1, 1001} {
		_, err := s.Users.Page(context.Background(), ports.UserPageQuery{Limit: limit})
		mustBeKind(t, err, domain.ErrInvalid)
	}
	if ids, _ := mustPage(t, s, ports.UserPageQuery{Limit: 1000}); len(ids) != 1 {
		t.Fatalf("limit 1000 = %v", ids)
	}
}

func testUserPageCopies(t *testing.T, s Stores) {
	ctx := context.Background()
	mustSeedPageUsers(t, s, pageSeeds[0])
	meta := mustMetadata(t, `{"tier":"gold"}`)
	if err := s.Users.Update(ctx, "a0", func(u *domain.User) error {
		u.SetPrivateMetadata(meta, baseTime)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	page, err := s.Users.Page(ctx, ports.UserPageQuery{Limit: 5})
	if err != nil || len(page.Users) != 1 {
		t.Fatalf("Page = %v, %v", page.Users, err)
	}
	want, err := s.Users.Get(ctx, "a0")
	if err != nil {
		t.Fatal(err)
	}
	assertSameUser(t, page.Users[0], want)
	if !page.Users[0].Metadata().Private.Equal(meta) {
		t.Fatalf("paged metadata = %s, want %s", page.Users[0].Metadata().Private, meta)
	}
	page.Users[0].SetPrivateMetadata(domain.Metadata{}, baseTime)
	if err := page.Users[0].Rename("Changed", baseTime); err != nil {
		t.Fatal(err)
	}
	again, _ := s.Users.Get(ctx, "a0")
	assertSameUser(t, again, want)
}

// testUserPagePasskeys: each user of a page comes with how many passkeys
// they have, the whole user read as well.
func testUserPagePasskeys(t *testing.T, s Stores) {
	mustSeedPageUsers(t, s, pageSeeds...)
	mustCreatePasskey(t, s, makePasskey("pk-1", "a1", baseTime))
	mustCreatePasskey(t, s, makePasskey("pk-2", "a1", baseTime.Add(time.Second)))
	mustCreatePasskey(t, s, makePasskey("pk-3", "c0", baseTime))
	want := map[domain.UserID]int{"a1": 2, "c0": 1}
	for _, q := range []ports.UserPageQuery{{Limit: 3}, {Limit: 100}, {Limit: 1, Email: "grace@example.com"}} {
		page, err := s.Users.Page(context.Background(), q)
		if err != nil {
			t.Fatalf("Page(%+v): %v", q, err)
		}
		if len(page.Passkeys) != len(page.Users) {
			t.Fatalf("Page(%+v): %d passkey counts for %d users", q, len(page.Passkeys), len(page.Users))
		}
		for i, u := range page.Users {
			if page.Passkeys[i] != want[u.ID()] || u.Email() == "" || u.Name() == "" || u.CreatedAt().IsZero() {
				t.Errorf("Page(%+v): user %q (%s) has %d passkeys, want %d", q, u.ID(), u.Email(), page.Passkeys[i], want[u.ID()])
			}
		}
	}
}
