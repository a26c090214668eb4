package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/bootstrap"
)

const usage = `Usage: gatehouse [command] [flags]

Commands:
  serve     run the service (the default)
  migrate   apply pending database migrations and exit
  admin create --email E --name N [--password-stdin]
            create (or promote) a platform administrator
  service-key create --name N --scopes S[,S…] [--expires-in D]
            issue a service key and print its secret once
  signing-keys rotate [--alg EdDSA|RS256] [--now]
            publish new token-signing keys, signing two reload intervals
            later (--now: at once, for a compromised key)
  signing-keys list
            list the published token-signing keys
  identity-provider put --id ID [--preset P --issuer URL --client-id C --client-secret-stdin …]
            create or change an upstream identity provider (sign-in with Google, GitHub, …)
  identity-provider list | delete --id ID
            list the identity providers, or delete one
  backup --to PATH
            copy the SQLite database, while the service runs, to a new file
            (PostgreSQL: names pg_dump)
  restore --from PATH
            put a SQLite backup in place of the database, the service stopped;
            the current one is kept aside
  healthcheck [--addr A] [--url U]
            exit 0 if the local service answers its liveness route
            (for a container's HEALTHCHECK)
  version   print the version and exit
  help      print this help (also -h, --help)

Every flag has an environment variable; flags win. Run "gatehouse serve -h" for the list.
`

// run is the whole program. main only supplies the process's context,
// arguments, environment and standard output, so tests can call run directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	cmd, rest := "serve", args[1:]
	switch {
	case len(rest) > 0 && isHelp(rest[0]):
		// "gatehouse -h" asks about gatehouse, not about serve's flags.
		cmd = "help"
	case len(rest) > 0 && !strings.HasPrefix(rest[0], "-"):
		cmd, rest = rest[0], rest[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, rest, getenv, stdout)
	case "migrate":
		return migrate(ctx, rest, getenv, stdout)
	case "admin":
		return admin(ctx, rest, getenv, stdin, stdout)
	case "service-key":
		return serviceKey(ctx, rest, getenv, stdout)
	case "signing-keys":
		return signingKeys(ctx, rest, getenv, stdout)
	case "identity-provider":
		return identityProvider(ctx, rest, getenv, stdin, stdout)
	case "backup":
		return backup(ctx, rest, getenv, stdout)
	case "restore":
		return restore(ctx, rest, getenv, stdout)
	case "healthcheck":
		return healthcheck(ctx, rest, getenv, stdout)
	case "version":
		_, err := fmt.Fprintln(stdout, "gatehouse", bootstrap.Version)
		return err
	case "help":
		_, err := io.WriteString(stdout, usage)
		return err
	}
	return fmt.Errorf("unknown command %q (try: gatehouse help)", cmd)
}

// isHelp reports whether arg asks for help, as the flag package reads it.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}

// asksHelp reports whether a subcommand's remaining flags (its own taken)
// ask for help: "gatehouse admin create --help" prints the command's usage
// and succeeds, instead of asking for the flags it lacks.
func asksHelp(args []string) bool { return slices.ContainsFunc(args, isHelp) }

// loadConfig reads the configuration. When the flags asked for help, it prints
// the help and reports done, and the command has nothing more to do.
func loadConfig(name string, args []string, getenv func(string) string, stdout io.Writer) (cfg bootstrap.Config, done bool, err error) {
	var help strings.Builder
	cfg, err = bootstrap.LoadConfig(name, args, getenv, &help)
	if errors.Is(err, flag.ErrHelp) {
		_, err = io.WriteString(stdout, help.String())
		return cfg, true, err
	}
	return cfg, false, err
}

