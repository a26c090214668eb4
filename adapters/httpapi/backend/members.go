package backend

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/domain"
)

// The trusted routes of an organization's members and invitations
// (/api/organizations/{id}/members, /api/organizations/{id}/invitations).

// BackendMemberOutput is one membership.
type BackendMemberOutput struct {
	Body BackendMemberJSON
}

// BackendAddMemberInput adds an existing user to an organization.
type BackendAddMemberInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"128" doc:"The organization's id."`
	Body struct {
		UserID string         `json:"userId" minLength:"1" maxLength:"128" doc:"The user to add."`
		Role   edge.RoleInput `json:"role" doc:"owner, admin or member; several comma-separated or as an array."`
	}
}

func (s *API) backendAddMember(ctx context.Context, in *BackendAddMemberInput) (*BackendMemberOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	mu, err := s.Organizations.AddMember(ctx, req, domain.OrganizationID(in.ID),
		organization.AddMember{UserID: domain.UserID(in.Body.UserID), Roles: in.Body.Role})
	if err != nil {
		return nil, err
	}
	return &BackendMemberOutput{Body: backendMemberJSON(*mu)}, nil
}

// BackendListMembersInput pages an organization's members.
type BackendListMembersInput struct {
	ID string `path:"id" minLength:"1" maxLength:"128" doc:"The organization's id."`
	BackendPageInput
}

// BackendMembersOutput is a page of members.
type BackendMembersOutput struct {
	Body struct {
		Data       []BackendMemberJSON `json:"data" doc:"The page's members with their users, newest first."`
		NextCursor *string             `json:"nextCursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last."`
	}
}

func (s *API) backendListMembers(ctx context.Context, in *BackendListMembersInput) (*BackendMembersOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsRead)
	if err != nil {
		return nil, err
	}
	page, err := s.Organizations.ListMembersByID(ctx, req, domain.OrganizationID(in.ID), in.page())
	if err != nil {
		return nil, err
	}
	out := &BackendMembersOutput{}
	out.Body.Data = make([]BackendMemberJSON, len(page.Members))
	for i, mu := range page.Members {
		out.Body.Data[i] = backendMemberJSON(mu)
	}
	out.Body.NextCursor = nextCursor(page.NextCursor)
	return out, nil
}

// BackendMemberIDInput names a member of an organization in the path.
type BackendMemberIDInput struct {
	ID       string `path:"id" minLength:"1" maxLength:"128" doc:"The organization's id."`
	MemberID string `path:"memberId" minLength:"1" maxLength:"128" doc:"The membership's id (a member's id, not its user's)."`
}

// BackendUpdateMemberRoleInput replaces a member's roles.
type BackendUpdateMemberRoleInput struct {
	BackendMemberIDInput
	Body struct {
		Role edge.RoleInput `json:"role" doc:"owner, admin or member; several comma-separated or as an array."`
	}
}

func (s *API) backendUpdateMemberRole(ctx context.Context, in *BackendUpdateMemberRoleInput) (*BackendMemberOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	mu, err := s.Organizations.UpdateMemberRoleByID(ctx, req, domain.OrganizationID(in.ID), domain.MemberID(in.MemberID), in.Body.Role)
	if err != nil {
		return nil, err
	}
	return &BackendMemberOutput{Body: backendMemberJSON(*mu)}, nil
}

func (s *API) backendRemoveMember(ctx context.Context, in *BackendMemberIDInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	if err := s.Organizations.RemoveMemberByID(ctx, req, domain.OrganizationID(in.ID), domain.MemberID(in.MemberID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// BackendInvitationOutput is one invitation.
type BackendInvitationOutput struct {
	Body BackendInvitationJSON
}

// BackendInviteInput invites an address to an organization.
type BackendInviteInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"128" doc:"The organization's id."`
	Body struct {
		Email         string         `json:"email" minLength:"1" maxLength:"254" doc:"The address to invite." example:"bob@example.com"`
		Role          edge.RoleInput `json:"role" doc:"owner, admin or member; several comma-separated or as an array."`
		InviterUserID string         `json:"inviterUserId,omitempty" maxLength:"128" doc:"A member of the organization to name as the inviter, in the mail and on the invitation. Absent: the invitation has no inviter."`
		Resend        bool           `json:"resend,omitempty" doc:"Renew and re-send an open invitation to the address instead of refusing it."`
	}
}

func (s *API) backendInvite(ctx context.Context, in *BackendInviteInput) (*BackendInvitationOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	b := in.Body
	inv, err := s.Organizations.InviteByID(ctx, req, domain.OrganizationID(in.ID), organization.InviteAddress{
		Email: b.Email, Roles: b.Role, InviterUserID: domain.UserID(b.InviterUserID), Resend: b.Resend})
	if err != nil {
		return nil, err
	}
	return &BackendInvitationOutput{Body: backendInvitationJSON(inv)}, nil
}

// BackendInvitationsOutput is an organization's invitations.
type BackendInvitationsOutput struct {
	Body struct {
		Data []BackendInvitationJSON `json:"data" doc:"Every invitation of the organization, newest first, whatever its status."`
	}
}

func (s *API) backendListInvitations(ctx context.Context, in *BackendOrganizationIDInput) (*BackendInvitationsOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsRead)
	if err != nil {
		return nil, err
	}
	list, err := s.Organizations.ListInvitationsByID(ctx, req, domain.OrganizationID(in.ID))
	if err != nil {
		return nil, err
	}
	out := &BackendInvitationsOutput{}
	out.Body.Data = make([]BackendInvitationJSON, len(list))
	for i, inv := range list {
		out.Body.Data[i] = backendInvitationJSON(inv)
	}
	return out, nil
}

