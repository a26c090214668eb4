package command

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The trusted API's members and invitations of an organization. A member or
// invitation id of another organization is not found, as an unknown one is.

// BackendAddMember adds an existing user to an organization.
type BackendAddMember struct {
	UserID domain.UserID
	Roles  []string
}

// AddMember adds a user with roles. The user must exist (user.not_found
// naming userId); one already a member is organization.already_member;
// the organization's membership limit applies.
func (b *BackendOrganizations) AddMember(ctx context.Context, req TrustedRequest, org domain.OrganizationID, cmd BackendAddMember) (*ports.MemberWithUser, error) {
	var added *ports.MemberWithUser
	err := b.audited(ctx, req, "add-member", org, func() error {
		roles, err := domain.ParseOrgRoles(cmd.Roles)
		if err != nil {
			return err
		}
		if _, err := b.organization(ctx, org); err != nil {
			return err
		}
		u, err := b.o.users.Get(ctx, cmd.UserID)
		if errors.Is(err, domain.ErrNotFound) {
			return orgUserNotFound("userId")
		}
		if err != nil {
			return err
		}
		if err := b.o.checkMembershipLimit(ctx, org); err != nil {
			return err
		}
		m, err := domain.NewMember(domain.MemberID(b.o.ids.NewID()), org, u.ID(), roles, b.o.clock.Now())
		if err != nil {
			return err
		}
		if err := b.o.orgs.AddMember(ctx, m); err != nil {
			return err
		}
		added = &ports.MemberWithUser{Member: m, User: u}
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

// ListMembers returns one page of an organization's members, newest first,
// read from the cursor of the page before: every page costs the same in an
// organization of ten members and of ten thousand.
func (b *BackendOrganizations) ListMembers(ctx context.Context, _ TrustedRequest, org domain.OrganizationID, p OrgListPage) (*MembersPage, error) {
	after, err := p.position()
	if err != nil {
		return nil, err
	}
	if _, err := b.organization(ctx, org); err != nil {
		return nil, err
	}
	q := ports.MemberQuery{SortDesc: true, Limit: p.Limit}
	if after != nil {
		q.After = &ports.MemberCursor{CreatedAt: after.At, ID: domain.MemberID(after.ID)}
	}
	page, err := b.o.orgs.ListMembers(ctx, org, q)
	if err != nil {
		return nil, err
	}
	out := &MembersPage{Members: page.Members}
	if page.Next != nil {
		out.NextCursor = domain.Position{At: page.Next.CreatedAt, ID: string(page.Next.ID)}.Cursor()
	}
	return out, nil
}

// UpdateMemberRole replaces a member's roles. Taking the owner role from
// the last owner is organization.last_owner.
func (b *BackendOrganizations) UpdateMemberRole(ctx context.Context, req TrustedRequest, org domain.OrganizationID, id domain.MemberID, roles []string) (*ports.MemberWithUser, error) {
	var updated *ports.MemberWithUser
	err := b.audited(ctx, req, "update-member-role", org, func() error {
		parsed, err := domain.ParseOrgRoles(roles)
		if err != nil {
			return err
		}
		if _, err := b.organization(ctx, org); err != nil {
			return err
		}
		updated, err = b.o.setMemberRoles(ctx, org, id, parsed, func(*domain.Member) error { return nil })
		return err
	})
	return updated, err
}

// RemoveMember removes a member; their sessions stop working in the
// organization. The last owner stays: organization.last_owner.
func (b *BackendOrganizations) RemoveMember(ctx context.Context, req TrustedRequest, org domain.OrganizationID, id domain.MemberID) error {
	return b.audited(ctx, req, "remove-member", org, func() error {
		if _, err := b.organization(ctx, org); err != nil {
			return err
		}
		m, err := b.o.orgs.GetMember(ctx, org, id)
		if err != nil {
			return err
		}
		_, err = b.o.removeMember(ctx, m)
		return err
	})
}

// BackendInvite invites an address to an organization.
type BackendInvite struct {
	Email string
	Roles []string
	// InviterUserID, when set, must be a member: the mail names them and the
	// invitation records them. Without it the invitation has no inviter.
	InviterUserID domain.UserID
	// Resend renews and re-sends an open invitation instead of refusing.
	Resend bool
}

// Invite records an invitation and mails its link, as the organization
// plugin does. An address that is already a member, or already invited
// (unless Resend), is refused; the invitation limit applies.
func (b *BackendOrganizations) Invite(ctx context.Context, req TrustedRequest, org domain.OrganizationID, cmd BackendInvite) (*domain.Invitation, error) {
	var inv *domain.Invitation
	err := b.audited(ctx, req, "invite", org, func() error {
		email, err := domain.NewEmail(cmd.Email)
		if err != nil {
			return err
		}
		roles, err := domain.ParseOrgRoles(cmd.Roles)
		if err != nil {
			return err
		}
		if _, err := b.organization(ctx, org); err != nil {
			return err
		}
		inviter, err := b.inviter(ctx, org, cmd.InviterUserID)
		if err != nil {
			return err
		}
		inv, err = b.o.invite(ctx, org, email, roles, cmd.Resend, inviter)
		return err
	})
	return inv, err
}

// inviter returns the member of org with user id, nil without an id, or
// organization.inviter_not_member.
func (b *BackendOrganizations) inviter(ctx context.Context, org domain.OrganizationID, id domain.UserID) (*domain.User, error) {
	if id == "" {
		return nil, nil
	}
	_, err := b.o.orgs.GetMemberByUser(ctx, org, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errBackendInviterNotMember
	}
	if err != nil {
		return nil, err
	}
	return b.o.users.Get(ctx, id)
}

// ListInvitations returns every invitation of an organization, newest first.
func (b *BackendOrganizations) ListInvitations(ctx context.Context, _ TrustedRequest, org domain.OrganizationID) ([]*domain.Invitation, error) {
	if _, err := b.organization(ctx, org); err != nil {
		return nil, err
	}
	return b.o.orgs.ListInvitations(ctx, org)
}

// RevokeInvitation cancels an open invitation of an organization; one that
// was answered, revoked or has expired is organization.invitation_not_pending.
func (b *BackendOrganizations) RevokeInvitation(ctx context.Context, req TrustedRequest, org domain.OrganizationID, id domain.InvitationID) error {
	return b.audited(ctx, req, "revoke-invitation", org, func() error {
		if _, err := b.organization(ctx, org); err != nil {
			return err
		}
		inv, err := b.o.orgs.GetInvitation(ctx, id)
		if err != nil {
			return err
		}
		if inv.OrganizationID() != org {
			return errBackendInvitationNotFound
		}
		_, err = b.o.cancelInvitation(ctx, id)
		return err
	})
}
