package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	upstream "github.com/gatehouse/gatehouse/adapters/federation"
	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/httpapi"
	"github.com/gatehouse/gatehouse/adapters/metrics"
	"github.com/gatehouse/gatehouse/application"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/application/webhook"
	"github.com/gatehouse/gatehouse/ports"
)

// Version is the build's version, set with -ldflags "-X …bootstrap.Version=v1.2.3".
var Version = "dev"

// App is a wired Gatehouse.
type App struct {
	Handler http.Handler
	// Metrics serves the Prometheus metrics; nil when GATEHOUSE_METRICS_ADDR
	// is unset. Serve it on its own listener, never with Handler.
	Metrics  http.Handler
	Server   *httpapi.Server
	Database Database // the store, and the migrations this start applied
	// RateLimits says where the rate limits are counted, for the start-up
	// lines: "counted in PostgreSQL, shared by …", "off (…)".
	RateLimits string
	// Outbox holds the messages the changes wrote, until relays deliver
	// them.
	Outbox   ports.Outbox
	app      *application.Application
	cfg      Config
	upstream *upstream.Client
	limits   *rateLimits
	mail     *mailDelivery
	leases   ports.Leases
	clock    ports.Clock
	replica  string // this process's name in the leases it holds
	counter  *usecase.SignInCounter
	// The workers of the job list: the purge and the webhooks' delivery.
	purger *account.Purger
	fanout *webhook.Fanout
	sender *webhook.Sender
}

func newApp(s *httpapi.Server, app *application.Application, db Database, cfg Config, fc *upstream.Client, m *metrics.Metrics, obs ports.Observer,
	counter *usecase.SignInCounter, limits *rateLimits, mail *mailDelivery, outbox ports.Outbox, leases ports.Leases, clock ports.Clock,
	purger *account.Purger, fanout *webhook.Fanout, sender *webhook.Sender) (*App, error) {
	a := &App{Handler: s, Server: s, Database: db, RateLimits: limits.store, Outbox: outbox, app: app, cfg: cfg, upstream: fc, limits: limits, mail: mail,
		leases: leases, clock: clock, replica: newReplicaID(), counter: counter, purger: purger, fanout: fanout, sender: sender}
	// Replicas starting together take turns: the first makes the keys and
	// applies the providers file, the next find them made.
	ctx := context.Background()
	release, err := waitLease(ctx, leases, clock, leaseStart, a.replica, startLeaseTTL)
	if err != nil {
		return nil, err
	}
	defer release()
	// Every algorithm has a signing key before the first request: the first
	// start creates them, later ones load them.
	if err := app.OIDC.SigningKeys.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	if err := applyProvidersFile(ctx, app.Federation.Providers, cfg.Federation); err != nil {
		return nil, err
	}
	// Sign-ins are counted by outcome, before the first request: in the
	// metrics, and in the durable counts every replica shares.
	app.Account.SignIns.Observe(obs).CountSignIns(counter)
	app.MFA.TwoFactor.Observe(obs).CountSignIns(counter)
	app.MFA.Passkeys.Observe(obs).CountSignIns(counter)
	app.Federation.SignIns.CountSignIns(counter)
	app.Admin.Dashboard.FlushFirst(counter)
	if m != nil {
		a.Metrics = m.Handler()
	}
	return a, nil
}

// purgeTimeout bounds each statement of the purge job.
const purgeTimeout = 5 * time.Minute

// The intervals of the jobs that have no setting.
const (
	purgeInterval   = time.Hour
	keyUseFlushTime = 5 * time.Second
	// signInCountFlushTime is how often the sign-in counts gathered in
	// memory are written (usecase.SignInCounter).
	signInCountFlushTime = 2 * time.Second
)

// jobs is the one list of the service's periodic jobs and delivery
// workers: the purges, the domain verifier, the writes batched in memory,
// the signing keys' reload, and the outbox's relays (mail, the webhook
// fan-out) with the webhook sender.
func (a *App) jobs(logger *slog.Logger) []job {
	return []job{
		a.purgeJob(purgeInterval, logger),
		a.domainJob(a.cfg.Domains.CheckInterval, logger),
		a.keyUseJob(keyUseFlushTime),
		job{name: "flush sign-in counts", every: signInCountFlushTime, atStop: true, run: a.counter.Flush},
		a.signingKeyJob(a.cfg.Tokens.SigningKeyReloadInterval),
		a.mailJob(),
		a.webhookFanoutJob(a.cfg.Webhooks.PollInterval, logger),
		a.webhookSendJob(a.cfg.Webhooks.PollInterval, logger),
		a.webhookPurgeJob(a.cfg.Webhooks.Retention),
	}
}

