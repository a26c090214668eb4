package framework

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The organization plugin (better-auth-wire §7): every route of
// organizationClient() but teams and dynamic roles. The rules live in
// organization.Organizations; this file only translates.
//
// Deviations from Better Auth, chosen on purpose:
//   - metadata is a JSON object (or null) in every answer; Better Auth returns
//     the raw JSON string from list, set-active, get-full-organization,
//     get-organization and delete.
//   - a caller who is not a member is refused with 403
//     USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION everywhere, has-permission and
//     update included (Better Auth answers 401 and 400 there).
//   - 401 without a session always carries {message, code: UNAUTHORIZED}.
//   - set-active does not re-issue the session cookie: there is no cookie
//     cache to refresh, get-session reads the store.
//   - list-members sorts by createdAt only and refuses filterField/
//     filterValue/filterOperator (400) rather than answer unfiltered; it
//     also pages by cursor (cursor in, nextCursor out, beside {members,
//     total}), which Better Auth does not;
//     get-active-member-role accepts userId only for the caller; teamId is
//     not accepted (no teams).

// OrganizationJSON is an organization as Better Auth returns it.
type OrganizationJSON struct {
	ID        string           `json:"id" doc:"The organization's identifier." example:"0192f5e4-8a4b-7cc1-9a51-0b3c8d9e1f20"`
	Name      string           `json:"name" example:"Acme"`
	Slug      string           `json:"slug" doc:"Unique URL name." example:"acme"`
	Logo      *string          `json:"logo" nullable:"true" doc:"Logo URL, or null." example:"https://example.com/acme.png"`
	Metadata  edge.OrgMetadata `json:"metadata"`
	CreatedAt string           `json:"createdAt" format:"date-time" example:"2026-11-21T09:30:00.000Z"`
	// RequireTwoFactor is Gatehouse's own field (Better Auth has none).
	RequireTwoFactor bool `json:"requireTwoFactor" doc:"Whether members must have a second factor (two-factor or a passkey) to act in the organization: without one its routes answer 403 TWO_FACTOR_REQUIRED_BY_ORGANIZATION until they enrol."`
}

func organizationJSON(o *domain.Organization) OrganizationJSON {
	out := OrganizationJSON{ID: string(o.ID()), Name: o.Name(), Slug: o.Slug(), Metadata: edge.OrgMetadataOf(o.Metadata()), CreatedAt: edge.JSDate(o.CreatedAt()),
		RequireTwoFactor: o.RequiresTwoFactor()}
	if logo := o.Logo(); logo != "" {
		out.Logo = &logo
	}
	return out
}

// OrgMemberJSON is a membership as Better Auth returns it.
type OrgMemberJSON struct {
	ID             string `json:"id" doc:"The membership's identifier."`
	OrganizationID string `json:"organizationId"`
	UserID         string `json:"userId"`
	Role           string `json:"role" doc:"Roles in the organization (owner, admin, member), comma-separated." example:"member"`
	CreatedAt      string `json:"createdAt" format:"date-time" doc:"When the user joined." example:"2026-11-21T09:30:00.000Z"`
}

func orgMemberJSON(m *domain.Member) OrgMemberJSON {
	return OrgMemberJSON{ID: string(m.ID()), OrganizationID: string(m.OrganizationID()), UserID: string(m.UserID()),
		Role: domain.JoinOrgRoles(m.Roles()), CreatedAt: edge.JSDate(m.CreatedAt())}
}

// OrgMemberWithUserJSON is a membership with its user.
type OrgMemberWithUserJSON struct {
	OrgMemberJSON
	User edge.OrgMemberUserJSON `json:"user"`
}

func orgMemberWithUserJSON(m *domain.Member, u *domain.User) OrgMemberWithUserJSON {
	out := OrgMemberWithUserJSON{OrgMemberJSON: orgMemberJSON(m)}
	if u != nil {
		out.User = edge.OrgMemberUserJSON{ID: string(u.ID()), Name: u.Name(), Email: string(u.Email())}
		if img := u.Image(); img != "" {
			out.User.Image = &img
		}
	}
	return out
}

func orgMembersJSON(list []ports.MemberWithUser) []OrgMemberWithUserJSON {
	out := make([]OrgMemberWithUserJSON, len(list))
	for i, mu := range list {
		out[i] = orgMemberWithUserJSON(mu.Member, mu.User)
	}
	return out
}

// OrgInvitationJSON is an invitation as Better Auth returns it.
type OrgInvitationJSON struct {
	ID             string  `json:"id" doc:"The invitation's identifier, the one in the mailed link."`
	OrganizationID string  `json:"organizationId"`
	Email          string  `json:"email" format:"email" doc:"The invited address." example:"bob@example.com"`
	Role           string  `json:"role" doc:"Roles given on accepting, comma-separated." example:"member"`
	Status         string  `json:"status" enum:"pending,accepted,rejected,canceled" doc:"An expired invitation stays pending."`
	ExpiresAt      string  `json:"expiresAt" format:"date-time" example:"2026-11-23T09:30:00.000Z"`
	CreatedAt      string  `json:"createdAt" format:"date-time" example:"2026-11-21T09:30:00.000Z"`
	InviterID      *string `json:"inviterId" nullable:"true" doc:"Who invited, or null once their account is deleted."`
}

