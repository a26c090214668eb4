package command_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/passwordhash"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// adminWorld adds organizations, administration and service keys to world.
type adminWorld struct {
	*world
	orgs   *command.Organizations
	admin  *command.Administration
	keys   *command.ServiceKeys
	audit  *memory.AuditLog
	admins domain.PlatformAdmins
}

func newAdminWorld(t *testing.T) *adminWorld {
	t.Helper()
	w := &adminWorld{world: newWorld(t, false)}
	sessions := memory.NewSessionRepository(w.db)
	w.audit = memory.NewAuditLog(w.db)
	tokens, ids := system.NewTokenGenerator(), system.NewIDGenerator()
	hasher := passwordhash.New(passwordhash.Params{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}, 4)
	w.admins = domain.PlatformAdmins{Emails: []domain.Email{"boss@example.com"}}
	adminSettings := command.AdminSettings{Admins: w.admins, ImpersonationTTL: time.Hour}
	w.orgs = command.NewOrganizations(memory.NewOrganizationRepository(w.db), w.users, sessions, w.mail, w.audit, ids, w.clock,
		command.OrganizationSettings{InvitationTTL: 48 * time.Hour, InvitationLimit: 2, InvitationURL: "https://app.example.com/invite/{id}"})
	w.admin = command.NewAdministration(w.users, w.creds, sessions, hasher, noBlocklist{}, w.audit, tokens, ids, w.clock, w.settings, adminSettings)
	w.keys = command.NewServiceKeys(memory.NewServiceKeyRepository(w.db), w.audit, tokens, ids, w.clock, adminSettings)
	return w
}

// signedIn signs a new, verified user up and returns their principal.
func (w *adminWorld) signedIn(t *testing.T, email string) command.Principal {
	t.Helper()
	p, _ := w.signedInWithToken(t, email)
	return p
}

