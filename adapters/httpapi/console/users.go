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
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/domain"
)

// UsersDeps are the Users section's use cases (users.go): a user's page,
// its actions, and impersonation.
type UsersDeps struct {
	Administration *admin.Administration // the search, bans, sessions, impersonation, deletion
	Factors        *mfa.Factors          // a user's page and the reset of their factors
	Memberships    *admin.Memberships    // a user's organizations
	LinkedAccounts *federation.Accounts  // a user's linked accounts
}

// usersSection is the Users section, with impersonating a user and
// stopping.
type usersSection struct {
	*base
	administration *admin.Administration
	factors        *mfa.Factors
	memberships    *admin.Memberships
	linked         *federation.Accounts
}

// addUserRoutes registers the Users section.
func (s *usersSection) addUserRoutes(r shell.Section) {
	r.Get(Base+"/users", s.usersPage)
	r.Get(Base+"/users/:id", s.userPage)
	r.Post(Base+"/users/:id/ban", s.banUser)
	r.Post(Base+"/users/:id/unban", s.unbanUser)
	r.Post(Base+"/users/:id/sessions/revoke", s.revokeSession)
	r.Post(Base+"/users/:id/sessions/revoke-all", s.revokeSessions)
	r.Post(Base+"/users/:id/password-reset", s.sendPasswordReset)
	r.Post(Base+"/users/:id/factors/reset", s.resetFactors)
	r.Post(Base+"/users/:id/linked/unlink", s.unlinkAccount)
	r.Post(Base+"/users/:id/impersonate", s.impersonate)
	r.Post(Base+"/users/:id/delete", s.deleteUser)
	// Stopping is the one form an impersonation session may post
	// (edge.Impersonation): the route's policy says so, as the framework's
	// stop-impersonating does.
	r.AllowedWhileImpersonating().Post(stopPath, s.stopImpersonating)
}

// usersView is the users list: the query as given (kept in the form and
// the links) and one page.
type usersView struct {
	Q, By, Status, Verified, Org string
	Rows                         []userRow
	First, Next                  string
}

type userRow struct {
	ID, Email, Name         string
	Banned, Verified, Admin bool
	Created                 time.Time
}

// usersQuery is the Users page's query: search, filters and the cursor,
// all in the URL, so a page can be shared. The bounds are the admin API's.
type usersQuery struct {
	Q        string `query:"q" validate:"maxbytes=256"`
	Org      string `query:"org" validate:"maxbytes=128"`
	By       string `query:"by" validate:"omitempty,oneof=email name"`
	Status   string `query:"status" validate:"omitempty,oneof=banned active"`
	Verified string `query:"verified" validate:"omitempty,oneof=yes no"`
	Cursor   string `query:"cursor" validate:"maxbytes=512"`
	Deleted  string `query:"deleted"`
}

// usersQueryErrors say what a malformed part of the query should be, by
// its name.
var usersQueryErrors = map[string]string{
	"q":        "The search is too long: use at most 256 characters.",
	"org":      "The organization id is too long.",
	"by":       "Search in e-mail or name.",
	"status":   "The status is banned, not banned, or any.",
	"verified": "The address is verified, unverified, or any.",
	"cursor":   "The page link is not valid.",
}

// listUsers is the use case's query for uq: a search in names or within
// addresses, and the filters.
func (uq usersQuery) listUsers() admin.ListUsersPage {
	q := admin.ListUsersPage{Cursor: uq.Cursor, OrganizationID: domain.OrganizationID(uq.Org)}
	if uq.By == "name" {
		q.NameContains = strings.TrimSpace(uq.Q)
	} else {
		q.EmailContains = strings.ToLower(strings.TrimSpace(uq.Q))
	}
	if uq.Status != "" {
		banned := uq.Status == "banned"
		q.Banned = &banned
	}
	if uq.Verified != "" {
		verified := uq.Verified == "yes"
		q.EmailVerified = &verified
	}
	return q
}

// notice is what the list says when a deletion landed on it.
func (uq usersQuery) notice() string {
	if uq.Deleted == "" {
		return ""
	}
	return "The user is deleted."
}

