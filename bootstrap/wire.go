//go:build wireinject

package bootstrap

import (
	"context"
	"log/slog"

	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/adapters/blocklist"
	upstream "github.com/gatehouse/gatehouse/adapters/federation"
	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/httpapi"
	"github.com/gatehouse/gatehouse/adapters/httpapi/backend"
	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/passwordhash"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/health"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/application/webhook"
	"github.com/gatehouse/gatehouse/ports"
)

// applicationSet provides every use case. It lives here, not in application,
// because application may not import wire.
var applicationSet = wire.NewSet(
	health.NewReadinessHandler,
	registration,
	signIns,
	account.NewSessions,
	profile,
	passwords,
	account.NewPurger,
	mfa.NewTwoFactor,
	passkeys,
	organization.NewOrganizations,
	administration,
	mfa.NewFactors,
	wire.Bind(new(mfa.Operators), new(*admin.Administration)),
	wire.Bind(new(mfa.ResetLinks), new(*account.Passwords)),
	admin.NewConsoleForms,
	admin.NewMemberships,
	servicekey.NewServiceKeys,
	domains,
	oidc.NewSigningKeys,
	oidc.NewOAuthClients,
	oidc.NewOAuthProvider,
	admin.NewAuditLog,
	admin.NewDashboard,
	usecase.NewSignInCounter,
	federation.NewSignIns,
	federation.NewAccounts,
	federation.NewProviders,
	federation.NewRouter,
	webhook.NewWake,
	webhook.NewWebhooks,
	webhook.NewFanout,
	webhook.NewSender,
	wire.Struct(new(application.Account), "*"),
	wire.Struct(new(application.MFA), "*"),
	wire.Struct(new(application.Admin), "*"),
	wire.Struct(new(application.OIDC), "*"),
	wire.Struct(new(application.Federation), "*"),
	wire.Struct(new(application.Application), "*"),
)

var edgeSet = wire.NewSet(httpConfig, httpapi.NewServer, newApp, system.GeneratorSet,
	authSettings, passkeySettings, federationSettings, federationClient, wire.Bind(new(ports.FederationClient), new(*upstream.Client)), adminSettings, platformAdmins, organizationSettings, domainSettings, tokenSettings, newDNSResolver, newMailDelivery, newMailer, newJobs, blocklist.Set, rateLimiter,
	signingkeys.Set, signingkeys.SecretSealerSet, signingSecrets, newMetrics, observer, outboxStats, tracerProvider, webhookSettings, newWebhookPoster, webhookObserver)

// eventsSet provides what every change writes with: the events writer (on
// the store's unit of work and outbox, encoding with the trusted API's
// objects) and the auditor.
var eventsSet = wire.NewSet(usecase.NewEvents, usecase.NewAuditor, encoderSet)

// encoderSet encodes events as the trusted API presents their data.
var encoderSet = wire.NewSet(backend.NewEventEncoder, wire.Bind(new(ports.EventEncoder), new(*backend.EventEncoder)))

// sqlCachedSet and memoryCachedSet bind each store's users, sessions and
// unit of work through the session cache (session_cache.go).
var (
	sqlCachedSet    = wire.NewSet(sessionCache, sqlSessions, sqlUsers, sqlUnitOfWork)
	memoryCachedSet = wire.NewSet(sessionCache, memorySessions, memoryUsers, memoryUnitOfWork)
)

// fakeSet is system.ClockSet, passwordhash.Set and eventsSet with Fakes
// applied.
var fakeSet = wire.NewSet(fakeClock, fakeHasher, wire.Bind(new(ports.PasswordHasher), new(*passwordhash.Hasher)),
	faultyEvents, faultyAuditor, encoderSet)

// InitializeSQL wires Gatehouse on SQLite or PostgreSQL, chosen from the
// database URL; migrations run before it returns. The cleanup closes the pool.
func InitializeSQL(ctx context.Context, cfg Config, logger *slog.Logger) (*App, func(), error) {
	wire.Build(applicationSet, edgeSet, system.ClockSet, passwordhash.Set, eventsSet, databaseURL, databaseTimeout, openSQL, sqlDB, sqlDatabase, sqlPool, gormstore.Set, sqlCachedSet, sqlRateLimits)
	return nil, nil, nil
}

// InitializeMemory wires Gatehouse on in-memory adapters.
func InitializeMemory(cfg Config, logger *slog.Logger) (*App, func(), error) {
	wire.Build(applicationSet, edgeSet, system.ClockSet, passwordhash.Set, eventsSet, memoryDatabase, noPool, memory.Set, memoryCachedSet, memoryRateLimits)
	return nil, nil, nil
}

// InitializeSQLWithFakes is InitializeSQL with the parts fakes give: the
// black-box tests' clock, which they move instead of waiting, and the
// faults of the atomicity tests. Production never calls it.
func InitializeSQLWithFakes(ctx context.Context, cfg Config, logger *slog.Logger, fakes Fakes) (*App, func(), error) {
	wire.Build(applicationSet, edgeSet, fakeSet, databaseURL, databaseTimeout, openSQL, sqlDB, sqlDatabase, sqlPool, gormstore.Set, sqlCachedSet, sqlRateLimits)
	return nil, nil, nil
}

// InitializeMemoryWithFakes is InitializeMemory with the parts fakes give:
// the black-box tests' clock, and the audit log and the outbox of the
// changes wrapped by faults (the atomicity tests make their writes fail and
// check that nothing of the change is kept).
func InitializeMemoryWithFakes(cfg Config, logger *slog.Logger, fakes Fakes) (*App, func(), error) {
	wire.Build(applicationSet, edgeSet, fakeSet, memoryDatabase, noPool, memory.Set, memoryCachedSet, memoryRateLimits)
	return nil, nil, nil
}
