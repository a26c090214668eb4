package application

import (
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/query"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/application/webhook"
)

// Application is every use case, grouped as commands and queries.
type Application struct {
	Commands Commands
	Queries  Queries
	// Settings are the framework's rules, which the edge also needs (cookie
	// lifetimes, the base URL).
	Settings usecase.AuthSettings
}

// Commands are the use cases that change state.
type Commands struct {
	SignUp         *account.SignUpHandler
	SignIn         *account.SignInHandler
	SignOut        *account.SignOutHandler
	Authenticate   *account.AuthenticateHandler
	RevokeSessions *account.RevokeSessionsHandler
	UpdateUser     *account.UpdateUserHandler
	ChangePassword *account.ChangePasswordHandler
	TwoFactor      *mfa.TwoFactor
	Passkeys       *mfa.Passkeys
	ChangeEmail    *account.ChangeEmailHandler
	DeleteUser     *account.DeleteUserHandler
	ResetPassword  *account.ResetPasswordHandler
	VerifyEmail    *account.VerifyEmailHandler
	Throttle       *account.ThrottleHandler
	PurgeExpired   *account.PurgeExpiredHandler
	Organizations  *organization.Organizations
	Administration *admin.Administration
	// Factors is what operators see and do of users' sign-in factors.
	Factors *mfa.Factors
	// Memberships is what operators see of users' organizations.
	Memberships *admin.Memberships
	// ConsoleForms spends the admin console's single-use form tokens.
	ConsoleForms *admin.ConsoleForms
	ServiceKeys  *servicekey.ServiceKeys
	// Domains is the trusted API's domains, their administration and the
	// DNS verifier.
	Domains *hostdomain.Domains
	// SigningKeys signs and verifies tokens and publishes the key set.
	SigningKeys *oidc.SigningKeys
	// OAuthClients is the administrators' registry of OAuth clients.
	OAuthClients *oidc.OAuthClients
	// OAuthProvider is the OpenID Connect provider.
	OAuthProvider *oidc.OAuthProvider
	// Federation signs users in at upstream identity providers and links
	// their accounts; LinkedAccounts are those accounts and their tokens;
	// IdentityProviders is the administrators' registry of providers.
	Federation        *federation.SignIns
	LinkedAccounts    *federation.Accounts
	IdentityProviders *federation.Providers
	// Webhooks is the management of webhook endpoints; WebhookFanout and
	// WebhookSender deliver events to them.
	Webhooks      *webhook.Webhooks
	WebhookFanout *webhook.Fanout
	WebhookSender *webhook.Sender
}

// Queries are the use cases that only read.
type Queries struct {
	Readiness    *query.ReadinessHandler
	ListSessions *query.ListSessionsHandler
	AuditLog     *query.AuditLogHandler
	// Overview is the platform administrators' overview of the service.
	Overview *query.OverviewHandler
}
