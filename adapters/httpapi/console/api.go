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
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
)

// Base is the console's path.
const Base = "/console"

// stopPath ends an impersonation, from the banner on any page.
const stopPath = Base + "/impersonation/stop"

// maxID bounds an id in a path or a form: the admin API's own bound.
const maxID = 128

// API holds the console's handlers, on the edge's shared pieces and the
// shell.
type API struct {
	*edge.Kit
	shell *shell.Shell
	views *shell.Views
	enter shell.Gate
}

// New returns the console on k and sh.
func New(k *edge.Kit, sh *shell.Shell) *API {
	if k == nil || sh == nil {
		panic("console: nil dependency")
	}
	return &API{Kit: k, shell: sh, views: sh.NewViews(files, nil), enter: sh.Administrator(k.App.Commands.Administration)}
}

// AddConsoleRoutes registers the console's pages and forms, behind the
// administrator's gate (Shell.Administrator), and the shell's assets.
func (s *API) AddConsoleRoutes() {
	s.shell.AddAssetRoutes()
	r := s.shell.Section(Base, s.enter)
	r.Get(Base, s.home)
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

// addUserRoutes registers the Users section.
func (s *API) addUserRoutes(r shell.Section) {
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

// home is the console's first page: the overview.
func (s *API) home(c *gin.Context) {
	v, ok := s.enter(c)
	if !ok {
		return
	}
	if v.Impersonating() {
		s.render(c, http.StatusOK, "impersonating", v.Page("Impersonating"))
		return
	}
	edge.Redirect(c, http.StatusFound, Base+"/overview")
}