func orgInvitationJSON(i *domain.Invitation) OrgInvitationJSON {
	out := OrgInvitationJSON{ID: string(i.ID()), OrganizationID: string(i.OrganizationID()), Email: string(i.Email()),
		Role: domain.JoinOrgRoles(i.Roles()), Status: string(i.Status()), ExpiresAt: edge.JSDate(i.ExpiresAt()), CreatedAt: edge.JSDate(i.CreatedAt())}
	if id := i.InviterID(); id != "" {
		s := string(id)
		out.InviterID = &s
	}
	return out
}

func orgInvitationsJSON(list []*domain.Invitation) []OrgInvitationJSON {
	out := make([]OrgInvitationJSON, len(list))
	for i, inv := range list {
		out[i] = orgInvitationJSON(inv)
	}
	return out
}

// orgSelector names an organization by id or slug; neither means the
// session's active organization.
func orgSelector(id, slug string) organization.OrgSelector {
	return organization.OrgSelector{ID: domain.OrganizationID(id), Slug: slug}
}

// OrganizationOutput is one organization.
type OrganizationOutput struct {
	Body OrganizationJSON
}

func organizationOutput(o *domain.Organization) *OrganizationOutput {
	return &OrganizationOutput{Body: organizationJSON(o)}
}

// CreateOrganizationInput creates an organization owned by the caller. The
// slug's pattern is domain.CheckSlug's rule, in the schema so that a
// malformed slug is a VALIDATION_ERROR naming body.slug.
type CreateOrganizationInput struct {
	Body struct {
		Name                          string           `json:"name" minLength:"1" maxLength:"256" example:"Acme"`
		Slug                          string           `json:"slug" maxLength:"64" pattern:"^[a-z0-9]+(?:-[a-z0-9]+)*$" doc:"Unique URL name: lower-case letters, digits and single hyphens, at most 64 characters." example:"acme"`
		Logo                          string           `json:"logo,omitempty" maxLength:"2048" doc:"Logo URL: an absolute http or https URL."`
		Metadata                      edge.OrgMetadata `json:"metadata,omitempty"`
		KeepCurrentActiveOrganization bool             `json:"keepCurrentActiveOrganization,omitempty" doc:"Leave the session's active organization as it is instead of switching to the new one."`
	}
}

// CreateOrganizationOutput is the new organization with its only member.
type CreateOrganizationOutput struct {
	Body struct {
		OrganizationJSON
		Members []OrgMemberJSON `json:"members" doc:"The caller, as owner."`
	}
}

func (s *API) createOrganization(ctx context.Context, in *CreateOrganizationInput) (*CreateOrganizationOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	org, owner, err := s.Organizations.Create(ctx, req, organization.CreateOrganization{
		Name: in.Body.Name, Slug: in.Body.Slug, Logo: in.Body.Logo, Metadata: in.Body.Metadata.Text(),
		KeepCurrentActive: in.Body.KeepCurrentActiveOrganization})
	if err != nil {
		return nil, err
	}
	out := &CreateOrganizationOutput{}
	out.Body.OrganizationJSON = organizationJSON(org)
	out.Body.Members = []OrgMemberJSON{orgMemberJSON(owner)}
	return out, nil
}

// CheckSlugInput asks whether a slug is free.
type CheckSlugInput struct {
	Body struct {
		Slug string `json:"slug" maxLength:"64" pattern:"^[a-z0-9]+(?:-[a-z0-9]+)*$" doc:"Unique URL name: lower-case letters, digits and single hyphens, at most 64 characters." example:"acme"`
	}
}

func (s *API) checkSlug(ctx context.Context, in *CheckSlugInput) (*edge.StatusOutput, error) {
	if _, err := s.OrgRequest(ctx); err != nil {
		return nil, err
	}
	if err := s.Organizations.CheckSlug(ctx, in.Body.Slug); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}

// UpdateOrganizationData is what update changes.
type UpdateOrganizationData struct {
	Name     *string             `json:"name,omitempty" minLength:"1" maxLength:"256"`
	Slug     *string             `json:"slug,omitempty" maxLength:"64" pattern:"^[a-z0-9]+(?:-[a-z0-9]+)*$" doc:"Unique URL name: lower-case letters, digits and single hyphens, at most 64 characters."`
	Logo     edge.NullableString `json:"logo,omitempty" maxLength:"2048" doc:"Logo URL (an absolute http or https URL); null or \"\" removes it."`
	Metadata edge.OrgMetadata    `json:"metadata,omitempty" doc:"Replaces the metadata; null removes it."`
	// RequireTwoFactor is Gatehouse's own field.
	RequireTwoFactor *bool `json:"requireTwoFactor,omitempty" doc:"Require members to have a second factor (two-factor or a passkey). Turning it on needs one yourself (403 SET_UP_A_SECOND_FACTOR_BEFORE_REQUIRING_ONE)."`
}

