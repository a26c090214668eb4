package organization

import (
	"context"
	"errors"
	"slices"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The members and invitations of an organization named by id (see
// organizations_by_id.go for who may call them). A member or invitation id
// of another organization is not found, as an unknown one is.

// AddMember adds an existing user to an organization without an invitation.
type AddMember struct {
	UserID domain.UserID
	Roles  []string
}

// AddMember adds a user with roles. The user must exist (not found, naming
// userId) and not be a member yet; the organization's membership limit
// applies.
func (o *Organizations) AddMember(ctx context.Context, req usecase.Caller, org domain.OrganizationID, cmd AddMember) (*ports.MemberWithUser, error) {
	var added *ports.MemberWithUser
	err := o.auditedOn(ctx, req, orgPermAddMember, "organization.add-member", "organizations.add-member", org, func(ctx context.Context, emit usecase.Emit) error {
		roles, err := domain.ParseOrgRoles(cmd.Roles)
		if err != nil {
			return err
		}
		if _, err := o.orgs.Get(ctx, org); err != nil {
			return err
		}
		u, err := o.users.Get(ctx, cmd.UserID)
		if errors.Is(err, domain.ErrNotFound) {
			return unknownUser("userId")
		}
		if err != nil {
			return err
		}
		if err := o.checkMembershipLimit(ctx, org); err != nil {
			return err
		}
		m, err := domain.NewMember(domain.MemberID(o.ids.NewID()), org, u.ID(), roles, o.clock.Now())
		if err != nil {
			return err
		}
		if err := o.orgs.AddMember(ctx, m); err != nil {
			return err
		}
		added = &ports.MemberWithUser{Member: m, User: u}
		emit(domain.EventMemberAdded, *added)
		return nil
	})
	return added, err
}

// MembersPage is one page of an organization's members with their users,
// newest first, and the cursor of the next page ("" on the last).
type MembersPage struct {
	Members    []ports.MemberWithUser
	NextCursor string
}

// ListMembersByID returns one page of an organization's members, newest
// first, read from the cursor of the page before: every page costs the same
// in an organization of ten members and of ten thousand.
func (o *Organizations) ListMembersByID(ctx context.Context, req usecase.Caller, org domain.OrganizationID, p OrgListPage) (*MembersPage, error) {
	if err := o.authorizeOn(ctx, req, org, orgPermRead); err != nil {
		return nil, err
	}
	after, err := p.position()
	if err != nil {
		return nil, err
	}
	if _, err := o.orgs.Get(ctx, org); err != nil {
		return nil, err
	}
	q := ports.MemberQuery{SortDesc: true, Limit: p.Limit}
	if after != nil {
		q.After = &ports.MemberCursor{CreatedAt: after.At, ID: domain.MemberID(after.ID)}
	}
	page, err := o.orgs.ListMembers(ctx, org, q)
	if err != nil {
		return nil, err
	}
	out := &MembersPage{Members: page.Members}
	if page.Next != nil {
		out.NextCursor = domain.Position{At: page.Next.CreatedAt, ID: string(page.Next.ID)}.Cursor()
	}
	return out, nil
}

// UpdateMemberRoleByID replaces a member's roles. The last owner keeps the
// owner role.
func (o *Organizations) UpdateMemberRoleByID(ctx context.Context, req usecase.Caller, org domain.OrganizationID, id domain.MemberID, roles []string) (*ports.MemberWithUser, error) {
	var updated *ports.MemberWithUser
	err := o.auditedOn(ctx, req, orgPermUpdateMember, "organization.update-member-role", "organizations.update-member-role", org, func(ctx context.Context, emit usecase.Emit) error {
		parsed, err := domain.ParseOrgRoles(roles)
		if err != nil {
			return err
		}
		if _, err := o.orgs.Get(ctx, org); err != nil {
			return err
		}
		updated, err = o.setMemberRoles(ctx, org, id, parsed, func(*domain.Member) error { return nil }, emit)
		return err
	})
	return updated, err
}

// RemoveMemberByID removes a member; their sessions stop working in the
// organization. The last owner stays.
func (o *Organizations) RemoveMemberByID(ctx context.Context, req usecase.Caller, org domain.OrganizationID, id domain.MemberID) error {
	return o.auditedOn(ctx, req, orgPermDeleteMember, "organization.remove-member", "organizations.remove-member", org, func(ctx context.Context, emit usecase.Emit) error {
		if _, err := o.orgs.Get(ctx, org); err != nil {
			return err
		}
		m, err := o.orgs.GetMember(ctx, org, id)
		if err != nil {
			return err
		}
		_, err = o.removeMember(ctx, m, emit)
		return err
	})
}

// InviteAddress invites an address to an organization.
type InviteAddress struct {
	Email string
	Roles []string
	// InviterUserID, when set, must be a member: the mail names them and the
	// invitation records them. Without it the invitation has no inviter.
	InviterUserID domain.UserID
	// Resend renews and re-sends an open invitation instead of refusing.
	Resend bool
}

// InviteByID records an invitation and mails its link, as the session's
// Invite does. An address that is already a member, or already invited
// (unless Resend), is refused; the invitation limit applies.
func (o *Organizations) InviteByID(ctx context.Context, req usecase.Caller, org domain.OrganizationID, cmd InviteAddress) (*domain.Invitation, error) {
	var inv *domain.Invitation
	err := o.auditedOn(ctx, req, orgPermInvite, "organization.invite-member", "organizations.invite", org, func(ctx context.Context, emit usecase.Emit) error {
		email, err := domain.NewEmail(cmd.Email)
		if err != nil {
			return err
		}
		roles, err := domain.ParseOrgRoles(cmd.Roles)
		if err != nil {
			return err
		}
		if _, err := o.orgs.Get(ctx, org); err != nil {
			return err
		}
		inviter, err := o.inviter(ctx, org, cmd.InviterUserID)
		if err != nil {
			return err
		}
		inv, err = o.invite(ctx, org, email, roles, cmd.Resend, inviter, emit)
		return err
	})
	return inv, err
}

// inviter returns the member of org with user id, nil without an id, or
// refuses a user who is not a member.
func (o *Organizations) inviter(ctx context.Context, org domain.OrganizationID, id domain.UserID) (*domain.User, error) {
	if id == "" {
		return nil, nil
	}
	_, err := o.orgs.GetMemberByUser(ctx, org, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errInviterNotMember
	}
	if err != nil {
		return nil, err
	}
	return o.users.Get(ctx, id)
}

// ListInvitationsByID returns every invitation of an organization, newest
// first.
func (o *Organizations) ListInvitationsByID(ctx context.Context, req usecase.Caller, org domain.OrganizationID) ([]*domain.Invitation, error) {
	if err := o.authorizeOn(ctx, req, org, orgPermListInvites); err != nil {
		return nil, err
	}
	if _, err := o.orgs.Get(ctx, org); err != nil {
		return nil, err
	}
	return o.orgs.ListInvitations(ctx, org)
}

// RevokeInvitation cancels an open invitation of an organization; one that
// was answered, revoked or has expired is refused (domain.ErrInvitationNotOpen).
func (o *Organizations) RevokeInvitation(ctx context.Context, req usecase.Caller, org domain.OrganizationID, id domain.InvitationID) error {
	return o.auditedOn(ctx, req, orgPermCancel, "organization.cancel-invitation", "organizations.revoke-invitation", org, func(ctx context.Context, emit usecase.Emit) error {
		if _, err := o.orgs.Get(ctx, org); err != nil {
			return err
		}
		inv, err := o.orgs.GetInvitation(ctx, id)
		if err != nil {
			return err
		}
		if inv.OrganizationID() != org {
			return domain.ErrInvitationNotFound
		}
		_, err = o.cancelInvitation(ctx, id, emit)
		return err
	})
}

// ResendInvitationByID renews an invitation of an organization and mails
// it again: InviteByID with Resend, for the invitation's own address and
// roles. An id none of the organization's invitations has is
// domain.ErrInvitationNotFound, and nothing is sent.
func (o *Organizations) ResendInvitationByID(ctx context.Context, req usecase.Caller, org domain.OrganizationID, id domain.InvitationID) (*domain.Invitation, error) {
	invs, err := o.ListInvitationsByID(ctx, req, org)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(invs, func(inv *domain.Invitation) bool { return inv.ID() == id })
	if i < 0 {
		return nil, domain.ErrInvitationNotFound
	}
	roles := make([]string, 0, len(invs[i].Roles()))
	for _, r := range invs[i].Roles() {
		roles = append(roles, string(r))
	}
	return o.InviteByID(ctx, req, org, InviteAddress{Email: string(invs[i].Email()), Roles: roles, Resend: true})
}