// usersPage lists users through the admin API's search
// (Administration.SearchUsers).
func (s *usersSection) usersPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	var uq usersQuery
	bad, invalid := shell.BindQuery(c, &uq).First()
	uv := &usersView{Q: uq.Q, By: uq.By, Status: uq.Status, Verified: uq.Verified, Org: uq.Org}
	p := sectionPage(v, "Users", "users", uq.notice())
	if invalid {
		refused(c, s.pages.users, p, usersQueryErrors[bad.Name], bad.Name, uv)
		return
	}
	page, err := s.administration.SearchUsers(c.Request.Context(), v.Req, uq.listUsers())
	if domain.KindOf(err) == domain.KindInvalid {
		refused(c, s.pages.users, p, badPageLink, "cursor", uv)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	s.usersRows(uv, v, page, uq.Cursor)
	s.pages.users.Render(c, http.StatusOK, p, uv)
}

// usersRows fills uv with page's users and the links to the first and the
// next page.
func (s *usersSection) usersRows(uv *usersView, v *shell.Visit, page admin.UsersPage, cursor string) {
	for _, u := range page.Users {
		uv.Rows = append(uv.Rows, userRow{ID: string(u.ID()), Email: string(u.Email()), Name: u.Name(), Banned: u.IsBanned(v.Now),
			Verified: u.EmailVerified(), Admin: s.administration.IsAdmin(u), Created: u.CreatedAt()})
	}
	link := url.Values{"q": {uv.Q}, "by": {uv.By}, "status": {uv.Status}, "verified": {uv.Verified}, "org": {uv.Org}}
	uv.First, uv.Next = pageLinks(Base+"/users", link, cursor, page.NextCursor)
}

// userView is a user's page.
type userView struct {
	ID, Email, Name, Path   string
	Verified, Banned, Admin bool
	BanReason               string
	BanExpires, Created     time.Time
	Roles                   []domain.PlatformRole
	TwoFactor               bool
	Passkeys                int
	Sessions                []sessionRow
	Linked                  []linkedRow
	Orgs                    []orgRow
	Form                    userForm
}

// userForm is what a refused form sent, shown again.
type userForm struct{ Reason, Days, Confirm string }

// orgRow is an organization the user belongs to.
type orgRow struct{ ID, Name, Slug string }

// linkedRow is one of the user's accounts at an identity provider.
type linkedRow struct {
	ID, Provider, Email string
	Created             time.Time
}

type sessionRow struct {
	ID, IP, Agent    string
	Created, Expires time.Time
	Impersonation    bool
}

// userPage shows a user: the admin API's reads (Factors.GetUser,
// Administration.ListUserSessions), and the forms of its actions.
func (s *usersSection) userPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showUser(c, v, http.StatusOK, "", "", userForm{})
}

// userState is what a user's page shows, each read through the admin
// API's use case: the user with their factors, sessions, linked accounts
// and organizations.
type userState struct {
	user     mfa.UserWithFactors
	sessions []*domain.Session
	linked   []federation.AccountView
	orgs     []*domain.Organization
}

// showUser renders the user page with status, and a refused form's error,
// field and input.
func (s *usersSection) showUser(c *gin.Context, v *shell.Visit, status int, msg, field string, f userForm) {
	id := domain.UserID(c.Param("id"))
	if len(id) > maxID {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The user id is too long.", edge.FieldError{Location: "path.id", Message: "is too long"})
		return
	}
	st, err := s.readUser(c.Request.Context(), v, id)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	uv := s.userViewOf(st, f, v.Now)
	p := sectionPage(v, uv.Email, "users", userNotices.Of(c))
	p.Error, p.Field = msg, field
	s.pages.user.Render(c, status, p, uv)
}

// readUser reads a user's page through the admin API's use cases
// (Factors.GetUser, Administration.ListUserSessions, Accounts.LinkedFor,
// Memberships.OfUser).
func (s *usersSection) readUser(ctx context.Context, v *shell.Visit, id domain.UserID) (userState, error) {
	var st userState
	var err error
	if st.user, err = s.factors.GetUser(ctx, v.Req, id); err != nil {
		return st, err
	}
	if st.sessions, err = s.administration.ListUserSessions(ctx, v.Req, id); err != nil {
		return st, err
	}
	if st.linked, err = s.linked.LinkedFor(ctx, v.Req, id); err != nil {
		return st, err
	}
	st.orgs, err = s.memberships.OfUser(ctx, v.Req, id)
	return st, err
}

