package console

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// AccountBase is the path of the self-service account pages: every
// signed-in user's own profile, security, sessions, linked accounts and
// organizations, on the console's shell and guards (strict headers,
// single-use form tokens, the origin check), through the framework's own
// use cases (what /api/auth/* calls).
const AccountBase = "/account"

// stopPath ends an impersonation, from the banner on any page.
const stopPath = Base + "/impersonation/stop"

// enterAccount lets in any signed-in user: signed out, it sends the
// browser to sign in and come back. An impersonation session enters as the
// impersonated user, under the banner; its forms are refused (formAs), so
// an administrator looks but changes nothing in someone else's name.
func (s *API) enterAccount(c *gin.Context) (*visit, bool) { return s.signedIn(c) }

// accountPage is an account page of section (the shell's navigation).
func (v *visit) accountPage(title, section string) *page {
	p := v.page(title)
	p.Area, p.Section = "account", section
	return p
}

// accountRoutes registers the account pages' pages and forms.
type accountRoutes struct{ routes }

// get registers an account page.
func (r accountRoutes) get(path string, h gin.HandlerFunc) {
	r.s.Page(path, r.policy, func(c *gin.Context) { c.Set(homeKey, AccountBase); h(c) })
}

// post registers an account form: h runs once a signed-in user entered and
// the form's token held.
func (r accountRoutes) post(path string, h func(c *gin.Context, v *visit)) {
	r.s.Handle(http.MethodPost, path, r.policy, func(c *gin.Context) { c.Set(homeKey, AccountBase); r.s.formAs(c, r.s.enterAccount, h) })
}

// AddAccountRoutes registers the account pages.
func (s *API) AddAccountRoutes() {
	page := edge.Policy{Rate: edge.RateGeneral, Security: edge.SecuritySession, ErrorPage: s.problemPage}
	r := accountRoutes{routes{s: s, policy: page}}
	s.addProfileRoutes(r)
	s.addSessionRoutes(r)
	s.addAccountOrganizationRoutes(r)
	s.addSecurityRoutes(r)
	s.addLinkedRoutes(r)
}

// accountDone sends the browser to path after an account form
// (Post/Redirect/Get), saying what was done.
func accountDone(c *gin.Context, path, what string) {
	edge.Redirect(c, http.StatusSeeOther, edge.PageURL(path, url.Values{"done": {what}}))
}