// prepareFiles creates what start-up keeps on disk: the data directory when
// it is used, then the development secret. It returns the line to print if
// it created the directory, or "".
func prepareFiles(cfg *bootstrap.Config) (string, error) {
	created, err := bootstrap.EnsureDataDir(*cfg)
	if err != nil {
		return "", err
	}
	note := ""
	if created {
		note = fmt.Sprintf("Created the data directory %s (mode 0700)\n", cfg.DataDir)
	}
	return note, bootstrap.EnsureSecrets(cfg)
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, done, err := loadConfig("gatehouse serve", args, getenv, stdout)
	if done || err != nil {
		return err
	}
	// Listen first: with port 0 the kernel picks the port, and a base URL
	// that follows the address must follow the port it picked.
	ln, err := net.Listen("tcp", cfg.HTTP.Addr)
	if err != nil {
		return cfg.AddrError(err.Error())
	}
	defer ln.Close()
	if _, port, _ := net.SplitHostPort(cfg.HTTP.Addr); cfg.HTTP.BaseURLFollowsAddr && port == "0" {
		base, err := bootstrap.DefaultBaseURL(ln.Addr().String())
		if err != nil {
			return err
		}
		if cfg, _, err = loadConfig("gatehouse serve", args, bootstrap.FollowingBaseURL(getenv, base), io.Discard); err != nil {
			return err
		}
	}
	createdDir, err := prepareFiles(&cfg)
	if err != nil {
		return err
	}
	logger := bootstrap.NewLogger(cfg, stdout)
	app, cleanup, err := bootstrap.InitializeSQL(ctx, cfg, logger)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer cleanup()

	srv := &http.Server{
		Handler:           app.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// Well above the edge's own caps (httpapi.MaxRequestTargetBytes and
		// MaxHeaderBytes), so requests up to 64 KiB are refused in the
		// contract's shape (414, 431); net/http answers a bare 431 beyond.
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	metricsSrv, metricsLn, err := metricsServer(cfg, app, logger)
	if err != nil {
		return err
	}
	if metricsLn != nil {
		defer metricsLn.Close()
	}
	fmt.Fprintf(stdout, "Gatehouse %s serving %s (listening on http://%s, %s, secret from %s)\n",
		bootstrap.Version, cfg.HTTP.BaseURL, ln.Addr(), cfg.Env, cfg.SecretSource)
	fmt.Fprint(stdout, createdDir)
	fmt.Fprintf(stdout, "Database: %s at migration version %d (%d applied by this start)\n",
		app.Database.Store, app.Database.Version, len(app.Database.Applied))
	fmt.Fprintf(stdout, "Rate limits: %s\n", app.RateLimits)
	if metricsLn != nil {
		fmt.Fprintf(stdout, "Metrics: http://%s/metrics (a separate listener)\n", metricsLn.Addr())
	}
	fmt.Fprintf(stdout, "API explorer: %s/api/docs\n", cfg.HTTP.BaseURL)

	stopJobs := app.StartJobs(ctx, logger)
	defer stopJobs()

	served := make(chan error, 2)
	go func() { served <- srv.Serve(ln) }()
	if metricsSrv != nil {
		go func() { served <- metricsSrv.Serve(metricsLn) }()
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish, then close the database.
	logger.Info("shutting down", slog.Int64("timeout_ms", cfg.HTTP.ShutdownTimeout.Milliseconds()))
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.HTTP.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if metricsSrv != nil {
		// Scraped until the requests are done, then stopped too.
		if err := metricsSrv.Shutdown(shutdownCtx); err != nil {
			return fmt.Errorf("shutdown metrics: %w", err)
		}
	}
	logger.Info("stopped")
	return nil
}

// metricsServer listens on GATEHOUSE_METRICS_ADDR and returns the server of
// /metrics there, or nils when metrics are off. It serves nothing else, and
// the public listener never serves the metrics.
func metricsServer(cfg bootstrap.Config, app *bootstrap.App, logger *slog.Logger) (*http.Server, net.Listener, error) {
	if cfg.Observability.MetricsAddr == "" || app.Metrics == nil {
		return nil, nil, nil
	}
	ln, err := net.Listen("tcp", cfg.Observability.MetricsAddr)
	if err != nil {
		return nil, nil, cfg.MetricsAddrError(err.Error())
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", app.Metrics)
	return &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}, ln, nil
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, done, err := loadConfig("gatehouse migrate", args, getenv, stdout)
	if done || err != nil {
		return err
	}
	if created, err := bootstrap.EnsureDataDir(cfg); err != nil {
		return err
	} else if created {
		fmt.Fprintf(stdout, "Created the data directory %s (mode 0700)\n", cfg.DataDir)
	}
	db, err := gormstore.Connect(gormstore.DatabaseURL(cfg.Database.URL), gormstore.Timeout(cfg.Database.Timeout))
	if err != nil {
		return err
	}
	if sqlDB, err := db.DB(); err == nil {
		defer sqlDB.Close()
	}
	applied, err := gormstore.Migrate(ctx, db)
	if err != nil {
		return err
	}
	version, err := gormstore.MigrationVersion(ctx, db)
	if err != nil {
		return err
	}
	for _, name := range applied {
		fmt.Fprintln(stdout, "applied", name)
	}
	fmt.Fprintf(stdout, "%s at version %d (%d migration(s) applied)\n", gormstore.Describe(gormstore.DatabaseURL(cfg.Database.URL)), version, len(applied))
	return nil
}
