package organization_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// keyOrgWorld is the organization use cases on one memory store, with every
// limit low, called by the service key "key-1" holding every scope.
type keyOrgWorld struct {
	*usecasetest.World
	orgs  *organization.Organizations
	audit *memory.AuditLog
	req   usecase.TrustedRequest
}

func newKeyOrgWorld(t *testing.T) *keyOrgWorld {
	t.Helper()
	w := &keyOrgWorld{World: usecasetest.NewWorld(t, false)}
	w.audit = memory.NewAuditLog(w.DB)
	w.orgs = organization.NewOrganizations(memory.NewOrganizationRepository(w.DB), w.Users, memory.NewSessionRepository(w.DB), w.Mail, w.AuditorOf(w.audit), memory.NewPasskeyRepository(w.DB),
		system.NewIDGenerator(), w.Clock, organization.OrganizationSettings{InvitationTTL: 48 * time.Hour, InvitationLimit: 1, MembershipLimit: 2,
			OrganizationLimit: 1, InvitationURL: "https://app.example.com/invite/{id}"})
	key := domain.RehydrateServiceKey("key-1", "backend", []domain.Scope{domain.ScopeAll}, "abcd", "cli", time.Time{}, w.Clock.Now(), time.Time{}, time.Time{})
	w.req = usecase.TrustedRequest{Key: key, RequestID: "req-1", IPAddress: "192.0.2.1"}
	return w
}

// userID signs a user up and returns their id.
func (w *keyOrgWorld) userID(t *testing.T, email string) domain.UserID {
	t.Helper()
	return w.MustSignUp(t, email).User.ID()
}

