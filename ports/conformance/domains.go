package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunDomainRepository runs the DomainRepository contract. newStores must
// return empty repositories sharing one fresh database each time it is
// called; Domains, Organizations and Users are used.
func RunDomainRepository(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"create_then_get_round_trips_every_field", testDomainRoundTrip},
		{"new_domain_without_organization_round_trips_zero_times", testDomainZeroTimes},
		{"missing_domain_is_not_found", testDomainNotFound},
		{"taken_hostname_is_conflict_whatever_the_organization", testDomainHostnameTaken},
		{"taken_id_is_conflict", testDomainDuplicateID},
		{"taken_hostname_inside_a_unit_of_work_leaves_the_unit_usable", testDomainHostnameTakenInUnit},
		{"missing_organization_is_not_found", testDomainMissingOrg},
		{"update_saves_what_fn_did", testDomainUpdate},
		{"update_saves_nothing_when_fn_fails", testDomainUpdateRollback},
		{"update_to_a_missing_organization_is_not_found", testDomainUpdateMissingOrg},
		{"concurrent_updates_are_not_lost", testDomainUpdateParallel},
		{"delete_removes_the_domain_and_frees_its_hostname", testDomainDelete},
		{"deleting_an_organization_deletes_its_domains", testDomainOrgCascade},
		{"list_is_newest_first_with_ids_in_byte_order", testDomainListOrder},
		{"list_pages_by_cursor_through_every_domain", testDomainListCursor},
		{"list_cursor_of_a_deleted_domain_still_places_the_page", testDomainListCursorDeleted},
		{"list_filters_by_organization_and_status", testDomainListFilters},
		{"list_refuses_a_bad_limit", testDomainListBadLimit},
		{"claim_takes_the_most_overdue_first_up_to_the_limit", testDomainClaimDue},
		{"claim_is_due_again_when_the_lease_ends", testDomainClaimLease},
		{"claim_skips_unscheduled_domains", testDomainClaimSkipsUnscheduled},
		{"claim_refuses_a_bad_limit_or_lease", testDomainClaimBadLimit},
		{"concurrent_claims_never_take_one_domain", testDomainClaimConcurrent},
		{"returned_values_are_copies", testDomainCopies},
	}
	for _, tt := range tests {
		t.Run("contract=DomainRepository/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// domainPolicy is the verification policy of the suite: checks every
// minute at first, doubling to an hour; a week to verify; a day of grace.
var domainPolicy = domain.VerificationPolicy{
	Window: 7 * 24 * time.Hour, Grace: 24 * time.Hour,
	Interval: time.Minute, MaxInterval: time.Hour, Recheck: 24 * time.Hour,
}

// hostOf names domain id's hostname, a lower-case one for any id:
// "h<id in hexadecimal>.example.com".
func hostOf(id string) string { return fmt.Sprintf("h%x.example.com", id) }

// newDomainAt returns a pending domain id of org, created at at, with a
// TXT and a CNAME record.
func newDomainAt(id string, org domain.OrganizationID, at time.Time) *domain.Domain {
	return domain.NewDomain(domain.DomainID(id), hostOf(id), org, "token-"+id, "edge.gatehouse.example", at)
}

func mustCreateDomain(t *testing.T, s Stores, d *domain.Domain) *domain.Domain {
	t.Helper()
	if err := s.Domains.Create(context.Background(), d); err != nil {
		t.Fatalf("Create domain %s: %v", d.ID(), err)
	}
	return d
}

func mustGetDomain(t *testing.T, s Stores, id domain.DomainID) *domain.Domain {
	t.Helper()
	d, err := s.Domains.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get domain %s: %v", id, err)
	}
	return d
}

func mustGetDomainByHostname(t *testing.T, s Stores, hostname string) *domain.Domain {
	t.Helper()
	d, err := s.Domains.GetByHostname(context.Background(), hostname)
	if err != nil {
		t.Fatalf("GetByHostname %s: %v", hostname, err)
	}
	return d
}

func assertDomainGone(t *testing.T, s Stores, id domain.DomainID, hostname string) {
	t.Helper()
	_, err := s.Domains.Get(context.Background(), id)
	mustBeCode(t, err, domain.ErrNotFound, "domain.not_found")
	_, err = s.Domains.GetByHostname(context.Background(), hostname)
	mustBeCode(t, err, domain.ErrNotFound, "domain.not_found")
}

// storedTime is t as every store keeps it: UTC, microseconds.
func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return domain.Timestamp(t)
}

