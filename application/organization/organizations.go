package organization

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// OrganizationSettings are the rules of organizations.
type OrganizationSettings struct {
	// InvitationTTL is how long an invitation can be accepted (default 48 hours).
	InvitationTTL time.Duration
	// InvitationLimit caps an organization's open invitations (default 100).
	InvitationLimit int
	// MembershipLimit caps an organization's members; 0 means no limit.
	MembershipLimit int
	// OrganizationLimit caps how many organizations a user may belong to when
	// creating one; 0 means no limit.
	OrganizationLimit int
	// InvitationURL is the page that accepts an invitation; "{id}" in it is
	// replaced by the invitation's id.
	InvitationURL string
	// Admins are the platform administrators beyond the admin role: with
	// the role's holders, they may act on any organization through the
	// by-id use cases (the console), audited as themselves.
	Admins domain.PlatformAdmins
}

// The organization plugin's error codes.
var (
	errOrgSlugTaken        = domain.NewError(domain.KindInvalid, "organization.slug_unavailable", "Organization slug already taken")
	errOrgExists           = domain.NewError(domain.KindInvalid, "organization.already_exists", "Organization already exists")
	errOrgLimit            = domain.NewError(domain.KindForbidden, "organization.user_limit_reached", "You have reached the maximum number of organizations")
	errNotMember           = domain.NewError(domain.KindForbidden, "organization.not_a_member", "User is not a member of the organization")
	errNoActiveOrg         = domain.NewError(domain.KindInvalid, "organization.none_active", "No active organization")
	errMemberNotFound      = domain.NewError(domain.KindInvalid, "organization.no_such_member", "Member not found")
	errAlreadyMember       = domain.NewError(domain.KindInvalid, "organization.user_already_member", "User is already a member of this organization")
	errAlreadyInvited      = domain.NewError(domain.KindInvalid, "invitation.already_invited", "User is already invited to this organization")
	errInvitationLimit     = domain.NewError(domain.KindForbidden, "invitation.limit_reached", "Invitation limit reached")
	errMembershipLimit     = domain.NewError(domain.KindForbidden, "organization.member_limit_reached", "Organization membership limit reached")
	errInviteOwnerRole     = domain.NewError(domain.KindForbidden, "invitation.role_not_allowed", "You are not allowed to invite user with this role")
	errNotRecipient        = domain.NewError(domain.KindForbidden, "invitation.not_recipient", "You are not the recipient of the invitation")
	errInvitationUnverifed = domain.NewError(domain.KindForbidden, "invitation.answer_needs_verified_email", "Email verification required before accepting or rejecting invitation")
	errListUnverified      = domain.NewError(domain.KindForbidden, "invitation.list_needs_verified_email", "Email verification required for invitation")
	errOnlyOwnerLeaving    = domain.NewError(domain.KindInvalid, "organization.only_owner_leaving", "You cannot leave the organization as the only owner")
	// ErrTwoFactorRequired refuses a member without a second factor the
	// routes of an organization that requires one.
	ErrTwoFactorRequired = domain.NewError(domain.KindForbidden, "organization.two_factor_required",
		"This organization requires its members to use a second factor: set up two-factor or a passkey, then try again")
	// ErrEnforcerNeedsTwoFactor refuses turning the organization's rule on
	// to a caller without a second factor, who would lock themselves out.
	ErrEnforcerNeedsTwoFactor = domain.NewError(domain.KindForbidden, "organization.enforcer_needs_two_factor",
		"Set up a second factor (two-factor or a passkey) before requiring one of the organization's members")
)

// The permission each guarded organization action needs, with the code
// refusing it.
var (
	orgPermUpdate       = usecase.Perm("organization", "update", domain.ScopeOrganizationsWrite, "organization.update_forbidden", "You are not allowed to update this organization")
	orgPermDelete       = usecase.Perm("organization", "delete", domain.ScopeOrganizationsWrite, "organization.delete_forbidden", "You are not allowed to delete this organization")
	orgPermInvite       = usecase.Perm("invitation", "create", domain.ScopeOrganizationsWrite, "invitation.create_forbidden", "You are not allowed to invite users to this organization")
	orgPermCancel       = usecase.Perm("invitation", "cancel", domain.ScopeOrganizationsWrite, "invitation.cancel_forbidden", "You are not allowed to cancel this invitation")
	orgPermListInvites  = usecase.Perm("invitation", "create", domain.ScopeOrganizationsRead, "invitation.list_forbidden", "You are not allowed to list invitations")
	orgPermUpdateMember = usecase.Perm("member", "update", domain.ScopeOrganizationsWrite, "member.update_forbidden", "You are not allowed to update this member")
	orgPermDeleteMember = usecase.Perm("member", "delete", domain.ScopeOrganizationsWrite, "member.delete_forbidden", "You are not allowed to delete this member")
)

