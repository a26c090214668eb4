// Package console serves the admin console under /console: server-rendered
// pages (html/template) for platform administrators, with one stylesheet
// and one small script of its own, both embedded and served from this
// origin. Like the hosted pages it is a surface, not a contract: no
// document lists its routes. Every action goes through the use cases the
// admin API (/api/admin, the framework's admin plugin) uses, so the same
// checks and audit entries apply; the console adds the browser's guards:
// who may enter (access.go), the idle timeout, single-use form tokens
// (forms.go) and strict response headers (render.go).
package console

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application"
)

// Base is the console's path.
const Base = "/console"

// API holds the console's handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	App   *application.Application
	views *views
}

// New returns the console on k, calling app's use cases.
func New(k *edge.Kit, app *application.Application) *API {
	if k == nil || app == nil {
		panic("console: nil dependency")
	}
	return &API{Kit: k, App: app, views: newViews()}
}

// AddConsoleRoutes registers the console's pages, forms and assets. Every
// page and form reads the session cookie (edge.SecuritySession: the origin
// check guards each form post); the middleware's refusals render as pages.
func (s *API) AddConsoleRoutes() {
	page := edge.Policy{Rate: edge.RateGeneral, Security: edge.SecuritySession, ErrorPage: s.problemPage}
	asset := edge.Policy{Rate: edge.RatePublic}
	s.Handle(http.MethodGet, stylesheetPath, asset, s.views.serveCSS)
	s.Handle(http.MethodGet, scriptPath, asset, s.views.serveJS)

	r := routes{s: s, policy: page}
	r.get(Base, s.home)
	s.addUserRoutes(r)
	s.addOrganizationRoutes(r)
	s.addDomainRoutes(r)
	s.addServiceKeyRoutes(r)
	s.addOAuthClientRoutes(r)
	s.addSigningKeyRoutes(r)
	s.addOverviewRoutes(r)
	s.addAuditRoutes(r)
	s.addIdentityProviderRoutes(r)
	s.addWebhookRoutes(r)
}

// routes registers a section's pages and forms, all on the console's
// policy: each section file has its add…Routes.
type routes struct {
	s      *API
	policy edge.Policy
}

// get registers a page.
func (r routes) get(path string, h gin.HandlerFunc) { r.s.Page(path, r.policy, h) }

// post registers a form post: h runs once the visitor entered and the
// form's token held (API.form).
func (r routes) post(path string, h func(c *gin.Context, v *visit)) {
	r.s.Handle(http.MethodPost, path, r.policy, func(c *gin.Context) { r.s.form(c, h) })
}

// addUserRoutes registers the Users section.
func (s *API) addUserRoutes(r routes) {
	r.get(Base+"/users", s.usersPage)
	r.get(Base+"/users/:id", s.userPage)
	post := r.post
	post(Base+"/users/:id/ban", s.banUser)
	post(Base+"/users/:id/unban", s.unbanUser)
	post(Base+"/users/:id/sessions/revoke", s.revokeSession)
	post(Base+"/users/:id/sessions/revoke-all", s.revokeSessions)
	post(Base+"/users/:id/password-reset", s.sendPasswordReset)
	post(Base+"/users/:id/factors/reset", s.resetFactors)
	post(Base+"/users/:id/linked/unlink", s.unlinkAccount)
	post(Base+"/users/:id/impersonate", s.impersonate)
	post(Base+"/users/:id/delete", s.deleteUser)
	// Stopping is the one form an impersonation session may post
	// (edge.Impersonation): the route's policy says so, as the framework's
	// stop-impersonating does.
	stop := r
	stop.policy.WhileImpersonating = edge.ImpersonationAllowed
	stop.post(stopPath, s.stopImpersonating)
}

// home is the console's first page: the overview.
func (s *API) home(c *gin.Context) {
	v, ok := s.enter(c)
	if !ok {
		return
	}
	if v.impersonating() {
		s.render(c, http.StatusOK, "impersonating", v.page("Impersonating"))
		return
	}
	edge.Redirect(c, http.StatusFound, Base+"/overview")
}