// UpdateOrganizationInput changes an organization.
type UpdateOrganizationInput struct {
	Body struct {
		Data           UpdateOrganizationData `json:"data" doc:"The fields to change; absent ones stay."`
		OrganizationID string                 `json:"organizationId,omitempty" maxLength:"128" doc:"Default: the session's active organization."`
	}
}

func (s *API) updateOrganization(ctx context.Context, in *UpdateOrganizationInput) (*OrganizationOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	d := in.Body.Data
	patch := organization.OrganizationPatch{Name: d.Name, Slug: d.Slug, RequireTwoFactor: d.RequireTwoFactor}
	if d.Logo.IsSet() {
		logo := d.Logo.Value()
		patch.Logo = &logo
	}
	if d.Metadata.IsSet() {
		text := d.Metadata.Text()
		patch.Metadata = &text
	}
	org, err := s.Organizations.Update(ctx, req, orgSelector(in.Body.OrganizationID, ""), patch)
	if err != nil {
		return nil, err
	}
	return organizationOutput(org), nil
}

// OrganizationIDInput names an organization in the body.
type OrganizationIDInput struct {
	Body struct {
		OrganizationID string `json:"organizationId" minLength:"1" maxLength:"128"`
	}
}

func (s *API) deleteOrganization(ctx context.Context, in *OrganizationIDInput) (*OrganizationOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	org, err := s.Organizations.Delete(ctx, req, domain.OrganizationID(in.Body.OrganizationID))
	if err != nil {
		return nil, err
	}
	return organizationOutput(org), nil
}

// SetActiveOrganizationInput picks the session's active organization.
type SetActiveOrganizationInput struct {
	Body *struct {
		OrganizationID   edge.NullableString `json:"organizationId,omitempty" maxLength:"128" doc:"The organization to work in; null clears the active organization."`
		OrganizationSlug string              `json:"organizationSlug,omitempty" maxLength:"64" doc:"The organization to work in, by slug."`
	}
}

// NullableOrganizationOutput is an organization, or null.
type NullableOrganizationOutput struct {
	Body *OrganizationJSON
}

func (s *API) setActiveOrganization(ctx context.Context, in *SetActiveOrganizationInput) (*NullableOrganizationOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	var sel organization.OrgSelector
	clear := false
	if b := in.Body; b != nil {
		sel = orgSelector(b.OrganizationID.Value(), b.OrganizationSlug)
		clear = b.OrganizationID.IsNull() && b.OrganizationSlug == ""
	}
	org, err := s.Organizations.SetActive(ctx, req, sel, clear)
	if err != nil {
		return nil, err
	}
	out := &NullableOrganizationOutput{}
	if org != nil {
		o := organizationJSON(org)
		out.Body = &o
	}
	return out, nil
}

// GetOrganizationInput names an organization by id or slug in the query.
type GetOrganizationInput struct {
	OrganizationID   string `query:"organizationId" maxLength:"128" doc:"Default: the session's active organization."`
	OrganizationSlug string `query:"organizationSlug" maxLength:"64" doc:"The organization by slug, instead of its id."`
}

// GetFullOrganizationInput names an organization and how many members to list.
type GetFullOrganizationInput struct {
	GetOrganizationInput
	MembersLimit int `query:"membersLimit" minimum:"1" maximum:"1000" doc:"How many members to include (default 100)."`
}

// FullOrganizationJSON is an organization with its members and invitations.
type FullOrganizationJSON struct {
	OrganizationJSON
	Members     []OrgMemberWithUserJSON `json:"members" doc:"The first members, oldest first."`
	Invitations []OrgInvitationJSON     `json:"invitations" doc:"Its invitations, only for members who may invite (owner-role invitations only for owners); empty otherwise."`
}

// FullOrganizationOutput is the full organization, or null.
type FullOrganizationOutput struct {
	Body *FullOrganizationJSON
}

func (s *API) getFullOrganization(ctx context.Context, in *GetFullOrganizationInput) (*FullOrganizationOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	full, err := s.Organizations.GetFull(ctx, req, orgSelector(in.OrganizationID, in.OrganizationSlug), in.MembersLimit)
	if err != nil {
		return nil, err
	}
	out := &FullOrganizationOutput{}
	if full != nil {
		out.Body = &FullOrganizationJSON{OrganizationJSON: organizationJSON(full.Organization),
			Members: orgMembersJSON(full.Members), Invitations: orgInvitationsJSON(full.Invitations)}
	}
	return out, nil
}

func (s *API) getOrganization(ctx context.Context, in *GetOrganizationInput) (*OrganizationOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	org, err := s.Organizations.Get(ctx, req, orgSelector(in.OrganizationID, in.OrganizationSlug))
	if err != nil {
		return nil, err
	}
	return organizationOutput(org), nil
}

// ListOrganizationsOutput is the caller's organizations.
type ListOrganizationsOutput struct {
	Body []OrganizationJSON
}

