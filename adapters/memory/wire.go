package memory

import (
	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/ports"
)

// Set provides every storage port from one shared in-memory DB. An injector
// includes exactly one of memory.Set and gormstore.Set.
var Set = wire.NewSet(
	NewDB,
	// The users, the sessions and the unit of work are bound to their ports
	// by bootstrap, through the session cache that their writes keep current.
	NewUserRepository,
	NewSessionRepository,
	NewCredentialRepository, wire.Bind(new(ports.CredentialRepository), new(*CredentialRepository)),
	NewVerificationRepository, wire.Bind(new(ports.VerificationRepository), new(*VerificationRepository)),
	NewOrganizationRepository, wire.Bind(new(ports.OrganizationRepository), new(*OrganizationRepository)),
	NewServiceKeyRepository, wire.Bind(new(ports.ServiceKeyRepository), new(*ServiceKeyRepository)),
	NewAuditLog, wire.Bind(new(ports.AuditLog), new(*AuditLog)),
	NewDomainRepository, wire.Bind(new(ports.DomainRepository), new(*DomainRepository)),
	NewSigningKeyRepository, wire.Bind(new(ports.SigningKeyRepository), new(*SigningKeyRepository)),
	NewOAuthClientRepository, wire.Bind(new(ports.OAuthClientRepository), new(*OAuthClientRepository)),
	NewOAuthGrantRepository, wire.Bind(new(ports.OAuthGrantRepository), new(*OAuthGrantRepository)),
	NewTwoFactorRepository, wire.Bind(new(ports.TwoFactorRepository), new(*TwoFactorRepository)),
	NewMFAChallengeRepository, wire.Bind(new(ports.MFAChallengeRepository), new(*MFAChallengeRepository)),
	NewPasskeyRepository, wire.Bind(new(ports.PasskeyRepository), new(*PasskeyRepository)),
	NewWebAuthnChallengeRepository, wire.Bind(new(ports.WebAuthnChallengeRepository), new(*WebAuthnChallengeRepository)),
	NewIdentityProviderRepository, wire.Bind(new(ports.IdentityProviderRepository), new(*IdentityProviderRepository)),
	NewLinkedAccountRepository, wire.Bind(new(ports.LinkedAccountRepository), new(*LinkedAccountRepository)),
	NewFederationStateRepository, wire.Bind(new(ports.FederationStateRepository), new(*FederationStateRepository)),
	NewUnitOfWork,
	NewOutbox, wire.Bind(new(ports.Outbox), new(*Outbox)),
	NewHealthChecker, wire.Bind(new(ports.HealthChecker), new(*HealthChecker)),
	NewWebhookEndpointRepository, wire.Bind(new(ports.WebhookEndpointRepository), new(*WebhookEndpointRepository)),
	NewWebhookQueue, wire.Bind(new(ports.WebhookQueue), new(*WebhookQueue)), wire.Bind(new(ports.WebhookLog), new(*WebhookQueue)),
	NewLeases, wire.Bind(new(ports.Leases), new(*Leases)),
	NewSignInStats, wire.Bind(new(ports.SignInStats), new(*SignInStats)),
	NewSpentTokens, wire.Bind(new(ports.SpentTokens), new(*SpentTokens)),
)
