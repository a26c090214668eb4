package admin_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// overviewWorld is a world with two users, ada (a platform administrator)
// and bob, and a dashboard on its stores.
func overviewWorld(t *testing.T) (*usecasetest.World, *admin.Dashboard, *memory.SignInStats, *memory.AuditLog, *domain.User, *domain.User) {
	t.Helper()
	w := usecasetest.NewWorld(t, false)
	ada := w.MustSignUp(t, "ada@example.com").User
	bob := w.MustSignUp(t, "bob@example.com").User
	stats, log := memory.NewSignInStats(), memory.NewAuditLog(w.DB)
	h := admin.NewDashboard(w.Users, memory.NewOrganizationRepository(w.DB), memory.NewDomainRepository(w.DB),
		memory.NewSessionRepository(w.DB), stats, log, w.Clock, domain.PlatformAdmins{UserIDs: []domain.UserID{ada.ID()}})
	return w, h, stats, log, ada, bob
}

// Ensure the overview counts what the stores hold, buckets the sign-ins of
// the last day by hour and of the last month by day, each series ending
// with the current step, and lists the newest audit entries first.
func TestOverview_shows_counts_series_and_recent_audit(t *testing.T) {
	w, h, stats, log, ada, _ := overviewWorld(t)
	now := w.Clock.Now().Add(25 * time.Minute)
	w.Clock.Advance(25 * time.Minute)
	for _, r := range []struct {
		at      time.Time
		outcome ports.SignInOutcome
	}{
		{now, ports.SignInSuccess},
		{now.Add(-3 * time.Hour), ports.SignInFailure},
		{now.Add(-2 * 24 * time.Hour), ports.SignInLocked},
		{now.Add(-40 * 24 * time.Hour), ports.SignInFailure}, // before the month
	} {
		if err := stats.Record(t.Context(), r.at, r.outcome, 1); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 12 {
		e := domain.AuditEntry{ID: fmt.Sprintf("a%02d", i), OccurredAt: now.Add(time.Duration(i-12) * time.Minute), ActorType: domain.ActorUser,
			ActorID: string(ada.ID()), Action: "admin.ban-user", Outcome: domain.OutcomeSuccess}
		if err := log.Append(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	o, err := h.Overview(t.Context(), ada)
	if err != nil {
		t.Fatal(err)
	}
	if o.Users != 2 || o.Organizations != 0 || o.ActiveSessions != 2 {
		t.Errorf("counts %d users, %d organizations, %d sessions; want 2, 0, 2", o.Users, o.Organizations, o.ActiveSessions)
	}
	if len(o.Domains) != 3 || o.Domains[domain.DomainPending] != 0 {
		t.Errorf("domains = %v, want every status at zero", o.Domains)
	}
	if len(o.Hourly) != admin.OverviewHours || len(o.Daily) != admin.OverviewDays {
		t.Fatalf("%d hours and %d days, want %d and %d", len(o.Hourly), len(o.Daily), admin.OverviewHours, admin.OverviewDays)
	}
	last := o.Hourly[len(o.Hourly)-1]
	if !last.Start.Equal(now.Truncate(time.Hour)) || last.Succeeded != 1 || last.Failed != 0 {
		t.Errorf("current hour = %+v, want 1 success in the hour of %v", last, now)
	}
	if b := o.Hourly[len(o.Hourly)-4]; b.Failed != 1 || b.Succeeded != 0 {
		t.Errorf("three hours ago = %+v, want 1 failure", b)
	}
	today := o.Daily[len(o.Daily)-1]
	if !today.Start.Equal(now.Truncate(24*time.Hour)) || today.Succeeded != 1 || today.Failed != 1 {
		t.Errorf("today = %+v, want 1 success and 1 failure", today)
	}
	total := 0
	for _, b := range o.Daily {
		total += b.Failed
	}
	if total != 2 {
		t.Errorf("%d failures in the month, want 2 (not the one 40 days ago)", total)
	}
	if len(o.RecentAudit) != admin.OverviewAuditEntries || o.RecentAudit[0].ID != "a11" || o.RecentAudit[9].ID != "a02" {
		t.Errorf("recent audit = %d entries from %v, want the 10 newest from a11", len(o.RecentAudit), o.RecentAudit)
	}
}

// Ensure only a platform administrator sees the overview.
func TestOverview_refuses_a_user_who_is_not_an_administrator(t *testing.T) {
	_, h, _, _, _, bob := overviewWorld(t)
	if _, err := h.Overview(t.Context(), bob); !errors.Is(err, domain.ErrNotPlatformAdmin) {
		t.Fatalf("Overview(bob) = %v, want %v", err, domain.ErrNotPlatformAdmin)
	}
}

// Ensure that just after midnight (UTC) the current hour and today hold
// only what happened since, and the hour before falls on yesterday.
func TestOverview_series_just_after_midnight(t *testing.T) {
	w, h, stats, _, ada, _ := overviewWorld(t)
	now := w.Clock.Now()
	w.Clock.Advance(now.Truncate(24 * time.Hour).Add(24*time.Hour + 10*time.Minute).Sub(now))
	now = w.Clock.Now()
	for at, outcome := range map[time.Time]ports.SignInOutcome{now: ports.SignInSuccess, now.Add(-30 * time.Minute): ports.SignInBanned} {
		if err := stats.Record(t.Context(), at, outcome, 1); err != nil {
			t.Fatal(err)
		}
	}
	o, err := h.Overview(t.Context(), ada)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Hourly) != admin.OverviewHours || len(o.Daily) != admin.OverviewDays {
		t.Fatalf("%d hours and %d days", len(o.Hourly), len(o.Daily))
	}
	want := func(name string, b ports.SignInBucket, start time.Time, ok, failed int) {
		t.Helper()
		if !b.Start.Equal(start) || b.Succeeded != ok || b.Failed != failed {
			t.Errorf("%s = %+v, want %d succeeded and %d failed from %v", name, b, ok, failed, start)
		}
	}
	hour, day := now.Truncate(time.Hour), now.Truncate(24*time.Hour)
	want("this hour", o.Hourly[23], hour, 1, 0)
	want("the hour before", o.Hourly[22], hour.Add(-time.Hour), 0, 1)
	want("today", o.Daily[29], day, 1, 0)
	want("yesterday", o.Daily[28], day.Add(-24*time.Hour), 0, 1)
}
