package organization_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// signedInUnverified signs a user up and in without verifying the address.
func (w *orgWorld) signedInUnverified(t *testing.T, email string) usecase.OrgRequest {
	t.Helper()
	w.MustSignUp(t, email)
	res, err := w.SignIns.SignIn(t.Context(), account.SignIn{Email: email, Password: usecasetest.Password})
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: res.Token})
	if err != nil {
		t.Fatal(err)
	}
	return usecase.OrgRequest{Principal: a.Principal}
}

// mustStatus fails unless invitation id has status.
func (w *orgWorld) mustStatus(t *testing.T, id domain.InvitationID, want domain.InvitationStatus) {
	t.Helper()
	inv, err := w.store.GetInvitation(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Status() != want {
		t.Fatalf("status = %s, want %s", inv.Status(), want)
	}
}

// Ensure inviting follows the organization plugin: who may invite whom, no
// second invitation or invitation of a member, resend, and the limit.
func TestOrganizations_invite(t *testing.T) {
	invite := func(t *testing.T, w *orgWorld, req usecase.OrgRequest, email string, resend bool, roles ...string) (*domain.Invitation, error) {
		return w.Orgs.Invite(t.Context(), req, organization.InviteMember{Organization: w.acmeSel(), Email: email, Roles: roles, Resend: resend})
	}
	runOrgCases(t, []orgCase{
		{name: "invite_mails_the_link", run: func(t *testing.T, w *orgWorld) error {
			inv, err := invite(t, w, w.adminReq, "new@example.com", false, "member")
			if err == nil {
				mail := w.Mail.Last(t, domain.MailInvitation)
				if mail.To != "new@example.com" || mail.Link != "https://app.example.com/invite/"+string(inv.ID()) || mail.Organization != "Acme" {
					t.Fatalf("mail = %+v", mail)
				}
			}
			return err
		}},
		{name: "already_a_member", kind: domain.KindInvalid, code: "organization.user_already_member", run: func(t *testing.T, w *orgWorld) error {
			_, err := invite(t, w, w.ownerReq, "member@example.com", false, "admin")
			return err
		}},
		{name: "already_invited", kind: domain.KindInvalid, code: "invitation.already_invited", run: func(t *testing.T, w *orgWorld) error {
			w.mustInvite(t, "new@example.com", "member")
			_, err := invite(t, w, w.adminReq, "new@example.com", false, "member")
			return err
		}},
		{name: "resend_renews_the_open_invitation", run: func(t *testing.T, w *orgWorld) error {
			first := w.mustInvite(t, "new@example.com", "member")
			w.Clock.Advance(time.Hour)
			again, err := invite(t, w, w.adminReq, "new@example.com", true, "admin")
			if err == nil && (again.ID() != first.ID() || !again.ExpiresAt().After(first.ExpiresAt()) || again.Roles()[0] != domain.OrgRoleAdmin) {
				t.Fatalf("resent = %+v, want invitation %s renewed with role admin", again, first.ID())
			}
			return err
		}},
		{name: "invitation_limit", kind: domain.KindForbidden, code: "invitation.limit_reached",
			settings: withOrgSettings(func(s *organization.OrganizationSettings) { s.InvitationLimit = 1 }),
			run: func(t *testing.T, w *orgWorld) error {
				w.mustInvite(t, "one@example.com", "member")
				_, err := invite(t, w, w.ownerReq, "two@example.com", false, "member")
				return err
			}},
		{name: "resend_within_the_invitation_limit", settings: withOrgSettings(func(s *organization.OrganizationSettings) { s.InvitationLimit = 1 }),
			run: func(t *testing.T, w *orgWorld) error {
				w.mustInvite(t, "one@example.com", "member")
				_, err := invite(t, w, w.ownerReq, "one@example.com", true, "member")
				return err
			}},
		{name: "inviter_must_be_a_member", kind: domain.KindForbidden, code: "organization.not_a_member", run: func(t *testing.T, w *orgWorld) error {
			_, err := invite(t, w, w.outsiderReq, "new@example.com", false, "member")
			return err
		}},
		{name: "members_may_not_invite", kind: domain.KindForbidden, code: "invitation.create_forbidden", run: func(t *testing.T, w *orgWorld) error {
			_, err := invite(t, w, w.memberReq, "new@example.com", false, "member")
			return err
		}},
		{name: "only_owners_invite_owners", kind: domain.KindForbidden, code: "invitation.role_not_allowed", run: func(t *testing.T, w *orgWorld) error {
			_, err := invite(t, w, w.adminReq, "new@example.com", false, "owner")
			return err
		}},
		{name: "owner_invites_an_owner", run: func(t *testing.T, w *orgWorld) error {
			_, err := invite(t, w, w.ownerReq, "new@example.com", false, "owner")
			return err
		}},
		{name: "unknown_role", kind: domain.KindInvalid, code: "role.not_found", run: func(t *testing.T, w *orgWorld) error {
			_, err := invite(t, w, w.ownerReq, "new@example.com", false, "superuser")
			return err
		}},
		{name: "malformed_address", kind: domain.KindInvalid, code: "email.invalid", run: func(t *testing.T, w *orgWorld) error {
			_, err := invite(t, w, w.ownerReq, "not an address", false, "member")
			return err
		}},
	})
}

// Ensure answering an invitation follows the organization plugin: only the
// verified invited address accepts or rejects, only while the invitation is
// pending and unexpired, within the membership limit; cancelling needs the
// permission, and only owners cancel an owner's invitation.
func TestOrganizations_answer_invitation(t *testing.T) {
	const newcomer = "new@example.com"
	accept := func(t *testing.T, w *orgWorld, req usecase.OrgRequest, id domain.InvitationID) error {
		_, _, err := w.Orgs.Accept(t.Context(), req, id)
		return err
	}
	runOrgCases(t, []orgCase{
		{name: "accept_adds_the_member_and_activates_the_organization", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "admin")
			req := usecase.OrgRequest{Principal: w.SignedIn(t, newcomer)}
			_, m, err := w.Orgs.Accept(t.Context(), req, inv.ID())
			if err == nil && (m.Roles()[0] != domain.OrgRoleAdmin || req.Principal.Session.ActiveOrganizationID() != w.acme) {
				t.Fatalf("member = %+v, active = %q", m, req.Principal.Session.ActiveOrganizationID())
			}
			if err == nil {
				w.mustStatus(t, inv.ID(), domain.InvitationAccepted)
			}
			return err
		}},
		{name: "accept_needs_a_verified_address", kind: domain.KindForbidden, code: "invitation.answer_needs_verified_email",
			run: func(t *testing.T, w *orgWorld) error {
				inv := w.mustInvite(t, newcomer, "member")
				return accept(t, w, w.signedInUnverified(t, newcomer), inv.ID())
			}},
		{name: "accept_by_another_address", kind: domain.KindForbidden, code: "invitation.not_recipient", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "member")
			return accept(t, w, w.outsiderReq, inv.ID())
		}, check: func(t *testing.T, w *orgWorld) { w.mustBeMember(t, w.outsider.User.ID(), false) }},
		{name: "accept_expired", kind: domain.KindInvalid, code: "invitation.not_open", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "member")
			req := usecase.OrgRequest{Principal: w.SignedIn(t, newcomer)}
			w.Clock.Advance(48 * time.Hour)
			return accept(t, w, req, inv.ID())
		}},
		{name: "accept_twice", kind: domain.KindInvalid, code: "invitation.not_open", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "member")
			req := usecase.OrgRequest{Principal: w.SignedIn(t, newcomer)}
			if err := accept(t, w, req, inv.ID()); err != nil {
				t.Fatal(err)
			}
			return accept(t, w, req, inv.ID())
		}},
		{name: "accept_rejected", kind: domain.KindInvalid, code: "invitation.not_open", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "member")
			req := usecase.OrgRequest{Principal: w.SignedIn(t, newcomer)}
			if _, err := w.Orgs.Reject(t.Context(), req, inv.ID()); err != nil {
				t.Fatal(err)
			}
			return accept(t, w, req, inv.ID())
		}},
		{name: "accept_unknown", kind: domain.KindInvalid, code: "invitation.not_open", run: func(t *testing.T, w *orgWorld) error {
			return accept(t, w, w.outsiderReq, "no-such-invitation")
		}},
		{name: "accept_beyond_the_membership_limit", kind: domain.KindForbidden, code: "organization.member_limit_reached",
			settings: withOrgSettings(func(s *organization.OrganizationSettings) { s.MembershipLimit = 3 }),
			run: func(t *testing.T, w *orgWorld) error {
				inv := w.mustInvite(t, newcomer, "member")
				return accept(t, w, usecase.OrgRequest{Principal: w.SignedIn(t, newcomer)}, inv.ID())
			}, check: func(t *testing.T, w *orgWorld) {
				if n, err := w.store.CountMembers(t.Context(), w.acme); err != nil || n != 3 {
					t.Fatalf("members = %d (%v), want 3", n, err)
				}
			}},
		{name: "reject", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "member")
			_, err := w.Orgs.Reject(t.Context(), usecase.OrgRequest{Principal: w.SignedIn(t, newcomer)}, inv.ID())
			if err == nil {
				w.mustStatus(t, inv.ID(), domain.InvitationRejected)
			}
			return err
		}},
		{name: "reject_needs_a_verified_address", kind: domain.KindForbidden, code: "invitation.answer_needs_verified_email",
			run: func(t *testing.T, w *orgWorld) error {
				inv := w.mustInvite(t, newcomer, "member")
				_, err := w.Orgs.Reject(t.Context(), w.signedInUnverified(t, newcomer), inv.ID())
				return err
			}},
		{name: "reject_by_another_address", kind: domain.KindForbidden, code: "invitation.not_recipient", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "member")
			_, err := w.Orgs.Reject(t.Context(), w.outsiderReq, inv.ID())
			return err
		}},
		{name: "cancel", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "member")
			_, err := w.Orgs.Cancel(t.Context(), w.adminReq, inv.ID())
			if err == nil {
				w.mustStatus(t, inv.ID(), domain.InvitationCanceled)
				usecasetest.MustFail(t, accept(t, w, usecase.OrgRequest{Principal: w.SignedIn(t, newcomer)}, inv.ID()), domain.KindInvalid, "invitation.not_open")
			}
			return err
		}},
		{name: "cancel_by_a_member", kind: domain.KindForbidden, code: "invitation.cancel_forbidden", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "member")
			_, err := w.Orgs.Cancel(t.Context(), w.memberReq, inv.ID())
			return err
		}},
		{name: "cancel_an_owners_invitation_by_an_admin", kind: domain.KindForbidden, code: "invitation.cancel_forbidden", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "owner")
			_, err := w.Orgs.Cancel(t.Context(), w.adminReq, inv.ID())
			return err
		}},
		{name: "cancel_by_a_non_member", kind: domain.KindForbidden, code: "organization.not_a_member", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "member")
			_, err := w.Orgs.Cancel(t.Context(), w.outsiderReq, inv.ID())
			return err
		}},
		{name: "cancel_twice", kind: domain.KindInvalid, code: "invitation.not_open", run: func(t *testing.T, w *orgWorld) error {
			inv := w.mustInvite(t, newcomer, "member")
			if _, err := w.Orgs.Cancel(t.Context(), w.ownerReq, inv.ID()); err != nil {
				t.Fatal(err)
			}
			_, err := w.Orgs.Cancel(t.Context(), w.ownerReq, inv.ID())
			return err
		}},
		{name: "cancel_unknown", kind: domain.KindInvalid, code: "invitation.not_open", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.Cancel(t.Context(), w.ownerReq, "no-such-invitation")
			return err
		}},
	})
}

