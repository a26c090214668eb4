package application

import (
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/health"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/application/webhook"
)

// Application is every use case the edge serves, one field per bounded
// context: a context's service, or its services by role. The workers that
// bootstrap's job list runs (account.Purger, webhook.Fanout and
// webhook.Sender, outbox.Relay) are not here: bootstrap holds them.
type Application struct {
	Account       Account
	MFA           MFA
	Organizations *organization.Organizations
	Admin         Admin
	ServiceKeys   *servicekey.ServiceKeys
	// Domains is the trusted API's domains, their administration and the
	// DNS verifier.
	Domains    *hostdomain.Domains
	OIDC       OIDC
	Federation Federation
	// Webhooks is the management of webhook endpoints.
	Webhooks *webhook.Webhooks
	// Readiness is the health context's one use case.
	Readiness *health.ReadinessHandler
	// Settings are the framework's rules, which the edge also needs (cookie
	// lifetimes, the base URL).
	Settings usecase.AuthSettings
}

// Account is the account context's services.
type Account struct {
	Registration *account.Registration
	SignIns      *account.SignIns
	Sessions     *account.Sessions
	Profile      *account.Profile
	Passwords    *account.Passwords
}

// MFA is the second factors' services.
type MFA struct {
	TwoFactor *mfa.TwoFactor
	Passkeys  *mfa.Passkeys
	// Factors is what operators see and do of users' sign-in factors.
	Factors *mfa.Factors
}

// Admin is the platform administrators' services.
type Admin struct {
	Administration *admin.Administration
	// Memberships is what operators see of users' organizations.
	Memberships *admin.Memberships
	// ConsoleForms spends the admin console's single-use form tokens.
	ConsoleForms *admin.ConsoleForms
	AuditLog     *admin.AuditLog
	// Dashboard is the administrators' overview of the service.
	Dashboard *admin.Dashboard
}

// OIDC is the OpenID provider's services.
type OIDC struct {
	// SigningKeys signs and verifies tokens and publishes the key set.
	SigningKeys *oidc.SigningKeys
	// OAuthClients is the administrators' registry of OAuth clients.
	OAuthClients *oidc.OAuthClients
	// OAuthProvider is the OpenID Connect provider.
	OAuthProvider *oidc.OAuthProvider
}

// Federation is the sign-ins at upstream identity providers: SignIns
// signs users in and links their accounts; Accounts are those accounts and
// their tokens; Providers is the administrators' registry of providers.
type Federation struct {
	SignIns   *federation.SignIns
	Accounts  *federation.Accounts
	Providers *federation.Providers
}
