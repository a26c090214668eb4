package command_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// backendOrgWorld is the trusted organization use cases beside the
// framework's, on one memory store, with every limit low.
type backendOrgWorld struct {
	*world
	orgs    *command.Organizations
	backend *command.BackendOrganizations
	audit   *memory.AuditLog
	req     command.TrustedRequest
}

func newBackendOrgWorld(t *testing.T) *backendOrgWorld {
	t.Helper()
	w := &backendOrgWorld{world: newWorld(t, false)}
	w.audit = memory.NewAuditLog(w.db)
	w.orgs = command.NewOrganizations(memory.NewOrganizationRepository(w.db), w.users, memory.NewSessionRepository(w.db), w.mail, w.audit,
		system.NewIDGenerator(), w.clock, command.OrganizationSettings{InvitationTTL: 48 * time.Hour, InvitationLimit: 1, MembershipLimit: 2,
			OrganizationLimit: 1, InvitationURL: "https://app.example.com/invite/{id}"})
	w.backend = command.NewBackendOrganizations(w.orgs)
	key := domain.RehydrateServiceKey("key-1", "backend", []domain.Scope{domain.ScopeAll}, "abcd", "cli", time.Time{}, w.clock.Now(), time.Time{}, time.Time{})
	w.req = command.TrustedRequest{Key: key, RequestID: "req-1", IPAddress: "192.0.2.1"}
	return w
}

// userID signs a user up and returns their id.
func (w *backendOrgWorld) userID(t *testing.T, email string) domain.UserID {
	t.Helper()
	return w.mustSignUp(t, email).User.ID()
}

// mustConflict fails unless err is a conflict with code.
func mustConflict(t *testing.T, err error, code string) {
	t.Helper()
	mustCode(t, err, code)
	if !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("err = %v, want a conflict", err)
	}
}