// assertSameDomain fails unless got has every field of want, its times as
// the stores keep them.
func assertSameDomain(t *testing.T, got, want *domain.Domain) {
	t.Helper()
	g, w := got.State(), want.State()
	if g.ID != w.ID || g.Hostname != w.Hostname || g.OrganizationID != w.OrganizationID || g.Status != w.Status ||
		g.Token != w.Token || g.Attempts != w.Attempts || g.ManualReason != w.ManualReason {
		t.Fatalf("domain = %+v, want %+v", g, w)
	}
	for _, tc := range []struct {
		what      string
		got, want time.Time
	}{
		{"last checked", g.LastCheckedAt, w.LastCheckedAt}, {"next check", g.NextCheckAt, w.NextCheckAt},
		{"window start", g.WindowStart, w.WindowStart}, {"missing since", g.MissingSince, w.MissingSince},
		{"verified", g.VerifiedAt, w.VerifiedAt}, {"failed", g.FailedAt, w.FailedAt},
		{"created", g.CreatedAt, w.CreatedAt}, {"updated", g.UpdatedAt, w.UpdatedAt},
	} {
		assertTime(t, string(w.ID)+" "+tc.what, tc.got, storedTime(tc.want))
	}
	if len(g.Records) != len(w.Records) {
		t.Fatalf("%s records = %+v, want %+v", w.ID, g.Records, w.Records)
	}
	for i, r := range g.Records {
		wr := w.Records[i]
		if r.Type != wr.Type || r.Name != wr.Name || r.Value != wr.Value || r.Required != wr.Required || r.Status != wr.Status ||
			!slices.Equal(r.Observed, wr.Observed) {
			t.Fatalf("%s record %d = %+v, want %+v", w.ID, i, r, wr)
		}
		assertTime(t, fmt.Sprintf("%s record %d checked", w.ID, i), r.LastCheckedAt, storedTime(wr.LastCheckedAt))
	}
}

// fullDomain returns a domain with every field set, its times carrying
// nanoseconds that the stores drop, its observed values holding quotes,
// backslashes and non-ASCII text.
func fullDomain(org domain.OrganizationID) *domain.Domain {
	at := func(d time.Duration) time.Time { return baseTime.Add(d + 789*time.Nanosecond) }
	return domain.RehydrateDomain(domain.DomainState{
		ID: "full", Hostname: "xn--bcher-kva.example", OrganizationID: org, Status: domain.DomainFailed,
		Token: "tok-0123456789abcdef",
		Records: []domain.DNSRecord{
			{Type: domain.RecordTXT, Name: "_gatehouse-challenge.xn--bcher-kva.example", Value: "gatehouse-verification=tok-0123456789abcdef",
				Required: true, Status: domain.RecordMismatch,
				Observed: []string{`v=spf1 "quoted" \ back`, "gatehouse-verification=other", "ünïcode ✓"}, LastCheckedAt: at(5 * time.Hour)},
			{Type: domain.RecordCNAME, Name: "xn--bcher-kva.example", Value: "edge.gatehouse.example",
				Required: false, Status: domain.RecordFound, Observed: []string{"EDGE.gatehouse.example."}, LastCheckedAt: at(5 * time.Hour)},
		},
		Attempts:      7,
		LastCheckedAt: at(5 * time.Hour), NextCheckAt: at(6 * time.Hour), WindowStart: at(time.Hour),
		MissingSince: at(2 * time.Hour), VerifiedAt: at(90 * time.Minute), FailedAt: at(5 * time.Hour),
		ManualReason: "checked by hand: \"ok\"", CreatedAt: at(0), UpdatedAt: at(5 * time.Hour),
	})
}

func testDomainRoundTrip(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "owner1")
	want := fullDomain("o1")
	mustCreateDomain(t, s, want)
	assertSameDomain(t, mustGetDomain(t, s, "full"), want)
	assertSameDomain(t, mustGetDomainByHostname(t, s, "xn--bcher-kva.example"), want)
}

