package admin_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

func TestAdministration_refusals_are_audited(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	boss := w.SignedIn(t, "boss@example.com")
	eve, eveToken := w.SignedInWithToken(t, "eve@example.com")
	_, err := w.Admin.BanUser(t.Context(), usecase.AdminRequest{Principal: eve, RequestID: "r-1", IPAddress: "203.0.113.9"}, boss.User.ID(), "", 0)
	usecasetest.MustCode(t, err, "admin.ban_forbidden")
	_, err = w.Admin.BanUser(t.Context(), usecase.AdminRequest{Principal: boss}, boss.User.ID(), "", 0)
	usecasetest.MustCode(t, err, "admin.cannot_ban_self")
	if _, err := w.Admin.BanUser(t.Context(), usecase.AdminRequest{Principal: boss, RequestID: "r-2"}, eve.User.ID(), "spam", time.Hour); err != nil {
		t.Fatal(err)
	}
	// The ban ended eve's session.
	_, err = w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: eveToken})
	usecasetest.MustCode(t, err, "UNAUTHORIZED")
	es := w.Entries(t, "admin.ban-user")
	if len(es) != 3 {
		t.Fatalf("ban entries = %+v, want 3", es)
	}
	// Newest first: success, failure (self), denied (eve).
	want := []struct {
		outcome domain.Outcome
		actor   domain.UserID
	}{{domain.OutcomeSuccess, boss.User.ID()}, {domain.OutcomeFailure, boss.User.ID()}, {domain.OutcomeDenied, eve.User.ID()}}
	for i, e := range es {
		if e.Outcome != want[i].outcome || e.ActorID != string(want[i].actor) || e.ActorType != domain.ActorUser {
			t.Fatalf("entry %d = %+v, want %v by %s", i, e, want[i].outcome, want[i].actor)
		}
	}
	if es[2].RequestID != "r-1" || es[2].IPAddress != "203.0.113.9" || es[2].TargetID != string(boss.User.ID()) {
		t.Fatalf("denied entry = %+v", es[2])
	}
	// The ban lifts by itself after its hour.
	w.Clock.Advance(time.Hour)
	if _, err := w.SignIns.SignIn(t.Context(), account.SignIn{Email: "eve@example.com", Password: usecasetest.Password}); err != nil {
		t.Fatalf("sign-in after the ban expired: %v", err)
	}
}

func TestImpersonation_session_ends_after_its_lifetime(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	boss := w.SignedIn(t, "boss@example.com")
	bob := w.SignedIn(t, "bob@example.com")
	res, err := w.Admin.ImpersonateUser(t.Context(), usecase.AdminRequest{Principal: boss}, bob.User.ID(), usecase.Client{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Session.ExpiresAt().Equal(w.Clock.Now().Add(time.Hour)) || res.Session.RememberMe() || res.Session.ImpersonatedBy() != boss.User.ID() {
		t.Fatalf("impersonation session = %+v", res.Session)
	}
	_, err = w.Admin.ImpersonateUser(t.Context(), usecase.AdminRequest{Principal: bob}, boss.User.ID(), usecase.Client{})
	usecasetest.MustCode(t, err, "admin.impersonate_forbidden")
	w.Clock.Advance(time.Hour)
	_, err = w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: res.Token})
	usecasetest.MustCode(t, err, "UNAUTHORIZED")
}