func (s *API) listOrganizations(ctx context.Context, _ *struct{}) (*ListOrganizationsOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	list, err := s.Organizations.List(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &ListOrganizationsOutput{Body: make([]OrganizationJSON, len(list))}
	for i, o := range list {
		out.Body[i] = organizationJSON(o)
	}
	return out, nil
}

// InviteMemberInput invites an address.
type InviteMemberInput struct {
	Body struct {
		Email          string         `json:"email" minLength:"1" maxLength:"254" example:"bob@example.com"`
		Role           edge.RoleInput `json:"role" doc:"owner, admin or member; several comma-separated or as an array. Only owners invite owners."`
		OrganizationID string         `json:"organizationId,omitempty" maxLength:"128" doc:"Default: the session's active organization."`
		Resend         bool           `json:"resend,omitempty" doc:"Renew and re-send an open invitation to the address instead of refusing."`
	}
}

// InvitationOutput is one invitation.
type InvitationOutput struct {
	Body OrgInvitationJSON
}

func (s *API) inviteMember(ctx context.Context, in *InviteMemberInput) (*InvitationOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	inv, err := s.Organizations.Invite(ctx, req, organization.InviteMember{
		Organization: orgSelector(in.Body.OrganizationID, ""), Email: in.Body.Email, Roles: in.Body.Role, Resend: in.Body.Resend})
	if err != nil {
		return nil, err
	}
	return &InvitationOutput{Body: orgInvitationJSON(inv)}, nil
}

// GetInvitationInput names an invitation in the query.
type GetInvitationInput struct {
	ID string `query:"id" required:"true" minLength:"1" maxLength:"128" doc:"The invitation's id, from the mailed link."`
}

// InvitationDetailsJSON is an invitation with what its recipient needs to decide.
type InvitationDetailsJSON struct {
	OrgInvitationJSON
	OrganizationName string  `json:"organizationName" example:"Acme"`
	OrganizationSlug string  `json:"organizationSlug" example:"acme"`
	InviterEmail     *string `json:"inviterEmail" nullable:"true" format:"email" doc:"The inviter's address, or null once their account is deleted."`
}

// InvitationDetailsOutput is one invitation with its organization's name.
type InvitationDetailsOutput struct {
	Body InvitationDetailsJSON
}

func (s *API) getInvitation(ctx context.Context, in *GetInvitationInput) (*InvitationDetailsOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	d, err := s.Organizations.GetInvitation(ctx, req, domain.InvitationID(in.ID))
	if err != nil {
		return nil, err
	}
	out := &InvitationDetailsOutput{Body: InvitationDetailsJSON{OrgInvitationJSON: orgInvitationJSON(d.Invitation),
		OrganizationName: d.OrganizationName, OrganizationSlug: d.OrganizationSlug}}
	if d.InviterEmail != "" {
		e := string(d.InviterEmail)
		out.Body.InviterEmail = &e
	}
	return out, nil
}

// ListInvitationsInput names an organization in the query.
type ListInvitationsInput struct {
	OrganizationID string `query:"organizationId" maxLength:"128" doc:"Default: the session's active organization."`
}

// InvitationsOutput is a list of invitations.
type InvitationsOutput struct {
	Body []OrgInvitationJSON
}

func (s *API) listInvitations(ctx context.Context, in *ListInvitationsInput) (*InvitationsOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	list, err := s.Organizations.ListInvitations(ctx, req, orgSelector(in.OrganizationID, ""))
	if err != nil {
		return nil, err
	}
	return &InvitationsOutput{Body: orgInvitationsJSON(list)}, nil
}

// UserInvitationJSON is an open invitation to the caller, with its organization.
type UserInvitationJSON struct {
	OrgInvitationJSON
	OrganizationName string `json:"organizationName" example:"Acme"`
	OrganizationSlug string `json:"organizationSlug" example:"acme"`
}

// UserInvitationsOutput is the caller's open invitations.
type UserInvitationsOutput struct {
	Body []UserInvitationJSON
}

func (s *API) listUserInvitations(ctx context.Context, _ *struct{}) (*UserInvitationsOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	list, err := s.Organizations.ListUserInvitations(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &UserInvitationsOutput{Body: make([]UserInvitationJSON, len(list))}
	for i, d := range list {
		out.Body[i] = UserInvitationJSON{OrgInvitationJSON: orgInvitationJSON(d.Invitation), OrganizationName: d.OrganizationName, OrganizationSlug: d.OrganizationSlug}
	}
	return out, nil
}

// InvitationIDInput names an invitation in the body.
type InvitationIDInput struct {
	Body struct {
		InvitationID string `json:"invitationId" minLength:"1" maxLength:"128"`
	}
}

// NullableMember is a membership, or null (Huma cannot mark a referenced
// schema nullable, so the type documents itself).
type NullableMember struct{ m *OrgMemberJSON }

// MarshalJSON writes the membership, or null.
func (n NullableMember) MarshalJSON() ([]byte, error) {
	if n.m == nil {
		return []byte("null"), nil
	}
	return json.Marshal(n.m)
}

// Schema documents the membership or null.
func (NullableMember) Schema(r huma.Registry) *huma.Schema {
	return &huma.Schema{AnyOf: []*huma.Schema{r.Schema(reflect.TypeFor[OrgMemberJSON](), true, "OrgMemberJSON"), {Type: "null"}}}
}

// AnswerInvitationOutput is {invitation, member}; member is null on a rejection.
type AnswerInvitationOutput struct {
	Body struct {
		Invitation OrgInvitationJSON `json:"invitation"`
		Member     NullableMember    `json:"member" doc:"The new membership, or null when the invitation was rejected."`
	}
}

func (s *API) acceptInvitation(ctx context.Context, in *InvitationIDInput) (*AnswerInvitationOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	inv, m, err := s.Organizations.Accept(ctx, req, domain.InvitationID(in.Body.InvitationID))
	if err != nil {
		return nil, err
	}
	out := &AnswerInvitationOutput{}
	out.Body.Invitation = orgInvitationJSON(inv)
	mj := orgMemberJSON(m)
	out.Body.Member = NullableMember{&mj}
	return out, nil
}

func (s *API) rejectInvitation(ctx context.Context, in *InvitationIDInput) (*AnswerInvitationOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	inv, err := s.Organizations.Reject(ctx, req, domain.InvitationID(in.Body.InvitationID))
	if err != nil {
		return nil, err
	}
	out := &AnswerInvitationOutput{}
	out.Body.Invitation = orgInvitationJSON(inv)
	return out, nil
}

func (s *API) cancelInvitation(ctx context.Context, in *InvitationIDInput) (*InvitationOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	inv, err := s.Organizations.Cancel(ctx, req, domain.InvitationID(in.Body.InvitationID))
	if err != nil {
		return nil, err
	}
	return &InvitationOutput{Body: orgInvitationJSON(inv)}, nil
}

// RemoveMemberInput removes a member by id or address.
type RemoveMemberInput struct {
	Body struct {
		MemberIDOrEmail string `json:"memberIdOrEmail" minLength:"1" maxLength:"254" doc:"The membership's id, or the member's e-mail address."`
		OrganizationID  string `json:"organizationId,omitempty" maxLength:"128" doc:"Default: the session's active organization."`
	}
}

// RemoveMemberOutput is {member}, the removed membership with its user.
type RemoveMemberOutput struct {
	Body struct {
		Member OrgMemberWithUserJSON `json:"member"`
	}
}

func (s *API) removeMember(ctx context.Context, in *RemoveMemberInput) (*RemoveMemberOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	removed, err := s.Organizations.RemoveMember(ctx, req, orgSelector(in.Body.OrganizationID, ""), in.Body.MemberIDOrEmail)
	if err != nil {
		return nil, err
	}
	out := &RemoveMemberOutput{}
	out.Body.Member = orgMemberWithUserJSON(removed.Member, removed.User)
	return out, nil
}

// UpdateMemberRoleInput replaces a member's roles.
type UpdateMemberRoleInput struct {
	Body struct {
		MemberID       string         `json:"memberId" minLength:"1" maxLength:"128"`
		Role           edge.RoleInput `json:"role" doc:"owner, admin or member; several comma-separated or as an array. Only owners grant the owner role or change an owner."`
		OrganizationID string         `json:"organizationId,omitempty" maxLength:"128" doc:"Default: the session's active organization."`
	}
}

// MemberOutput is one membership.
type MemberOutput struct {
	Body OrgMemberJSON
}

func (s *API) updateMemberRole(ctx context.Context, in *UpdateMemberRoleInput) (*MemberOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	updated, err := s.Organizations.UpdateMemberRole(ctx, req, orgSelector(in.Body.OrganizationID, ""),
		domain.MemberID(in.Body.MemberID), in.Body.Role)
	if err != nil {
		return nil, err
	}
	return &MemberOutput{Body: orgMemberJSON(updated.Member)}, nil
}

// MemberWithUserOutput is one membership with its user.
type MemberWithUserOutput struct {
	Body OrgMemberWithUserJSON
}

func (s *API) leaveOrganization(ctx context.Context, in *OrganizationIDInput) (*MemberWithUserOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	left, err := s.Organizations.Leave(ctx, req, domain.OrganizationID(in.Body.OrganizationID))
	if err != nil {
		return nil, err
	}
	return &MemberWithUserOutput{Body: orgMemberWithUserJSON(left.Member, left.User)}, nil
}

// ListMembersInput pages an organization's members.
type ListMembersInput struct {
	GetOrganizationInput
	Limit          int    `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"Page size."`
	Offset         int    `query:"offset" minimum:"0" default:"0" doc:"Members to skip. Its cost grows with it: prefer cursor past the first pages. Must be 0 with cursor."`
	Cursor         string `query:"cursor" maxLength:"256" doc:"nextCursor of the previous page, read with the same sortDirection: the page starts right after it, at a cost that does not grow with its depth."`
	SortBy         string `query:"sortBy" enum:"createdAt" default:"createdAt" doc:"Only createdAt (joining time; ties broken by id) is supported."`
	SortDirection  string `query:"sortDirection" enum:"asc,desc" default:"asc" doc:"asc: oldest first."`
	FilterField    string `query:"filterField" maxLength:"64" doc:"Not supported: a request with a filter is refused rather than answered unfiltered."`
	FilterValue    string `query:"filterValue" maxLength:"256" doc:"Not supported."`
	FilterOperator string `query:"filterOperator" maxLength:"16" doc:"Not supported."`
}

// ListMembersOutput is Better Auth's {members, total}, and nextCursor.
type ListMembersOutput struct {
	Body struct {
		Members    []OrgMemberWithUserJSON `json:"members"`
		Total      int                     `json:"total" doc:"How many members the organization has."`
		NextCursor *string                 `json:"nextCursor" nullable:"true" doc:"Pass as cursor (with the same sortDirection) for the next page; null on the last. Not in Better Auth."`
	}
}

var (
	errMemberFilter       = domain.Invalid("VALIDATION_ERROR", "Invalid query", domain.FieldViolation{Field: "query.filterField", Message: "filtering members is not supported"})
	errMemberCursor       = domain.Invalid("VALIDATION_ERROR", "Invalid query", domain.FieldViolation{Field: "query.cursor", Message: "is not a cursor list-members returned"})
	errMemberCursorOffset = domain.Invalid("VALIDATION_ERROR", "Invalid query", domain.FieldViolation{Field: "query.offset", Message: "must be 0 with a cursor"})
)

func encodeMemberCursor(c *ports.MemberCursor) *string {
	if c == nil {
		return nil
	}
	s := domain.Position{At: c.CreatedAt, ID: string(c.ID)}.Cursor()
	return &s
}

func decodeMemberCursor(s string) (*ports.MemberCursor, error) {
	p, ok := domain.ParseCursor(s)
	if !ok {
		return nil, errMemberCursor
	}
	return &ports.MemberCursor{CreatedAt: p.At, ID: domain.MemberID(p.ID)}, nil
}

func (s *API) listMembers(ctx context.Context, in *ListMembersInput) (*ListMembersOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	if in.FilterField != "" || in.FilterValue != "" || in.FilterOperator != "" {
		return nil, errMemberFilter
	}
	q := ports.MemberQuery{SortDesc: in.SortDirection == "desc", Limit: in.Limit, Offset: in.Offset}
	if in.Cursor != "" {
		if q.After, err = decodeMemberCursor(in.Cursor); err != nil {
			return nil, err
		}
		if q.Offset != 0 {
			return nil, errMemberCursorOffset
		}
	}
	page, err := s.Organizations.ListMembers(ctx, req, orgSelector(in.OrganizationID, in.OrganizationSlug), q)
	if err != nil {
		return nil, err
	}
	out := &ListMembersOutput{}
	out.Body.Members, out.Body.Total, out.Body.NextCursor = orgMembersJSON(page.Members), page.Total, encodeMemberCursor(page.Next)
	return out, nil
}

func (s *API) getActiveMember(ctx context.Context, _ *struct{}) (*MemberWithUserOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	m, err := s.Organizations.ActiveMember(ctx, req, organization.OrgSelector{})
	if err != nil {
		return nil, err
	}
	return &MemberWithUserOutput{Body: orgMemberWithUserJSON(m, req.Principal.User)}, nil
}

// GetActiveMemberRoleInput names the organization (default: the active one).
type GetActiveMemberRoleInput struct {
	GetOrganizationInput
	UserID string `query:"userId" maxLength:"128" doc:"Only the caller's own id is accepted; read other members' roles from list-members."`
}

// ActiveMemberRoleOutput is {role}.
type ActiveMemberRoleOutput struct {
	Body struct {
		Role string `json:"role" doc:"The caller's roles in the organization, comma-separated." example:"owner"`
	}
}

var errOtherUsersRole = domain.Invalid("VALIDATION_ERROR", "Invalid query", domain.FieldViolation{Field: "query.userId", Message: "must be your own id"})

func (s *API) getActiveMemberRole(ctx context.Context, in *GetActiveMemberRoleInput) (*ActiveMemberRoleOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	if in.UserID != "" && in.UserID != string(req.Principal.User.ID()) {
		return nil, errOtherUsersRole
	}
	m, err := s.Organizations.ActiveMember(ctx, req, orgSelector(in.OrganizationID, in.OrganizationSlug))
	if err != nil {
		return nil, err
	}
	out := &ActiveMemberRoleOutput{}
	out.Body.Role = domain.JoinOrgRoles(m.Roles())
	return out, nil
}

// OrgHasPermissionInput asks whether the caller's roles in an organization
// grant actions.
type OrgHasPermissionInput struct {
	Body struct {
		Permissions    edge.PermissionsInput `json:"permissions,omitempty" doc:"Actions per resource, e.g. {\"member\": [\"delete\"]}."`
		Permission     edge.PermissionsInput `json:"permission,omitempty" doc:"Deprecated name of permissions."`
		OrganizationID string                `json:"organizationId,omitempty" maxLength:"128" doc:"Default: the session's active organization."`
	}
}

var errNoOrgPermissions = domain.Invalid("VALIDATION_ERROR", "Invalid permissions", domain.FieldViolation{Field: "body.permissions", Message: "is required"})

// OrgHasPermissionOutput is Better Auth's {error:null, success}.
type OrgHasPermissionOutput struct {
	Body struct {
		Error   *string `json:"error" nullable:"true" doc:"Always null."`
		Success bool    `json:"success" doc:"Whether every requested action is granted."`
	}
}

func (s *API) orgHasPermission(ctx context.Context, in *OrgHasPermissionInput) (*OrgHasPermissionOutput, error) {
	req, err := s.OrgRequest(ctx)
	if err != nil {
		return nil, err
	}
	perms := in.Body.Permissions
	if len(perms) == 0 {
		perms = in.Body.Permission
	}
	if len(perms) == 0 {
		return nil, errNoOrgPermissions
	}
	ok, err := s.Organizations.HasPermission(ctx, req, orgSelector(in.Body.OrganizationID, ""), domain.Permissions(perms))
	if err != nil {
		return nil, err
	}
	out := &OrgHasPermissionOutput{}
	out.Body.Success = ok
	return out, nil
}

// addOrganizationRoutes registers the organization plugin (better-auth-wire
// §7.3, without teams and dynamic roles) in the framework and auth contracts.
func (s *API) AddOrganizationRoutes() {
	type op = huma.Operation
	const tag = "Organizations"
	// org is a signed-in organization operation: 401 without a session, 403
	// when the caller may not (or is not a member), 400 for a broken rule.
	org := func(id, method, path, summary, description string) op {
		return op{OperationID: id, Method: method, Path: edge.FrameworkBase + "/organization" + path, Tags: []string{tag},
			Summary: summary, Description: description, Security: edge.SessionSecurity,
			Errors: []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests}}
	}
	const notMemberOnly = " A caller who is not a member gets 403 USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION, whether or not the organization exists."
	// twoFactor is the organization's second-factor rule, on every route
	// that acts in an organization except leave.
	const twoFactor = " In an organization that requires a second factor (requireTwoFactor), a member without one (two-factor or a passkey) " +
		"gets 403 TWO_FACTOR_REQUIRED_BY_ORGANIZATION until they enrol."
	const notMember = notMemberOnly + twoFactor
	const active = " Without organizationId (or organizationSlug) it is the session's active organization: 400 NO_ACTIVE_ORGANIZATION without one."
	fw, post, get := edge.ContractFramework, http.MethodPost, http.MethodGet

	edge.Add(s.routes, fw, org("organizationCreate", post, "/create", "Create an organization",
		"Creates an organization owned by the caller and, unless keepCurrentActiveOrganization, makes it the session's active one. "+
			"A taken slug is 400 ORGANIZATION_ALREADY_EXISTS; a malformed one a VALIDATION_ERROR naming body.slug."), s.createOrganization, edge.ContractAuth)
	// Reading, and choosing the session's active organization, stay open to
	// an impersonation (edge.Impersonation); every other write is refused.
	edge.Add(s.routes, fw, edge.WithPolicy(org("organizationCheckSlug", post, "/check-slug", "Check a slug",
		"{status:true} when the slug is free; 400 ORGANIZATION_SLUG_ALREADY_TAKEN when not."), edge.AllowedWhileImpersonating), s.checkSlug, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationUpdate", post, "/update", "Update an organization",
		"Changes name, slug, logo, metadata or requireTwoFactor (Gatehouse's own: members must have a second factor). Needs organization:update (owners and admins): "+
			"403 YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION. Turning requireTwoFactor on needs a second factor of your own, so nobody locks the organization out: "+
			"403 SET_UP_A_SECOND_FACTOR_BEFORE_REQUIRING_ONE."+active+notMember),
		s.updateOrganization, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationDelete", post, "/delete", "Delete an organization",
		"Deletes the organization with its members and invitations; it stops being any session's active organization. "+
			"Needs organization:delete (owners only): 403 YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION."+notMember), s.deleteOrganization, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(org("organizationSetActive", post, "/set-active", "Set the active organization",
		"Makes an organization the caller belongs to the session's active one and returns it. organizationId null clears it and answers null; "+
			"with neither id nor slug the current active organization is returned (null without one). A non-member is refused, and the active organization cleared."+twoFactor+
			" Open to an impersonation session too."), edge.AllowedWhileImpersonating),
		s.setActiveOrganization, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationGetFull", get, "/get-full-organization", "Get an organization with its members",
		"The organization with its first members (and their users) and, for members who may invite, its invitations. "+
			"null when no organization is named and none is active."+notMember), s.getFullOrganization, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationGet", get, "/get-organization", "Get an organization",
		"The organization alone."+active+notMember), s.getOrganization, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationList", get, "/list", "List my organizations",
		"The organizations the caller belongs to, oldest membership first."), s.listOrganizations, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationInviteMember", post, "/invite-member", "Invite a member",
		"Records an invitation and mails its link to the address. Needs invitation:create; only owners invite owners "+
			"(403 YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE). 400 USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION, "+
			"USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION (unless resend), ROLE_NOT_FOUND; 403 INVITATION_LIMIT_REACHED."+active+notMember),
		s.inviteMember, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationGetInvitation", get, "/get-invitation", "Get an invitation",
		"An open invitation addressed to the caller, with the organization's name and the inviter's address. "+
			"Unknown, answered and expired invitations are 400 INVITATION_NOT_FOUND; someone else's 403 YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION."),
		s.getInvitation, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationListInvitations", get, "/list-invitations", "List an organization's invitations",
		"Every invitation of the organization, newest first. Needs invitation:create (403 YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS)."+active+notMember),
		s.listInvitations, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationListUserInvitations", get, "/list-user-invitations", "List my invitations",
		"The open invitations to the caller's address, newest first. The address must be verified: 403 EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION."),
		s.listUserInvitations, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationAcceptInvitation", post, "/accept-invitation", "Accept an invitation",
		"Adds the caller with the invitation's roles and makes the organization the session's active one. The caller's address must be the invited one "+
			"(403 YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION) and verified (403 EMAIL_VERIFICATION_REQUIRED_BEFORE_ACCEPTING_OR_REJECTING_INVITATION); "+
			"400 INVITATION_NOT_FOUND, USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION; 403 ORGANIZATION_MEMBERSHIP_LIMIT_REACHED."),
		s.acceptInvitation, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationRejectInvitation", post, "/reject-invitation", "Reject an invitation",
		"Declines an open invitation addressed to the caller; member is null."), s.rejectInvitation, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationCancelInvitation", post, "/cancel-invitation", "Cancel an invitation",
		"Withdraws an open invitation. Needs invitation:cancel (403 YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION); only owners cancel owner-role invitations."+notMember),
		s.cancelInvitation, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationRemoveMember", post, "/remove-member", "Remove a member",
		"Removes a member by membership id or address; their sessions stop working in the organization. Needs member:delete "+
			"(403 YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER); only owners remove owners; the last owner stays "+
			"(400 YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER). 400 MEMBER_NOT_FOUND."+active+notMember), s.removeMember, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationUpdateMemberRole", post, "/update-member-role", "Change a member's roles",
		"Replaces a member's roles. Needs member:update (403 YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER); only owners grant the owner role or change an owner; "+
			"the last owner keeps the role (400 YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER). 400 MEMBER_NOT_FOUND, ROLE_NOT_FOUND."+active+notMember),
		s.updateMemberRole, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationLeave", post, "/leave", "Leave an organization",
		"Removes the caller from the organization and returns the removed membership. The only owner cannot leave: "+
			"400 YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER. Leaving is allowed without a second factor in an organization that requires one."+notMemberOnly), s.leaveOrganization, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationListMembers", get, "/list-members", "List members",
		"One page of the organization's members with their users, in joining order, how many it has (total), and nextCursor, the cursor of the "+
			"next page (null on the last). Page by offset or by cursor, not both (400 naming query.offset); a malformed cursor is 400 naming query.cursor. "+
			"The total and the first page cost the same in an organization of ten members and of ten thousand, and so does every page read from a "+
			"cursor; a page read from an offset costs more the larger the offset, as the members it skips are still read. Filtering is not supported."+
			active+notMember), s.listMembers, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationGetActiveMember", get, "/get-active-member", "My membership of the active organization",
		"The caller's membership of the session's active organization, with their user. 400 NO_ACTIVE_ORGANIZATION, MEMBER_NOT_FOUND."+twoFactor),
		s.getActiveMember, edge.ContractAuth)
	edge.Add(s.routes, fw, org("organizationGetActiveMemberRole", get, "/get-active-member-role", "My role in an organization",
		"{role}: the caller's roles in the organization, comma-separated. 400 MEMBER_NOT_FOUND when the caller is not a member of the active organization."+active+notMember), s.getActiveMemberRole, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(org("organizationHasPermission", post, "/has-permission", "Check my organization permissions",
		"Whether the caller's roles in the organization grant every requested action: {error:null, success}."+active+notMember+
			" (Better Auth answers 401 for a non-member here.)"), edge.AllowedWhileImpersonating), s.orgHasPermission, edge.ContractAuth)

	s.documentNullBody("/organization/get-full-organization")
	s.documentNullPostBody("/organization/set-active")
}

// documentNullPostBody says that a POST operation's 200 body may be the JSON
// literal null (set-active when clearing), as documentNullBody does for GETs.
func (s *API) documentNullPostBody(path string) {
	for _, doc := range s.Documents() {
		item := doc.Paths[edge.FrameworkBase+path]
		if item == nil || item.Post == nil || item.Post.Responses["200"] == nil {
			continue
		}
		for _, mt := range item.Post.Responses["200"].Content {
			if mt.Schema != nil && mt.Schema.Ref != "" {
				mt.Schema = &huma.Schema{AnyOf: []*huma.Schema{{Ref: mt.Schema.Ref}, {Type: "null"}}}
			}
		}
	}
}
