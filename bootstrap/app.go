package bootstrap

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/httpapi"
	"github.com/gatehouse/gatehouse/application"
)

// Version is the build's version, set with -ldflags "-X …bootstrap.Version=v1.2.3".
var Version = "dev"

// App is a wired Gatehouse.
type App struct {
	Handler http.Handler
	Server  *httpapi.Server
	app     *application.Application
}

func newApp(s *httpapi.Server, app *application.Application) *App {
	return &App{Handler: s, Server: s, app: app}
}

// PurgeEvery removes expired sessions and one-time links now and then every
// interval until ctx ends, logging what it removed.
func (a *App) PurgeEvery(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		sessions, links, err := a.app.Commands.PurgeExpired.Handle(ctx)
		if err != nil && ctx.Err() == nil {
			logger.Warn("purge expired", slog.String("error", err.Error()))
		} else if sessions+links > 0 {
			logger.Info("purged expired", slog.Int("sessions", sessions), slog.Int("links", links))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func httpConfig(c Config) httpapi.Config {
	return httpapi.Config{BaseURL: c.BaseURL, Version: Version, MaxBodyBytes: c.MaxBodyBytes, SessionCookieName: c.SessionCookieName(),
		Secrets: c.Secrets, CookiePrefix: c.CookiePrefix, TrustedOrigins: c.TrustedOrigins, TrustedProxies: c.TrustedProxies, RateLimit: c.RateLimit}
}

func databaseURL(c Config) gormstore.DatabaseURL { return gormstore.DatabaseURL(c.DatabaseURL) }

// NewLogger returns the JSON logger every part of Gatehouse logs through.
func NewLogger(c Config, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: c.LogLevel}))
}