// signedInWithToken is signedIn that also returns the session's bearer token.
func (w *adminWorld) signedInWithToken(t *testing.T, email string) (command.Principal, string) {
	t.Helper()
	w.mustSignUp(t, email)
	res, err := w.signIn.Handle(t.Context(), command.SignIn{Email: email, Password: pw, RememberMe: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.users.Update(t.Context(), res.User.ID(), func(u *domain.User) error { u.MarkEmailVerified(w.clock.Now()); return nil }); err != nil {
		t.Fatal(err)
	}
	a, err := w.auth.Handle(t.Context(), command.Authenticate{Token: res.Token})
	if err != nil {
		t.Fatal(err)
	}
	return a.Principal, res.Token
}

func (w *adminWorld) entries(t *testing.T, action string) []domain.AuditEntry {
	t.Helper()
	es, err := w.audit.List(t.Context(), ports.AuditQuery{Action: action, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestInvitation_expires_after_its_lifetime(t *testing.T) {
	w := newAdminWorld(t)
	owner := w.signedIn(t, "owner@example.com")
	bob := w.signedIn(t, "bob@example.com")
	org, _, err := w.orgs.Create(t.Context(), command.OrgRequest{Principal: owner}, command.CreateOrganization{Name: "Acme", Slug: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := w.orgs.Invite(t.Context(), command.OrgRequest{Principal: owner}, command.InviteMember{
		Organization: command.OrgSelector{ID: org.ID()}, Email: "bob@example.com", Roles: []string{"member"}})
	if err != nil {
		t.Fatal(err)
	}
	mail := w.mail.last(t, domain.MailInvitation)
	if mail.Link != "https://app.example.com/invite/"+string(inv.ID()) || mail.Organization != "Acme" || mail.ExpiresIn != 48*time.Hour {
		t.Fatalf("invitation mail = %+v", mail)
	}
	w.clock.Advance(48 * time.Hour)
	_, _, err = w.orgs.Accept(t.Context(), command.OrgRequest{Principal: bob}, inv.ID())
	mustCode(t, err, "invitation.not_open")
	// Once expired it no longer counts as pending: a new one may be sent.
	if _, err := w.orgs.Invite(t.Context(), command.OrgRequest{Principal: owner}, command.InviteMember{
		Organization: command.OrgSelector{ID: org.ID()}, Email: "bob@example.com", Roles: []string{"member"}}); err != nil {
		t.Fatalf("re-inviting after expiry: %v", err)
	}
	es := w.entries(t, "organization.accept-invitation")
	if len(es) != 1 || es[0].Outcome != domain.OutcomeFailure || es[0].Code != "invitation.not_open" || es[0].ActorID != string(bob.User.ID()) {
		t.Fatalf("audit of the refused acceptance = %+v", es)
	}
}

func TestInvitation_limit_and_resend(t *testing.T) {
	w := newAdminWorld(t)
	owner := w.signedIn(t, "owner@example.com")
	req := command.OrgRequest{Principal: owner}
	org, _, err := w.orgs.Create(t.Context(), req, command.CreateOrganization{Name: "Acme", Slug: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	invite := func(email string, resend bool) (*domain.Invitation, error) {
		return w.orgs.Invite(t.Context(), req, command.InviteMember{Organization: command.OrgSelector{ID: org.ID()}, Email: email, Roles: []string{"member"}, Resend: resend})
	}
	first, err := invite("a@example.com", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = invite("a@example.com", false)
	mustCode(t, err, "invitation.already_invited")
	w.clock.Advance(time.Hour)
	again, err := invite("a@example.com", true)
	if err != nil || again.ID() != first.ID() || !again.ExpiresAt().Equal(first.ExpiresAt().Add(time.Hour)) {
		t.Fatalf("resend = %v, %v; want the same invitation renewed", again, err)
	}
	if _, err := invite("b@example.com", false); err != nil {
		t.Fatal(err)
	}
	_, err = invite("c@example.com", false)
	mustCode(t, err, "invitation.limit_reached")
}

func TestServiceKey_rotation_overlap_ends(t *testing.T) {
	w := newAdminWorld(t)
	req := command.KeyRequest{Actor: command.CLIActor}
	issued, err := w.keys.Create(t.Context(), req, command.CreateServiceKey{Name: "ci", Scopes: []string{"users:read"}, ExpiresAt: w.clock.Now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := w.keys.Rotate(t.Context(), req, issued.Key.ID(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{issued.Secret, rotated.Secret} {
		if _, err := w.keys.Authenticate(t.Context(), secret); err != nil {
			t.Fatalf("during the overlap: %v", err)
		}
	}
	w.clock.Advance(10 * time.Minute)
	_, err = w.keys.Authenticate(t.Context(), issued.Secret)
	mustCode(t, err, "auth.invalid_service_key")
	if _, err := w.keys.Authenticate(t.Context(), rotated.Secret); err != nil {
		t.Fatalf("the new secret after the overlap: %v", err)
	}
	w.clock.Advance(24 * time.Hour)
	_, err = w.keys.Authenticate(t.Context(), rotated.Secret)
	mustCode(t, err, "auth.invalid_service_key")
	_, err = w.keys.Rotate(t.Context(), req, issued.Key.ID(), 0)
	mustCode(t, err, "service_key.not_found")
}

func TestServiceKey_last_use_is_written_in_batches(t *testing.T) {
	w := newAdminWorld(t)
	req := command.KeyRequest{Actor: command.CLIActor}
	issued, err := w.keys.Create(t.Context(), req, command.CreateServiceKey{Name: "ci", Scopes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func() time.Time {
		ks, err := w.keys.List(t.Context(), req)
		if err != nil || len(ks) != 1 {
			t.Fatalf("List = %v, %v", ks, err)
		}
		return ks[0].LastUsedAt()
	}
	if _, err := w.keys.Authenticate(t.Context(), issued.Secret); err != nil {
		t.Fatal(err)
	}
	if !lastUsed().IsZero() {
		t.Fatal("authentication wrote last use on the request path")
	}
	used := w.clock.Now()
	w.clock.Advance(time.Second)
	if err := w.keys.FlushLastUsed(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); !got.Equal(used) {
		t.Fatalf("last used = %s, want %s", got, used)
	}
	for _, bad := range []string{"", "gh_sk_short", issued.Secret[:len(issued.Secret)-1] + "!", "xx" + issued.Secret[2:]} {
		_, err := w.keys.Authenticate(t.Context(), bad)
		mustCode(t, err, "auth.invalid_service_key")
	}
}

func TestAdministration_refusals_are_audited(t *testing.T) {
	w := newAdminWorld(t)
	boss := w.signedIn(t, "boss@example.com")
	eve, eveToken := w.signedInWithToken(t, "eve@example.com")
	_, err := w.admin.BanUser(t.Context(), command.AdminRequest{Principal: eve, RequestID: "r-1", IPAddress: "203.0.113.9"}, boss.User.ID(), "", 0)
	mustCode(t, err, "admin.ban_forbidden")
	_, err = w.admin.BanUser(t.Context(), command.AdminRequest{Principal: boss}, boss.User.ID(), "", 0)
	mustCode(t, err, "admin.cannot_ban_self")
	if _, err := w.admin.BanUser(t.Context(), command.AdminRequest{Principal: boss, RequestID: "r-2"}, eve.User.ID(), "spam", time.Hour); err != nil {
		t.Fatal(err)
	}
	// The ban ended eve's session.
	_, err = w.auth.Handle(t.Context(), command.Authenticate{Token: eveToken})
	mustCode(t, err, "UNAUTHORIZED")
	es := w.entries(t, "admin.ban-user")
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
	w.clock.Advance(time.Hour)
	if _, err := w.signIn.Handle(t.Context(), command.SignIn{Email: "eve@example.com", Password: pw}); err != nil {
		t.Fatalf("sign-in after the ban expired: %v", err)
	}
}

func TestImpersonation_session_ends_after_its_lifetime(t *testing.T) {
	w := newAdminWorld(t)
	boss := w.signedIn(t, "boss@example.com")
	bob := w.signedIn(t, "bob@example.com")
	res, err := w.admin.ImpersonateUser(t.Context(), command.AdminRequest{Principal: boss}, bob.User.ID(), command.Client{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Session.ExpiresAt().Equal(w.clock.Now().Add(time.Hour)) || res.Session.RememberMe() || res.Session.ImpersonatedBy() != boss.User.ID() {
		t.Fatalf("impersonation session = %+v", res.Session)
	}
	_, err = w.admin.ImpersonateUser(t.Context(), command.AdminRequest{Principal: bob}, boss.User.ID(), command.Client{})
	mustCode(t, err, "admin.impersonate_forbidden")
	w.clock.Advance(time.Hour)
	_, err = w.auth.Handle(t.Context(), command.Authenticate{Token: res.Token})
	mustCode(t, err, "UNAUTHORIZED")
}