// userViewOf is a user's page: st, with a refused form's input f.
func (s *usersSection) userViewOf(st userState, f userForm, now time.Time) *userView {
	uf := st.user
	u, acc := uf.User, uf.User.Access()
	uv := &userView{ID: string(u.ID()), Email: string(u.Email()), Name: u.Name(), Path: Base + "/users/" + url.PathEscape(string(u.ID())),
		Verified: u.EmailVerified(), Banned: u.IsBanned(now), Admin: s.administration.IsAdmin(u), BanReason: acc.BanReason,
		BanExpires: acc.BanExpires, Created: u.CreatedAt(), Roles: u.Roles(), TwoFactor: u.TwoFactorEnabled(), Passkeys: uf.Passkeys, Form: f}
	for _, ss := range st.sessions {
		uv.Sessions = append(uv.Sessions, sessionRow{ID: string(ss.ID()), IP: ss.IPAddress(), Agent: ss.UserAgent(),
			Created: ss.CreatedAt(), Expires: ss.ExpiresAt(), Impersonation: ss.ImpersonatedBy() != ""})
	}
	for _, o := range st.orgs {
		uv.Orgs = append(uv.Orgs, orgRow{ID: string(o.ID()), Name: o.Name(), Slug: o.Slug()})
	}
	for _, a := range st.linked {
		uv.Linked = append(uv.Linked, linkedRow{ID: a.ID, Provider: a.ProviderID, Email: a.Email, Created: a.CreatedAt})
	}
	return uv
}

// The user page's forms that name one of the user's things.
type (
	// sessionForm names one of the user's sessions.
	sessionForm struct {
		Session string `form:"session"`
	}
	// linkedAccountForm names one of the user's linked accounts.
	linkedAccountForm struct {
		Account string `form:"account" validate:"required,maxbytes=128"`
	}
)

// userNotices say what a form did, after its redirect (?done=).
var userNotices = shell.Notices{
	"banned": "The user is banned and signed out everywhere.", "unbanned": "The ban is lifted.",
	"revoked": "The session has ended.", "revoked-all": "All the user's sessions have ended.",
	"reset-sent": "A password reset link is on its way to the user.", "factors-reset": "The user's second factors are removed and their sessions ended.",
	"unlinked": "The linked account is removed.", "stopped": "You stopped impersonating; this is your own session again.",
}

// userPath is a user's page.
func userPath(id string) string { return Base + "/users/" + url.PathEscape(id) }

// banForm is the ban form: the reason, and for how many days (empty: until
// unbanned), as the admin API bounds them.
type banForm struct {
	Reason string `form:"reason" validate:"maxbytes=1024"`
	Days   *int   `form:"days,trim" validate:"omitempty,min=1,max=3650"`
	// DaysTyped is the days as typed, shown again when refused.
	DaysTyped string `form:"days,trim"`
}

// banFormErrors say what a malformed part of the ban form should be, by
// its name.
var banFormErrors = map[string]string{
	"reason": "The reason is too long: use at most 1024 characters.",
	"days":   "Days must be a whole number from 1 to 3650, or empty for a ban until unbanned.",
}

// expires is how long the ban lasts (0: until unbanned).
func (bf banForm) expires() time.Duration {
	if bf.Days == nil {
		return 0
	}
	return time.Duration(*bf.Days) * 24 * time.Hour
}

// banUser bans through Administration.BanUser, as the admin API does.
func (s *usersSection) banUser(c *gin.Context, v *shell.Visit) {
	var bf banForm
	if bad, invalid := shell.BindForm(c, &bf).First(); invalid {
		f := userForm{Reason: bf.Reason, Days: bf.DaysTyped}
		if bad.Name == "reason" {
			f.Reason = "" // too long to show again
		} else {
			f.Days = keep(f.Days, 16)
		}
		s.showUser(c, v, http.StatusBadRequest, banFormErrors[bad.Name], bad.Name, f)
		return
	}
	if _, err := s.administration.BanUser(c.Request.Context(), v.Req, domain.UserID(c.Param("id")), bf.Reason, bf.expires()); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, userPath(c.Param("id")), "banned")
}

// unbanUser lifts a ban through Administration.UnbanUser.
func (s *usersSection) unbanUser(c *gin.Context, v *shell.Visit) {
	if _, err := s.administration.UnbanUser(c.Request.Context(), v.Req, domain.UserID(c.Param("id"))); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, userPath(c.Param("id")), "unbanned")
}

// revokeSession ends one of the user's sessions through
// Administration.RevokeSessionOf, which refuses a session of someone else.
func (s *usersSection) revokeSession(c *gin.Context, v *shell.Visit) {
	var sf sessionForm
	shell.BindForm(c, &sf) // the use case refuses an id none of the user's sessions has
	err := s.administration.RevokeSessionOf(c.Request.Context(), v.Req, domain.UserID(c.Param("id")), domain.SessionID(sf.Session))
	if errors.Is(err, admin.ErrNotUsersSession) {
		s.shell.Refusal(c, http.StatusNotFound, "No such session", "The user has no live session with this id: it may have ended already. Nothing was changed.",
			edge.FieldError{Location: "body.session", Message: "is not one of the user's live sessions"})
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, userPath(c.Param("id")), "revoked")
}

