package account

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/domain"
)

// The account's organizations page (/account/organizations): the user's
// organizations with their roles, and the open invitations to their
// address, accepted or declined through the organization plugin's use
// cases (Organizations.List, ActiveMember, ListUserInvitations, Accept,
// Reject: what /api/auth/organization/* calls, with its checks and audit
// entries).

const (
	orgsPath    = AccountBase + "/organizations"
	acceptPath  = AccountBase + "/invitations/accept"
	declinePath = AccountBase + "/invitations/decline"
)

// orgsView is the organizations page.
type orgsView struct {
	Orgs        []accountOrg
	Invitations []accountInvitation
	// Unverified: invitations show once the address is confirmed.
	Unverified bool
}

// accountOrg is an organization the user belongs to.
type accountOrg struct {
	Name, Slug string
	Roles      string
	// NeedsFactor: the organization asks its members for a second factor
	// the user has not set up, so their role is not shown.
	NeedsFactor bool
	Joined      time.Time
}

// accountInvitation is an open invitation to the user's address.
type accountInvitation struct {
	ID, Org, Slug, Inviter, Roles string
	Expires                       time.Time
}

// OrganizationsDeps are the organizations page's use cases
// (organizations.go).
type OrganizationsDeps struct {
	Organizations *organization.Organizations // the user's organizations and invitations
}

// orgsSection is the organizations page and its forms.
type orgsSection struct {
	*base
	organizations *organization.Organizations
}

// addAccountOrganizationRoutes registers the organizations page and its forms.
func (s *orgsSection) addAccountOrganizationRoutes(r shell.Section) {
	r.Get(orgsPath, s.accountOrgsPage)
	r.Post(acceptPath, s.acceptInvitation)
	r.Post(declinePath, s.declineInvitation)
}

var accountOrgNotices = shell.Notices{
	"accepted": "You joined the organization.",
	"declined": "The invitation is declined.",
}

// accountOrgsPage lists the user's organizations and open invitations.
func (s *orgsSection) accountOrgsPage(c *gin.Context) {
	v, ok := s.enter(c)
	if !ok {
		return
	}
	ov, err := s.readAccountOrgs(c.Request.Context(), v)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	p := accountPage(v, "Organizations", "organizations")
	p.Notice = accountOrgNotices.Of(c)
	s.pages.organizations.Render(c, http.StatusOK, p, ov)
}

// readAccountOrgs reads the organizations page through Organizations: the
// user's organizations with their roles in each, and, once their address
// is verified, their open invitations.
func (s *orgsSection) readAccountOrgs(ctx context.Context, v *shell.Visit) (*orgsView, error) {
	req := v.OrgRequest()
	orgs, err := s.organizations.List(ctx, req)
	if err != nil {
		return nil, err
	}
	ov := &orgsView{}
	for _, o := range orgs {
		row := accountOrg{Name: o.Name(), Slug: o.Slug()}
		m, err := s.organizations.ActiveMember(ctx, req, organization.OrgSelector{ID: o.ID()})
		switch {
		case err == nil:
			row.Roles, row.Joined = joinRoles(m.Roles()), m.CreatedAt()
		case errors.Is(err, organization.ErrTwoFactorRequired):
			row.NeedsFactor = true
		case errors.Is(err, domain.ErrForbidden):
			continue // left since the list was read
		default:
			return nil, err
		}
		ov.Orgs = append(ov.Orgs, row)
	}
	if !v.P.User.EmailVerified() {
		ov.Unverified = true
		return ov, nil
	}
	invs, err := s.organizations.ListUserInvitations(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, d := range invs {
		// The list names no inviter; the recipient's own read does.
		if full, err := s.organizations.GetInvitation(ctx, req, d.Invitation.ID()); err == nil {
			d = full
		}
		inv := d.Invitation
		ov.Invitations = append(ov.Invitations, accountInvitation{ID: string(inv.ID()), Org: d.OrganizationName, Slug: d.OrganizationSlug,
			Inviter: string(d.InviterEmail), Roles: joinRoles(inv.Roles()), Expires: inv.ExpiresAt()})
	}
	return ov, nil
}

// joinRoles is roles in words: "owner, admin".
func joinRoles(roles []domain.OrgRole) string {
	out := make([]string, len(roles))
	for i, r := range roles {
		out[i] = string(r)
	}
	return strings.Join(out, ", ")
}

// invitationForm names the invitation to answer.
type invitationForm struct {
	Invitation string `form:"invitation" validate:"required,maxbytes=128"`
}

// invitationID binds the form's invitation, or answers 400.
func (s *orgsSection) invitationID(c *gin.Context) (domain.InvitationID, bool) {
	var f invitationForm
	if _, invalid := shell.BindForm(c, &f).First(); invalid {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "Say which invitation to answer. Nothing was changed.",
			edge.FieldError{Location: "body.invitation", Message: "is missing or too long"})
		return "", false
	}
	return domain.InvitationID(f.Invitation), true
}

// acceptInvitation joins the organization through Organizations.Accept.
func (s *orgsSection) acceptInvitation(c *gin.Context, v *shell.Visit) {
	id, ok := s.invitationID(c)
	if !ok {
		return
	}
	if _, _, err := s.organizations.Accept(c.Request.Context(), v.OrgRequest(), id); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, orgsPath, "accepted")
}

// declineInvitation declines through Organizations.Reject.
func (s *orgsSection) declineInvitation(c *gin.Context, v *shell.Visit) {
	id, ok := s.invitationID(c)
	if !ok {
		return
	}
	if _, err := s.organizations.Reject(c.Request.Context(), v.OrgRequest(), id); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, orgsPath, "declined")
}