// BackendInvitationIDInput names an invitation of an organization in the path.
type BackendInvitationIDInput struct {
	ID           string `path:"id" minLength:"1" maxLength:"128" doc:"The organization's id."`
	InvitationID string `path:"invitationId" minLength:"1" maxLength:"128" doc:"The invitation's id."`
}

func (s *API) backendRevokeInvitation(ctx context.Context, in *BackendInvitationIDInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	if err := s.Organizations.RevokeInvitation(ctx, req, domain.OrganizationID(in.ID), domain.InvitationID(in.InvitationID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// addBackendMemberRoutes registers the member and invitation routes of the
// trusted organization API.
func (s *API) AddBackendMemberRoutes() {
	type op = huma.Operation
	const (
		tag     = "Organization members"
		invTag  = "Organization invitations"
		base    = "/api/organizations/{id}"
		roles   = " Roles are owner, admin and member: an unknown one is 400 organization.unknown_role naming body.role."
		unknown = " An unknown organization is 404 organization.not_found"
		audited = " Audited, with the service key as the actor."
	)
	read, write := domain.ScopeOrganizationsRead, domain.ScopeOrganizationsWrite
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	nf, cf := http.StatusNotFound, http.StatusConflict

	registerTrusted(s, write, op{OperationID: "addMember", Method: post, Path: base + "/members", Tags: []string{tag},
		Summary: "Add a member", DefaultStatus: http.StatusCreated, Errors: []int{nf, cf},
		Description: "Adds an existing user to the organization with roles and answers 201 with the membership and its user, without an invitation. " +
			"An unknown user is 404 user.not_found naming body.userId; a user who is already a member 409 organization.already_member; " +
			"an organization at the configured membership limit 409 organization.membership_limit_reached." + roles + unknown + "." + audited},
		s.backendAddMember)
	registerTrusted(s, read, op{OperationID: "listMembers", Method: get, Path: base + "/members", Tags: []string{tag},
		Summary: "List members", Errors: []int{nf},
		Description: "One page of the organization's members with their users, newest first (joining time, then membership id), as {data, nextCursor}. " +
			"Pass nextCursor as cursor for the next page; it is null on the last. Every page costs the same at any depth and in an organization of any size. " +
			"A malformed cursor is 400 naming query.cursor; the organization's memberCount is the total." + unknown + "."},
		s.backendListMembers)
	registerTrusted(s, write, op{OperationID: "updateMemberRole", Method: patch, Path: base + "/members/{memberId}", Tags: []string{tag},
		Summary: "Change a member's roles", Errors: []int{nf, cf},
		Description: "Replaces the member's roles and answers with the membership. Taking the owner role from the last owner is 409 organization.last_owner." +
			roles + unknown + "; an unknown member, or a member of another organization, 404 organization.member_not_found." + audited},
		s.backendUpdateMemberRole)
	registerTrusted(s, write, op{OperationID: "removeMember", Method: del, Path: base + "/members/{memberId}", Tags: []string{tag},
		Summary: "Remove a member", DefaultStatus: http.StatusNoContent, Errors: []int{nf, cf},
		Description: "Removes the member (the user stays) and answers 204; their sessions stop having it as their active organization. " +
			"The last owner cannot be removed: 409 organization.last_owner." + unknown +
			"; an unknown member, or a member of another organization, 404 organization.member_not_found." + audited},
		s.backendRemoveMember)
	registerTrusted(s, write, op{OperationID: "createInvitation", Method: post, Path: base + "/invitations", Tags: []string{invTag},
		Summary: "Invite to an organization", DefaultStatus: http.StatusCreated, Errors: []int{nf, cf},
		Description: "Records an invitation, mails its link to the address (the framework's invitation mail, which the recipient accepts through " +
			"the framework's accept-invitation after signing in with that address, verified) and answers 201 with it. " +
			"inviterUserId, when given, must be a member (400 organization.inviter_not_member) and is named in the mail; without it the mail says only " +
			"that the recipient was invited. An address that is already a member is 409 organization.already_member; one with an open invitation " +
			"409 organization.already_invited unless resend; an organization at the configured invitation limit 409 organization.invitation_limit_reached. " +
			"A malformed address is 400 naming body.email." + roles + unknown + "." + audited},
		s.backendInvite)
	registerTrusted(s, read, op{OperationID: "listInvitations", Method: get, Path: base + "/invitations", Tags: []string{invTag},
		Summary: "List invitations", Errors: []int{nf},
		Description: "Every invitation of the organization, newest first, whatever its status, as {data}." + unknown + "."},
		s.backendListInvitations)
	registerTrusted(s, write, op{OperationID: "revokeInvitation", Method: del, Path: base + "/invitations/{invitationId}", Tags: []string{invTag},
		Summary: "Revoke an invitation", DefaultStatus: http.StatusNoContent, Errors: []int{nf, cf},
		Description: "Cancels an open invitation (its status becomes canceled; the link stops working) and answers 204. One that was accepted, rejected " +
			"or revoked, or has expired, is 409 organization.invitation_not_pending." + unknown +
			"; an unknown invitation, or one of another organization, 404 organization.invitation_not_found." + audited},
		s.backendRevokeInvitation)
}
