package command

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// BackendOrganizations is the trusted API's organization use cases: a
// consumer's backend, authenticated by its service key, manages any
// organization, its members and its invitations. The rules are the
// organization plugin's (slugs, limits, the last owner, invitation mail),
// from the same code; only the membership checks are gone, as the key's
// scope was checked at the edge, and the errors carry the trusted API's
// area.reason codes. Every write is audited with the key as the actor.
type BackendOrganizations struct {
	o *Organizations
}

// NewBackendOrganizations returns the trusted organization use cases, on
// the organization plugin's dependencies and settings.
func NewBackendOrganizations(o *Organizations) *BackendOrganizations {
	if o == nil {
		panic("command: nil dependency")
	}
	return &BackendOrganizations{o: o}
}

// The trusted API's organization errors.
var (
	errBackendOrgNotFound        = domain.NotFound("organization.not_found", "Organization")
	errBackendMemberNotFound     = domain.NotFound("organization.member_not_found", "Member")
	errBackendInvitationNotFound = domain.NotFound("organization.invitation_not_found", "Invitation")
	errBackendSlugTaken          = &domain.Error{Kind: domain.KindConflict, Code: "organization.slug_taken", Message: "Another organization has this slug",
		Fields: []domain.FieldViolation{{Field: "slug", Message: "is taken by another organization"}}}
	errBackendOrgLimit = &domain.Error{Kind: domain.KindConflict, Code: "organization.limit_reached", Message: "The user belongs to as many organizations as allowed",
		Fields: []domain.FieldViolation{{Field: "ownerUserId", Message: "belongs to as many organizations as allowed"}}}
	errBackendAlreadyMember    = domain.NewError(domain.KindConflict, "organization.already_member", "The user is already a member of the organization")
	errBackendAlreadyInvited   = &domain.Error{Kind: domain.KindConflict, Code: "organization.already_invited", Message: "The address already has an open invitation", Fields: []domain.FieldViolation{{Field: "email", Message: "already has an open invitation; send resend: true to renew it"}}}
	errBackendInvitationLimit  = domain.NewError(domain.KindConflict, "organization.invitation_limit_reached", "The organization has as many open invitations as allowed")
	errBackendMembershipLimit  = domain.NewError(domain.KindConflict, "organization.membership_limit_reached", "The organization has as many members as allowed")
	errBackendLastOwner        = domain.NewError(domain.KindConflict, "organization.last_owner", "An organization keeps at least one owner")
	errBackendNotPending       = domain.NewError(domain.KindConflict, "organization.invitation_not_pending", "The invitation was already accepted, rejected or revoked, or has expired")
	errBackendUnknownRole      = domain.Invalid("organization.unknown_role", "Unknown role", domain.FieldViolation{Field: "role", Message: "must be owner, admin or member, or several of them"})
	errBackendInviterNotMember = domain.Invalid("organization.inviter_not_member", "The inviter is not a member of the organization",
		domain.FieldViolation{Field: "inviterUserId", Message: "must be a member of the organization"})
)

// userNotFound is a missing user named by the request at location.
func orgUserNotFound(location string) error {
	return &domain.Error{Kind: domain.KindNotFound, Code: "user.not_found", Message: "User not found",
		Fields: []domain.FieldViolation{{Field: location, Message: "is not a user"}}}
}

// backendCodes translates the organization plugin's codes, which its
// Better Auth clients compare, and the organization stores' codes into the
// trusted API's.
var backendCodes = map[string]error{
	ports.ErrOrganizationExists.Code:    errBackendSlugTaken,
	ports.ErrSlugTaken.Code:             errBackendSlugTaken,
	ports.ErrAlreadyMember.Code:         errBackendAlreadyMember,
	ports.ErrMemberNotFound.Code:        errBackendMemberNotFound,
	ports.ErrInvitationNotFound.Code:    errBackendInvitationNotFound,
	"organization.already_exists":       errBackendSlugTaken,
	"organization.slug_unavailable":     errBackendSlugTaken,
	"organization.user_limit_reached":   errBackendOrgLimit,
	"organization.user_already_member":  errBackendAlreadyMember,
	"invitation.already_invited":        errBackendAlreadyInvited,
	"invitation.limit_reached":          errBackendInvitationLimit,
	"organization.member_limit_reached": errBackendMembershipLimit,
	"organization.owner_required":       errBackendLastOwner,
	"organization.no_such_member":       errBackendMemberNotFound,
	"organization.unknown":              errBackendOrgNotFound,
	"role.not_found":                    errBackendUnknownRole,
}

// backendErr gives an error of the shared use cases its trusted code. An
// invitation that exists but is no longer open is a conflict.
func backendErr(err error) error {
	var de *domain.Error
	if err == nil || !errors.As(err, &de) {
		return err
	}
	if errors.Is(err, domain.ErrInvitationNotOpen) {
		return errBackendNotPending
	}
	if mapped, ok := backendCodes[de.Code]; ok {
		return mapped
	}
	return err
}

