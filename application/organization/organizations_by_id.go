package organization

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The organization use cases that name their organization by id rather than
// through the caller's session, for callers who manage organizations they
// need not belong to: a trusted backend's service key, which needs the
// operation's scope, and a platform administrator (usecase.AdminRequest,
// the console), who needs nothing more. A signed-in user may perform those about one
// organization as a member holding the role's permission, as in the
// session's own use cases; creating an organization for another user and
// listing every organization are for service keys alone. Every write is
// audited with the caller as the actor.

// The access each use case of this file needs, beside those of the
// session's own use cases (orgPermUpdate…).
var (
	// orgPermRead is reading one organization: membership, or a read scope.
	orgPermRead = usecase.Permission{Scope: domain.ScopeOrganizationsRead, Code: "organization.not_a_member", Message: errNotMember.Message}
	// orgPermAddMember is adding a user without an invitation.
	orgPermAddMember = usecase.Perm("member", "create", domain.ScopeOrganizationsWrite, "member.create_forbidden", "You are not allowed to add members")
	// orgPermCreateFor and orgPermListAll have no member permission:
	// signed-in users create their own organizations and list their own.
	orgPermCreateFor = usecase.Permission{Scope: domain.ScopeOrganizationsWrite, Code: "organization.create_for_forbidden", Message: "You are not allowed to create organizations for other users"}
	orgPermListAll   = usecase.Permission{Scope: domain.ScopeOrganizationsRead, Code: "organization.list_all_forbidden", Message: "You are not allowed to list every organization"}
)

// errInviterNotMember refuses an inviter who is not a member.
var errInviterNotMember = domain.Invalid("invitation.inviter_not_member", "The inviter is not a member of the organization",
	domain.FieldViolation{Field: "inviterUserId", Message: "must be a member of the organization"})

// unknownUser is a missing user named by the request's field.
func unknownUser(field string) error {
	return &domain.Error{Kind: domain.KindNotFound, Code: domain.ErrUserNotFound.Code, Message: "User not found",
		Fields: []domain.FieldViolation{{Field: field, Message: "is not a user"}}}
}

// authorizeOn refuses a caller who may not do p on organization org ("" for
// none): a service key without p's scope; an administrator's request
// (usecase.AdminRequest) of someone who is not a platform administrator; a
// signed-in user who is not a member of org, or whose roles lack p's
// permission (a p without one needs membership only); anyone else.
func (o *Organizations) authorizeOn(ctx context.Context, req usecase.Caller, org domain.OrganizationID, p usecase.Permission) error {
	switch r := req.(type) {
	case usecase.TrustedRequest:
		return r.Need(p.Scope)
	case usecase.AdminRequest:
		if r.Principal.User != nil && o.settings.Admins.IsAdmin(r.Principal.User) {
			return nil
		}
		return domain.ErrNotPlatformAdmin
	case usecase.OrgRequest:
		if org == "" {
			break
		}
		var ps []usecase.Permission
		if p.Perms != nil {
			ps = append(ps, p)
		}
		_, err := o.guard(ctx, r, OrgSelector{ID: org}, ps...)
		return err
	}
	return usecase.Forbidden(p.Code, p.Message)
}

// auditedOn authorises req for p on org and runs fn, the change of action
// (the session's name, then the trusted API's) on org, with its audit
// entry and its events in one unit of work (usecase.Auditor.Change); a
// refusal is recorded on its own.
func (o *Organizations) auditedOn(ctx context.Context, req usecase.Caller, p usecase.Permission, user, key string, org domain.OrganizationID,
	fn func(ctx context.Context, emit usecase.Emit) error) error {
	action, t := usecase.ActionOf(req, user, key), orgTarget(org)
	if err := o.authorizeOn(ctx, req, org, p); err != nil {
		return o.audit.Record(ctx, req.Actor(), action, t, err)
	}
	return o.audit.Change(ctx, req.Actor(), action, &t, fn)
}

// withCount returns org with its member count.
func (o *Organizations) withCount(ctx context.Context, org *domain.Organization) (ports.OrganizationWithCount, error) {
	n, err := o.orgs.CountMembers(ctx, org.ID())
	if err != nil {
		return ports.OrganizationWithCount{}, err
	}
	return ports.OrganizationWithCount{Organization: org, MemberCount: n}, nil
}

// CreateOrganizationFor creates an organization owned by an existing user.
type CreateOrganizationFor struct {
	Name        string
	Slug        string
	OwnerUserID domain.UserID
	Logo        string
	Metadata    string
}