func TestInvitation_expires_after_its_lifetime(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	owner := w.SignedIn(t, "owner@example.com")
	bob := w.SignedIn(t, "bob@example.com")
	org, _, err := w.Orgs.Create(t.Context(), usecase.OrgRequest{Principal: owner}, organization.CreateOrganization{Name: "Acme", Slug: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := w.Orgs.Invite(t.Context(), usecase.OrgRequest{Principal: owner}, organization.InviteMember{
		Organization: organization.OrgSelector{ID: org.ID()}, Email: "bob@example.com", Roles: []string{"member"}})
	if err != nil {
		t.Fatal(err)
	}
	mail := w.Mail.Last(t, domain.MailInvitation)
	if mail.Link != "https://app.example.com/invite/"+string(inv.ID()) || mail.Organization != "Acme" || mail.ExpiresIn != 48*time.Hour {
		t.Fatalf("invitation mail = %+v", mail)
	}
	w.Clock.Advance(48 * time.Hour)
	_, _, err = w.Orgs.Accept(t.Context(), usecase.OrgRequest{Principal: bob}, inv.ID())
	usecasetest.MustCode(t, err, "invitation.not_open")
	// Once expired it no longer counts as pending: a new one may be sent.
	if _, err := w.Orgs.Invite(t.Context(), usecase.OrgRequest{Principal: owner}, organization.InviteMember{
		Organization: organization.OrgSelector{ID: org.ID()}, Email: "bob@example.com", Roles: []string{"member"}}); err != nil {
		t.Fatalf("re-inviting after expiry: %v", err)
	}
	es := w.Entries(t, "organization.accept-invitation")
	if len(es) != 1 || es[0].Outcome != domain.OutcomeFailure || es[0].Code != "invitation.not_open" || es[0].ActorID != string(bob.User.ID()) {
		t.Fatalf("audit of the refused acceptance = %+v", es)
	}
}

func TestInvitation_limit_and_resend(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	owner := w.SignedIn(t, "owner@example.com")
	req := usecase.OrgRequest{Principal: owner}
	org, _, err := w.Orgs.Create(t.Context(), req, organization.CreateOrganization{Name: "Acme", Slug: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	invite := func(email string, resend bool) (*domain.Invitation, error) {
		return w.Orgs.Invite(t.Context(), req, organization.InviteMember{Organization: organization.OrgSelector{ID: org.ID()}, Email: email, Roles: []string{"member"}, Resend: resend})
	}
	first, err := invite("a@example.com", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = invite("a@example.com", false)
	usecasetest.MustCode(t, err, "invitation.already_invited")
	w.Clock.Advance(time.Hour)
	again, err := invite("a@example.com", true)
	if err != nil || again.ID() != first.ID() || !again.ExpiresAt().Equal(first.ExpiresAt().Add(time.Hour)) {
		t.Fatalf("resend = %v, %v; want the same invitation renewed", again, err)
	}
	if _, err := invite("b@example.com", false); err != nil {
		t.Fatal(err)
	}
	_, err = invite("c@example.com", false)
	usecasetest.MustCode(t, err, "invitation.limit_reached")
}