// Ensure the organization limits (organizations per user, members and open
// invitations per organization) hold for a service key as for a session,
// and that the refusals are audited with the key as the actor under the
// trusted API's action names.
func TestOrganizations_by_id_limits(t *testing.T) {
	w := newKeyOrgWorld(t)
	ctx := t.Context()
	owner, bob, carol := w.userID(t, "owner@example.com"), w.userID(t, "bob@example.com"), w.userID(t, "carol@example.com")
	acme, err := w.orgs.CreateFor(ctx, w.req, organization.CreateOrganizationFor{Name: "Acme", Slug: "acme", OwnerUserID: owner})
	if err != nil || acme.MemberCount != 1 {
		t.Fatalf("CreateFor = %+v, %v", acme, err)
	}
	org := acme.Organization.ID()

	_, err = w.orgs.CreateFor(ctx, w.req, organization.CreateOrganizationFor{Name: "Second", Slug: "second", OwnerUserID: owner})
	usecasetest.MustFail(t, err, domain.KindForbidden, "organization.user_limit_reached")

	if _, err := w.orgs.AddMember(ctx, w.req, org, organization.AddMember{UserID: bob, Roles: []string{"member"}}); err != nil {
		t.Fatal(err)
	}
	_, err = w.orgs.AddMember(ctx, w.req, org, organization.AddMember{UserID: carol, Roles: []string{"member"}})
	usecasetest.MustFail(t, err, domain.KindForbidden, "organization.member_limit_reached")

	if _, err := w.orgs.InviteByID(ctx, w.req, org, organization.InviteAddress{Email: "dan@example.com", Roles: []string{"member"}}); err != nil {
		t.Fatal(err)
	}
	_, err = w.orgs.InviteByID(ctx, w.req, org, organization.InviteAddress{Email: "eve@example.com", Roles: []string{"member"}})
	usecasetest.MustFail(t, err, domain.KindForbidden, "invitation.limit_reached")

	es, err := w.audit.List(ctx, ports.AuditQuery{ActorID: "key-1", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, e := range es {
		if e.ActorType != domain.ActorServiceKey || e.RequestID != "req-1" || e.IPAddress != "192.0.2.1" {
			t.Fatalf("audit entry %+v does not name the key's request", e)
		}
		if e.Outcome != domain.OutcomeSuccess {
			refused = append(refused, e.Action+" "+e.Code)
		}
	}
	want := []string{"organizations.invite invitation.limit_reached", "organizations.add-member organization.member_limit_reached",
		"organizations.create organization.user_limit_reached"}
	if len(refused) != len(want) {
		t.Fatalf("refusals = %v, want %v", refused, want)
	}
	for i := range want {
		if refused[i] != want[i] {
			t.Fatalf("refusals = %v, want %v", refused, want)
		}
	}
}

// Ensure an invitation without an inviter records none and mails the link
// without naming anyone, and one naming a member mails their name.
func TestOrganizations_by_id_invitation_mail(t *testing.T) {
	w := newKeyOrgWorld(t)
	ctx := t.Context()
	owner := w.userID(t, "owner@example.com")
	acme, err := w.orgs.CreateFor(ctx, w.req, organization.CreateOrganizationFor{Name: "Acme", Slug: "acme", OwnerUserID: owner})
	if err != nil {
		t.Fatal(err)
	}
	org := acme.Organization.ID()
	inv, err := w.orgs.InviteByID(ctx, w.req, org, organization.InviteAddress{Email: "dan@example.com", Roles: []string{"admin"}})
	if err != nil || inv.InviterID() != "" {
		t.Fatalf("InviteByID = %v, %v; want no inviter", inv, err)
	}
	mail := w.Mail.Last(t, domain.MailInvitation)
	if mail.Inviter != "" || mail.Organization != "Acme" || mail.To != "dan@example.com" || mail.Link != "https://app.example.com/invite/"+string(inv.ID()) {
		t.Fatalf("mail = %+v", mail)
	}
	// Resent with the owner named: the same invitation, the owner's name.
	inv2, err := w.orgs.InviteByID(ctx, w.req, org, organization.InviteAddress{Email: "dan@example.com", Roles: []string{"admin"}, InviterUserID: owner, Resend: true})
	if err != nil || inv2.ID() != inv.ID() {
		t.Fatalf("resend = %v, %v", inv2, err)
	}
	if mail := w.Mail.Last(t, domain.MailInvitation); mail.Inviter != "Ada" {
		t.Fatalf("mail inviter = %q, want the owner's name", mail.Inviter)
	}
}

// Ensure a resend by id renews an invitation for its own address and
// roles and mails it again, and that an id none of the organization's
// invitations has (another organization's included) is not found, with
// nothing sent.
func TestOrganizations_by_id_resend_invitation(t *testing.T) {
	w := newKeyOrgWorld(t)
	ctx := t.Context()
	owner := w.userID(t, "owner@example.com")
	acme, err := w.orgs.CreateFor(ctx, w.req, organization.CreateOrganizationFor{Name: "Acme", Slug: "acme", OwnerUserID: owner})
	if err != nil {
		t.Fatal(err)
	}
	org := acme.Organization.ID()
	inv, err := w.orgs.InviteByID(ctx, w.req, org, organization.InviteAddress{Email: "dan@example.com", Roles: []string{"admin"}})
	if err != nil {
		t.Fatal(err)
	}
	sent := w.Mail.Count(domain.MailInvitation)
	again, err := w.orgs.ResendInvitationByID(ctx, w.req, org, inv.ID())
	if err != nil || again.ID() != inv.ID() || again.Email() != inv.Email() || domain.JoinOrgRoles(again.Roles()) != "admin" {
		t.Fatalf("ResendInvitationByID = %+v, %v; want the same invitation", again, err)
	}
	if got := w.Mail.Count(domain.MailInvitation); got != sent+1 || w.Mail.Last(t, domain.MailInvitation).To != "dan@example.com" {
		t.Fatalf("invitation mails = %d, want %d, to dan@example.com", got, sent+1)
	}
	_, err = w.orgs.ResendInvitationByID(ctx, w.req, org, "no-such-invitation")
	usecasetest.MustFail(t, err, domain.KindNotFound, "organization.invitation_not_found")
	_, err = w.orgs.ResendInvitationByID(ctx, w.req, "no-such-organization", inv.ID())
	usecasetest.MustFail(t, err, domain.KindNotFound, "organization.unknown")
	if got := w.Mail.Count(domain.MailInvitation); got != sent+1 {
		t.Fatalf("invitation mails = %d after refusals, want %d", got, sent+1)
	}
}

// byIDCase is one call of an organization-by-id use case on orgWorld.
type byIDCase func(t *testing.T, w *orgWorld, req usecase.Caller) error

// Ensure the organization-by-id use cases answer a service key with one
// neutral condition (code and kind) each, whether the shared use case or
// the store found it; the trusted API words them.
func TestOrganizations_by_id_conditions(t *testing.T) {
	tests := []struct {
		name  string
		run   byIDCase
		kind  domain.Kind
		code  string
		field string // the field the condition names, if any
	}{
		{"create_for_an_unknown_owner", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.CreateFor(t.Context(), req, organization.CreateOrganizationFor{Name: "Beta", Slug: "beta", OwnerUserID: "nobody"})
			return err
		}, domain.KindNotFound, "user.not_found", "ownerUserId"},
		{"get_an_unknown_organization", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.GetByID(t.Context(), req, "no-such-org")
			return err
		}, domain.KindNotFound, "organization.unknown", ""},
		{"add_an_unknown_user", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.AddMember(t.Context(), req, w.acme, organization.AddMember{UserID: "nobody", Roles: []string{"member"}})
			return err
		}, domain.KindNotFound, "user.not_found", "userId"},
		{"add_a_member_twice", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.AddMember(t.Context(), req, w.acme, organization.AddMember{UserID: w.member.User.ID(), Roles: []string{"member"}})
			return err
		}, domain.KindConflict, "organization.already_member", ""},
		{"invite_a_member", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.InviteByID(t.Context(), req, w.acme, organization.InviteAddress{Email: "member@example.com", Roles: []string{"member"}})
			return err
		}, domain.KindInvalid, "organization.user_already_member", ""},
		{"invite_twice", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			w.mustInvite(t, "new@example.com", "member")
			_, err := w.Orgs.InviteByID(t.Context(), req, w.acme, organization.InviteAddress{Email: "new@example.com", Roles: []string{"member"}})
			return err
		}, domain.KindInvalid, "invitation.already_invited", ""},
		{"inviter_must_be_a_member", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.InviteByID(t.Context(), req, w.acme, organization.InviteAddress{Email: "new@example.com", Roles: []string{"member"}, InviterUserID: w.outsider.User.ID()})
			return err
		}, domain.KindInvalid, "invitation.inviter_not_member", "inviterUserId"},
		{"invite_with_an_unknown_role", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.InviteByID(t.Context(), req, w.acme, organization.InviteAddress{Email: "new@example.com", Roles: []string{"superuser"}})
			return err
		}, domain.KindInvalid, "role.not_found", ""},
		{"revoke_an_unknown_invitation", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			return w.Orgs.RevokeInvitation(t.Context(), req, w.acme, "no-such-invitation")
		}, domain.KindNotFound, "organization.invitation_not_found", ""},
		{"revoke_an_answered_invitation", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			inv := w.mustInvite(t, "new@example.com", "member")
			if err := w.Orgs.RevokeInvitation(t.Context(), req, w.acme, inv.ID()); err != nil {
				t.Fatal(err)
			}
			return w.Orgs.RevokeInvitation(t.Context(), req, w.acme, inv.ID())
		}, domain.KindInvalid, "invitation.not_open", ""},
		{"remove_a_missing_member", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			return w.Orgs.RemoveMemberByID(t.Context(), req, w.acme, "no-such-member")
		}, domain.KindNotFound, "organization.member_not_found", ""},
		{"remove_the_last_owner", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			return w.Orgs.RemoveMemberByID(t.Context(), req, w.acme, w.ownerM.ID())
		}, domain.KindInvalid, "organization.owner_required", ""},
		{"rename_to_a_taken_slug", func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			if _, _, err := w.Orgs.Create(t.Context(), w.outsiderReq, organization.CreateOrganization{Name: "Beta", Slug: "beta"}); err != nil {
				t.Fatal(err)
			}
			slug := "beta"
			_, err := w.Orgs.UpdateByID(t.Context(), req, w.acme, organization.OrganizationPatch{Slug: &slug})
			return err
		}, domain.KindInvalid, "organization.slug_unavailable", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newOrgWorld(t, defaultOrgSettings)
			err := tt.run(t, w, usecasetest.KeyReq(domain.ScopeAll))
			usecasetest.MustFail(t, err, tt.kind, tt.code)
			if tt.field != "" {
				usecasetest.MustField(t, err, tt.code, tt.field)
			}
		})
	}
}

