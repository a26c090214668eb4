package organization_test

import (
	"context"
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

// orgWorld is the organization use cases on memory stores, with an
// organization "acme" whose owner, admin and member are signed in, and
// outsider, who belongs to no organization.
type orgWorld struct {
	*usecasetest.AdminWorld
	store                          *memory.OrganizationRepository
	owner, admin, member, outsider usecase.Principal
	acme                           domain.OrganizationID
	ownerM, adminM, memberM        *domain.Member
	ownerReq, adminReq, memberReq  usecase.OrgRequest
	outsiderReq                    usecase.OrgRequest
}

// defaultOrgSettings are the settings of orgWorld unless a test changes them.
var defaultOrgSettings = organization.OrganizationSettings{InvitationTTL: 48 * time.Hour, InvitationURL: "https://app.example.com/invite/{id}"}

func newOrgWorld(t *testing.T, settings organization.OrganizationSettings) *orgWorld {
	t.Helper()
	w := &orgWorld{AdminWorld: usecasetest.NewAdminWorld(t)}
	w.store = memory.NewOrganizationRepository(w.DB)
	// Set up with no limits, then apply the test's settings.
	w.Orgs = organization.NewOrganizations(w.store, w.Users, memory.NewSessionRepository(w.DB), w.Mail, w.Auditor, memory.NewPasskeyRepository(w.DB), system.NewIDGenerator(), w.Clock, defaultOrgSettings)
	w.owner, w.admin = w.SignedIn(t, "owner@example.com"), w.SignedIn(t, "admin@example.com")
	w.member, w.outsider = w.SignedIn(t, "member@example.com"), w.SignedIn(t, "outsider@example.com")
	w.ownerReq, w.adminReq = usecase.OrgRequest{Principal: w.owner}, usecase.OrgRequest{Principal: w.admin}
	w.memberReq, w.outsiderReq = usecase.OrgRequest{Principal: w.member}, usecase.OrgRequest{Principal: w.outsider}
	org, owner, err := w.Orgs.Create(t.Context(), w.ownerReq, organization.CreateOrganization{Name: "Acme", Slug: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	w.acme, w.ownerM = org.ID(), owner
	w.adminM = w.mustJoin(t, w.adminReq, "admin")
	w.memberM = w.mustJoin(t, w.memberReq, "member")
	w.Orgs = organization.NewOrganizations(w.store, w.Users, memory.NewSessionRepository(w.DB), w.Mail, w.Auditor, memory.NewPasskeyRepository(w.DB), system.NewIDGenerator(), w.Clock, settings)
	return w
}

// mustInvite has the owner invite email to acme with roles.
func (w *orgWorld) mustInvite(t *testing.T, email string, roles ...string) *domain.Invitation {
	t.Helper()
	inv, err := w.Orgs.Invite(t.Context(), w.ownerReq, organization.InviteMember{Organization: organization.OrgSelector{ID: w.acme}, Email: email, Roles: roles})
	if err != nil {
		t.Fatalf("invite %s: %v", email, err)
	}
	return inv
}

// mustJoin adds req's user to acme with role, through an invitation.
func (w *orgWorld) mustJoin(t *testing.T, req usecase.OrgRequest, role string) *domain.Member {
	t.Helper()
	inv := w.mustInvite(t, string(req.Principal.User.Email()), role)
	_, m, err := w.Orgs.Accept(t.Context(), req, inv.ID())
	if err != nil {
		t.Fatalf("accept: %v", err)
	}
	return m
}

// acmeSel names acme.
func (w *orgWorld) acmeSel() organization.OrgSelector { return organization.OrgSelector{ID: w.acme} }

// mustRoles fails unless member id of acme has exactly roles.
func (w *orgWorld) mustRoles(t *testing.T, id domain.MemberID, roles ...domain.OrgRole) {
	t.Helper()
	m, err := w.store.GetMember(t.Context(), w.acme, id)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Roles()
	if len(got) != len(roles) {
		t.Fatalf("roles = %v, want %v", got, roles)
	}
	for i := range roles {
		if got[i] != roles[i] {
			t.Fatalf("roles = %v, want %v", got, roles)
		}
	}
}

// mustBeMember fails unless userID's membership of acme exists (or not).
func (w *orgWorld) mustBeMember(t *testing.T, userID domain.UserID, want bool) {
	t.Helper()
	_, err := w.store.GetMemberByUser(t.Context(), w.acme, userID)
	if got := err == nil; got != want || (err != nil && !errors.Is(err, domain.ErrNotFound)) {
		t.Fatalf("member = %v (%v), want %v", got, err, want)
	}
}

// orgCase is one rule of the organization use cases: run acts on a fresh
// orgWorld built with settings and returns the use case's error; an empty
// code wants success, after which check (if any) looks at the outcome.
type orgCase struct {
	name     string
	settings *organization.OrganizationSettings
	run      func(t *testing.T, w *orgWorld) error
	kind     domain.Kind
	code     string
	check    func(t *testing.T, w *orgWorld)
}

func runOrgCases(t *testing.T, tests []orgCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			settings := defaultOrgSettings
			if tt.settings != nil {
				settings = *tt.settings
			}
			w := newOrgWorld(t, settings)
			err := tt.run(t, w)
			if tt.code != "" {
				usecasetest.MustFail(t, err, tt.kind, tt.code)
			} else if err != nil {
				t.Fatalf("error = %v, want none", err)
			}
			if tt.check != nil {
				tt.check(t, w)
			}
		})
	}
}

