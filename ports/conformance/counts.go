package conformance

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// RunCounts runs the counts the administrators' overview reads:
// UserRepository.Count, OrganizationRepository.Count,
// DomainRepository.CountByStatus and SessionRepository.CountActive.
func RunCounts(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"empty_store_counts_nothing", testCountsEmpty},
		{"counts_follow_creations_and_deletions", testCountsFollowChanges},
		{"domains_are_counted_by_status", testCountsDomainsByStatus},
		{"active_sessions_are_those_not_expired_at_now", testCountsActiveSessions},
	}
	for _, tt := range tests {
		t.Run("contract=Counts/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// counts reads the four counts of s at now.
func counts(t *testing.T, s Stores, now time.Time) (users, orgs, sessions int, domains map[domain.DomainStatus]int) {
	t.Helper()
	ctx := context.Background()
	var err error
	if users, err = s.Users.Count(ctx); err != nil {
		t.Fatalf("Users.Count: %v", err)
	}
	if orgs, err = s.Organizations.Count(ctx); err != nil {
		t.Fatalf("Organizations.Count: %v", err)
	}
	if sessions, err = s.Sessions.CountActive(ctx, now); err != nil {
		t.Fatalf("Sessions.CountActive: %v", err)
	}
	if domains, err = s.Domains.CountByStatus(ctx); err != nil {
		t.Fatalf("Domains.CountByStatus: %v", err)
	}
	return users, orgs, sessions, domains
}

func testCountsEmpty(t *testing.T, s Stores) {
	users, orgs, sessions, domains := counts(t, s, baseTime)
	if users != 0 || orgs != 0 || sessions != 0 || len(domains) != 0 {
		t.Fatalf("empty store counts %d users, %d organizations, %d sessions, domains %v", users, orgs, sessions, domains)
	}
}

func testCountsFollowChanges(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOrg(t, s, "o1", "u2") // and its owner
	mustCreateOrg(t, s, "o2", "u3")
	if users, orgs, _, _ := counts(t, s, baseTime); users != 3 || orgs != 2 {
		t.Fatalf("counts %d users, %d organizations; want 3, 2", users, orgs)
	}
	mustDeleteUser(t, s, "u3")
	if err := s.Organizations.Delete(context.Background(), "o2"); err != nil {
		t.Fatal(err)
	}
	if users, orgs, _, _ := counts(t, s, baseTime); users != 2 || orgs != 1 {
		t.Fatalf("after deletions: %d users, %d organizations; want 2, 1", users, orgs)
	}
}

func testCountsDomainsByStatus(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "owner1")
	for i, id := range []string{"d1", "d2", "d3", "d4", "d5"} {
		mustCreateDomain(t, s, newDomainAt(id, "o1", baseTime.Add(time.Duration(i)*time.Minute)))
	}
	for _, id := range []domain.DomainID{"d2", "d4"} {
		if err := s.Domains.Update(ctx, id, func(d *domain.Domain) error { return d.VerifyManually("ok", baseTime.Add(time.Hour)) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Domains.Update(ctx, "d5", func(d *domain.Domain) error {
		d.Observe(nil, baseTime.Add(4*time.Minute).Add(domainPolicy.Window), domainPolicy)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := map[domain.DomainStatus]int{domain.DomainPending: 2, domain.DomainVerified: 2, domain.DomainFailed: 1}
	if _, _, _, got := counts(t, s, baseTime); !maps.Equal(got, want) {
		t.Fatalf("CountByStatus = %v, want %v", got, want)
	}
}

func testCountsActiveSessions(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	for i, expires := range []time.Duration{time.Hour, 2 * time.Hour, -time.Minute, 0} {
		user := domain.UserID("u1")
		if i%2 == 1 {
			user = "u2"
		}
		mustCreateSession(t, s.Sessions, makeSession(string(rune('a'+i)), user, baseTime.Add(-time.Hour), baseTime.Add(expires)))
	}
	// Expired at or before now is not active, as DeleteExpired sees it.
	if _, _, n, _ := counts(t, s, baseTime); n != 2 {
		t.Fatalf("CountActive = %d, want 2", n)
	}
	if _, _, n, _ := counts(t, s, baseTime.Add(90*time.Minute)); n != 1 {
		t.Fatalf("CountActive an hour and a half on = %d, want 1", n)
	}
	zone := time.FixedZone("UTC-07:00", -7*3600)
	if _, _, n, _ := counts(t, s, baseTime.Add(-30*time.Second).In(zone)); n != 3 {
		t.Fatalf("CountActive half a minute earlier, in another zone = %d, want 3", n)
	}
}
