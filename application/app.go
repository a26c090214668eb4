package application

import (
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/application/query"
)

// Application is every use case, grouped as commands and queries.
type Application struct {
	Commands Commands
	Queries  Queries
	// Settings are the framework's rules, which the edge also needs (cookie
	// lifetimes, the base URL).
	Settings command.AuthSettings
}

// Commands are the use cases that change state.
type Commands struct {
	SignUp         *command.SignUpHandler
	SignIn         *command.SignInHandler
	SignOut        *command.SignOutHandler
	Authenticate   *command.AuthenticateHandler
	RevokeSessions *command.RevokeSessionsHandler
	UpdateUser     *command.UpdateUserHandler
	ChangePassword *command.ChangePasswordHandler
	ChangeEmail    *command.ChangeEmailHandler
	DeleteUser     *command.DeleteUserHandler
	ResetPassword  *command.ResetPasswordHandler
	VerifyEmail    *command.VerifyEmailHandler
	Throttle       *command.ThrottleHandler
	PurgeExpired   *command.PurgeExpiredHandler
	Organizations  *command.Organizations
	Administration *command.Administration
	ServiceKeys    *command.ServiceKeys
	// Domains is the trusted API's domains, their administration and the
	// DNS verifier.
	Domains *command.Domains
	// SigningKeys signs and verifies tokens and publishes the key set.
	SigningKeys *command.SigningKeys
	// OAuthClients is the administrators' registry of OAuth clients.
	OAuthClients *command.OAuthClients
	// OAuthProvider is the OpenID Connect provider.
	OAuthProvider *command.OAuthProvider
}

// Queries are the use cases that only read.
type Queries struct {
	Readiness    *query.ReadinessHandler
	ListSessions *query.ListSessionsHandler
	AuditLog     *query.AuditLogHandler
}
