package backend

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The trusted organization routes (backend contract): a consumer's backend
// manages any organization, its members and its invitations with a service
// key. The rules live in organization.Organizations (its by-id use cases), which
// check the key's scope; this file only translates, and backendWords words
// their errors. Unlike the framework's organization routes, times are RFC
// 3339 and errors problem+json.

// BackendOrganizationJSON is an organization as the trusted API returns it.
type BackendOrganizationJSON struct {
	ID          string           `json:"id" doc:"The organization's identifier." example:"0192f5e4-8a4b-7cc1-9a51-0b3c8d9e1f20"`
	Name        string           `json:"name" example:"Acme"`
	Slug        string           `json:"slug" doc:"Unique URL name." example:"acme"`
	Logo        *string          `json:"logo" nullable:"true" doc:"Logo URL, or null." example:"https://example.com/acme.png"`
	Metadata    edge.OrgMetadata `json:"metadata"`
	MemberCount int              `json:"memberCount" doc:"How many members the organization has." example:"3"`
	CreatedAt   time.Time        `json:"createdAt"`
	UpdatedAt   time.Time        `json:"updatedAt"`
	// RequireTwoFactor is the members' second-factor rule.
	RequireTwoFactor bool `json:"requireTwoFactor" doc:"Whether members must have a second factor (two-factor or a passkey) to act in the organization through the framework's routes."`
}

func backendOrganizationJSON(oc ports.OrganizationWithCount) BackendOrganizationJSON {
	o := oc.Organization
	out := BackendOrganizationJSON{ID: string(o.ID()), Name: o.Name(), Slug: o.Slug(), Metadata: edge.OrgMetadataOf(o.Metadata()),
		MemberCount: oc.MemberCount, CreatedAt: o.CreatedAt(), UpdatedAt: o.UpdatedAt(), RequireTwoFactor: o.RequiresTwoFactor()}
	if logo := o.Logo(); logo != "" {
		out.Logo = &logo
	}
	return out
}

// BackendMemberJSON is a membership with a summary of its user.
type BackendMemberJSON struct {
	ID             string                 `json:"id" doc:"The membership's identifier (memberId in the member routes)."`
	OrganizationID string                 `json:"organizationId"`
	UserID         string                 `json:"userId"`
	Role           string                 `json:"role" doc:"Roles in the organization (owner, admin, member), comma-separated." example:"member"`
	CreatedAt      time.Time              `json:"createdAt" doc:"When the user joined."`
	User           edge.OrgMemberUserJSON `json:"user"`
}

func backendMemberJSON(mu ports.MemberWithUser) BackendMemberJSON {
	m, u := mu.Member, mu.User
	out := BackendMemberJSON{ID: string(m.ID()), OrganizationID: string(m.OrganizationID()), UserID: string(m.UserID()),
		Role: domain.JoinOrgRoles(m.Roles()), CreatedAt: m.CreatedAt(),
		User: edge.OrgMemberUserJSON{ID: string(u.ID()), Name: u.Name(), Email: string(u.Email())}}
	if img := u.Image(); img != "" {
		out.User.Image = &img
	}
	return out
}

// BackendInvitationJSON is an invitation as the trusted API returns it.
type BackendInvitationJSON struct {
	ID             string    `json:"id" doc:"The invitation's identifier, the one in the mailed link."`
	OrganizationID string    `json:"organizationId"`
	Email          string    `json:"email" format:"email" doc:"The invited address." example:"bob@example.com"`
	Role           string    `json:"role" doc:"Roles given on accepting, comma-separated." example:"member"`
	Status         string    `json:"status" enum:"pending,accepted,rejected,canceled" doc:"An expired invitation stays pending: compare expiresAt. A revoked one is canceled."`
	InviterUserID  *string   `json:"inviterUserId" nullable:"true" doc:"The member who invited, or null when the backend invited without naming one (or the inviter's account is deleted)."`
	ExpiresAt      time.Time `json:"expiresAt" doc:"When the invitation stops working."`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt" doc:"When its status last changed."`
}

func backendInvitationJSON(i *domain.Invitation) BackendInvitationJSON {
	out := BackendInvitationJSON{ID: string(i.ID()), OrganizationID: string(i.OrganizationID()), Email: string(i.Email()),
		Role: domain.JoinOrgRoles(i.Roles()), Status: string(i.Status()), ExpiresAt: i.ExpiresAt(), CreatedAt: i.CreatedAt(), UpdatedAt: i.UpdatedAt()}
	if id := i.InviterID(); id != "" {
		s := string(id)
		out.InviterUserID = &s
	}
	return out
}

// BackendOrganizationOutput is one organization.
type BackendOrganizationOutput struct {
	Body BackendOrganizationJSON
}