func withOrgSettings(f func(s *organization.OrganizationSettings)) *organization.OrganizationSettings {
	s := defaultOrgSettings
	f(&s)
	return &s
}

// Ensure creating, updating and deleting an organization follow the
// organization plugin's rules: slugs, the organization limit and who may do
// what.
func TestOrganizations_create_update_delete(t *testing.T) {
	runOrgCases(t, []orgCase{
		{name: "create_makes_the_caller_owner_and_activates_it", run: func(t *testing.T, w *orgWorld) error {
			org, owner, err := w.Orgs.Create(t.Context(), w.outsiderReq, organization.CreateOrganization{Name: "Beta", Slug: "beta"})
			if err == nil && (!owner.IsOwner() || owner.UserID() != w.outsider.User.ID() || w.outsider.Session.ActiveOrganizationID() != org.ID()) {
				t.Fatalf("owner = %+v, active = %q", owner, w.outsider.Session.ActiveOrganizationID())
			}
			return err
		}},
		{name: "create_keeps_the_active_organization_when_asked", run: func(t *testing.T, w *orgWorld) error {
			before := w.owner.Session.ActiveOrganizationID()
			_, _, err := w.Orgs.Create(t.Context(), w.ownerReq, organization.CreateOrganization{Name: "Beta", Slug: "beta", KeepCurrentActive: true})
			if err == nil && w.owner.Session.ActiveOrganizationID() != before {
				t.Fatalf("active = %q, want %q", w.owner.Session.ActiveOrganizationID(), before)
			}
			return err
		}},
		{name: "create_with_a_taken_slug", kind: domain.KindInvalid, code: "organization.already_exists", run: func(t *testing.T, w *orgWorld) error {
			_, _, err := w.Orgs.Create(t.Context(), w.outsiderReq, organization.CreateOrganization{Name: "Other Acme", Slug: "acme"})
			return err
		}},
		{name: "create_with_a_malformed_slug", kind: domain.KindInvalid, code: "organization.invalid_slug", run: func(t *testing.T, w *orgWorld) error {
			_, _, err := w.Orgs.Create(t.Context(), w.outsiderReq, organization.CreateOrganization{Name: "Beta", Slug: "-Beta-"})
			return err
		}},
		{name: "create_without_a_name", kind: domain.KindInvalid, code: "organization.invalid_name", run: func(t *testing.T, w *orgWorld) error {
			_, _, err := w.Orgs.Create(t.Context(), w.outsiderReq, organization.CreateOrganization{Name: "", Slug: "beta"})
			return err
		}},
		{name: "create_beyond_the_organization_limit", kind: domain.KindForbidden, code: "organization.user_limit_reached",
			settings: withOrgSettings(func(s *organization.OrganizationSettings) { s.OrganizationLimit = 1 }),
			run: func(t *testing.T, w *orgWorld) error {
				_, _, err := w.Orgs.Create(t.Context(), w.memberReq, organization.CreateOrganization{Name: "Beta", Slug: "beta"})
				return err
			}},
		{name: "create_within_the_organization_limit", settings: withOrgSettings(func(s *organization.OrganizationSettings) { s.OrganizationLimit = 1 }),
			run: func(t *testing.T, w *orgWorld) error {
				_, _, err := w.Orgs.Create(t.Context(), w.outsiderReq, organization.CreateOrganization{Name: "Beta", Slug: "beta"})
				return err
			}},
		{name: "check_slug_taken", kind: domain.KindInvalid, code: "organization.slug_unavailable", run: func(t *testing.T, w *orgWorld) error {
			return w.Orgs.CheckSlug(t.Context(), "acme")
		}},
		{name: "check_slug_malformed", kind: domain.KindInvalid, code: "organization.invalid_slug", run: func(t *testing.T, w *orgWorld) error {
			return w.Orgs.CheckSlug(t.Context(), "Acme Inc")
		}},
		{name: "check_slug_free", run: func(t *testing.T, w *orgWorld) error {
			return w.Orgs.CheckSlug(t.Context(), "beta")
		}},
		{name: "update_by_an_admin", run: func(t *testing.T, w *orgWorld) error {
			name := "Acme Inc"
			org, err := w.Orgs.Update(t.Context(), w.adminReq, w.acmeSel(), organization.OrganizationPatch{Name: &name})
			if err == nil && org.Name() != name {
				t.Fatalf("name = %q", org.Name())
			}
			return err
		}},
		{name: "update_by_a_member", kind: domain.KindForbidden, code: "organization.update_forbidden", run: func(t *testing.T, w *orgWorld) error {
			name := "Mine"
			_, err := w.Orgs.Update(t.Context(), w.memberReq, w.acmeSel(), organization.OrganizationPatch{Name: &name})
			return err
		}},
		{name: "update_by_a_non_member", kind: domain.KindForbidden, code: "organization.not_a_member", run: func(t *testing.T, w *orgWorld) error {
			name := "Mine"
			_, err := w.Orgs.Update(t.Context(), w.outsiderReq, w.acmeSel(), organization.OrganizationPatch{Name: &name})
			return err
		}},
		{name: "update_to_a_taken_slug", kind: domain.KindInvalid, code: "organization.slug_unavailable", run: func(t *testing.T, w *orgWorld) error {
			if _, _, err := w.Orgs.Create(t.Context(), w.outsiderReq, organization.CreateOrganization{Name: "Beta", Slug: "beta"}); err != nil {
				t.Fatal(err)
			}
			slug := "beta"
			_, err := w.Orgs.Update(t.Context(), w.ownerReq, w.acmeSel(), organization.OrganizationPatch{Slug: &slug})
			return err
		}},
		{name: "update_to_a_malformed_slug", kind: domain.KindInvalid, code: "organization.invalid_slug", run: func(t *testing.T, w *orgWorld) error {
			slug := "Not A Slug"
			_, err := w.Orgs.Update(t.Context(), w.ownerReq, w.acmeSel(), organization.OrganizationPatch{Slug: &slug})
			return err
		}},
		{name: "delete_by_the_owner", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.Delete(t.Context(), w.ownerReq, w.acme)
			return err
		}, check: func(t *testing.T, w *orgWorld) {
			if _, err := w.store.Get(t.Context(), w.acme); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("Get after delete = %v, want not found", err)
			}
			w.mustBeMember(t, w.member.User.ID(), false)
		}},
		{name: "delete_by_an_admin", kind: domain.KindForbidden, code: "organization.delete_forbidden", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.Delete(t.Context(), w.adminReq, w.acme)
			return err
		}},
		{name: "delete_by_a_non_member", kind: domain.KindForbidden, code: "organization.not_a_member", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.Delete(t.Context(), w.outsiderReq, w.acme)
			return err
		}},
	})
}