// Organizations is the organization plugin's use cases.
type Organizations struct {
	orgs     ports.OrganizationRepository
	users    ports.UserRepository
	sessions ports.SessionRepository
	mailer   ports.Mailer
	audit    usecase.Auditor
	factors  usecase.SecondFactors
	ids      ports.IDGenerator
	clock    ports.Clock
	settings OrganizationSettings
}

// NewOrganizations returns the organization use cases.
func NewOrganizations(orgs ports.OrganizationRepository, users ports.UserRepository, sessions ports.SessionRepository,
	mailer ports.Mailer, audit usecase.Auditor, passkeys ports.PasskeyRepository, ids ports.IDGenerator, clock ports.Clock,
	settings OrganizationSettings) *Organizations {
	usecase.MustHave(orgs, users, sessions, mailer, passkeys, ids, clock)
	return &Organizations{orgs: orgs, users: users, sessions: sessions, mailer: mailer,
		audit: audit, factors: usecase.NewSecondFactors(passkeys), ids: ids, clock: clock, settings: settings}
}

// OrgSelector names an organization by id or slug; neither means the
// session's active organization.
type OrgSelector struct {
	ID   domain.OrganizationID
	Slug string
}

func orgTarget(id domain.OrganizationID) usecase.Target {
	return usecase.Target{Type: "organization", ID: string(id)}
}

// resolve returns the id sel names. With neither id nor slug it is the
// session's active organization, and NO_ACTIVE_ORGANIZATION without one.
func (o *Organizations) resolve(ctx context.Context, req usecase.OrgRequest, sel OrgSelector) (domain.OrganizationID, error) {
	switch {
	case sel.ID != "":
		return sel.ID, nil
	case sel.Slug != "":
		org, err := o.orgs.GetBySlug(ctx, sel.Slug)
		if errors.Is(err, domain.ErrNotFound) {
			// An unknown slug and someone else's organization answer alike.
			return "", errNotMember
		}
		if err != nil {
			return "", err
		}
		return org.ID(), nil
	case req.Principal.Session.ActiveOrganizationID() != "":
		return req.Principal.Session.ActiveOrganizationID(), nil
	default:
		return "", errNoActiveOrg
	}
}

// membership returns the caller's membership of org: one indexed lookup. A
// caller who is not a member (or an organization that does not exist) is
// refused alike, so ids of other organizations reveal nothing.
func (o *Organizations) membership(ctx context.Context, req usecase.OrgRequest, org domain.OrganizationID) (*domain.Member, error) {
	m, err := o.orgs.GetMemberByUser(ctx, org, req.Principal.User.ID())
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errNotMember
	}
	return m, err
}

// guard resolves sel and returns the caller's membership, refused unless it
// holds every permission in ps and meets the organization's second-factor
// rule (requireSecondFactor).
func (o *Organizations) guard(ctx context.Context, req usecase.OrgRequest, sel OrgSelector, ps ...usecase.Permission) (*domain.Member, error) {
	id, err := o.resolve(ctx, req, sel)
	if err != nil {
		return nil, err
	}
	m, err := o.membership(ctx, req, id)
	if err != nil {
		return nil, err
	}
	if err := o.requireSecondFactor(ctx, req, id); err != nil {
		return nil, err
	}
	for _, p := range ps {
		if !m.Allows(p.Perms) {
			return nil, usecase.Forbidden(p.Code, p.Message)
		}
	}
	return m, nil
}

