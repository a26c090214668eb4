package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The Organizations section: every organization, searched by name or slug,
// and an organization's page with its settings, members and invitations.
// Each read and change goes through the by-id use cases of
// organization.Organizations, the trusted API's (/api/organizations), with
// the administrator's request (usecase.AdminRequest) as the caller: the
// same rules, the same events, and audit entries naming the administrator.

// OrganizationsDeps are the Organizations section's use cases
// (organizations.go).
type OrganizationsDeps struct {
	Organizations *organization.Organizations // the by-id use cases, the trusted API's
}

// organizationsSection is the Organizations section.
type organizationsSection struct {
	*base
	organizations *organization.Organizations
}

// addOrganizationRoutes registers the Organizations section.
func (s *organizationsSection) addOrganizationRoutes(r shell.Section) {
	const org = Base + "/organizations/:id"
	r.Get(Base+"/organizations", s.organizationsPage)
	r.Get(org, s.organizationPage)
	r.Post(org+"/settings", s.updateOrganization)
	r.Post(org+"/members/role", s.changeMemberRole)
	r.Post(org+"/members/remove", s.removeMember)
	r.Post(org+"/invitations", s.inviteMember)
	r.Post(org+"/invitations/revoke", s.revokeInvitation)
	r.Post(org+"/invitations/resend", s.resendInvitation)
	r.Post(org+"/delete", s.deleteOrganization)
}

// orgPageSize is how many organizations, or members, a page shows.
const orgPageSize = 50

// organizationsView is the organizations list: the search as given and one page.
type organizationsView struct {
	Q           string
	Rows        []organizationRow
	First, Next string
}

type organizationRow struct {
	ID, Name, Slug string
	Members        int
	Created        time.Time
}

// organizationsQuery is the Organizations page's query: the search and the
// cursor, in the URL, so a page can be shared.
type organizationsQuery struct {
	Q       string `query:"q" validate:"maxbytes=256"`
	Cursor  string `query:"cursor" validate:"maxbytes=512"`
	Deleted string `query:"deleted"`
}

// organizationsQueryErrors say what a malformed part of the query should
// be, by its name.
var organizationsQueryErrors = map[string]string{
	"q":      "The search is too long: use at most 256 characters.",
	"cursor": "The page link is not valid.",
}

// listing is the use case's query for oq: a page of the organizations
// whose name or slug holds the search.
func (oq organizationsQuery) listing() organization.OrgListPage {
	return organization.OrgListPage{Limit: orgPageSize, Cursor: oq.Cursor, Search: strings.TrimSpace(oq.Q)}
}

// notice is what the list says when a deletion landed on it.
func (oq organizationsQuery) notice() string {
	if oq.Deleted == "" {
		return ""
	}
	return "The organization is deleted, with its members, invitations and domains."
}

// organizationsViewOf is the list: page, the organizations oq asked for,
// and the links to the first and the next page.
func organizationsViewOf(oq organizationsQuery, page *organization.OrganizationsPage) *organizationsView {
	ov := &organizationsView{Q: oq.Q}
	for _, oc := range page.Organizations {
		o := oc.Organization
		ov.Rows = append(ov.Rows, organizationRow{ID: string(o.ID()), Name: o.Name(), Slug: o.Slug(), Members: oc.MemberCount, Created: o.CreatedAt()})
	}
	ov.First, ov.Next = pageLinks(Base+"/organizations", url.Values{"q": {ov.Q}}, oq.Cursor, page.NextCursor)
	return ov
}

// organizationsPage lists every organization through Organizations.ListAll,
// newest first; the search and the cursor are in the URL.
func (s *organizationsSection) organizationsPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	var oq organizationsQuery
	bad, invalid := shell.BindQuery(c, &oq).First()
	p := sectionPage(v, "Organizations", "organizations", oq.notice())
	if invalid {
		refused(c, s.pages.organizations, p, organizationsQueryErrors[bad.Name], bad.Name, &organizationsView{Q: oq.Q})
		return
	}
	page, err := s.organizations.ListAll(c.Request.Context(), v.Req, oq.listing())
	if domain.KindOf(err) == domain.KindInvalid {
		refused(c, s.pages.organizations, p, badPageLink, "cursor", &organizationsView{Q: oq.Q})
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	s.pages.organizations.Render(c, http.StatusOK, p, organizationsViewOf(oq, page))
}

// organizationView is an organization's page.
type organizationView struct {
	ID, Name, Slug, Logo, Metadata, Path string
	MemberCount                          int
	RequireTwoFactor                     bool
	Created, Updated                     time.Time
	Members                              []memberRow
	MembersFirst, MembersNext            string
	Invitations                          []invitationRow
	Roles                                []string
	Form                                 orgForm
}

