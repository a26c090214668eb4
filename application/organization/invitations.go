package organization

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// InviteMember invites an address to an organization.
type InviteMember struct {
	Organization OrgSelector
	Email        string
	Roles        []string
	// Resend renews and re-sends an open invitation instead of refusing.
	Resend bool
}

func invitationTarget(id domain.InvitationID) usecase.Target {
	return usecase.Target{Type: "invitation", ID: string(id)}
}

// Invite records an invitation and mails its link. Only owners invite
// owners; an address that is already a member or already invited is refused.
func (o *Organizations) Invite(ctx context.Context, req usecase.OrgRequest, cmd InviteMember) (*domain.Invitation, error) {
	var inv *domain.Invitation
	t := usecase.Target{Type: "invitation"}
	err := o.audit.Change(ctx, req.Actor(), "organization.invite-member", &t, func(ctx context.Context, emit usecase.Emit) error {
		email, err := domain.NewEmail(cmd.Email)
		if err != nil {
			return err
		}
		roles, err := domain.ParseOrgRoles(cmd.Roles)
		if err != nil {
			return err
		}
		caller, err := o.guard(ctx, req, cmd.Organization, orgPermInvite)
		if err != nil {
			return err
		}
		if slices.Contains(roles, domain.OrgRoleOwner) && !caller.IsOwner() {
			return errInviteOwnerRole
		}
		if inv, err = o.invite(ctx, caller.OrganizationID(), email, roles, cmd.Resend, req.Principal.User, emit); err != nil {
			return err
		}
		t.ID = string(inv.ID())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return inv, nil
}

// invite records an invitation of email to org with roles, sent by inviter
// (nil: no user, such as a trusted backend), and mails its link
// (invitation.created). An address that is already a member is refused,
// and one with an open invitation too unless resend, which renews that
// invitation and sends it again (without an event: it was created before).
func (o *Organizations) invite(ctx context.Context, org domain.OrganizationID, email domain.Email, roles []domain.OrgRole, resend bool,
	inviter *domain.User, emit usecase.Emit) (*domain.Invitation, error) {
	if err := o.refuseMember(ctx, org, email); err != nil {
		return nil, err
	}
	now := o.clock.Now()
	var inv *domain.Invitation
	existing, err := o.orgs.FindPendingInvitation(ctx, org, email, now)
	switch {
	case err == nil && !resend:
		return nil, errAlreadyInvited
	case err == nil:
		err = o.orgs.UpdateInvitation(ctx, existing.ID(), func(stored *domain.Invitation) error {
			stored.Renew(roles, o.settings.InvitationTTL, now)
			inv = stored
			return nil
		})
		if err != nil {
			return nil, err
		}
	case errors.Is(err, domain.ErrNotFound):
		var inviterID domain.UserID
		if inviter != nil {
			inviterID = inviter.ID()
		}
		if inv, err = o.newInvitation(ctx, org, email, roles, inviterID); err != nil {
			return nil, err
		}
		emit(domain.EventInvitationCreated, inv)
	default:
		return nil, err
	}
	return inv, o.mailInvitation(ctx, inv, inviter)
}

// refuseMember refuses to invite an address whose user is already a member.
func (o *Organizations) refuseMember(ctx context.Context, org domain.OrganizationID, email domain.Email) error {
	u, err := o.users.GetByEmail(ctx, email)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = o.orgs.GetMemberByUser(ctx, org, u.ID())
	switch {
	case err == nil:
		return errAlreadyMember
	case errors.Is(err, domain.ErrNotFound):
		return nil
	}
	return err
}

// newInvitation stores a new invitation within the organization's limit.
func (o *Organizations) newInvitation(ctx context.Context, org domain.OrganizationID, email domain.Email, roles []domain.OrgRole, inviter domain.UserID) (*domain.Invitation, error) {
	now := o.clock.Now()
	if o.settings.InvitationLimit > 0 {
		n, err := o.orgs.CountPendingInvitations(ctx, org, now)
		if err != nil {
			return nil, err
		}
		if n >= o.settings.InvitationLimit {
			return nil, errInvitationLimit
		}
	}
	inv, err := domain.NewInvitation(domain.InvitationID(o.ids.NewID()), org, email, roles, inviter, o.settings.InvitationTTL, now)
	if err != nil {
		return nil, err
	}
	if err := o.orgs.CreateInvitation(ctx, inv); err != nil {
		return nil, err
	}
	return inv, nil
}

// mailInvitation sends the invitation's link to the invited address. Without
// an inviter (nil) the mail says only that the recipient was invited.
func (o *Organizations) mailInvitation(ctx context.Context, inv *domain.Invitation, inviter *domain.User) error {
	org, err := o.orgs.Get(ctx, inv.OrganizationID())
	if err != nil {
		return err
	}
	m := domain.Mail{
		Kind: domain.MailInvitation, To: inv.Email(),
		Link:         strings.ReplaceAll(o.settings.InvitationURL, "{id}", string(inv.ID())),
		ExpiresIn:    inv.ExpiresAt().Sub(o.clock.Now()),
		Organization: org.Name(),
	}
	if inviter != nil {
		m.Inviter = inviter.Name()
	}
	return o.mailer.Send(ctx, m)
}

// InvitationDetails is an invitation with what its recipient needs to decide.
type InvitationDetails struct {
	Invitation       *domain.Invitation
	OrganizationName string
	OrganizationSlug string
	InviterEmail     domain.Email
}

// recipientInvitation returns an open invitation addressed to the caller.
// Invitations that do not exist, were answered or expired all answer
// INVITATION_NOT_FOUND; someone else's answers YOU_ARE_NOT_THE_RECIPIENT.
func (o *Organizations) recipientInvitation(ctx context.Context, req usecase.OrgRequest, id domain.InvitationID) (*domain.Invitation, error) {
	inv, err := o.orgs.GetInvitation(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, domain.ErrInvitationNotOpen
	}
	if err != nil {
		return nil, err
	}
	if !inv.IsOpen(o.clock.Now()) {
		return nil, domain.ErrInvitationNotOpen
	}
	if inv.Email() != req.Principal.User.Email() {
		return nil, errNotRecipient
	}
	return inv, nil
}

// GetInvitation returns an open invitation addressed to the caller.
func (o *Organizations) GetInvitation(ctx context.Context, req usecase.OrgRequest, id domain.InvitationID) (*InvitationDetails, error) {
	inv, err := o.recipientInvitation(ctx, req, id)
	if err != nil {
		return nil, err
	}
	org, err := o.orgs.Get(ctx, inv.OrganizationID())
	if err != nil {
		return nil, err
	}
	d := &InvitationDetails{Invitation: inv, OrganizationName: org.Name(), OrganizationSlug: org.Slug()}
	if inviter, err := o.users.Get(ctx, inv.InviterID()); err == nil {
		d.InviterEmail = inviter.Email()
	} else if !errors.Is(err, domain.ErrNotFound) {
		return nil, err
	}
	return d, nil
}

// Accept adds the caller to the organization with the invitation's roles
// and makes it the session's active organization. The caller's address must
// be verified: the invitation went to it.
func (o *Organizations) Accept(ctx context.Context, req usecase.OrgRequest, id domain.InvitationID) (*domain.Invitation, *domain.Member, error) {
	var inv *domain.Invitation
	var member *domain.Member
	t := invitationTarget(id)
	err := o.audit.Change(ctx, req.Actor(), "organization.accept-invitation", &t, func(ctx context.Context, emit usecase.Emit) error {
		if !req.Principal.User.EmailVerified() {
			return errInvitationUnverifed
		}
		pending, err := o.recipientInvitation(ctx, req, id)
		if err != nil {
			return err
		}
		if err := o.checkMembershipLimit(ctx, pending.OrganizationID()); err != nil {
			return err
		}
		now := o.clock.Now()
		m, err := domain.NewMember(domain.MemberID(o.ids.NewID()), pending.OrganizationID(), req.Principal.User.ID(), pending.Roles(), now)
		if err != nil {
			return err
		}
		err = o.orgs.AcceptInvitation(ctx, id, func(stored *domain.Invitation) error {
			inv = stored
			return stored.Answer(domain.InvitationAccepted, now)
		}, m)
		if errors.Is(err, domain.ErrConflict) {
			return errAlreadyMember
		}
		if err != nil {
			return invitationErr(err)
		}
		member = m
		emit(domain.EventInvitationAccepted, inv)
		emit(domain.EventMemberAdded, ports.MemberWithUser{Member: m, User: req.Principal.User})
		return o.setActive(ctx, req.Principal.Session, m.OrganizationID())
	})
	if err != nil {
		return nil, nil, err
	}
	return inv, member, nil
}

// checkMembershipLimit refuses a new member of an organization that has
// as many as the limit allows.
func (o *Organizations) checkMembershipLimit(ctx context.Context, org domain.OrganizationID) error {
	if o.settings.MembershipLimit <= 0 {
		return nil
	}
	n, err := o.orgs.CountMembers(ctx, org)
	if err != nil {
		return err
	}
	if n >= o.settings.MembershipLimit {
		return errMembershipLimit
	}
	return nil
}

// Reject declines an invitation addressed to the caller.
func (o *Organizations) Reject(ctx context.Context, req usecase.OrgRequest, id domain.InvitationID) (*domain.Invitation, error) {
	var inv *domain.Invitation
	t := invitationTarget(id)
	err := o.audit.Change(ctx, req.Actor(), "organization.reject-invitation", &t, func(ctx context.Context, emit usecase.Emit) error {
		if !req.Principal.User.EmailVerified() {
			return errInvitationUnverifed
		}
		if _, err := o.recipientInvitation(ctx, req, id); err != nil {
			return err
		}
		if err := invitationErr(o.orgs.UpdateInvitation(ctx, id, func(stored *domain.Invitation) error {
			inv = stored
			return stored.Answer(domain.InvitationRejected, o.clock.Now())
		})); err != nil {
			return err
		}
		emit(domain.EventInvitationRejected, inv)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return inv, nil
}

// Cancel withdraws an open invitation of an organization the caller may
// cancel invitations of.
func (o *Organizations) Cancel(ctx context.Context, req usecase.OrgRequest, id domain.InvitationID) (*domain.Invitation, error) {
	var inv *domain.Invitation
	t := invitationTarget(id)
	err := o.audit.Change(ctx, req.Actor(), "organization.cancel-invitation", &t, func(ctx context.Context, emit usecase.Emit) error {
		stored, err := o.orgs.GetInvitation(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			return domain.ErrInvitationNotOpen
		}
		if err != nil {
			return err
		}
		caller, err := o.guard(ctx, req, OrgSelector{ID: stored.OrganizationID()}, orgPermCancel)
		if err != nil {
			return err
		}
		if slices.Contains(stored.Roles(), domain.OrgRoleOwner) && !caller.IsOwner() {
			return usecase.Forbidden(orgPermCancel.Code, orgPermCancel.Message)
		}
		inv, err = o.cancelInvitation(ctx, id, emit)
		return invitationErr(err)
	})
	if err != nil {
		return nil, err
	}
	return inv, nil
}

// invitationErr answers an invitation the store no longer has (removed
// since it was read) as Better Auth answers every invitation that cannot be
// answered: INVITATION_NOT_FOUND.
func invitationErr(err error) error {
	if errors.Is(err, domain.ErrInvitationNotFound) {
		return domain.ErrInvitationNotOpen
	}
	return err
}

// cancelInvitation withdraws invitation id (invitation.canceled); one that
// is no longer open is INVITATION_NOT_FOUND.
func (o *Organizations) cancelInvitation(ctx context.Context, id domain.InvitationID, emit usecase.Emit) (*domain.Invitation, error) {
	var inv *domain.Invitation
	err := o.orgs.UpdateInvitation(ctx, id, func(s *domain.Invitation) error {
		inv = s
		return s.Answer(domain.InvitationCanceled, o.clock.Now())
	})
	if err != nil {
		return nil, err
	}
	emit(domain.EventInvitationCanceled, inv)
	return inv, nil
}

// ListInvitations returns an organization's invitations to members who may invite.
func (o *Organizations) ListInvitations(ctx context.Context, req usecase.OrgRequest, sel OrgSelector) ([]*domain.Invitation, error) {
	m, err := o.guard(ctx, req, sel, orgPermListInvites)
	if err != nil {
		return nil, err
	}
	return o.orgs.ListInvitations(ctx, m.OrganizationID())
}

// ListUserInvitations returns the open invitations to the caller's verified address.
func (o *Organizations) ListUserInvitations(ctx context.Context, req usecase.OrgRequest) ([]*InvitationDetails, error) {
	if !req.Principal.User.EmailVerified() {
		return nil, errListUnverified
	}
	invs, err := o.orgs.ListPendingInvitationsByEmail(ctx, req.Principal.User.Email(), o.clock.Now())
	if err != nil {
		return nil, err
	}
	out := make([]*InvitationDetails, 0, len(invs))
	for _, inv := range invs {
		org, err := o.orgs.Get(ctx, inv.OrganizationID())
		if err != nil {
			return nil, err
		}
		out = append(out, &InvitationDetails{Invitation: inv, OrganizationName: org.Name(), OrganizationSlug: org.Slug()})
	}
	return out, nil
}