// CreateFor creates an organization with its owner as its only member. The
// owner must exist (not found, naming ownerUserId) and be within the limit
// of organizations per user; a taken slug is refused.
func (o *Organizations) CreateFor(ctx context.Context, req usecase.Caller, cmd CreateOrganizationFor) (ports.OrganizationWithCount, error) {
	var org *domain.Organization
	action, t := usecase.ActionOf(req, "organization.create", "organizations.create"), usecase.Target{Type: "organization"}
	if err := o.authorizeOn(ctx, req, "", orgPermCreateFor); err != nil {
		return ports.OrganizationWithCount{}, o.audit.Record(ctx, req.Actor(), action, t, err)
	}
	err := o.audit.Change(ctx, req.Actor(), action, &t, func(ctx context.Context, emit usecase.Emit) error {
		owner, err := o.users.Get(ctx, cmd.OwnerUserID)
		if errors.Is(err, domain.ErrNotFound) {
			return unknownUser("ownerUserId")
		} else if err != nil {
			return err
		}
		org, _, err = o.newOrganization(ctx, owner, CreateOrganization{Name: cmd.Name, Slug: cmd.Slug, Logo: cmd.Logo, Metadata: cmd.Metadata}, &t, emit)
		return err
	})
	if err != nil {
		return ports.OrganizationWithCount{}, err
	}
	return ports.OrganizationWithCount{Organization: org, MemberCount: 1}, nil
}

// GetByID returns organization id with its member count.
func (o *Organizations) GetByID(ctx context.Context, req usecase.Caller, id domain.OrganizationID) (ports.OrganizationWithCount, error) {
	if err := o.authorizeOn(ctx, req, id, orgPermRead); err != nil {
		return ports.OrganizationWithCount{}, err
	}
	org, err := o.orgs.Get(ctx, id)
	if err != nil {
		return ports.OrganizationWithCount{}, err
	}
	return o.withCount(ctx, org)
}

// GetBySlug returns the organization with slug, with its member count.
func (o *Organizations) GetBySlug(ctx context.Context, req usecase.Caller, slug string) (ports.OrganizationWithCount, error) {
	org, err := o.orgs.GetBySlug(ctx, slug)
	var id domain.OrganizationID
	if err == nil {
		id = org.ID()
	}
	// A key needs its scope before the slug is answered; a signed-in user
	// is refused alike for an unknown slug and another's organization.
	if err := o.authorizeOn(ctx, req, id, orgPermRead); err != nil {
		return ports.OrganizationWithCount{}, err
	}
	if err != nil {
		return ports.OrganizationWithCount{}, err
	}
	return o.withCount(ctx, org)
}

// OrgListPage asks for one page of a listing: Limit items (1 to 100) after
// the cursor of the page before ("" for the first page).
type OrgListPage struct {
	Limit  int
	Cursor string
	// Search, when set, keeps the organizations whose name or slug
	// contains it, whatever the case (ListAll only).
	Search string
}

// position decodes the page's cursor (nil for the first page).
func (p OrgListPage) position() (*domain.Position, error) {
	return usecase.PageRequest(p.Limit, p.Cursor)
}

// OrganizationsPage is one page of organizations, newest first, and the
// cursor of the next page ("" on the last).
type OrganizationsPage struct {
	Organizations []ports.OrganizationWithCount
	NextCursor    string
}

// ListAll returns one page of every organization, newest first. Every page
// costs the same, however deep.
func (o *Organizations) ListAll(ctx context.Context, req usecase.Caller, p OrgListPage) (*OrganizationsPage, error) {
	if err := o.authorizeOn(ctx, req, "", orgPermListAll); err != nil {
		return nil, err
	}
	after, err := p.position()
	if err != nil {
		return nil, err
	}
	page, err := o.orgs.List(ctx, ports.OrganizationQuery{Limit: p.Limit, After: after, Contains: p.Search})
	if err != nil {
		return nil, err
	}
	return &OrganizationsPage{Organizations: page.Organizations, NextCursor: usecase.NextCursor(page.Next)}, nil
}

// UpdateByID changes organization id's name, slug, logo, metadata or
// second-factor rule. A trusted backend may turn the rule on for anyone; a
// signed-in caller only with a second factor of their own.
func (o *Organizations) UpdateByID(ctx context.Context, req usecase.Caller, id domain.OrganizationID, patch OrganizationPatch) (ports.OrganizationWithCount, error) {
	var out ports.OrganizationWithCount
	err := o.auditedOn(ctx, req, orgPermUpdate, "organization.update", "organizations.update", id, func(ctx context.Context, emit usecase.Emit) error {
		if r, ok := req.(usecase.OrgRequest); ok {
			if err := o.mayEnforce(ctx, r, patch); err != nil {
				return err
			}
		}
		org, err := o.updateOrganization(ctx, id, patch, emit)
		if err != nil {
			return err
		}
		out, err = o.withCount(ctx, org)
		return err
	})
	return out, err
}

// DeleteByID deletes organization id with its members and invitations.
func (o *Organizations) DeleteByID(ctx context.Context, req usecase.Caller, id domain.OrganizationID) error {
	return o.auditedOn(ctx, req, orgPermDelete, "organization.delete", "organizations.delete", id, func(ctx context.Context, emit usecase.Emit) error {
		_, err := o.deleteOrganization(ctx, id, emit)
		return err
	})
}