// requireSecondFactor refuses (ErrTwoFactorRequired) a caller without a
// second factor when organization id requires one. A caller with
// two-factor on, or in a session of a passkey, costs nothing; anyone else
// costs one read by primary key (the organization), and a second (their
// passkeys) only when the organization requires a factor. Leaving an
// organization is never refused for it.
func (o *Organizations) requireSecondFactor(ctx context.Context, req usecase.OrgRequest, id domain.OrganizationID) error {
	p := req.Principal
	if p.User.TwoFactorEnabled() || p.Session.Authentication().PhishingResistant() {
		return nil
	}
	org, err := o.orgs.Get(ctx, id)
	if err != nil || !org.RequiresTwoFactor() {
		return err
	}
	has, err := o.factors.Has(ctx, p)
	if err != nil {
		return err
	}
	if !has {
		return ErrTwoFactorRequired
	}
	return nil
}

// CreateOrganization is a user creating an organization they will own.
type CreateOrganization struct {
	Name     string
	Slug     string
	Logo     string
	Metadata string
	// KeepCurrentActive leaves the session's active organization as it is.
	KeepCurrentActive bool
}

// Create creates an organization with the caller as its owner
// (organization.created, member.added) and, unless asked not to, makes it
// the session's active organization.
func (o *Organizations) Create(ctx context.Context, req usecase.OrgRequest, cmd CreateOrganization) (*domain.Organization, *domain.Member, error) {
	var org *domain.Organization
	var owner *domain.Member
	t := usecase.Target{Type: "organization"}
	err := o.audit.Change(ctx, req.Actor(), "organization.create", &t, func(ctx context.Context, emit usecase.Emit) error {
		var err error
		org, owner, err = o.newOrganization(ctx, req.Principal.User, cmd, &t, emit)
		if err == nil && !cmd.KeepCurrentActive {
			err = o.setActive(ctx, req.Principal.Session, org.ID())
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return org, owner, nil
}

// newOrganization stores an organization with owner as its owner, within
// the limit of organizations per user (organization.created, member.added).
// A taken slug is ORGANIZATION_ALREADY_EXISTS. t names the organization as
// soon as it is built, even when storing it fails, so that the audit log
// names it.
func (o *Organizations) newOrganization(ctx context.Context, ownerUser *domain.User, cmd CreateOrganization, t *usecase.Target,
	emit usecase.Emit) (*domain.Organization, *domain.Member, error) {
	ownerID := ownerUser.ID()
	now := o.clock.Now()
	org, err := domain.NewOrganization(domain.OrganizationID(o.ids.NewID()), cmd.Name, cmd.Slug, cmd.Logo, cmd.Metadata, now)
	if err != nil {
		return nil, nil, err
	}
	t.ID = string(org.ID())
	if o.settings.OrganizationLimit > 0 {
		mine, err := o.orgs.ListByUser(ctx, ownerID)
		if err != nil {
			return nil, nil, err
		}
		if len(mine) >= o.settings.OrganizationLimit {
			return nil, nil, errOrgLimit
		}
	}
	owner, err := domain.NewMember(domain.MemberID(o.ids.NewID()), org.ID(), ownerID, []domain.OrgRole{domain.OrgRoleOwner}, now)
	if err != nil {
		return nil, nil, err
	}
	if err := o.orgs.Create(ctx, org, owner); err != nil {
		if errors.Is(err, domain.ErrConflict) {
			return nil, nil, errOrgExists
		}
		return nil, nil, err
	}
	emit(domain.EventOrganizationCreated, ports.OrganizationWithCount{Organization: org, MemberCount: 1})
	emit(domain.EventMemberAdded, ports.MemberWithUser{Member: owner, User: ownerUser})
	return org, owner, nil
}

// setActive records org (or none) as the session's active organization.
func (o *Organizations) setActive(ctx context.Context, s *domain.Session, org domain.OrganizationID) error {
	return o.sessions.Update(ctx, s.ID(), func(stored *domain.Session) error {
		stored.SetActiveOrganization(org, o.clock.Now())
		*s = *stored
		return nil
	})
}

// CheckSlug refuses a malformed or taken slug.
func (o *Organizations) CheckSlug(ctx context.Context, slug string) error {
	if err := domain.CheckSlug(slug); err != nil {
		return err
	}
	taken, err := o.orgs.SlugTaken(ctx, slug)
	if err != nil {
		return err
	}
	if taken {
		return errOrgSlugTaken
	}
	return nil
}

// OrganizationPatch is what update changes; nil fields stay.
type OrganizationPatch struct {
	Name     *string
	Slug     *string
	Logo     *string
	Metadata *string
	// RequireTwoFactor turns the members' second-factor rule on or off.
	RequireTwoFactor *bool
}

// Update changes an organization the caller may update
// (organization.updated).
func (o *Organizations) Update(ctx context.Context, req usecase.OrgRequest, sel OrgSelector, patch OrganizationPatch) (*domain.Organization, error) {
	var updated *domain.Organization
	t := orgTarget(orgOr("", sel))
	err := o.audit.Change(ctx, req.Actor(), "organization.update", &t, func(ctx context.Context, emit usecase.Emit) error {
		m, err := o.guard(ctx, req, sel, orgPermUpdate)
		if err != nil {
			return err
		}
		if err := o.mayEnforce(ctx, req, patch); err != nil {
			return err
		}
		t = orgTarget(m.OrganizationID())
		updated, err = o.updateOrganization(ctx, m.OrganizationID(), patch, emit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return updated, nil
}

// mayEnforce refuses a signed-in caller turning the second-factor rule on
// without a second factor themselves (ErrEnforcerNeedsTwoFactor): they would
// lock themselves out, and possibly every owner with them.
func (o *Organizations) mayEnforce(ctx context.Context, req usecase.OrgRequest, patch OrganizationPatch) error {
	if patch.RequireTwoFactor == nil || !*patch.RequireTwoFactor {
		return nil
	}
	has, err := o.factors.Has(ctx, req.Principal)
	if err != nil {
		return err
	}
	if !has {
		return ErrEnforcerNeedsTwoFactor
	}
	return nil
}

// updateOrganization applies patch to organization id and returns it
// (organization.updated). A slug taken by another organization is
// ORGANIZATION_SLUG_ALREADY_TAKEN.
func (o *Organizations) updateOrganization(ctx context.Context, id domain.OrganizationID, patch OrganizationPatch, emit usecase.Emit) (*domain.Organization, error) {
	var updated *domain.Organization
	err := o.orgs.Update(ctx, id, func(org *domain.Organization) error {
		if err := patch.apply(org, o.clock.Now()); err != nil {
			return err
		}
		updated = org
		return nil
	})
	if errors.Is(err, domain.ErrConflict) {
		return nil, errOrgSlugTaken
	}
	if err != nil {
		return nil, err
	}
	emit(domain.EventOrganizationUpdated, updated)
	return updated, nil
}

// apply changes org's fields that p sets.
func (p OrganizationPatch) apply(org *domain.Organization, now time.Time) error {
	if p.Name != nil {
		if err := org.Rename(*p.Name, now); err != nil {
			return err
		}
	}
	if p.Slug != nil {
		if err := org.SetSlug(*p.Slug, now); err != nil {
			return err
		}
	}
	if p.Logo != nil {
		if err := org.SetLogo(*p.Logo, now); err != nil {
			return err
		}
	}
	if p.Metadata != nil {
		if err := org.SetMetadata(*p.Metadata, now); err != nil {
			return err
		}
	}
	if p.RequireTwoFactor != nil {
		org.SetRequireTwoFactor(*p.RequireTwoFactor, now)
	}
	return nil
}

// orgOr names the organization for the audit log even when it was not resolved.
func orgOr(id domain.OrganizationID, sel OrgSelector) domain.OrganizationID {
	if id != "" {
		return id
	}
	if sel.ID != "" {
		return sel.ID
	}
	return domain.OrganizationID(sel.Slug)
}

// Delete deletes an organization the caller may delete, with its members
// and invitations; it stops being anyone's active organization.
func (o *Organizations) Delete(ctx context.Context, req usecase.OrgRequest, id domain.OrganizationID) (*domain.Organization, error) {
	var deleted *domain.Organization
	t := orgTarget(id)
	err := o.audit.Change(ctx, req.Actor(), "organization.delete", &t, func(ctx context.Context, emit usecase.Emit) error {
		if _, err := o.guard(ctx, req, OrgSelector{ID: id}, orgPermDelete); err != nil {
			return err
		}
		var err error
		deleted, err = o.deleteOrganization(ctx, id, emit)
		return err
	})
	if err != nil {
		return nil, err
	}
	if req.Principal.Session.ActiveOrganizationID() == id {
		req.Principal.Session.SetActiveOrganization("", o.clock.Now())
	}
	return deleted, nil
}

// deleteOrganization deletes organization id with its members and
// invitations (the store clears it as any session's active organization)
// and returns what it was (organization.deleted, with its member count
// before; its members and invitations go without events of their own).
func (o *Organizations) deleteOrganization(ctx context.Context, id domain.OrganizationID, emit usecase.Emit) (*domain.Organization, error) {
	org, err := o.orgs.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	emit(domain.EventOrganizationDeleted, org)
	if err := o.orgs.Delete(ctx, id); err != nil {
		return nil, err
	}
	return org, nil
}

// List returns the caller's organizations.
func (o *Organizations) List(ctx context.Context, req usecase.OrgRequest) ([]*domain.Organization, error) {
	return o.orgs.ListByUser(ctx, req.Principal.User.ID())
}

// Get returns an organization the caller belongs to.
func (o *Organizations) Get(ctx context.Context, req usecase.OrgRequest, sel OrgSelector) (*domain.Organization, error) {
	m, err := o.guard(ctx, req, sel)
	if err != nil {
		return nil, err
	}
	return o.orgs.Get(ctx, m.OrganizationID())
}

// FullOrganization is an organization with its members and, for members
// who may invite, its invitations.
type FullOrganization struct {
	Organization *domain.Organization
	Members      []ports.MemberWithUser
	Invitations  []*domain.Invitation
}

// GetFull returns the organization sel names (nil when it names the active
// organization and there is none) with up to membersLimit members.
func (o *Organizations) GetFull(ctx context.Context, req usecase.OrgRequest, sel OrgSelector, membersLimit int) (*FullOrganization, error) {
	if sel.ID == "" && sel.Slug == "" && req.Principal.Session.ActiveOrganizationID() == "" {
		return nil, nil
	}
	m, err := o.guard(ctx, req, sel)
	if err != nil {
		return nil, err
	}
	org, err := o.orgs.Get(ctx, m.OrganizationID())
	if err != nil {
		return nil, err
	}
	if membersLimit <= 0 || membersLimit > 1000 {
		membersLimit = 100
	}
	members, err := o.orgs.ListMembers(ctx, org.ID(), ports.MemberQuery{Limit: membersLimit})
	if err != nil {
		return nil, err
	}
	full := &FullOrganization{Organization: org, Members: members.Members, Invitations: []*domain.Invitation{}}
	if m.Allows(orgPermInvite.Perms) {
		invs, err := o.orgs.ListInvitations(ctx, org.ID())
		if err != nil {
			return nil, err
		}
		for _, inv := range invs {
			// Invitations to become an owner are shown to owners only.
			if slices.Contains(inv.Roles(), domain.OrgRoleOwner) && !m.IsOwner() {
				continue
			}
			full.Invitations = append(full.Invitations, inv)
		}
	}
	return full, nil
}

// SetActive makes an organization the caller belongs to the session's
// active one, or clears it when sel is empty and clear is true.
func (o *Organizations) SetActive(ctx context.Context, req usecase.OrgRequest, sel OrgSelector, clear bool) (*domain.Organization, error) {
	if clear || (sel.ID == "" && sel.Slug == "") {
		if clear {
			if err := o.setActive(ctx, req.Principal.Session, ""); err != nil {
				return nil, err
			}
			return nil, nil
		}
		if req.Principal.Session.ActiveOrganizationID() == "" {
			return nil, nil
		}
	}
	m, err := o.guard(ctx, req, sel)
	if errors.Is(err, errNotMember) && req.Principal.Session.ActiveOrganizationID() != "" {
		if cerr := o.setActive(ctx, req.Principal.Session, ""); cerr != nil {
			return nil, cerr
		}
	}
	if err != nil {
		return nil, err
	}
	org, err := o.orgs.Get(ctx, m.OrganizationID())
	if err != nil {
		return nil, err
	}
	if req.Principal.Session.ActiveOrganizationID() != org.ID() {
		if err := o.setActive(ctx, req.Principal.Session, org.ID()); err != nil {
			return nil, err
		}
	}
	return org, nil
}

// ListMembers returns a page of the members of an organization the caller
// belongs to, how many it has, and the cursor of the next page (nil on the
// last page). q pages from an offset or, with q.After, from the cursor of
// the page before; only the latter costs the same however deep the page.
func (o *Organizations) ListMembers(ctx context.Context, req usecase.OrgRequest, sel OrgSelector, q ports.MemberQuery) (ports.MemberPage, error) {
	m, err := o.guard(ctx, req, sel)
	if err != nil {
		return ports.MemberPage{}, err
	}
	return o.orgs.ListMembers(ctx, m.OrganizationID(), q)
}

// ActiveMember returns the caller's membership of the active organization.
func (o *Organizations) ActiveMember(ctx context.Context, req usecase.OrgRequest, sel OrgSelector) (*domain.Member, error) {
	id, err := o.resolve(ctx, req, sel)
	if err != nil {
		return nil, err
	}
	m, err := o.orgs.GetMemberByUser(ctx, id, req.Principal.User.ID())
	if errors.Is(err, domain.ErrNotFound) {
		if sel.ID != "" || sel.Slug != "" {
			// Asking about an organization one does not belong to.
			return nil, errNotMember
		}
		return nil, errMemberNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := o.requireSecondFactor(ctx, req, id); err != nil {
		return nil, err
	}
	return m, nil
}

// findMember returns the member of org named by an id or an address.
func (o *Organizations) findMember(ctx context.Context, org domain.OrganizationID, idOrEmail string) (*domain.Member, error) {
	var m *domain.Member
	var err error
	if strings.Contains(idOrEmail, "@") {
		email, eerr := domain.NewEmail(idOrEmail)
		if eerr != nil {
			return nil, errMemberNotFound
		}
		u, uerr := o.users.GetByEmail(ctx, email)
		if errors.Is(uerr, domain.ErrNotFound) {
			return nil, errMemberNotFound
		}
		if uerr != nil {
			return nil, uerr
		}
		m, err = o.orgs.GetMemberByUser(ctx, org, u.ID())
	} else {
		m, err = o.orgs.GetMember(ctx, org, domain.MemberID(idOrEmail))
	}
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errMemberNotFound
	}
	return m, err
}

// memberErr maps the last-owner refusal to the code of the action, and a
// member the store no longer has (removed since it was read) to
// MEMBER_NOT_FOUND.
func memberErr(err error, lastOwner error) error {
	switch {
	case errors.Is(err, domain.ErrLastOwner):
		return lastOwner
	case errors.Is(err, domain.ErrMemberNotFound):
		return errMemberNotFound
	}
	return err
}

// RemoveMember removes a member (by id or address). Only owners remove owners.
func (o *Organizations) RemoveMember(ctx context.Context, req usecase.OrgRequest, sel OrgSelector, idOrEmail string) (*ports.MemberWithUser, error) {
	var removed *ports.MemberWithUser
	t := usecase.Target{Type: "member", ID: idOrEmail}
	err := o.audit.Change(ctx, req.Actor(), "organization.remove-member", &t, func(ctx context.Context, emit usecase.Emit) error {
		caller, err := o.guard(ctx, req, sel, orgPermDeleteMember)
		if err != nil {
			return err
		}
		m, err := o.findMember(ctx, caller.OrganizationID(), idOrEmail)
		if err != nil {
			return err
		}
		if m.IsOwner() && !caller.IsOwner() {
			return usecase.Forbidden(orgPermDeleteMember.Code, orgPermDeleteMember.Message)
		}
		if removed, err = o.removeMember(ctx, m, emit); err != nil {
			return err
		}
		t.ID = string(removed.Member.ID())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return removed, nil
}

// removeMember removes m from its organization, unless m is its last owner
// (domain.ErrLastOwner), and stops the user's sessions working in it
// (member.removed). The membership is returned with its user once removed.
func (o *Organizations) removeMember(ctx context.Context, m *domain.Member, emit usecase.Emit) (*ports.MemberWithUser, error) {
	u, err := o.users.Get(ctx, m.UserID())
	if err != nil {
		return nil, err
	}
	if _, err := o.orgs.RemoveMember(ctx, m.OrganizationID(), m.ID()); err != nil {
		return nil, memberErr(err, domain.ErrLastOwner)
	}
	removed := &ports.MemberWithUser{Member: m, User: u}
	emit(domain.EventMemberRemoved, *removed)
	return removed, o.sessions.ClearOrganization(ctx, m.OrganizationID(), m.UserID())
}

// UpdateMemberRole replaces a member's roles. Only owners grant the owner
// role or change an owner's roles.
func (o *Organizations) UpdateMemberRole(ctx context.Context, req usecase.OrgRequest, sel OrgSelector, id domain.MemberID, roles []string) (*ports.MemberWithUser, error) {
	var updated *ports.MemberWithUser
	t := usecase.Target{Type: "member", ID: string(id)}
	err := o.audit.Change(ctx, req.Actor(), "organization.update-member-role", &t, func(ctx context.Context, emit usecase.Emit) error {
		parsed, err := domain.ParseOrgRoles(roles)
		if err != nil {
			return err
		}
		caller, err := o.guard(ctx, req, sel, orgPermUpdateMember)
		if err != nil {
			return err
		}
		if !caller.IsOwner() && slices.Contains(parsed, domain.OrgRoleOwner) {
			return usecase.Forbidden(orgPermUpdateMember.Code, orgPermUpdateMember.Message)
		}
		updated, err = o.setMemberRoles(ctx, caller.OrganizationID(), id, parsed, func(m *domain.Member) error {
			if m.IsOwner() && !caller.IsOwner() {
				return usecase.Forbidden(orgPermUpdateMember.Code, orgPermUpdateMember.Message)
			}
			return nil
		}, emit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return updated, nil
}

// setMemberRoles replaces the roles of member id of org, under the
// organization's lock, if allow (run on the stored member) lets it; a
// missing member is MEMBER_NOT_FOUND, taking the last owner's role
// domain.ErrLastOwner. It returns the member with its user
// (member.role_changed).
func (o *Organizations) setMemberRoles(ctx context.Context, org domain.OrganizationID, id domain.MemberID, roles []domain.OrgRole,
	allow func(m *domain.Member) error, emit usecase.Emit) (*ports.MemberWithUser, error) {
	var member *domain.Member
	err := o.orgs.UpdateMember(ctx, org, id, func(m *domain.Member) error {
		if err := allow(m); err != nil {
			return err
		}
		member = m
		return m.SetRoles(roles)
	})
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errMemberNotFound
	}
	if err != nil {
		return nil, memberErr(err, domain.ErrLastOwner)
	}
	u, err := o.users.Get(ctx, member.UserID())
	if err != nil {
		return nil, err
	}
	mu := ports.MemberWithUser{Member: member, User: u}
	emit(domain.EventMemberRoleChanged, mu)
	return &mu, nil
}

// Leave removes the caller from an organization (member.removed). The only
// owner cannot leave.
func (o *Organizations) Leave(ctx context.Context, req usecase.OrgRequest, id domain.OrganizationID) (*ports.MemberWithUser, error) {
	var left *ports.MemberWithUser
	t := orgTarget(id)
	err := o.audit.Change(ctx, req.Actor(), "organization.leave", &t, func(ctx context.Context, emit usecase.Emit) error {
		m, err := o.membership(ctx, req, id)
		if err != nil {
			return err
		}
		if _, err := o.orgs.RemoveMember(ctx, id, m.ID()); err != nil {
			return memberErr(err, errOnlyOwnerLeaving)
		}
		left = &ports.MemberWithUser{Member: m, User: req.Principal.User}
		emit(domain.EventMemberRemoved, *left)
		return o.sessions.ClearOrganization(ctx, id, req.Principal.User.ID())
	})
	if err != nil {
		return nil, err
	}
	if req.Principal.Session.ActiveOrganizationID() == id {
		req.Principal.Session.SetActiveOrganization("", o.clock.Now())
	}
	return left, nil
}

// HasPermission reports whether the caller's roles in an organization grant
// every requested action.
func (o *Organizations) HasPermission(ctx context.Context, req usecase.OrgRequest, sel OrgSelector, requested domain.Permissions) (bool, error) {
	m, err := o.guard(ctx, req, sel)
	if err != nil {
		return false, err
	}
	return m.Allows(requested), nil
}