// orgForm is what a refused form sent, shown again: the settings, the
// invitation and the typed confirmation.
type orgForm struct {
	Name, Slug, Logo, Metadata string
	Email, Role                string
	Confirm                    string
	// Settings reports whether the settings form was the one refused.
	Settings bool
}

type memberRow struct {
	ID, UserID, Email, Name, Role string
	Joined                        time.Time
}

type invitationRow struct {
	ID, Email, Role, Status string
	Open                    bool
	Expires, Created        time.Time
}

// orgRoles are the roles a member or an invitation may hold.
var orgRoles = []string{string(domain.OrgRoleMember), string(domain.OrgRoleAdmin), string(domain.OrgRoleOwner)}

// organizationPage shows an organization.
func (s *organizationsSection) organizationPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showOrganization(c, v, http.StatusOK, "", "", nil)
}

// organizationQuery is an organization's page's query: the members'
// cursor, in the URL.
type organizationQuery struct {
	Members string `query:"members" validate:"maxbytes=512"`
}

// errMembersPage is a members cursor the use case does not know.
var errMembersPage = errors.New("console: not a page of members")

// orgState is what an organization's page shows, read through its use
// cases: the organization, a page of its members and its invitations.
type orgState struct {
	org         ports.OrganizationWithCount
	members     *organization.MembersPage
	invitations []*domain.Invitation
}