// StartJobs starts every job of the list (jobs) until the returned stop is
// called; stop ends them and waits for them (the service-key use and the
// sign-in counts are written once more as they stop), then gives up the
// leases this replica holds, so another takes over at once.
func (a *App) StartJobs(ctx context.Context, logger *slog.Logger) (stop func()) {
	list := a.jobs(logger)
	stopJobs := startJobs(ctx, logger, list...)
	return func() {
		stopJobs()
		release, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalTimeout)
		defer cancel()
		for _, j := range list {
			if j.lease != "" {
				_ = a.leases.Release(release, j.lease, a.replica)
			}
		}
	}
}

// mailJob delivers the mail in the outbox: at start (what an earlier run
// left), when this process appends a mail, and every mailPollInterval, one
// claim after another until none is left (Deliver logs each failure).
func (a *App) mailJob() job {
	return relay{name: "deliver mail", relay: a.mail.relay, every: mailPollInterval, wake: a.mail.wake, prepare: a.mail.mailer.Refresh}.job()
}

// StartMail runs the mail relay alone until the returned stop is called,
// for an app served without StartJobs (the tests).
func (a *App) StartMail(ctx context.Context, logger *slog.Logger) (stop func()) {
	return startJobs(ctx, logger, a.mailJob())
}

// purgeJob removes expired sessions, one-time links, service-key secrets,
// OAuth codes, grants and refresh tokens and second-factor challenges, and
// the ended rate-limit windows when the database counts them, at start and
// then every interval, logging what it removed. Its deletions may take up
// to purgeTimeout each, not the database timeout of requests: after a long
// outage a table can hold many expired rows. One replica at a time runs
// it, holding the purge lease for two intervals and renewing it at each
// run; when that replica stops, another takes over.
func (a *App) purgeJob(interval time.Duration, logger *slog.Logger) job {
	return job{name: "purge expired", every: interval, atStart: true, lease: leasePurge, run: a.singleton(leasePurge, 2*interval, func(ctx context.Context) error {
		ctx = gormstore.WithTimeout(ctx, purgeTimeout)
		p, err := a.purger.PurgeExpired(ctx)
		windows := 0
		if err == nil && a.limits.purge != nil {
			windows, err = a.limits.purge(ctx)
		}
		if err == nil && p.Sessions+p.Links+p.KeySecrets+p.OAuth+p.Challenges+p.SignInCounts+p.FormTokens+windows > 0 {
			logger.Info("purged expired", slog.Int("sessions", p.Sessions), slog.Int("links", p.Links), slog.Int("key_secrets", p.KeySecrets),
				slog.Int("oauth", p.OAuth), slog.Int("mfa_challenges", p.Challenges), slog.Int("sign_in_counts", p.SignInCounts),
				slog.Int("form_tokens", p.FormTokens), slog.Int("rate_limit_windows", windows))
		}
		return err
	})}
}

// keyUseJob writes the service keys' last-use times every interval and once
// more at stop, so no trusted request waits on that write.
func (a *App) keyUseJob(interval time.Duration) job {
	return job{name: "flush service-key use", every: interval, atStop: true, run: a.app.ServiceKeys.FlushLastUsed}
}

// signingKeyJob reloads the signing keys every interval, deleting those
// past their publication window, so that a rotation made on another
// instance (or from the command line) is followed here.
func (a *App) signingKeyJob(interval time.Duration) job {
	return job{name: "refresh signing keys", every: interval, run: a.app.OIDC.SigningKeys.Refresh}
}

// FlushKeyUseEvery runs the service-key use job alone until ctx ends, and
// writes once more then.
func (a *App) FlushKeyUseEvery(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	runJob(ctx, a.keyUseJob(interval), logger)
}

// RefreshSigningKeysEvery runs the signing-key reload job alone until ctx ends.
func (a *App) RefreshSigningKeysEvery(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	runJob(ctx, a.signingKeyJob(interval), logger)
}

// BootstrapAdmin creates or promotes a platform administrator from the
// command line (audited as the CLI).
func (a *App) BootstrapAdmin(ctx context.Context, cmd admin.BootstrapAdmin) (*admin.BootstrapAdminResult, error) {
	return a.app.Admin.Administration.BootstrapAdmin(ctx, cmd, a.app.Account.Passwords)
}

// CreateServiceKey issues a service key from the command line (audited as the CLI).
func (a *App) CreateServiceKey(ctx context.Context, cmd servicekey.CreateServiceKey) (*servicekey.IssuedKey, error) {
	return a.app.ServiceKeys.Create(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, cmd)
}

// RegisterOAuthClient registers an OAuth client as the command line, as
// POST /api/admin/oauth-clients does for an administrator; the load run and
// the benchmarks use it.
func (a *App) RegisterOAuthClient(ctx context.Context, cmd oidc.RegisterOAuthClient) (oidc.IssuedOAuthClient, error) {
	return a.app.OIDC.OAuthClients.Register(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, cmd)
}