// Ensure roles follow the organization plugin: only owners grant the owner
// role or touch an owner, and an organization always keeps an owner.
func TestOrganizations_roles_and_the_last_owner(t *testing.T) {
	setRole := func(t *testing.T, w *orgWorld, req usecase.OrgRequest, id domain.MemberID, roles ...string) error {
		_, err := w.Orgs.UpdateMemberRole(t.Context(), req, w.acmeSel(), id, roles)
		return err
	}
	runOrgCases(t, []orgCase{
		{name: "owner_grants_owner", run: func(t *testing.T, w *orgWorld) error {
			return setRole(t, w, w.ownerReq, w.memberM.ID(), "owner")
		}, check: func(t *testing.T, w *orgWorld) { w.mustRoles(t, w.memberM.ID(), domain.OrgRoleOwner) }},
		{name: "admin_changes_a_members_role", run: func(t *testing.T, w *orgWorld) error {
			return setRole(t, w, w.adminReq, w.memberM.ID(), "admin")
		}, check: func(t *testing.T, w *orgWorld) { w.mustRoles(t, w.memberM.ID(), domain.OrgRoleAdmin) }},
		{name: "admin_cannot_grant_owner", kind: domain.KindForbidden, code: "member.update_forbidden", run: func(t *testing.T, w *orgWorld) error {
			return setRole(t, w, w.adminReq, w.memberM.ID(), "owner")
		}, check: func(t *testing.T, w *orgWorld) { w.mustRoles(t, w.memberM.ID(), domain.OrgRoleMember) }},
		{name: "admin_cannot_change_an_owners_role", kind: domain.KindForbidden, code: "member.update_forbidden", run: func(t *testing.T, w *orgWorld) error {
			return setRole(t, w, w.adminReq, w.ownerM.ID(), "member")
		}, check: func(t *testing.T, w *orgWorld) { w.mustRoles(t, w.ownerM.ID(), domain.OrgRoleOwner) }},
		{name: "member_cannot_change_roles", kind: domain.KindForbidden, code: "member.update_forbidden", run: func(t *testing.T, w *orgWorld) error {
			return setRole(t, w, w.memberReq, w.memberM.ID(), "admin")
		}},
		{name: "unknown_role", kind: domain.KindInvalid, code: "role.not_found", run: func(t *testing.T, w *orgWorld) error {
			return setRole(t, w, w.ownerReq, w.memberM.ID(), "superuser")
		}},
		{name: "role_of_a_missing_member", kind: domain.KindInvalid, code: "organization.no_such_member", run: func(t *testing.T, w *orgWorld) error {
			return setRole(t, w, w.ownerReq, "no-such-member", "admin")
		}},
		{name: "last_owner_cannot_lose_the_role", kind: domain.KindInvalid, code: "organization.owner_required", run: func(t *testing.T, w *orgWorld) error {
			return setRole(t, w, w.ownerReq, w.ownerM.ID(), "admin")
		}, check: func(t *testing.T, w *orgWorld) { w.mustRoles(t, w.ownerM.ID(), domain.OrgRoleOwner) }},
		{name: "an_owner_loses_the_role_while_another_remains", run: func(t *testing.T, w *orgWorld) error {
			if err := setRole(t, w, w.ownerReq, w.adminM.ID(), "owner"); err != nil {
				t.Fatal(err)
			}
			return setRole(t, w, w.ownerReq, w.ownerM.ID(), "member")
		}, check: func(t *testing.T, w *orgWorld) { w.mustRoles(t, w.ownerM.ID(), domain.OrgRoleMember) }},
		{name: "last_owner_cannot_leave", kind: domain.KindInvalid, code: "organization.only_owner_leaving", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.Leave(t.Context(), w.ownerReq, w.acme)
			return err
		}, check: func(t *testing.T, w *orgWorld) { w.mustBeMember(t, w.owner.User.ID(), true) }},
		{name: "an_owner_leaves_while_another_remains", run: func(t *testing.T, w *orgWorld) error {
			if err := setRole(t, w, w.ownerReq, w.adminM.ID(), "owner"); err != nil {
				t.Fatal(err)
			}
			_, err := w.Orgs.Leave(t.Context(), w.ownerReq, w.acme)
			return err
		}, check: func(t *testing.T, w *orgWorld) { w.mustBeMember(t, w.owner.User.ID(), false) }},
		{name: "a_member_leaves", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.Leave(t.Context(), w.memberReq, w.acme)
			return err
		}, check: func(t *testing.T, w *orgWorld) { w.mustBeMember(t, w.member.User.ID(), false) }},
		{name: "a_non_member_cannot_leave", kind: domain.KindForbidden, code: "organization.not_a_member", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.Leave(t.Context(), w.outsiderReq, w.acme)
			return err
		}},
		{name: "last_owner_cannot_be_removed", kind: domain.KindInvalid, code: "organization.owner_required", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.RemoveMember(t.Context(), w.ownerReq, w.acmeSel(), string(w.ownerM.ID()))
			return err
		}, check: func(t *testing.T, w *orgWorld) { w.mustBeMember(t, w.owner.User.ID(), true) }},
		{name: "admin_cannot_remove_an_owner", kind: domain.KindForbidden, code: "member.delete_forbidden", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.RemoveMember(t.Context(), w.adminReq, w.acmeSel(), string(w.ownerM.ID()))
			return err
		}, check: func(t *testing.T, w *orgWorld) { w.mustBeMember(t, w.owner.User.ID(), true) }},
		{name: "admin_removes_a_member_by_address", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.RemoveMember(t.Context(), w.adminReq, w.acmeSel(), "member@example.com")
			return err
		}, check: func(t *testing.T, w *orgWorld) { w.mustBeMember(t, w.member.User.ID(), false) }},
		{name: "member_cannot_remove_members", kind: domain.KindForbidden, code: "member.delete_forbidden", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.RemoveMember(t.Context(), w.memberReq, w.acmeSel(), string(w.adminM.ID()))
			return err
		}},
		{name: "remove_a_missing_member", kind: domain.KindInvalid, code: "organization.no_such_member", run: func(t *testing.T, w *orgWorld) error {
			_, err := w.Orgs.RemoveMember(t.Context(), w.ownerReq, w.acmeSel(), "nobody@example.com")
			return err
		}},
	})
}