// showOrganization renders an organization's page with status, and a
// refused form's error, field and input (nil: the stored settings).
func (s *organizationsSection) showOrganization(c *gin.Context, v *shell.Visit, status int, msg, field string, f *orgForm) {
	id := domain.OrganizationID(c.Param("id"))
	if len(id) > maxID {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The organization id is too long.", edge.FieldError{Location: "path.id", Message: "is too long"})
		return
	}
	var oq organizationQuery
	if _, invalid := shell.BindQuery(c, &oq).First(); invalid {
		s.badMembersPage(c, "The page link is not valid.")
		return
	}
	st, err := s.readOrganization(c.Request.Context(), v, id, oq.Members)
	if errors.Is(err, errMembersPage) {
		s.badMembersPage(c, "The page link is not valid: start from the first page of members.")
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	p := sectionPage(v, st.org.Organization.Name(), "organizations", orgNotices.Of(c))
	p.Error, p.Field = msg, field
	s.pages.organization.Render(c, status, p, organizationViewOf(st, oq.Members, f, v.Now))
}

// badMembersPage refuses an organization's page whose members cursor is
// not a page of members, saying msg.
func (s *organizationsSection) badMembersPage(c *gin.Context, msg string) {
	s.shell.Refusal(c, http.StatusBadRequest, "Bad request", msg, edge.FieldError{Location: "query.members", Message: "is not a page of members"})
}

// readOrganization reads an organization's page through its use cases
// (GetByID, ListMembersByID from the members cursor, ListInvitationsByID);
// a cursor the use case refuses is errMembersPage.
func (s *organizationsSection) readOrganization(ctx context.Context, v *shell.Visit, id domain.OrganizationID, members string) (orgState, error) {
	var st orgState
	var err error
	if st.org, err = s.organizations.GetByID(ctx, v.Req, id); err != nil {
		return st, err
	}
	st.members, err = s.organizations.ListMembersByID(ctx, v.Req, id, organization.OrgListPage{Limit: orgPageSize, Cursor: members})
	if domain.KindOf(err) == domain.KindInvalid {
		return st, errMembersPage
	}
	if err != nil {
		return st, err
	}
	st.invitations, err = s.organizations.ListInvitationsByID(ctx, v.Req, id)
	return st, err
}

// organizationViewOf is an organization's page: st, on the members page
// after cursor, with a refused form's input f (nil: the stored settings).
func organizationViewOf(st orgState, cursor string, f *orgForm, now time.Time) *organizationView {
	o := st.org.Organization
	path := Base + "/organizations/" + url.PathEscape(string(o.ID()))
	ov := &organizationView{ID: string(o.ID()), Name: o.Name(), Slug: o.Slug(), Logo: o.Logo(), Metadata: o.Metadata(), Path: path,
		MemberCount: st.org.MemberCount, RequireTwoFactor: o.RequiresTwoFactor(), Created: o.CreatedAt(), Updated: o.UpdatedAt(), Roles: orgRoles}
	if f != nil {
		ov.Form = *f
	}
	if !ov.Form.Settings {
		ov.Form.Name, ov.Form.Slug, ov.Form.Logo, ov.Form.Metadata = ov.Name, ov.Slug, ov.Logo, ov.Metadata
	}
	for _, mu := range st.members.Members {
		ov.Members = append(ov.Members, memberRow{ID: string(mu.Member.ID()), UserID: string(mu.User.ID()), Email: string(mu.User.Email()),
			Name: mu.User.Name(), Role: domain.JoinOrgRoles(mu.Member.Roles()), Joined: mu.Member.CreatedAt()})
	}
	if cursor != "" {
		ov.MembersFirst = path + "#members"
	}
	if st.members.NextCursor != "" {
		ov.MembersNext = edge.PageURL(path, url.Values{"members": {st.members.NextCursor}}) + "#members"
	}
	for _, inv := range st.invitations {
		ov.Invitations = append(ov.Invitations, invitationRow{ID: string(inv.ID()), Email: string(inv.Email()), Role: domain.JoinOrgRoles(inv.Roles()),
			Status: string(inv.Status()), Open: inv.IsOpen(now), Expires: inv.ExpiresAt(), Created: inv.CreatedAt()})
	}
	return ov
}

// orgNotices say what a form did, after its redirect (?done=).
var orgNotices = shell.Notices{
	"updated": "The settings are saved.", "role": "The member's role is changed.", "removed": "The member is removed; their sessions no longer act in the organization.",
	"invited": "The invitation is on its way.", "revoked": "The invitation is revoked: its link no longer works.", "resent": "The invitation is renewed and sent again.",
}

// orgPath is an organization's page.
func orgPath(id string) string { return Base + "/organizations/" + url.PathEscape(id) }

// formField is the field a use case's validation error names, and its
// message, or ok false for any other error.
func formField(err error) (field, msg string, ok bool) {
	var de *domain.Error
	if !errors.As(err, &de) || (de.Kind != domain.KindInvalid && de.Kind != domain.KindConflict) {
		return "", "", false
	}
	msg = de.Message
	if de.Code == "role.not_found" {
		return "role", "Choose one of the roles: member, admin or owner.", true
	}
	if len(de.Fields) > 0 {
		field = de.Fields[0].Field
		if de.Fields[0].Message != "" {
			msg = de.Message + ": " + field + " " + de.Fields[0].Message + "."
		}
	}
	return field, msg, true
}

// updateOrganization saves the settings through Organizations.UpdateByID.
func (s *organizationsSection) updateOrganization(c *gin.Context, v *shell.Visit) {
	var sf settingsForm
	shell.BindForm(c, &sf) // the use case checks it
	f := orgForm{Settings: true, Name: sf.Name, Slug: sf.Slug, Logo: sf.Logo, Metadata: sf.Metadata}
	patch := organization.OrganizationPatch{Name: &f.Name, Slug: &f.Slug, Logo: &f.Logo, Metadata: &f.Metadata}
	_, err := s.organizations.UpdateByID(c.Request.Context(), v.Req, domain.OrganizationID(c.Param("id")), patch)
	if field, msg, ok := formField(err); ok {
		if de := new(domain.Error); errors.As(err, &de) && de.Code == "organization.slug_unavailable" {
			field, msg = "slug", "Another organization has this slug: choose another."
		}
		s.showOrganization(c, v, http.StatusBadRequest, msg, field, trimForm(f))
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, orgPath(c.Param("id")), "updated")
}

// trimForm drops input longer than its field allows, which was refused
// for its length: it is not worth showing again.
func trimForm(f orgForm) *orgForm {
	for _, fl := range []struct {
		v   *string
		max int
	}{{&f.Name, 1024}, {&f.Slug, 256}, {&f.Logo, domain.MaxLogoLength}, {&f.Metadata, domain.MaxMetadataLength}, {&f.Email, 320}, {&f.Confirm, 1024}} {
		if len(*fl.v) > fl.max {
			*fl.v = ""
		}
	}
	return &f
}

// The organization page's forms. The use cases check their values; the
// page checks only the ids it names.
type (
	// settingsForm is the settings form.
	settingsForm struct {
		Name     string `form:"name,trim"`
		Slug     string `form:"slug,trim"`
		Logo     string `form:"logo,trim"`
		Metadata string `form:"metadata,trim"`
	}
	// memberForm names a member, and the role to give them.
	memberForm struct {
		Member string `form:"member" validate:"required,maxbytes=128"`
		Role   string `form:"role"`
	}
	// inviteForm is the invitation form.
	inviteForm struct {
		Email string `form:"email,trim"`
		Role  string `form:"role"`
	}
	// invitationForm names an invitation.
	invitationForm struct {
		Invitation string `form:"invitation" validate:"required,maxbytes=128"`
	}
)

// changeMemberRole replaces a member's role through
// Organizations.UpdateMemberRoleByID; the last owner keeps theirs.
func (s *organizationsSection) changeMemberRole(c *gin.Context, v *shell.Visit) {
	var mf memberForm
	if _, invalid := shell.BindForm(c, &mf).First(); invalid {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The member id is missing or too long. Nothing was changed.", edge.FieldError{Location: "body.member", Message: "is not a member id"})
		return
	}
	_, err := s.organizations.UpdateMemberRoleByID(c.Request.Context(), v.Req, domain.OrganizationID(c.Param("id")), domain.MemberID(mf.Member), []string{mf.Role})
	if field, msg, ok := formField(err); ok {
		if field == "" {
			field = "role"
		}
		s.showOrganization(c, v, http.StatusBadRequest, msg+" Nothing was changed.", field, nil)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, orgPath(c.Param("id")), "role")
}

// removeMember removes a member through Organizations.RemoveMemberByID.
func (s *organizationsSection) removeMember(c *gin.Context, v *shell.Visit) {
	var mf memberForm
	if _, invalid := shell.BindForm(c, &mf).First(); invalid {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The member id is missing or too long. Nothing was changed.", edge.FieldError{Location: "body.member", Message: "is not a member id"})
		return
	}
	err := s.organizations.RemoveMemberByID(c.Request.Context(), v.Req, domain.OrganizationID(c.Param("id")), domain.MemberID(mf.Member))
	if field, msg, ok := formField(err); ok {
		s.showOrganization(c, v, http.StatusBadRequest, msg+" Nothing was changed.", field, nil)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, orgPath(c.Param("id")), "removed")
}

// inviteMember sends an invitation through Organizations.InviteByID, with
// the administrator as the inviter when they are a member (the mail then
// names them), and without one otherwise, as the trusted API may.
func (s *organizationsSection) inviteMember(c *gin.Context, v *shell.Visit) {
	var inf inviteForm
	shell.BindForm(c, &inf) // the use case checks it
	f := orgForm{Email: inf.Email, Role: inf.Role}
	err := s.invite(c, v, organization.InviteAddress{Email: f.Email, Roles: []string{f.Role}})
	if field, msg, ok := formField(err); ok {
		if field == "" {
			field = "email" // already a member, or already invited
		}
		s.showOrganization(c, v, http.StatusBadRequest, msg, field, trimForm(f))
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, orgPath(c.Param("id")), "invited")
}

// invite runs InviteByID for the organization of the page.
func (s *organizationsSection) invite(c *gin.Context, v *shell.Visit, cmd organization.InviteAddress) error {
	_, err := s.organizations.InviteByID(c.Request.Context(), v.Req, domain.OrganizationID(c.Param("id")), cmd)
	return err
}

// revokeInvitation cancels an open invitation through
// Organizations.RevokeInvitation.
func (s *organizationsSection) revokeInvitation(c *gin.Context, v *shell.Visit) {
	var inv invitationForm
	if _, invalid := shell.BindForm(c, &inv).First(); invalid {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The invitation id is missing or too long. Nothing was changed.",
			edge.FieldError{Location: "body.invitation", Message: "is not an invitation id"})
		return
	}
	err := s.organizations.RevokeInvitation(c.Request.Context(), v.Req, domain.OrganizationID(c.Param("id")), domain.InvitationID(inv.Invitation))
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, orgPath(c.Param("id")), "revoked")
}