// revokeSessions ends all the user's sessions through
// Administration.RevokeUserSessions.
func (s *usersSection) revokeSessions(c *gin.Context, v *shell.Visit) {
	if err := s.administration.RevokeUserSessions(c.Request.Context(), v.Req, domain.UserID(c.Param("id"))); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, userPath(c.Param("id")), "revoked-all")
}

// sendPasswordReset mails the user a reset link through
// Factors.SendPasswordReset, the admin API's own action (audited as
// admin.send-password-reset).
func (s *usersSection) sendPasswordReset(c *gin.Context, v *shell.Visit) {
	err := s.factors.SendPasswordReset(c.Request.Context(), v.Req, domain.UserID(c.Param("id")), s.Config.BaseURL+edge.ResetPasswordForm.Page)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, userPath(c.Param("id")), "reset-sent")
}

// resetFactors removes the user's second factors through
// Factors.ResetFactors, as the admin API's factor reset does.
func (s *usersSection) resetFactors(c *gin.Context, v *shell.Visit) {
	if err := s.factors.ResetFactors(c.Request.Context(), v.Req, domain.UserID(c.Param("id"))); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, userPath(c.Param("id")), "factors-reset")
}

// unlinkAccount removes one of the user's linked accounts through
// LinkedAccounts.UnlinkFor, as the admin API's unlink does: their last way
// to sign in is refused.
func (s *usersSection) unlinkAccount(c *gin.Context, v *shell.Visit) {
	var af linkedAccountForm
	if _, invalid := shell.BindForm(c, &af).First(); invalid {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "Say which linked account to unlink. Nothing was changed.",
			edge.FieldError{Location: "body.account", Message: "is missing or too long"})
		return
	}
	if err := s.linked.UnlinkFor(c.Request.Context(), v.Req, domain.UserID(c.Param("id")), af.Account); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, userPath(c.Param("id")), "unlinked")
}

// impersonate starts an impersonation through
// Administration.ImpersonateUser and switches this browser to it, keeping
// the administrator's session aside, as the admin plugin's route does.
func (s *usersSection) impersonate(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	adminToken, _ := s.Cookies.Token(c.Request)
	res, err := s.administration.ImpersonateUser(ctx, v.Req, domain.UserID(c.Param("id")), edge.RequestInfoFrom(ctx).Client())
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	cookies := append([]http.Cookie{s.Cookies.AdminSessionCookie(adminToken, v.P.Session)}, s.Cookies.Issue(res.Token, res.Session)...)
	for i := range cookies {
		http.SetCookie(c.Writer, &cookies[i])
	}
	edge.Redirect(c, http.StatusSeeOther, Base)
}

// stopImpersonating ends the impersonation through
// Administration.StopImpersonating and restores the administrator's
// session from the admin_session cookie, as the admin plugin's route does.
func (s *usersSection) stopImpersonating(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	adminToken := s.Cookies.AdminToken(c.Request)
	restored, err := s.administration.StopImpersonating(ctx, v.P, adminToken, edge.RequestIDFrom(ctx), edge.RequestInfoFrom(ctx).ClientIP)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	cookies := append([]http.Cookie{s.Cookies.Cookie(s.Cookies.AdminSession, "", -1)}, s.Cookies.Issue(adminToken, restored.Session)...)
	for i := range cookies {
		http.SetCookie(c.Writer, &cookies[i])
	}
	shell.Done(c, userPath(string(v.P.User.ID())), "stopped")
}

// deleteUser deletes through Administration.RemoveUser once the typed
// confirmation is the user's address.
func (s *usersSection) deleteUser(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	id := domain.UserID(c.Param("id"))
	uf, err := s.factors.GetUser(ctx, v.Req, id)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	confirm := confirmation(c)
	if !strings.EqualFold(confirm, string(uf.User.Email())) {
		if len(confirm) > 320 {
			confirm = ""
		}
		s.showUser(c, v, http.StatusBadRequest, "Type the user's e-mail address exactly to confirm. Nothing was deleted.", "confirm", userForm{Confirm: confirm})
		return
	}
	if err := s.administration.RemoveUser(ctx, v.Req, id); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Redirect(c, Base+"/users?deleted=1")
}