func testDomainZeroTimes(t *testing.T, s Stores) {
	d := domain.NewDomain("plain", "plain.example.com", "", "tok", "", baseTime)
	mustCreateDomain(t, s, d)
	got := mustGetDomain(t, s, "plain")
	assertSameDomain(t, got, d)
	if got.OrganizationID() != "" || len(got.Records()) != 1 || got.Records()[0].Observed != nil {
		t.Fatalf("got %+v, want no organization and one unchecked record without observed values", got.State())
	}
	// A record observed with no values keeps none.
	if err := s.Domains.Update(context.Background(), "plain", func(d *domain.Domain) error {
		d.Observe([]domain.Observation{{Type: domain.RecordTXT, Name: "_gatehouse-challenge.plain.example.com"}}, baseTime.Add(time.Minute), domainPolicy)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if r := mustGetDomain(t, s, "plain").Records()[0]; r.Status != domain.RecordMissing || len(r.Observed) != 0 {
		t.Fatalf("record = %+v, want missing with nothing observed", r)
	}
}

func testDomainNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateDomain(t, s, newDomainAt("d1", "", baseTime))
	assertDomainGone(t, s, "nope", "nope.example.com")
	// The hostname is compared exactly: callers normalise it first.
	_, err := s.Domains.GetByHostname(ctx, "D1.example.com")
	mustBeCode(t, err, domain.ErrNotFound, "domain.not_found")
	err = s.Domains.Update(ctx, "nope", func(*domain.Domain) error {
		t.Error("fn ran for a missing domain")
		return nil
	})
	mustBeCode(t, err, domain.ErrNotFound, "domain.not_found")
	mustBeCode(t, s.Domains.Delete(ctx, "nope"), domain.ErrNotFound, "domain.not_found")
}

func testDomainHostnameTaken(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "owner1")
	mustCreateOrg(t, s, "o2", "owner2")
	first := mustCreateDomain(t, s, domain.NewDomain("d1", "shop.example.com", "o1", "tok1", "", baseTime))
	for _, org := range []domain.OrganizationID{"o1", "o2", ""} {
		err := s.Domains.Create(context.Background(), domain.NewDomain("d2", "shop.example.com", org, "tok2", "", baseTime))
		if !errors.Is(err, domain.ErrHostnameTaken) {
			t.Fatalf("second domain for %q: %v, want %v", org, err, domain.ErrHostnameTaken)
		}
	}
	_, err := s.Domains.Get(context.Background(), "d2")
	mustBeCode(t, err, domain.ErrNotFound, "domain.not_found")
	assertSameDomain(t, mustGetDomainByHostname(t, s, "shop.example.com"), first)
}

// testDomainHostnameTakenInUnit: a create refused for its hostname inside a
// unit of work is ErrHostnameTaken (telling it from a taken id needs another
// query after the refused insert), and the unit can go on and commit.
func testDomainHostnameTakenInUnit(t *testing.T, s Stores) {
	if s.UnitOfWork == nil {
		t.Fatal("the stores have no unit of work")
	}
	mustCreateOrg(t, s, "o1", "owner1")
	mustCreateDomain(t, s, domain.NewDomain("d1", "shop.example.com", "o1", "tok1", "", baseTime))
	err := s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		err := s.Domains.Create(ctx, domain.NewDomain("d2", "shop.example.com", "o1", "tok2", "", baseTime))
		if !errors.Is(err, domain.ErrHostnameTaken) {
			t.Errorf("taken hostname inside a unit: %v, want %v", err, domain.ErrHostnameTaken)
		}
		return s.Domains.Create(ctx, domain.NewDomain("d3", "other.example.com", "o1", "tok3", "", baseTime))
	})
	if err != nil {
		t.Fatalf("the unit after a refused create: %v", err)
	}
	mustGetDomain(t, s, "d3")
}

func testDomainDuplicateID(t *testing.T, s Stores) {
	first := mustCreateDomain(t, s, domain.NewDomain("d1", "one.example.com", "", "tok1", "", baseTime))
	err := s.Domains.Create(context.Background(), domain.NewDomain("d1", "two.example.com", "", "tok2", "", baseTime))
	mustBeKind(t, err, domain.ErrConflict)
	if errors.Is(err, domain.ErrHostnameTaken) {
		t.Fatalf("a taken id was reported as a taken hostname: %v", err)
	}
	assertSameDomain(t, mustGetDomain(t, s, "d1"), first)
	assertDomainGone(t, s, "d2", "two.example.com")
}

func testDomainMissingOrg(t *testing.T, s Stores) {
	err := s.Domains.Create(context.Background(), newDomainAt("d1", "no-such-org", baseTime))
	mustBeKind(t, err, domain.ErrNotFound)
	assertDomainGone(t, s, "d1", hostOf("d1"))
	// Nothing was left behind: the id and hostname are free.
	mustCreateDomain(t, s, newDomainAt("d1", "", baseTime))
}