// racingOrgs is an organization store where something else happens just
// before an invitation or a member is changed: the change finds it gone.
type racingOrgs struct {
	ports.OrganizationRepository
	// before runs in the change's unit of work (ctx), as the other
	// writer's commit would land just before the change's own write.
	before func(ctx context.Context)
}

func (r racingOrgs) UpdateInvitation(ctx context.Context, id domain.InvitationID, fn func(*domain.Invitation) error) error {
	r.before(ctx)
	return r.OrganizationRepository.UpdateInvitation(ctx, id, fn)
}

func (r racingOrgs) AcceptInvitation(ctx context.Context, id domain.InvitationID, fn func(*domain.Invitation) error, m *domain.Member) error {
	r.before(ctx)
	return r.OrganizationRepository.AcceptInvitation(ctx, id, fn, m)
}

func (r racingOrgs) RemoveMember(ctx context.Context, org domain.OrganizationID, id domain.MemberID) (*domain.Member, error) {
	r.before(ctx)
	return r.OrganizationRepository.RemoveMember(ctx, org, id)
}

// Ensure an invitation or a member removed after the use case read it, which
// the store reports as its own not-found, is answered with the organization
// plugin's code and kind, as when it was never there.
func TestOrganizations_answer_what_vanished_as_never_there(t *testing.T) {
	const newcomer = "new@example.com"
	tests := []struct {
		name string
		run  func(t *testing.T, w *orgWorld, orgs *organization.Organizations, vanish *func(context.Context)) error
		code string
	}{
		{"accept", func(t *testing.T, w *orgWorld, orgs *organization.Organizations, vanish *func(context.Context)) error {
			inv := w.mustInvite(t, newcomer, "member")
			req := usecase.OrgRequest{Principal: w.SignedIn(t, newcomer)}
			*vanish = func(ctx context.Context) { mustDeleteInvitations(ctx, t, w) }
			_, _, err := orgs.Accept(t.Context(), req, inv.ID())
			return err
		}, "invitation.not_open"},
		{"reject", func(t *testing.T, w *orgWorld, orgs *organization.Organizations, vanish *func(context.Context)) error {
			inv := w.mustInvite(t, newcomer, "member")
			req := usecase.OrgRequest{Principal: w.SignedIn(t, newcomer)}
			*vanish = func(ctx context.Context) { mustDeleteInvitations(ctx, t, w) }
			_, err := orgs.Reject(t.Context(), req, inv.ID())
			return err
		}, "invitation.not_open"},
		{"cancel", func(t *testing.T, w *orgWorld, orgs *organization.Organizations, vanish *func(context.Context)) error {
			inv := w.mustInvite(t, newcomer, "member")
			*vanish = func(ctx context.Context) { mustDeleteInvitations(ctx, t, w) }
			_, err := orgs.Cancel(t.Context(), w.ownerReq, inv.ID())
			return err
		}, "invitation.not_open"},
		{"remove_member", func(t *testing.T, w *orgWorld, orgs *organization.Organizations, vanish *func(context.Context)) error {
			*vanish = func(ctx context.Context) {
				if _, err := w.store.RemoveMember(ctx, w.acme, w.memberM.ID()); err != nil {
					t.Fatal(err)
				}
			}
			_, err := orgs.RemoveMember(t.Context(), w.ownerReq, w.acmeSel(), string(w.memberM.ID()))
			return err
		}, "organization.no_such_member"},
		{"leave", func(t *testing.T, w *orgWorld, orgs *organization.Organizations, vanish *func(context.Context)) error {
			*vanish = func(ctx context.Context) {
				if _, err := w.store.RemoveMember(ctx, w.acme, w.memberM.ID()); err != nil {
					t.Fatal(err)
				}
			}
			_, err := orgs.Leave(t.Context(), w.memberReq, w.acme)
			return err
		}, "organization.no_such_member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newOrgWorld(t, defaultOrgSettings)
			vanish := func(context.Context) {}
			racing := racingOrgs{OrganizationRepository: w.store, before: func(ctx context.Context) { vanish(ctx) }}
			orgs := organization.NewOrganizations(racing, w.Users, memory.NewSessionRepository(w.DB), w.Mail, w.Auditor, memory.NewPasskeyRepository(w.DB), system.NewIDGenerator(), w.Clock, defaultOrgSettings)
			usecasetest.MustFail(t, tt.run(t, w, orgs, &vanish), domain.KindInvalid, tt.code)
		})
	}
}