// resendInvitation renews an invitation and mails it again through
// Organizations.ResendInvitationByID, for its address and roles as listed.
func (s *organizationsSection) resendInvitation(c *gin.Context, v *shell.Visit) {
	var inf invitationForm
	shell.BindForm(c, &inf) // the use case refuses an id no invitation of the organization has
	_, err := s.organizations.ResendInvitationByID(c.Request.Context(), v.Req, domain.OrganizationID(c.Param("id")), domain.InvitationID(inf.Invitation))
	if errors.Is(err, domain.ErrInvitationNotFound) {
		s.shell.Refusal(c, http.StatusNotFound, "No such invitation", "The organization has no invitation with this id. Nothing was sent.",
			edge.FieldError{Location: "body.invitation", Message: "is not one of the organization's invitations"})
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, orgPath(c.Param("id")), "resent")
}

// deleteOrganization deletes through Organizations.DeleteByID once the
// typed confirmation is the organization's slug.
func (s *organizationsSection) deleteOrganization(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	id := domain.OrganizationID(c.Param("id"))
	oc, err := s.organizations.GetByID(ctx, v.Req, id)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	confirm := confirmation(c)
	if confirm != oc.Organization.Slug() {
		s.showOrganization(c, v, http.StatusBadRequest, "Type the organization's slug exactly to confirm. Nothing was deleted.", "confirm", trimForm(orgForm{Confirm: confirm}))
		return
	}
	if err := s.organizations.DeleteByID(ctx, v.Req, id); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Redirect(c, Base+"/organizations?deleted=1")
}