// Ensure each organization-by-id use case lets a service key with the
// operation's scope through and refuses one without it; a signed-in user
// needs the membership role the session's own use cases need, and may not
// create organizations for others or list every organization.
func TestOrganizations_by_id_callers(t *testing.T) {
	r, wr := domain.ScopeOrganizationsRead, domain.ScopeOrganizationsWrite
	ops := []struct {
		name  string
		scope domain.Scope
		run   byIDCase
		// member and owner are the session callers' answers: "" allowed,
		// else the refusal's code.
		member, owner string
	}{
		{"create_for", wr, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.CreateFor(t.Context(), req, organization.CreateOrganizationFor{Name: "Beta", Slug: "beta", OwnerUserID: w.outsider.User.ID()})
			return err
		}, "organization.create_for_forbidden", "organization.create_for_forbidden"},
		{"list_all", r, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.ListAll(t.Context(), req, organization.OrgListPage{Limit: 10})
			return err
		}, "organization.list_all_forbidden", "organization.list_all_forbidden"},
		{"get", r, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.GetByID(t.Context(), req, w.acme)
			return err
		}, "", ""},
		{"get_by_slug", r, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.GetBySlug(t.Context(), req, "acme")
			return err
		}, "", ""},
		{"list_members", r, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.ListMembersByID(t.Context(), req, w.acme, organization.OrgListPage{Limit: 10})
			return err
		}, "", ""},
		{"list_invitations", r, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.ListInvitationsByID(t.Context(), req, w.acme)
			return err
		}, "invitation.list_forbidden", ""},
		{"update", wr, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			name := "Acme Inc."
			_, err := w.Orgs.UpdateByID(t.Context(), req, w.acme, organization.OrganizationPatch{Name: &name})
			return err
		}, "organization.update_forbidden", ""},
		{"add_member", wr, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.AddMember(t.Context(), req, w.acme, organization.AddMember{UserID: w.outsider.User.ID(), Roles: []string{"member"}})
			return err
		}, "member.create_forbidden", ""},
		{"update_member_role", wr, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.UpdateMemberRoleByID(t.Context(), req, w.acme, w.adminM.ID(), []string{"member"})
			return err
		}, "member.update_forbidden", ""},
		{"invite", wr, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			_, err := w.Orgs.InviteByID(t.Context(), req, w.acme, organization.InviteAddress{Email: "new@example.com", Roles: []string{"member"}})
			return err
		}, "invitation.create_forbidden", ""},
		{"revoke_invitation", wr, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			inv := w.mustInvite(t, "new@example.com", "member")
			return w.Orgs.RevokeInvitation(t.Context(), req, w.acme, inv.ID())
		}, "invitation.cancel_forbidden", ""},
		{"remove_member", wr, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			return w.Orgs.RemoveMemberByID(t.Context(), req, w.acme, w.adminM.ID())
		}, "member.delete_forbidden", ""},
		{"delete", wr, func(t *testing.T, w *orgWorld, req usecase.Caller) error {
			return w.Orgs.DeleteByID(t.Context(), req, w.acme)
		}, "organization.delete_forbidden", ""},
	}
	for _, op := range ops {
		other := r
		if op.scope == r {
			other = wr
		}
		callers := []struct {
			name string
			req  func(w *orgWorld) usecase.Caller
			code string
		}{
			{"key_with_its_scope", func(*orgWorld) usecase.Caller { return usecasetest.KeyReq(op.scope) }, ""},
			{"key_with_every_scope", func(*orgWorld) usecase.Caller { return usecasetest.KeyReq(domain.ScopeAll) }, ""},
			{"key_without_its_scope", func(*orgWorld) usecase.Caller { return usecasetest.KeyReq(other, domain.ScopeUsersWrite) }, "auth.insufficient_scope"},
			{"outsider", func(w *orgWorld) usecase.Caller { return w.outsiderReq }, "organization.not_a_member"},
			{"member", func(w *orgWorld) usecase.Caller { return w.memberReq }, op.member},
			{"owner", func(w *orgWorld) usecase.Caller { return w.ownerReq }, op.owner},
		}
		for _, c := range callers {
			t.Run(op.name+"/"+c.name, func(t *testing.T) {
				w := newOrgWorld(t, defaultOrgSettings)
				code := c.code
				if c.name == "outsider" && op.owner != "" {
					code = op.owner // no organization to be a member of
				}
				err := op.run(t, w, c.req(w))
				if code == "" {
					if err != nil {
						t.Fatalf("err = %v, want success", err)
					}
					return
				}
				usecasetest.MustFail(t, err, domain.KindForbidden, code)
			})
		}
	}
	t.Run("an_administrator_is_no_member", func(t *testing.T) {
		w := newOrgWorld(t, defaultOrgSettings)
		_, err := w.Orgs.GetByID(t.Context(), usecase.AdminRequest{Principal: w.owner}, w.acme)
		if !errors.Is(err, domain.ErrForbidden) {
			t.Fatalf("err = %v, want forbidden", err)
		}
	})
}