// mustDeleteInvitations deletes acme's invitations by deleting and
// recreating the organization under the same id, members and all.
func mustDeleteInvitations(ctx context.Context, t *testing.T, w *orgWorld) {
	t.Helper()
	org, err := w.store.Get(ctx, w.acme)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.store.Delete(ctx, w.acme); err != nil {
		t.Fatal(err)
	}
	if err := w.store.Create(ctx, org, w.ownerM); err != nil {
		t.Fatal(err)
	}
}

// requireTwoFactor turns acme's second-factor rule on in the store.
func (w *orgWorld) requireTwoFactor(t *testing.T) {
	t.Helper()
	if err := w.store.Update(t.Context(), w.acme, func(o *domain.Organization) error { o.SetRequireTwoFactor(true, w.Clock.Now()); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestOrganizations_second_factor_rule(t *testing.T) {
	t.Parallel()
	on := true
	runOrgCases(t, []orgCase{
		{name: "enforcer_without_a_factor_is_refused", kind: domain.KindForbidden, code: "organization.enforcer_needs_two_factor",
			run: func(t *testing.T, w *orgWorld) error {
				_, err := w.Orgs.Update(t.Context(), w.ownerReq, w.acmeSel(), organization.OrganizationPatch{RequireTwoFactor: &on})
				return err
			},
		},
		{name: "enforcer_with_a_factor_turns_it_on",
			run: func(t *testing.T, w *orgWorld) error {
				w.owner.User.SetTwoFactorEnabled(true, w.Clock.Now())
				org, err := w.Orgs.Update(t.Context(), w.ownerReq, w.acmeSel(), organization.OrganizationPatch{RequireTwoFactor: &on})
				if err == nil && !org.RequiresTwoFactor() {
					t.Fatal("the answer does not show the rule")
				}
				return err
			},
			check: func(t *testing.T, w *orgWorld) {
				if org, err := w.store.Get(t.Context(), w.acme); err != nil || !org.RequiresTwoFactor() {
					t.Fatalf("stored organization: %v, %v", org, err)
				}
			}},
		{name: "member_without_a_factor_is_refused", kind: domain.KindForbidden, code: "organization.two_factor_required",
			run: func(t *testing.T, w *orgWorld) error {
				w.requireTwoFactor(t)
				_, err := w.Orgs.ListMembers(t.Context(), w.memberReq, w.acmeSel(), ports.MemberQuery{Limit: 10})
				return err
			}},
		{name: "active_member_without_a_factor_is_refused", kind: domain.KindForbidden, code: "organization.two_factor_required",
			run: func(t *testing.T, w *orgWorld) error {
				w.requireTwoFactor(t)
				_, err := w.Orgs.ActiveMember(t.Context(), w.memberReq, w.acmeSel())
				return err
			}},
		{name: "member_with_two_factor_passes",
			run: func(t *testing.T, w *orgWorld) error {
				w.requireTwoFactor(t)
				w.member.User.SetTwoFactorEnabled(true, w.Clock.Now())
				_, err := w.Orgs.GetFull(t.Context(), w.memberReq, w.acmeSel(), 10)
				return err
			}},
		{name: "member_with_a_passkey_passes",
			run: func(t *testing.T, w *orgWorld) error {
				w.requireTwoFactor(t)
				pk, err := domain.NewPasskeyCredential(domain.PasskeyCredential{ID: []byte("k"), UserID: w.member.User.ID(), PublicKey: []byte("cose"), CreatedAt: w.Clock.Now()})
				if err != nil {
					t.Fatal(err)
				}
				if err := memory.NewPasskeyRepository(w.DB).Create(t.Context(), pk); err != nil {
					t.Fatal(err)
				}
				_, err = w.Orgs.GetFull(t.Context(), w.memberReq, w.acmeSel(), 10)
				return err
			}},
		{name: "member_without_a_factor_may_leave",
			run: func(t *testing.T, w *orgWorld) error {
				w.requireTwoFactor(t)
				_, err := w.Orgs.Leave(t.Context(), w.memberReq, w.acme)
				return err
			},
			check: func(t *testing.T, w *orgWorld) { w.mustBeMember(t, w.member.User.ID(), false) }},
		{name: "rule_off_asks_nothing",
			run: func(t *testing.T, w *orgWorld) error {
				_, err := w.Orgs.GetFull(t.Context(), w.memberReq, w.acmeSel(), 10)
				return err
			}},
	})
}