// Ensure the trusted API applies the framework's limits (organizations per
// user, members and open invitations per organization) as conflicts with
// its own codes, and audits the refusals with the key as the actor.
func TestBackendOrganizations_limits_are_the_frameworks(t *testing.T) {
	w := newBackendOrgWorld(t)
	ctx := t.Context()
	owner, bob, carol := w.userID(t, "owner@example.com"), w.userID(t, "bob@example.com"), w.userID(t, "carol@example.com")
	acme, err := w.backend.Create(ctx, w.req, command.BackendCreateOrganization{Name: "Acme", Slug: "acme", OwnerUserID: owner})
	if err != nil || acme.MemberCount != 1 {
		t.Fatalf("Create = %+v, %v", acme, err)
	}
	org := acme.Organization.ID()

	_, err = w.backend.Create(ctx, w.req, command.BackendCreateOrganization{Name: "Second", Slug: "second", OwnerUserID: owner})
	mustConflict(t, err, "organization.limit_reached")
	var de *domain.Error
	if errors.As(err, &de); len(de.Fields) != 1 || de.Fields[0].Field != "ownerUserId" {
		t.Fatalf("limit error fields = %+v, want body.ownerUserId", de.Fields)
	}

	if _, err := w.backend.AddMember(ctx, w.req, org, command.BackendAddMember{UserID: bob, Roles: []string{"member"}}); err != nil {
		t.Fatal(err)
	}
	_, err = w.backend.AddMember(ctx, w.req, org, command.BackendAddMember{UserID: carol, Roles: []string{"member"}})
	mustConflict(t, err, "organization.membership_limit_reached")

	if _, err := w.backend.Invite(ctx, w.req, org, command.BackendInvite{Email: "dan@example.com", Roles: []string{"member"}}); err != nil {
		t.Fatal(err)
	}
	_, err = w.backend.Invite(ctx, w.req, org, command.BackendInvite{Email: "eve@example.com", Roles: []string{"member"}})
	mustConflict(t, err, "organization.invitation_limit_reached")

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
	want := []string{"organizations.invite organization.invitation_limit_reached", "organizations.add-member organization.membership_limit_reached",
		"organizations.create organization.limit_reached"}
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
func TestBackendOrganizations_invitation_mail(t *testing.T) {
	w := newBackendOrgWorld(t)
	ctx := t.Context()
	owner := w.userID(t, "owner@example.com")
	acme, err := w.backend.Create(ctx, w.req, command.BackendCreateOrganization{Name: "Acme", Slug: "acme", OwnerUserID: owner})
	if err != nil {
		t.Fatal(err)
	}
	org := acme.Organization.ID()
	inv, err := w.backend.Invite(ctx, w.req, org, command.BackendInvite{Email: "dan@example.com", Roles: []string{"admin"}})
	if err != nil || inv.InviterID() != "" {
		t.Fatalf("Invite = %v, %v; want no inviter", inv, err)
	}
	mail := w.mail.last(t, domain.MailInvitation)
	if mail.Inviter != "" || mail.Organization != "Acme" || mail.To != "dan@example.com" || mail.Link != "https://app.example.com/invite/"+string(inv.ID()) {
		t.Fatalf("mail = %+v", mail)
	}
	// Resent with the owner named: the same invitation, the owner's name.
	inv2, err := w.backend.Invite(ctx, w.req, org, command.BackendInvite{Email: "dan@example.com", Roles: []string{"admin"}, InviterUserID: owner, Resend: true})
	if err != nil || inv2.ID() != inv.ID() {
		t.Fatalf("resend = %v, %v", inv2, err)
	}
	if mail := w.mail.last(t, domain.MailInvitation); mail.Inviter != "Ada" {
		t.Fatalf("mail inviter = %q, want the owner's name", mail.Inviter)
	}
}

// Ensure the trusted API answers each organization condition with one
// problem code and kind, whether the shared use case or the store found it.
func TestBackendOrganizations_conditions(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error
		kind domain.Kind
		code string
		msg  string // the trusted API's message, when the store's differs
	}{
		{"add_a_member_twice", func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error {
			_, err := b.AddMember(t.Context(), req, w.acme, command.BackendAddMember{UserID: w.member.User.ID(), Roles: []string{"member"}})
			return err
		}, domain.KindConflict, "organization.already_member", "The user is already a member of the organization"},
		{"invite_a_member", func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error {
			_, err := b.Invite(t.Context(), req, w.acme, command.BackendInvite{Email: "member@example.com", Roles: []string{"member"}})
			return err
		}, domain.KindConflict, "organization.already_member", ""},
		{"invite_twice", func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error {
			w.mustInvite(t, "new@example.com", "member")
			_, err := b.Invite(t.Context(), req, w.acme, command.BackendInvite{Email: "new@example.com", Roles: []string{"member"}})
			return err
		}, domain.KindConflict, "organization.already_invited", ""},
		{"inviter_must_be_a_member", func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error {
			_, err := b.Invite(t.Context(), req, w.acme, command.BackendInvite{Email: "new@example.com", Roles: []string{"member"}, InviterUserID: w.outsider.User.ID()})
			return err
		}, domain.KindInvalid, "organization.inviter_not_member", ""},
		{"invite_with_an_unknown_role", func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error {
			_, err := b.Invite(t.Context(), req, w.acme, command.BackendInvite{Email: "new@example.com", Roles: []string{"superuser"}})
			return err
		}, domain.KindInvalid, "organization.unknown_role", ""},
		{"revoke_an_unknown_invitation", func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error {
			return b.RevokeInvitation(t.Context(), req, w.acme, "no-such-invitation")
		}, domain.KindNotFound, "organization.invitation_not_found", ""},
		{"revoke_an_answered_invitation", func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error {
			inv := w.mustInvite(t, "new@example.com", "member")
			if err := b.RevokeInvitation(t.Context(), req, w.acme, inv.ID()); err != nil {
				t.Fatal(err)
			}
			return b.RevokeInvitation(t.Context(), req, w.acme, inv.ID())
		}, domain.KindConflict, "organization.invitation_not_pending", ""},
		{"remove_a_missing_member", func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error {
			return b.RemoveMember(t.Context(), req, w.acme, "no-such-member")
		}, domain.KindNotFound, "organization.member_not_found", ""},
		{"remove_the_last_owner", func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error {
			return b.RemoveMember(t.Context(), req, w.acme, w.ownerM.ID())
		}, domain.KindConflict, "organization.last_owner", ""},
		{"rename_to_a_taken_slug", func(t *testing.T, w *orgWorld, b *command.BackendOrganizations, req command.TrustedRequest) error {
			if _, _, err := w.orgs.Create(t.Context(), w.outsiderReq, command.CreateOrganization{Name: "Beta", Slug: "beta"}); err != nil {
				t.Fatal(err)
			}
			slug := "beta"
			_, err := b.Update(t.Context(), req, w.acme, command.OrganizationPatch{Slug: &slug})
			return err
		}, domain.KindConflict, "organization.slug_taken", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newOrgWorld(t, defaultOrgSettings)
			key := domain.RehydrateServiceKey("key-1", "backend", []domain.Scope{domain.ScopeAll}, "abcd", "cli", time.Time{}, w.clock.Now(), time.Time{}, time.Time{})
			err := tt.run(t, w, command.NewBackendOrganizations(w.orgs), command.TrustedRequest{Key: key})
			mustFail(t, err, tt.kind, tt.code)
			var de *domain.Error
			if errors.As(err, &de); tt.msg != "" && de.Message != tt.msg {
				t.Fatalf("message = %q, want %q", de.Message, tt.msg)
			}
		})
	}
}
