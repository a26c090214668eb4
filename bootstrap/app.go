package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/httpapi"
	"github.com/gatehouse/gatehouse/application"
	"github.com/gatehouse/gatehouse/application/command"
)

// Version is the build's version, set with -ldflags "-X …bootstrap.Version=v1.2.3".
var Version = "dev"

// App is a wired Gatehouse.
type App struct {
	Handler  http.Handler
	Server   *httpapi.Server
	Database Database // the store, and the migrations this start applied
	app      *application.Application
}

func newApp(s *httpapi.Server, app *application.Application, db Database) (*App, error) {
	// Every algorithm has a signing key before the first request: the first
	// start creates them, later ones load them.
	if err := app.Commands.SigningKeys.Ensure(context.Background()); err != nil {
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	return &App{Handler: s, Server: s, Database: db, app: app}, nil
}

// purgeTimeout bounds each statement of the purge job.
const purgeTimeout = 5 * time.Minute

// PurgeEvery removes expired sessions, one-time links, service-key secrets
// and OAuth codes, grants and refresh tokens now and then every interval
// until ctx ends, logging what it removed. Its deletions may take up to
// purgeTimeout each, not the database timeout of requests: after a long
// outage a table can hold many expired rows.
func (a *App) PurgeEvery(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	ctx = gormstore.WithTimeout(ctx, purgeTimeout)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p, err := a.app.Commands.PurgeExpired.Handle(ctx)
		if err != nil && ctx.Err() == nil {
			logger.Warn("purge expired", slog.String("error", err.Error()))
		} else if p.Sessions+p.Links+p.KeySecrets+p.OAuth > 0 {
			logger.Info("purged expired", slog.Int("sessions", p.Sessions), slog.Int("links", p.Links), slog.Int("key_secrets", p.KeySecrets),
				slog.Int("oauth", p.OAuth))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func httpConfig(c Config) httpapi.Config {
	return httpapi.Config{BaseURL: c.BaseURL, HomeURL: c.HomeURL, Version: Version, MaxBodyBytes: c.MaxBodyBytes, SessionCookieName: c.SessionCookieName(),
		Secrets: c.Secrets, CookiePrefix: c.CookiePrefix, HostCookies: c.HostCookies, TrustedOrigins: c.TrustedOrigins, TrustedProxies: c.TrustedProxies, RateLimit: c.RateLimit,
		ServiceKeyLimit: c.ServiceKeyLimit, ServiceKeyWindow: c.ServiceKeyWindow}
}

func databaseURL(c Config) gormstore.DatabaseURL { return gormstore.DatabaseURL(c.DatabaseURL) }

func databaseTimeout(c Config) gormstore.Timeout { return gormstore.Timeout(c.DatabaseTimeout) }

// NewLogger returns the JSON logger every part of Gatehouse logs through.
func NewLogger(c Config, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: c.LogLevel}))
}

// FlushKeyUseEvery writes the service keys' last-use times every interval
// and once more when ctx ends, so no trusted request waits on that write.
func (a *App) FlushKeyUseEvery(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := a.app.Commands.ServiceKeys.FlushLastUsed(flushCtx); err != nil {
				logger.Warn("flush service-key use", slog.String("error", err.Error()))
			}
			return
		case <-t.C:
			if err := a.app.Commands.ServiceKeys.FlushLastUsed(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("flush service-key use", slog.String("error", err.Error()))
			}
		}
	}
}

// BootstrapAdmin creates or promotes a platform administrator from the
// command line (audited as the CLI).
func (a *App) BootstrapAdmin(ctx context.Context, cmd command.BootstrapAdmin) (*command.BootstrapAdminResult, error) {
	return a.app.Commands.Administration.BootstrapAdmin(ctx, cmd, a.app.Commands.ResetPassword)
}

// CreateServiceKey issues a service key from the command line (audited as the CLI).
func (a *App) CreateServiceKey(ctx context.Context, cmd command.CreateServiceKey) (*command.IssuedKey, error) {
	return a.app.Commands.ServiceKeys.Create(ctx, command.KeyRequest{Actor: command.CLIActor}, cmd)
}

// RegisterOAuthClient registers an OAuth client as the command line, as
// POST /api/admin/oauth-clients does for an administrator; the load run and
// the benchmarks use it.
func (a *App) RegisterOAuthClient(ctx context.Context, cmd command.RegisterOAuthClient) (command.IssuedOAuthClient, error) {
	return a.app.Commands.OAuthClients.Register(ctx, command.KeyRequest{Actor: command.CLIActor}, cmd)
}
