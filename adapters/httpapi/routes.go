package httpapi

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/account"
	"github.com/gatehouse/gatehouse/adapters/httpapi/admin"
	"github.com/gatehouse/gatehouse/adapters/httpapi/backend"
	"github.com/gatehouse/gatehouse/adapters/httpapi/console"
	"github.com/gatehouse/gatehouse/adapters/httpapi/explorer"
	"github.com/gatehouse/gatehouse/adapters/httpapi/framework"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/adapters/httpapi/oidc"
	"github.com/gatehouse/gatehouse/domain"
)

// addRoutes lists every route: each group below is called from here and
// nowhere else, so if this function does not reach a route, it is not served.
// Each contract or surface has its own package, which never imports another
// (make archcheck): framework/ (Better Auth's wire), oidc/ (the OpenID
// provider and discovery), admin/ (service keys, audit, OAuth clients,
// signing keys' administration, domains), backend/ (the trusted API),
// pages/ (the hosted pages and their form posts), console/ (the admin
// console) and explorer/. A group's operations go through edge.Add on its
// package's edge.Group, which puts them in their contracts with the
// package's vocabulary (its Words); plain gin routes go
// through edge.Kit.Handle. Each route declares its policy where it is
// registered (rate rule, error shape, CORS, security, form page:
// internal/edge.Policy), and NewServer panics if one does not.
func (s *Server) addRoutes() {
	app := s.app
	acc, mfa, adminApp, oid, fed := app.Account, app.MFA, app.Admin, app.OIDC, app.Federation
	fw := framework.New(s.Kit, framework.Deps{
		Registration: acc.Registration, SignIns: acc.SignIns, Sessions: acc.Sessions, Profile: acc.Profile, Passwords: acc.Passwords,
		TwoFactor: mfa.TwoFactor, Passkeys: mfa.Passkeys,
		Organizations: app.Organizations, Administration: adminApp.Administration, SigningKeys: oid.SigningKeys,
		Federation: fed.SignIns, LinkedAccounts: fed.Accounts, Settings: app.Settings,
	})
	trusted := backend.New(s.Kit, backend.Deps{
		Administration: adminApp.Administration, Factors: mfa.Factors, Organizations: app.Organizations, Domains: app.Domains,
		IdentityProviders: fed.Providers, Federation: fed.SignIns, LinkedAccounts: fed.Accounts, Webhooks: app.Webhooks,
	})
	provider := oidc.New(s.Kit, oid.OAuthProvider, framework.Words)
	adm := admin.New(s.Kit, admin.Deps{
		ServiceKeys: app.ServiceKeys, AuditLog: adminApp.AuditLog, Overview: adminApp.Dashboard, OAuthClients: oid.OAuthClients,
		SigningKeys: oid.SigningKeys, Domains: app.Domains, Factors: mfa.Factors, IdentityProviders: fed.Providers,
		Federation: fed.SignIns, LinkedAccounts: fed.Accounts, Webhooks: app.Webhooks,
	}, func(actor domain.ActorType, code string) string {
		if c, ok := backend.AuditCode(actor, code); ok {
			return c // a service key called the trusted API
		}
		return framework.AuditCode(code)
	})

	edge.Register(s.Kit, edge.ContractFramework, edge.WithWords(edge.WithRate(huma.Operation{
		OperationID: "ok", Method: http.MethodGet, Path: edge.FrameworkBase + "/ok",
		Summary: "Liveness", Tags: []string{"Health"},
		Description: "Answers 200 while the process serves requests. It never touches the database or any other dependency.",
	}, edge.RateNone), framework.Words), ok, edge.ContractAuth)

	edge.Register(s.Kit, edge.ContractAuth, edge.WithWords(edge.WithRate(huma.Operation{
		OperationID: "ready", Method: http.MethodGet, Path: "/api/health/ready",
		Summary: "Readiness", Tags: []string{"Health"},
		Description: "Answers 200 when the database answers, 503 when it does not.",
		Responses: map[string]*huma.Response{
			"503": {Description: "A dependency is down; the body says which."},
		},
	}, edge.RateNone), edge.ProblemWords), ready(app.Readiness), edge.ContractBackend)

	// The authentication framework (/api/auth, Better Auth's wire).
	fw.AddFrameworkRoutes()    // sign-up, sign-in, sessions, account, verification, reset
	fw.AddTwoFactorRoutes()    // the two-factor plugin: TOTP and backup codes
	fw.AddPasskeyRoutes()      // the passkey plugin: WebAuthn
	fw.AddOrganizationRoutes() // the organization plugin
	fw.AddAdminRoutes()        // the admin plugin
	fw.AddTokenRoutes()        // JWKS and the JWT plugin's token
	fw.AddSocialRoutes()       // social sign-in, the providers' callback, linked accounts

	// The OpenID provider and discovery.
	provider.AddOAuthRoutes()
	provider.AddOAuthConsentRoutes()
	provider.AddDiscoveryRoutes()

	// The admin API (/api/admin: a platform administrator's session).
	adm.AddServiceRoutes() // service keys, the audit log, the calling key
	adm.AddOAuthClientRoutes()
	adm.AddSigningKeyRoutes()
	adm.AddAdminDomainRoutes()
	adm.AddUserFactorRoutes() // reset a user's second factors
	adm.AddIdentityProviderRoutes()
	adm.AddWebhookRoutes()  // webhook endpoints, their messages and replays
	adm.AddOverviewRoutes() // counts, sign-ins and recent audit entries

	// The trusted API (a service key).
	trusted.AddBackendUserRoutes()
	trusted.AddBackendOrganizationRoutes()
	trusted.AddBackendMemberRoutes()
	trusted.AddDomainRoutes()
	trusted.AddOrgProviderRoutes() // an organization's identity providers (enterprise SSO)
	trusted.AddWebhookRoutes()     // webhook endpoints, their messages and replays
	trusted.AddWebhookEvents()     // the contract's webhooks section: every event

	s.pages.AddHostedPages() // the pages, their stylesheet, the icon and the home page
	// The HTML surfaces for people, on one shell (internal/shell): the
	// admin console (/console: a platform administrator's pages) and the
	// self-service account pages (/account: every signed-in user's own).
	sh := shell.New(s.Kit, shell.Deps{Forms: adminApp.ConsoleForms, Admins: adminApp.Administration})
	sh.AddAssetRoutes() // the layout's, for the console and the account pages; the passkey helpers, for the account and the hosted sign-in
	console.New(s.Kit, sh, console.Deps{
		Users: console.UsersDeps{Administration: adminApp.Administration, Factors: mfa.Factors, Memberships: adminApp.Memberships,
			LinkedAccounts: fed.Accounts},
		Organizations:     console.OrganizationsDeps{Organizations: app.Organizations},
		Domains:           console.DomainsDeps{Domains: app.Domains},
		ServiceKeys:       console.ServiceKeysDeps{ServiceKeys: app.ServiceKeys},
		OAuthClients:      console.OAuthClientsDeps{OAuthClients: oid.OAuthClients},
		SigningKeys:       console.SigningKeysDeps{SigningKeys: oid.SigningKeys},
		IdentityProviders: console.IdentityProvidersDeps{Providers: fed.Providers, Federation: fed.SignIns},
		Webhooks:          console.WebhooksDeps{Webhooks: app.Webhooks},
		AuditLog:          console.AuditLogDeps{AuditLog: adminApp.AuditLog},
		Overview:          console.OverviewDeps{Dashboard: adminApp.Dashboard},
	}).AddConsoleRoutes()
	account.New(s.Kit, sh, account.Deps{
		Profile:       account.ProfileDeps{Profile: acc.Profile, Passwords: acc.Passwords},
		Sessions:      account.SessionsDeps{Sessions: acc.Sessions},
		Organizations: account.OrganizationsDeps{Organizations: app.Organizations},
		Security:      account.SecurityDeps{TwoFactor: mfa.TwoFactor, Passkeys: mfa.Passkeys},
		Linked:        account.LinkedDeps{LinkedAccounts: fed.Accounts, Federation: fed.SignIns, IdentityProviders: fed.Providers},
	}).AddAccountRoutes()

	// Outside the contracts: the documents and the explorer. The framework's
	// document sits in the framework: Better Auth's error shape and CORS,
	// like its other routes.
	s.Handle(http.MethodGet, edge.FrameworkSpecPath, edge.Policy{Shape: edge.ShapeFramework, CORS: edge.CORSTrusted, Rate: edge.RatePublic},
		s.ServeSpec(edge.ContractFramework))
	s.Handle(http.MethodGet, edge.AuthSpecPath, edge.Policy{Rate: edge.RatePublic}, s.ServeSpec(edge.ContractAuth))
	s.Handle(http.MethodGet, edge.BackendSpecPath, edge.Policy{Rate: edge.RatePublic}, s.ServeSpec(edge.ContractBackend))
	explorer.Routes(s.Kit)
}