// Ensure a platform administrator (usecase.AdminRequest, the console) acts
// on an organization they do not belong to through the by-id use cases,
// audited as themselves under the session's action names, while a user who
// is no administrator is refused (and recorded) even as the organization's
// owner: membership never answers an administrator's request.
func TestOrganizations_by_id_platform_admin(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	ctx := t.Context()
	boss := usecase.AdminRequest{Principal: w.SignedIn(t, "boss@example.com"), RequestID: "req-a"}
	ownerP := w.SignedIn(t, "owner@example.com")
	owner := usecase.AdminRequest{Principal: ownerP}
	org, _, err := w.Orgs.Create(ctx, usecase.OrgRequest{Principal: ownerP}, organization.CreateOrganization{Name: "Acme Corp", Slug: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := w.Orgs.ListAll(ctx, boss, organization.OrgListPage{Limit: 10, Search: "ACME"})
	if err != nil || len(page.Organizations) != 1 {
		t.Fatalf("ListAll(search) = %+v, %v", page, err)
	}
	if page, err := w.Orgs.ListAll(ctx, boss, organization.OrgListPage{Limit: 10, Search: "nope"}); err != nil || len(page.Organizations) != 0 {
		t.Fatalf("ListAll(no match) = %+v, %v", page, err)
	}
	if _, err := w.Orgs.ListAll(ctx, owner, organization.OrgListPage{Limit: 10}); !errors.Is(err, domain.ErrNotPlatformAdmin) {
		t.Fatalf("ListAll by a non-admin: %v", err)
	}
	if _, err := w.Orgs.UpdateByID(ctx, owner, org.ID(), organization.OrganizationPatch{}); !errors.Is(err, domain.ErrNotPlatformAdmin) {
		t.Fatalf("UpdateByID by the owner as an admin request: %v", err)
	}
	name := "Acme Inc"
	if oc, err := w.Orgs.UpdateByID(ctx, boss, org.ID(), organization.OrganizationPatch{Name: &name}); err != nil || oc.Organization.Name() != name {
		t.Fatalf("UpdateByID = %+v, %v", oc, err)
	}
	inv, err := w.Orgs.InviteByID(ctx, boss, org.ID(), organization.InviteAddress{Email: "dan@example.com", Roles: []string{"admin"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Orgs.RevokeInvitation(ctx, boss, org.ID(), inv.ID()); err != nil {
		t.Fatal(err)
	}
	if err := w.Orgs.DeleteByID(ctx, boss, org.ID()); err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"organization.update", "organization.invite-member", "organization.cancel-invitation", "organization.delete"} {
		var ok bool
		for _, e := range w.Entries(t, action) {
			ok = ok || (e.ActorID == string(boss.Principal.User.ID()) && e.RequestID == "req-a" && e.Outcome == domain.OutcomeSuccess && e.TargetID == string(org.ID()))
		}
		if !ok {
			t.Errorf("no successful %s entry by the administrator on the organization", action)
		}
	}
	var denied bool
	for _, e := range w.Entries(t, "organization.update") {
		denied = denied || (e.ActorID == string(ownerP.User.ID()) && e.Outcome == domain.OutcomeDenied && e.Code == "auth.not_platform_admin")
	}
	if !denied {
		t.Error("the refused update is not recorded")
	}
}