// BackendCreateOrganizationInput creates an organization owned by an existing user.
type BackendCreateOrganizationInput struct {
	Body struct {
		Name        string           `json:"name" minLength:"1" maxLength:"256" example:"Acme"`
		Slug        string           `json:"slug" maxLength:"64" pattern:"^[a-z0-9]+(?:-[a-z0-9]+)*$" doc:"Unique URL name: lower-case letters, digits and single hyphens, at most 64 characters." example:"acme"`
		OwnerUserID string           `json:"ownerUserId" minLength:"1" maxLength:"128" doc:"The user who owns the organization, its first member."`
		Logo        string           `json:"logo,omitempty" maxLength:"2048" doc:"Logo URL: an absolute http or https URL."`
		Metadata    edge.OrgMetadata `json:"metadata,omitempty"`
	}
}

func (s *API) backendCreateOrganization(ctx context.Context, in *BackendCreateOrganizationInput) (*BackendOrganizationOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	b := in.Body
	oc, err := s.Organizations.CreateFor(ctx, req, organization.CreateOrganizationFor{
		Name: b.Name, Slug: b.Slug, OwnerUserID: domain.UserID(b.OwnerUserID), Logo: b.Logo, Metadata: b.Metadata.Text()})
	if err != nil {
		return nil, err
	}
	return &BackendOrganizationOutput{Body: backendOrganizationJSON(oc)}, nil
}

// BackendOrganizationIDInput names an organization in the path.
type BackendOrganizationIDInput struct {
	ID string `path:"id" minLength:"1" maxLength:"128" doc:"The organization's id."`
}

func (s *API) backendGetOrganization(ctx context.Context, in *BackendOrganizationIDInput) (*BackendOrganizationOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsRead)
	if err != nil {
		return nil, err
	}
	oc, err := s.Organizations.GetByID(ctx, req, domain.OrganizationID(in.ID))
	if err != nil {
		return nil, err
	}
	return &BackendOrganizationOutput{Body: backendOrganizationJSON(oc)}, nil
}

// BackendOrganizationSlugInput names an organization by slug in the path.
type BackendOrganizationSlugInput struct {
	Slug string `path:"slug" maxLength:"64" pattern:"^[a-z0-9]+(?:-[a-z0-9]+)*$" doc:"The organization's slug." example:"acme"`
}

func (s *API) backendGetOrganizationBySlug(ctx context.Context, in *BackendOrganizationSlugInput) (*BackendOrganizationOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsRead)
	if err != nil {
		return nil, err
	}
	oc, err := s.Organizations.GetBySlug(ctx, req, in.Slug)
	if err != nil {
		return nil, err
	}
	return &BackendOrganizationOutput{Body: backendOrganizationJSON(oc)}, nil
}

// BackendPageInput pages a listing.
type BackendPageInput struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size."`
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page; absent for the first page."`
}

func (p BackendPageInput) page() organization.OrgListPage {
	return organization.OrgListPage{Limit: p.Limit, Cursor: p.Cursor}
}

// nextCursor is the envelope's nextCursor: null on the last page.
func nextCursor(c string) *string {
	if c == "" {
		return nil
	}
	return &c
}

// BackendOrganizationsOutput is a page of organizations.
type BackendOrganizationsOutput struct {
	Body struct {
		Data       []BackendOrganizationJSON `json:"data" doc:"The page's organizations, newest first."`
		NextCursor *string                   `json:"nextCursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last."`
	}
}

func (s *API) backendListOrganizations(ctx context.Context, in *BackendPageInput) (*BackendOrganizationsOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsRead)
	if err != nil {
		return nil, err
	}
	page, err := s.Organizations.ListAll(ctx, req, in.page())
	if err != nil {
		return nil, err
	}
	out := &BackendOrganizationsOutput{}
	out.Body.Data = make([]BackendOrganizationJSON, len(page.Organizations))
	for i, oc := range page.Organizations {
		out.Body.Data[i] = backendOrganizationJSON(oc)
	}
	out.Body.NextCursor = nextCursor(page.NextCursor)
	return out, nil
}

