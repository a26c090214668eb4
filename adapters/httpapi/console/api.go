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

// maxID bounds an id in a path: the admin API's own bound (a query's or a
// form's bounds are its binder tags).
const maxID = 128

// Deps are the use cases the console calls, the admin API's own (so the
// same checks and audit entries apply), one struct per section rather than
// one flat list: a section's type holds only what its struct names (New
// sets them), so it cannot reach another section's use cases, the
// compiler says which ones each section calls, and routes.go
// (adapters/httpapi), which fills them in, reads as the map of what each
// section calls. Gate is apart: the administrator's gate guards them all.
type Deps struct {
	Users             UsersDeps
	Organizations     OrganizationsDeps
	Domains           DomainsDeps
	ServiceKeys       ServiceKeysDeps
	OAuthClients      OAuthClientsDeps
	SigningKeys       SigningKeysDeps
	IdentityProviders IdentityProvidersDeps
	Webhooks          WebhooksDeps
	AuditLog          AuditLogDeps
	Overview          OverviewDeps
}

// base is what every console section shares: the edge's pieces, the
// shell, the console's pages, each typed by its view, and the
// administrator's gate.
type base struct {
	*edge.Kit
	shell *shell.Shell
	views *shell.Views
	pages pages
	enter shell.Gate
}

// view enters the console for a page: an impersonation sees only the
// banner's page.
func (b *base) view(c *gin.Context) (*shell.Visit, bool) {
	v, ok := b.enter(c)
	if ok && v.Impersonating() {
		b.pages.impersonating.Render(c, http.StatusOK, v.Page("Impersonating"), struct{}{})
		return nil, false
	}
	return v, ok
}

// API is the console: one section per part of the navigation, each a type
// of its own (beside its routes) holding the use cases its handlers call,
// on the base they share.
type API struct {
	*base
	users             *usersSection // with the home page's impersonation banner and stopping
	organizations     *organizationsSection
	domains           *domainsSection
	serviceKeys       *serviceKeysSection
	oauthClients      *oauthClientsSection
	signingKeys       *signingKeysSection
	identityProviders *identityProvidersSection
	webhooks          *webhooksSection
	audit             *auditSection
	overview          *overviewSection
}

// New returns the console on k and sh, each section calling its own of d.
func New(k *edge.Kit, sh *shell.Shell, d Deps) *API {
	// d's use cases are not checked: routes.go builds every surface, on
	// applications (the edge's own tests) that have none of them.
	if k == nil || sh == nil {
		panic("console: nil dependency")
	}
	b := &base{Kit: k, shell: sh, views: sh.NewViews(files, nil), enter: sh.Administrator()}
	b.pages = newPages(b.views)
	u := d.Users
	return &API{base: b,
		users: &usersSection{base: b, administration: u.Administration, factors: u.Factors, memberships: u.Memberships,
			linked: u.LinkedAccounts},
		organizations:     &organizationsSection{base: b, organizations: d.Organizations.Organizations},
		domains:           &domainsSection{base: b, domains: d.Domains.Domains},
		serviceKeys:       &serviceKeysSection{base: b, serviceKeys: d.ServiceKeys.ServiceKeys},
		oauthClients:      &oauthClientsSection{base: b, oauthClients: d.OAuthClients.OAuthClients},
		signingKeys:       &signingKeysSection{base: b, signingKeys: d.SigningKeys.SigningKeys},
		identityProviders: &identityProvidersSection{base: b, providers: d.IdentityProviders.Providers, signIns: d.IdentityProviders.Federation},
		webhooks:          &webhooksSection{base: b, webhooks: d.Webhooks.Webhooks},
		audit:             &auditSection{base: b, auditLog: d.AuditLog.AuditLog},
		overview:          &overviewSection{base: b, overview: d.Overview.Dashboard},
	}
}

// AddConsoleRoutes registers the console's pages and forms, behind the
// administrator's gate (Shell.Administrator).
func (s *API) AddConsoleRoutes() {
	r := s.shell.Section(Base, s.enter)
	r.Get(Base, s.home)
	s.users.addUserRoutes(r)
	s.organizations.addOrganizationRoutes(r)
	s.domains.addDomainRoutes(r)
	s.serviceKeys.addServiceKeyRoutes(r)
	s.oauthClients.addOAuthClientRoutes(r)
	s.signingKeys.addSigningKeyRoutes(r)
	s.overview.addOverviewRoutes(r)
	s.audit.addAuditRoutes(r)
	s.identityProviders.addIdentityProviderRoutes(r)
	s.webhooks.addWebhookRoutes(r)
}

// home is the console's first page: the overview (an impersonation sees
// the banner's page).
func (s *API) home(c *gin.Context) {
	if _, ok := s.view(c); ok {
		edge.Redirect(c, http.StatusFound, Base+"/overview")
	}
}