func testDomainUpdate(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "owner1")
	mustCreateOrg(t, s, "o2", "owner2")
	mustCreateDomain(t, s, newDomainAt("d1", "o1", baseTime))
	checked := baseTime.Add(3*time.Minute + 5*time.Nanosecond)
	var want *domain.Domain
	err := s.Domains.Update(ctx, "d1", func(d *domain.Domain) error {
		d.Observe([]domain.Observation{
			{Type: domain.RecordTXT, Name: "_gatehouse-challenge." + hostOf("d1"), Values: []string{"gatehouse-verification=token-d1"}},
			{Type: domain.RecordCNAME, Name: hostOf("d1"), Values: []string{"elsewhere.example."}},
		}, checked, domainPolicy)
		d.AssignOrganization("o2", checked)
		want = domain.RehydrateDomain(d.State())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := mustGetDomain(t, s, "d1")
	assertSameDomain(t, got, want)
	if got.OrganizationID() != "o2" || got.Attempts() != 1 || got.Records()[1].Status != domain.RecordMismatch {
		t.Fatalf("after update: %+v", got.State())
	}
	// Moving it to no organization stores that too.
	if err := s.Domains.Update(ctx, "d1", func(d *domain.Domain) error {
		d.AssignOrganization("", checked.Add(time.Second))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := mustGetDomain(t, s, "d1"); got.OrganizationID() != "" {
		t.Fatalf("organization = %q, want none", got.OrganizationID())
	}
	// Manual verification: the reason and the cleared schedule are stored.
	if err := s.Domains.Update(ctx, "d1", func(d *domain.Domain) error {
		return d.VerifyManually("registrar confirmed", checked.Add(time.Hour))
	}); err != nil {
		t.Fatal(err)
	}
	got = mustGetDomain(t, s, "d1")
	if got.Status() != domain.DomainVerified || got.ManualReason() != "registrar confirmed" || !got.NextCheckAt().IsZero() {
		t.Fatalf("after manual verification: %+v", got.State())
	}
}

func testDomainUpdateRollback(t *testing.T, s Stores) {
	before := mustCreateDomain(t, s, newDomainAt("d1", "", baseTime))
	boom := errors.New("boom")
	err := s.Domains.Update(context.Background(), "d1", func(d *domain.Domain) error {
		d.Observe(nil, baseTime.Add(time.Hour), domainPolicy)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	assertSameDomain(t, mustGetDomain(t, s, "d1"), before)
}

func testDomainUpdateMissingOrg(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "owner1")
	before := mustCreateDomain(t, s, newDomainAt("d1", "o1", baseTime))
	err := s.Domains.Update(context.Background(), "d1", func(d *domain.Domain) error {
		d.AssignOrganization("no-such-org", baseTime.Add(time.Minute))
		return nil
	})
	mustBeKind(t, err, domain.ErrNotFound)
	if errors.Is(err, domain.ErrDomainNotFound) {
		t.Fatalf("a missing organization was reported as a missing domain: %v", err)
	}
	assertSameDomain(t, mustGetDomain(t, s, "d1"), before)
}

func testDomainUpdateParallel(t *testing.T, s Stores) {
	mustCreateDomain(t, s, newDomainAt("d1", "", baseTime))
	const n = 12
	errs := runParallel(n, func(i int) error {
		return s.Domains.Update(context.Background(), "d1", func(d *domain.Domain) error {
			// Each check that finds nothing counts one attempt.
			d.Observe(nil, baseTime.Add(time.Duration(i+1)*time.Second), domainPolicy)
			return nil
		})
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	if got := mustGetDomain(t, s, "d1").Attempts(); got != n {
		t.Fatalf("attempts = %d after %d concurrent updates: updates were lost", got, n)
	}
}

func testDomainDelete(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateDomain(t, s, newDomainAt("d1", "", baseTime))
	kept := mustCreateDomain(t, s, newDomainAt("d2", "", baseTime))
	if err := s.Domains.Delete(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	assertDomainGone(t, s, "d1", hostOf("d1"))
	assertSameDomain(t, mustGetDomain(t, s, "d2"), kept)
	mustBeCode(t, s.Domains.Delete(ctx, "d1"), domain.ErrNotFound, "domain.not_found")
	// The hostname is free again, for any id.
	mustCreateDomain(t, s, domain.NewDomain("d3", hostOf("d1"), "", "tok", "", baseTime))
}

func testDomainOrgCascade(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "owner1")
	mustCreateOrg(t, s, "o2", "owner2")
	mustCreateDomain(t, s, newDomainAt("a1", "o1", baseTime))
	mustCreateDomain(t, s, newDomainAt("a2", "o1", baseTime.Add(time.Second)))
	mustCreateDomain(t, s, newDomainAt("b1", "o2", baseTime))
	mustCreateDomain(t, s, newDomainAt("n1", "", baseTime))
	if err := s.Organizations.Delete(ctx, "o1"); err != nil {
		t.Fatal(err)
	}
	assertDomainGone(t, s, "a1", hostOf("a1"))
	assertDomainGone(t, s, "a2", hostOf("a2"))
	mustGetDomain(t, s, "b1")
	mustGetDomain(t, s, "n1")
	assertDomainPage(t, s, ports.DomainQuery{OrganizationID: "o1", Limit: 10})
	assertDomainPage(t, s, ports.DomainQuery{Limit: 10}, "n1", "b1")
	if ids := mustClaimDomains(t, s, baseTime.Add(time.Hour), 10); !slices.Equal(ids, []string{"b1", "n1"}) {
		t.Fatalf("due after the cascade = %v, want [b1 n1]", ids)
	}
	// Their hostnames are free again.
	mustCreateDomain(t, s, newDomainAt("a1", "o2", baseTime))
}

func domainIDs(list []*domain.Domain) []string {
	out := make([]string, 0, len(list))
	for _, d := range list {
		out = append(out, string(d.ID()))
	}
	return out
}

func mustListDomains(t *testing.T, s Stores, q ports.DomainQuery) ([]string, *domain.Position) {
	t.Helper()
	page, err := s.Domains.List(context.Background(), q)
	if err != nil {
		t.Fatalf("List(%+v): %v", q, err)
	}
	ids := domainIDs(page.Domains)
	if page.Next != nil {
		last := page.Domains[len(page.Domains)-1]
		if page.Next.ID != string(last.ID()) || !page.Next.At.Equal(last.CreatedAt()) {
			t.Fatalf("List(%+v): next %+v is not the last domain %s at %v", q, *page.Next, last.ID(), last.CreatedAt())
		}
	}
	return ids, page.Next
}

// assertDomainPage fails unless one page of q holds exactly want and no
// page follows.
func assertDomainPage(t *testing.T, s Stores, q ports.DomainQuery, want ...string) {
	t.Helper()
	ids, next := mustListDomains(t, s, q)
	if !slices.Equal(ids, want) || (len(want) > 0 && !slices.Equal(ids, want)) {
		t.Fatalf("List(%+v) = %v, want %v", q, ids, want)
	}
	if next != nil {
		t.Fatalf("List(%+v) has a next page after %v", q, ids)
	}
}

// walkDomains pages through q with page size limit and returns every id.
func walkDomains(t *testing.T, s Stores, q ports.DomainQuery, limit int) []string {
	t.Helper()
	var all []string
	q.Limit = limit
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("more than 100 pages of %d", limit)
		}
		ids, next := mustListDomains(t, s, q)
		if len(ids) > limit || (next != nil && len(ids) != limit) {
			t.Fatalf("page of %d with limit %d (next %v)", len(ids), limit, next)
		}
		all = append(all, ids...)
		if next == nil {
			return all
		}
		q.After = &domain.Position{At: next.At, ID: next.ID}
	}
}

// seedDomainListing creates domains "old"; "t-B", "t-_" and "t-a" at one
// instant a minute later (byte order: 'B' < '_' < 'a', which a locale's
// collation does not keep); and "new" a minute after them, all without an
// organization. Newest first they are new, t-a, t-_, t-B, old.
func seedDomainListing(t *testing.T, s Stores) []string {
	t.Helper()
	tie := baseTime.Add(time.Minute + 999*time.Nanosecond)
	for _, d := range []struct {
		id string
		at time.Time
	}{
		{"t-a", tie}, {"old", baseTime}, {"t-B", tie}, {"new", tie.Add(time.Minute)}, {"t-_", tie},
	} {
		mustCreateDomain(t, s, newDomainAt(d.id, "", d.at))
	}
	return []string{"new", "t-a", "t-_", "t-B", "old"}
}

func testDomainListOrder(t *testing.T, s Stores) {
	assertDomainPage(t, s, ports.DomainQuery{Limit: 10})
	want := seedDomainListing(t, s)
	assertDomainPage(t, s, ports.DomainQuery{Limit: 10}, want...)
	assertDomainPage(t, s, ports.DomainQuery{Limit: 5}, want...)
	ids, next := mustListDomains(t, s, ports.DomainQuery{Limit: 2})
	if !slices.Equal(ids, want[:2]) || next == nil || next.ID != "t-a" {
		t.Fatalf("first page of 2 = %v next %+v, want %v and a cursor at t-a", ids, next, want[:2])
	}
	// The cursor's time is the stored one, in microseconds.
	if next.At.Nanosecond()%1000 != 0 {
		t.Fatalf("cursor time %v has nanoseconds", next.At)
	}
}

func testDomainListCursor(t *testing.T, s Stores) {
	want := seedDomainListing(t, s)
	for limit := 1; limit <= 6; limit++ {
		if got := walkDomains(t, s, ports.DomainQuery{}, limit); !slices.Equal(got, want) {
			t.Fatalf("pages of %d = %v, want %v", limit, got, want)
		}
	}
	// A cursor in the middle of the tie starts right after it.
	tie := baseTime.Add(time.Minute)
	assertDomainPage(t, s, ports.DomainQuery{Limit: 10, After: &domain.Position{At: tie, ID: "t-_"}}, "t-B", "old")
	// A cursor carrying nanoseconds is read as the stored microseconds.
	assertDomainPage(t, s, ports.DomainQuery{Limit: 10, After: &domain.Position{At: tie.Add(999 * time.Nanosecond), ID: "t-a"}},
		"t-_", "t-B", "old")
	// Past the oldest: an empty last page.
	assertDomainPage(t, s, ports.DomainQuery{Limit: 10, After: &domain.Position{At: baseTime, ID: "old"}})
}

func testDomainListCursorDeleted(t *testing.T, s Stores) {
	seedDomainListing(t, s)
	_, next := mustListDomains(t, s, ports.DomainQuery{Limit: 2})
	if err := s.Domains.Delete(context.Background(), domain.DomainID(next.ID)); err != nil {
		t.Fatal(err)
	}
	assertDomainPage(t, s, ports.DomainQuery{Limit: 10, After: next}, "t-_", "t-B", "old")
	// A position between two domains places the page too.
	between := &domain.Position{At: baseTime.Add(30 * time.Second), ID: "zzz"}
	assertDomainPage(t, s, ports.DomainQuery{Limit: 10, After: between}, "old")
}

func testDomainListFilters(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "owner1")
	mustCreateOrg(t, s, "o2", "owner2")
	at := func(i int) time.Time { return baseTime.Add(time.Duration(i) * time.Minute) }
	for i, d := range []struct {
		id  string
		org domain.OrganizationID
	}{
		{"a1", "o1"}, {"b1", "o2"}, {"a2", "o1"}, {"n1", ""}, {"a3", "o1"}, {"b2", "o2"}, {"a4", "o1"},
	} {
		mustCreateDomain(t, s, newDomainAt(d.id, d.org, at(i)))
	}
	// a2 and b2 are verified, a3 failed, by hand and by the window.
	for _, id := range []domain.DomainID{"a2", "b2"} {
		if err := s.Domains.Update(ctx, id, func(d *domain.Domain) error { return d.VerifyManually("ok", at(10)) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Domains.Update(ctx, "a3", func(d *domain.Domain) error {
		d.Observe(nil, at(4).Add(domainPolicy.Window), domainPolicy)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if st := mustGetDomain(t, s, "a3").Status(); st != domain.DomainFailed {
		t.Fatalf("a3 is %s, want failed", st)
	}
	for _, tc := range []struct {
		q    ports.DomainQuery
		want []string
	}{
		{ports.DomainQuery{OrganizationID: "o1"}, []string{"a4", "a3", "a2", "a1"}},
		{ports.DomainQuery{OrganizationID: "o2"}, []string{"b2", "b1"}},
		{ports.DomainQuery{OrganizationID: "o3"}, nil},
		{ports.DomainQuery{Status: domain.DomainPending}, []string{"a4", "n1", "b1", "a1"}},
		{ports.DomainQuery{Status: domain.DomainVerified}, []string{"b2", "a2"}},
		{ports.DomainQuery{Status: domain.DomainFailed}, []string{"a3"}},
		{ports.DomainQuery{OrganizationID: "o1", Status: domain.DomainPending}, []string{"a4", "a1"}},
		{ports.DomainQuery{OrganizationID: "o2", Status: domain.DomainFailed}, nil},
	} {
		for _, limit := range []int{1, 2, 100} {
			if got := walkDomains(t, s, tc.q, limit); !slices.Equal(got, tc.want) {
				t.Fatalf("List(%+v) in pages of %d = %v, want %v", tc.q, limit, got, tc.want)
			}
		}
	}
}

func testDomainListBadLimit(t *testing.T, s Stores) {
	mustCreateDomain(t, s, newDomainAt("d1", "", baseTime))
	for _, limit := range []int{0, -1, 1001} {
		_, err := s.Domains.List(context.Background(), ports.DomainQuery{Limit: limit})
		mustBeKind(t, err, domain.ErrInvalid)
	}
	assertDomainPage(t, s, ports.DomainQuery{Limit: 1000}, "d1")
}

// seedDue creates domains whose next checks are, from now: d-late 2 hours
// ago; d-tie-B, d-tie-_ and d-tie-a an hour ago (byte order); d-now at now;
// d-soon a second after now; and d-failed and d-manual with none.
func seedDue(t *testing.T, s Stores, now time.Time) {
	t.Helper()
	ctx := context.Background()
	for _, d := range []struct {
		id   string
		next time.Time
	}{
		{"d-tie-a", now.Add(-time.Hour)}, {"d-soon", now.Add(time.Second)}, {"d-late", now.Add(-2 * time.Hour)},
		{"d-tie-B", now.Add(-time.Hour)}, {"d-now", now}, {"d-tie-_", now.Add(-time.Hour)},
	} {
		// A domain's first check is due when it is created.
		mustCreateDomain(t, s, newDomainAt(d.id, "", d.next))
	}
	mustCreateDomain(t, s, newDomainAt("d-failed", "", now.Add(-30*24*time.Hour)))
	if err := s.Domains.Update(ctx, "d-failed", func(d *domain.Domain) error {
		d.Observe(nil, now.Add(-3*time.Hour), domainPolicy)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mustCreateDomain(t, s, newDomainAt("d-manual", "", now.Add(-5*time.Hour)))
	if err := s.Domains.Update(ctx, "d-manual", func(d *domain.Domain) error {
		return d.VerifyManually("known customer", now.Add(-4*time.Hour))
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []domain.DomainID{"d-failed", "d-manual"} {
		if !mustGetDomain(t, s, id).NextCheckAt().IsZero() {
			t.Fatalf("%s has a check scheduled", id)
		}
	}
}

// claimLease is the lease of the suite's claims.
const claimLease = 5 * time.Minute

// mustClaimDomains claims up to limit domains due at now for claimLease, checks
// that each came back with its next check at the end of the claim, and
// returns their ids sorted.
func mustClaimDomains(t *testing.T, s Stores, now time.Time, limit int) []string {
	t.Helper()
	due, err := s.Domains.ClaimDue(context.Background(), now, claimLease, limit)
	if err != nil {
		t.Fatalf("ClaimDue(%v, %d): %v", now, limit, err)
	}
	until := domain.Timestamp(now.Add(claimLease))
	for _, d := range due {
		if !d.NextCheckAt().Equal(until) {
			t.Fatalf("claimed %s has its next check at %v, want the end of the claim %v", d.ID(), d.NextCheckAt(), until)
		}
		if got := mustGetDomain(t, s, d.ID()).NextCheckAt(); !got.Equal(until) {
			t.Fatalf("stored %s has its next check at %v, want the end of the claim %v", d.ID(), got, until)
		}
	}
	ids := domainIDs(due)
	slices.Sort(ids)
	return ids
}

// sorted returns ids sorted, as mustClaimDomains returns them.
func sorted(ids ...string) []string {
	return slices.Sorted(slices.Values(ids))
}

func testDomainClaimDue(t *testing.T, s Stores) {
	now := baseTime.Add(10 * time.Hour)
	if got := mustClaimDomains(t, s, now, 10); len(got) != 0 {
		t.Fatalf("claim on an empty store = %v", got)
	}
	seedDue(t, s, now)
	// Most overdue first, ties in byte order: d-late, d-tie-B, d-tie-_,
	// d-tie-a, then d-now; d-soon is not due yet.
	if got := mustClaimDomains(t, s, now, 1); !slices.Equal(got, []string{"d-late"}) {
		t.Fatalf("claim of 1 = %v, want [d-late]", got)
	}
	if got := mustClaimDomains(t, s, now, 2); !slices.Equal(got, sorted("d-tie-B", "d-tie-_")) {
		t.Fatalf("claim of 2 = %v, want [d-tie-B d-tie-_]", got)
	}
	// now is compared at the stores' microsecond precision, inclusively.
	if got := mustClaimDomains(t, s, now.Add(-time.Microsecond), 100); !slices.Equal(got, []string{"d-tie-a"}) {
		t.Fatalf("claim a microsecond earlier = %v, want [d-tie-a]", got)
	}
	if got := mustClaimDomains(t, s, now.Add(999*time.Nanosecond), 100); !slices.Equal(got, []string{"d-now"}) {
		t.Fatalf("claim a few nanoseconds later = %v, want [d-now]", got)
	}
	// Every due domain is claimed: nothing is left but d-soon, a second on.
	if got := mustClaimDomains(t, s, now, 100); len(got) != 0 {
		t.Fatalf("claim of what others claimed = %v, want none", got)
	}
	if got := mustClaimDomains(t, s, now.Add(time.Second), 100); !slices.Equal(got, []string{"d-soon"}) {
		t.Fatalf("claim a second later = %v, want [d-soon]", got)
	}
	// A check's update replaces the claim with the real next check.
	if err := s.Domains.Update(context.Background(), "d-late", func(d *domain.Domain) error {
		d.Observe(nil, now, domainPolicy)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := mustGetDomain(t, s, "d-late").NextCheckAt(); !got.Equal(now.Add(domainPolicy.Interval)) {
		t.Fatalf("d-late's next check after its check = %v, want a minute on", got)
	}
	if got := mustClaimDomains(t, s, now.Add(domainPolicy.Interval), 100); !slices.Equal(got, []string{"d-late"}) {
		t.Fatalf("claim a minute later = %v, want [d-late]", got)
	}
}

func testDomainClaimLease(t *testing.T, s Stores) {
	now := baseTime.Add(10 * time.Hour)
	seedDue(t, s, now)
	all := sorted("d-late", "d-tie-B", "d-tie-_", "d-tie-a", "d-now")
	if got := mustClaimDomains(t, s, now, 100); !slices.Equal(got, all) {
		t.Fatalf("claim = %v, want %v", got, all)
	}
	// The claimer died: its domains stay hidden until the lease ends,
	// then come due again, with d-soon that has come due meanwhile.
	if got := mustClaimDomains(t, s, now.Add(claimLease-time.Microsecond), 100); !slices.Equal(got, []string{"d-soon"}) {
		t.Fatalf("claim just before the lease ends = %v, want [d-soon]", got)
	}
	if got := mustClaimDomains(t, s, now.Add(claimLease), 100); !slices.Equal(got, all) {
		t.Fatalf("claim when the lease ends = %v, want %v", got, all)
	}
}

func testDomainClaimSkipsUnscheduled(t *testing.T, s Stores) {
	now := baseTime.Add(10 * time.Hour)
	seedDue(t, s, now)
	got := mustClaimDomains(t, s, now.Add(365*24*time.Hour), 1000)
	if slices.Contains(got, "d-failed") || slices.Contains(got, "d-manual") || len(got) != 6 {
		t.Fatalf("claim a year later = %v, want the six scheduled domains", got)
	}
	// A requested check schedules it again.
	if err := s.Domains.Update(context.Background(), "d-failed", func(d *domain.Domain) error {
		d.RequestCheck(now)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := mustClaimDomains(t, s, now, 100); !slices.Equal(got, []string{"d-failed"}) {
		t.Fatalf("claim after a requested check = %v, want [d-failed]", got)
	}
}

func testDomainClaimBadLimit(t *testing.T, s Stores) {
	mustCreateDomain(t, s, newDomainAt("d1", "", baseTime))
	for _, limit := range []int{0, -1, 1001} {
		_, err := s.Domains.ClaimDue(context.Background(), baseTime, claimLease, limit)
		mustBeKind(t, err, domain.ErrInvalid)
	}
	for _, lease := range []time.Duration{0, -time.Minute, time.Microsecond} {
		_, err := s.Domains.ClaimDue(context.Background(), baseTime, lease, 10)
		mustBeKind(t, err, domain.ErrInvalid)
	}
	// Nothing was claimed by the refused calls.
	if got := mustGetDomain(t, s, "d1").NextCheckAt(); !got.Equal(baseTime) {
		t.Fatalf("next check after refused claims = %v, want %v", got, baseTime)
	}
}

func testDomainClaimConcurrent(t *testing.T, s Stores) {
	const n, claimers, batch = 60, 6, 4
	now := baseTime.Add(10 * time.Hour)
	for i := range n {
		mustCreateDomain(t, s, newDomainAt(fmt.Sprintf("c%03d", i), "", now.Add(-time.Duration(i%7)*time.Minute)))
	}
	claimed := make([][]string, claimers)
	errs := make([]error, claimers)
	var wg sync.WaitGroup
	for c := range claimers {
		wg.Go(func() {
			// Each claimer claims until nothing is left, as verifier
			// passes on several replicas would.
			for {
				due, err := s.Domains.ClaimDue(context.Background(), now, claimLease, batch)
				if err != nil {
					errs[c] = err
					return
				}
				if len(due) == 0 {
					return
				}
				claimed[c] = append(claimed[c], domainIDs(due)...)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, ids := range claimed {
		for _, id := range ids {
			seen[id]++
		}
	}
	for i := range n {
		if id := fmt.Sprintf("c%03d", i); seen[id] != 1 {
			t.Errorf("%s was claimed %d times, want once", id, seen[id])
		}
	}
	if len(seen) != n {
		t.Errorf("%d domains claimed, want %d", len(seen), n)
	}
}

func testDomainCopies(t *testing.T, s Stores) {
	ctx := context.Background()
	d := newDomainAt("d1", "", baseTime)
	mustCreateDomain(t, s, d)
	want := domain.RehydrateDomain(d.State())
	// Changing what was created, and what each read returned, leaves the store as it was.
	d.Observe(nil, baseTime.Add(time.Hour), domainPolicy)
	got := mustGetDomain(t, s, "d1")
	got.Observe(nil, baseTime.Add(time.Hour), domainPolicy)
	page, err := s.Domains.List(ctx, ports.DomainQuery{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	page.Domains[0].AssignOrganization("other", baseTime)
	due, err := s.Domains.ClaimDue(ctx, baseTime, claimLease, 1)
	if err != nil {
		t.Fatal(err)
	}
	_ = due[0].VerifyManually("x", baseTime)
	// The claim changed the stored next check, and nothing else.
	want = domain.RehydrateDomain(func() domain.DomainState {
		st := want.State()
		st.NextCheckAt = baseTime.Add(claimLease)
		return st
	}())
	var inFn *domain.Domain
	_ = s.Domains.Update(ctx, "d1", func(d *domain.Domain) error {
		inFn = d
		return errors.New("no")
	})
	inFn.RequestCheck(baseTime.Add(time.Hour))
	assertSameDomain(t, mustGetDomain(t, s, "d1"), want)
}