// audited runs fn, translates its error and records the outcome of action
// on organization org.
func (b *BackendOrganizations) audited(ctx context.Context, req TrustedRequest, action string, org domain.OrganizationID, fn func() error) error {
	err := backendErr(fn())
	return b.o.audit.record(ctx, req.Actor(), "organizations."+action, orgTarget(org), err)
}

// withCount returns org with its member count.
func (b *BackendOrganizations) withCount(ctx context.Context, org *domain.Organization) (ports.OrganizationWithCount, error) {
	n, err := b.o.orgs.CountMembers(ctx, org.ID())
	if err != nil {
		return ports.OrganizationWithCount{}, err
	}
	return ports.OrganizationWithCount{Organization: org, MemberCount: n}, nil
}

// organization returns organization id, or organization.not_found.
func (b *BackendOrganizations) organization(ctx context.Context, id domain.OrganizationID) (*domain.Organization, error) {
	org, err := b.o.orgs.Get(ctx, id)
	return org, backendErr(err)
}

// BackendCreateOrganization creates an organization owned by an existing user.
type BackendCreateOrganization struct {
	Name        string
	Slug        string
	OwnerUserID domain.UserID
	Logo        string
	Metadata    string
}

// Create creates an organization with its owner as its only member. The
// owner must exist (user.not_found naming ownerUserId) and be within the
// limit of organizations per user; a taken slug is organization.slug_taken.
func (b *BackendOrganizations) Create(ctx context.Context, req TrustedRequest, cmd BackendCreateOrganization) (ports.OrganizationWithCount, error) {
	var org *domain.Organization
	err := backendErr(func() error {
		if _, err := b.o.users.Get(ctx, cmd.OwnerUserID); errors.Is(err, domain.ErrNotFound) {
			return orgUserNotFound("ownerUserId")
		} else if err != nil {
			return err
		}
		var err error
		org, _, err = b.o.newOrganization(ctx, cmd.OwnerUserID, CreateOrganization{Name: cmd.Name, Slug: cmd.Slug, Logo: cmd.Logo, Metadata: cmd.Metadata})
		return err
	}())
	if err := b.o.audit.record(ctx, req.Actor(), "organizations.create", newOrgTarget(org), err); err != nil {
		return ports.OrganizationWithCount{}, err
	}
	return ports.OrganizationWithCount{Organization: org, MemberCount: 1}, nil
}

// Get returns organization id with its member count.
func (b *BackendOrganizations) Get(ctx context.Context, _ TrustedRequest, id domain.OrganizationID) (ports.OrganizationWithCount, error) {
	org, err := b.organization(ctx, id)
	if err != nil {
		return ports.OrganizationWithCount{}, err
	}
	return b.withCount(ctx, org)
}

// GetBySlug returns the organization with slug, with its member count.
func (b *BackendOrganizations) GetBySlug(ctx context.Context, _ TrustedRequest, slug string) (ports.OrganizationWithCount, error) {
	org, err := b.o.orgs.GetBySlug(ctx, slug)
	if err != nil {
		return ports.OrganizationWithCount{}, backendErr(err)
	}
	return b.withCount(ctx, org)
}

// OrgListPage asks for one page of a listing: Limit items (1 to 100) after the
// cursor of the page before ("" for the first page).
type OrgListPage struct {
	Limit  int
	Cursor string
}

// position decodes the page's cursor (nil for the first page).
func (p OrgListPage) position() (*domain.Position, error) {
	return pageRequest(p.Limit, p.Cursor)
}

// OrganizationsPage is one page of organizations, newest first, and the
// cursor of the next page ("" on the last).
type OrganizationsPage struct {
	Organizations []ports.OrganizationWithCount
	NextCursor    string
}

// List returns one page of every organization, newest first. Every page
// costs the same, however deep.
func (b *BackendOrganizations) List(ctx context.Context, _ TrustedRequest, p OrgListPage) (*OrganizationsPage, error) {
	after, err := p.position()
	if err != nil {
		return nil, err
	}
	page, err := b.o.orgs.List(ctx, ports.OrganizationQuery{Limit: p.Limit, After: after})
	if err != nil {
		return nil, err
	}
	return &OrganizationsPage{Organizations: page.Organizations, NextCursor: nextCursor(page.Next)}, nil
}

// Update changes an organization's name, slug, logo or metadata.
func (b *BackendOrganizations) Update(ctx context.Context, req TrustedRequest, id domain.OrganizationID, patch OrganizationPatch) (ports.OrganizationWithCount, error) {
	var out ports.OrganizationWithCount
	err := b.audited(ctx, req, "update", id, func() error {
		org, err := b.o.updateOrganization(ctx, id, patch)
		if err != nil {
			return err
		}
		out, err = b.withCount(ctx, org)
		return err
	})
	return out, err
}

// Delete deletes an organization with its members and invitations.
func (b *BackendOrganizations) Delete(ctx context.Context, req TrustedRequest, id domain.OrganizationID) error {
	return b.audited(ctx, req, "delete", id, func() error {
		_, err := b.o.deleteOrganization(ctx, id)
		return err
	})
}
