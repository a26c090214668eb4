package bootstrap

import (
	"log/slog"
	"net/http"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/httpapi"
)

// Version is the build's version, set with -ldflags "-X …bootstrap.Version=v1.2.3".
var Version = "dev"

// App is a wired Gatehouse.
type App struct {
	Handler http.Handler
	Server  *httpapi.Server
}

func newApp(s *httpapi.Server) *App { return &App{Handler: s, Server: s} }

func httpConfig(c Config) httpapi.Config {
	return httpapi.Config{BaseURL: c.BaseURL, Version: Version, MaxBodyBytes: c.MaxBodyBytes, SessionCookieName: c.SessionCookieName(),
		Secrets: c.Secrets, CookiePrefix: c.CookiePrefix, TrustedOrigins: c.TrustedOrigins, TrustedProxies: c.TrustedProxies, RateLimit: c.RateLimit}
}

func databaseURL(c Config) gormstore.DatabaseURL { return gormstore.DatabaseURL(c.DatabaseURL) }

// NewLogger returns the JSON logger every part of Gatehouse logs through.
func NewLogger(c Config, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: c.LogLevel}))
}
