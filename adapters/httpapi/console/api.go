package console

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/application/webhook"
)

// Base is the console's path.
const Base = "/console"

// stopPath ends an impersonation, from the banner on any page.
const stopPath = Base + "/impersonation/stop"

// maxID bounds an id in a path: the admin API's own bound (a query's or a
// form's bounds are its binder tags).
const maxID = 128

// Deps are the use cases the console calls: the admin API's own, so the
// same checks and audit entries apply.
type Deps struct {
	Administration    *admin.Administration       // the gate, users, bans, sessions, impersonation
	Factors           *mfa.Factors                // a user's page and the reset of their factors
	Memberships       *admin.Memberships          // a user's organizations
	LinkedAccounts    *federation.Accounts        // a user's linked accounts
	Organizations     *organization.Organizations // the Organizations section
	Domains           *hostdomain.Domains         // the Domains section
	ServiceKeys       *servicekey.ServiceKeys     // the Service keys section
	OAuthClients      *oidc.OAuthClients          // the OAuth clients section
	SigningKeys       *oidc.SigningKeys           // the Signing keys section
	IdentityProviders *federation.Providers       // the Identity providers section
	Federation        *federation.SignIns         // their authorization endpoints
	Webhooks          *webhook.Webhooks           // the Webhooks section
	AuditLog          *admin.AuditLog             // the Audit log section
	Overview          *admin.Dashboard            // the Overview section
}

// API holds the console's handlers, on the edge's shared pieces and the
// shell, with the use cases they call.
type API struct {
	*edge.Kit
	shell *shell.Shell
	views *shell.Views
	pages pages // views, each page typed by its view
	enter shell.Gate

	administration *admin.Administration
	factors        *mfa.Factors
	memberships    *admin.Memberships
	linked         *federation.Accounts
	organizations  *organization.Organizations
	domains        *hostdomain.Domains
	serviceKeys    *servicekey.ServiceKeys
	oauthClients   *oidc.OAuthClients
	signingKeys    *oidc.SigningKeys
	providers      *federation.Providers
	signIns        *federation.SignIns
	webhooks       *webhook.Webhooks
	auditLog       *admin.AuditLog
	overview       *admin.Dashboard
}

// New returns the console on k and sh, calling d.
func New(k *edge.Kit, sh *shell.Shell, d Deps) *API {
	// d's use cases are not checked: routes.go builds every surface, on
	// applications (the edge's own tests) that have none of them.
	if k == nil || sh == nil {
		panic("console: nil dependency")
	}
	a := &API{Kit: k, shell: sh, views: sh.NewViews(files, nil), enter: sh.Administrator(d.Administration),
		administration: d.Administration, factors: d.Factors, memberships: d.Memberships, linked: d.LinkedAccounts,
		organizations: d.Organizations, domains: d.Domains, serviceKeys: d.ServiceKeys, oauthClients: d.OAuthClients,
		signingKeys: d.SigningKeys, providers: d.IdentityProviders, signIns: d.Federation, webhooks: d.Webhooks,
		auditLog: d.AuditLog, overview: d.Overview}
	a.pages = newPages(a.views)
	return a
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
		s.pages.impersonating.Render(c, http.StatusOK, v.Page("Impersonating"), struct{}{})
		return
	}
	edge.Redirect(c, http.StatusFound, Base+"/overview")
}