// BackendUpdateOrganizationInput changes an organization.
type BackendUpdateOrganizationInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"128" doc:"The organization's id."`
	Body struct {
		Name     *string             `json:"name,omitempty" minLength:"1" maxLength:"256"`
		Slug     *string             `json:"slug,omitempty" maxLength:"64" pattern:"^[a-z0-9]+(?:-[a-z0-9]+)*$" doc:"Unique URL name: lower-case letters, digits and single hyphens, at most 64 characters."`
		Logo     edge.NullableString `json:"logo,omitempty" maxLength:"2048" doc:"Logo URL (an absolute http or https URL); null or \"\" removes it."`
		Metadata edge.OrgMetadata    `json:"metadata,omitempty" doc:"Replaces the metadata; null removes it."`
		// RequireTwoFactor is the members' second-factor rule.
		RequireTwoFactor *bool `json:"requireTwoFactor,omitempty" doc:"Require members to have a second factor (two-factor or a passkey) to act in the organization."`
	}
}

func (s *API) backendUpdateOrganization(ctx context.Context, in *BackendUpdateOrganizationInput) (*BackendOrganizationOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	b := in.Body
	patch := organization.OrganizationPatch{Name: b.Name, Slug: b.Slug, RequireTwoFactor: b.RequireTwoFactor}
	if b.Logo.IsSet() {
		logo := b.Logo.Value()
		patch.Logo = &logo
	}
	if b.Metadata.IsSet() {
		text := b.Metadata.Text()
		patch.Metadata = &text
	}
	oc, err := s.Organizations.UpdateByID(ctx, req, domain.OrganizationID(in.ID), patch)
	if err != nil {
		return nil, err
	}
	return &BackendOrganizationOutput{Body: backendOrganizationJSON(oc)}, nil
}

func (s *API) backendDeleteOrganization(ctx context.Context, in *BackendOrganizationIDInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	if err := s.Organizations.DeleteByID(ctx, req, domain.OrganizationID(in.ID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// addBackendOrganizationRoutes registers the trusted organization routes (/api/organizations).
func (s *API) AddBackendOrganizationRoutes() {
	type op = huma.Operation
	const (
		tag  = "Organizations"
		base = "/api/organizations"
	)
	read, write := domain.ScopeOrganizationsRead, domain.ScopeOrganizationsWrite
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	const notFound = " An unknown organization is 404 organization.not_found."
	const audited = " Audited, with the service key as the actor."

	registerTrusted(s, write, op{OperationID: "createOrganization", Method: post, Path: base, Tags: []string{tag},
		Summary: "Create an organization", DefaultStatus: http.StatusCreated, Errors: []int{http.StatusNotFound, http.StatusConflict},
		Description: "Creates an organization owned by an existing user, its only member, and answers 201 with it. No session changes. " +
			"The slug is the framework's (lower-case letters, digits and single hyphens): malformed is 400 naming body.slug, taken 409 organization.slug_taken. " +
			"An unknown owner is 404 user.not_found naming body.ownerUserId; an owner who belongs to as many organizations as the configured limit allows " +
			"is 409 organization.limit_reached. metadata is a JSON object of at most 8 KiB." + audited},
		s.backendCreateOrganization)
	registerTrusted(s, read, op{OperationID: "listOrganizations", Method: get, Path: base, Tags: []string{tag},
		Summary: "List organizations",
		Description: "One page of every organization, newest first (creation time, then id), as {data, nextCursor}. Pass nextCursor as cursor for the next " +
			"page; it is null on the last. Pages are read by keyset through an index, so every page costs the same at any depth, and organizations created " +
			"while paging do not shift the pages that follow. A malformed cursor is 400 naming query.cursor."},
		s.backendListOrganizations)
	registerTrusted(s, read, op{OperationID: "getOrganization", Method: get, Path: base + "/{id}", Tags: []string{tag},
		Summary: "Get an organization", Errors: []int{http.StatusNotFound},
		Description: "The organization with its member count." + notFound},
		s.backendGetOrganization)
	registerTrusted(s, read, op{OperationID: "getOrganizationBySlug", Method: get, Path: base + "/by-slug/{slug}", Tags: []string{tag},
		Summary: "Get an organization by slug", Errors: []int{http.StatusNotFound},
		Description: "The organization with this slug (exact), with its member count. A malformed slug is 400 naming path.slug." + notFound},
		s.backendGetOrganizationBySlug)
	registerTrusted(s, write, op{OperationID: "updateOrganization", Method: patch, Path: base + "/{id}", Tags: []string{tag},
		Summary: "Update an organization", Errors: []int{http.StatusNotFound, http.StatusConflict},
		Description: "Changes name, slug, logo, metadata or requireTwoFactor; absent fields stay, logo null (or \"\") and metadata null remove them. " +
			"A slug taken by another organization is 409 organization.slug_taken. requireTwoFactor true makes the organization's framework routes " +
			"answer 403 TWO_FACTOR_REQUIRED_BY_ORGANIZATION to members without a second factor (two-factor or a passkey) until they enrol; " +
			"a service key may turn it on for any organization." + notFound + audited},
		s.backendUpdateOrganization)
	registerTrusted(s, write, op{OperationID: "deleteOrganization", Method: del, Path: base + "/{id}", Tags: []string{tag},
		Summary: "Delete an organization", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
		Description: "Deletes the organization with its memberships and invitations (and domains); it stops being any session's active organization. " +
			"Answers 204." + notFound + audited},
		s.backendDeleteOrganization)
}
