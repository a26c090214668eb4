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
  version   print the version and exit
  help      print this help

Every flag has an environment variable; flags win. Run "gatehouse serve -h" for the list.
`

// run is the whole program. main only supplies the process's context,
// arguments, environment and standard output, so tests can call run directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	cmd, rest := "serve", args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
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
	case "version":
		_, err := fmt.Fprintln(stdout, "gatehouse", bootstrap.Version)
		return err
	case "help", "-h", "--help":
		_, err := io.WriteString(stdout, usage)
		return err
	}
	return fmt.Errorf("unknown command %q (try: gatehouse help)", cmd)
}

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

func serve(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, done, err := loadConfig("gatehouse serve", args, getenv, stdout)
	if done || err != nil {
		return err
	}
	if err := bootstrap.EnsureSecrets(&cfg); err != nil {
		return err
	}
	logger := bootstrap.NewLogger(cfg, stdout)
	app, cleanup, err := bootstrap.InitializeSQL(ctx, cfg, logger)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer cleanup()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return &bootstrap.ConfigError{Var: "GATEHOUSE_ADDR", Msg: err.Error()}
	}
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
	fmt.Fprintf(stdout, "Gatehouse %s serving %s (listening on http://%s, %s, secret from %s)\n",
		bootstrap.Version, cfg.BaseURL, ln.Addr(), cfg.Env, cfg.SecretSource)
	fmt.Fprintf(stdout, "API explorer: %s/api/docs\n", cfg.BaseURL)

	purgeCtx, stopPurge := context.WithCancel(ctx)
	defer stopPurge()
	go app.PurgeEvery(purgeCtx, time.Hour, logger)
	verifying := make(chan struct{})
	go func() {
		app.VerifyDomainsEvery(purgeCtx, cfg.DomainCheckInterval, logger)
		close(verifying)
	}()
	flushed := make(chan struct{})
	go func() {
		app.FlushKeyUseEvery(purgeCtx, 5*time.Second, logger)
		close(flushed)
	}()
	refreshed := make(chan struct{})
	go func() {
		app.RefreshSigningKeysEvery(purgeCtx, cfg.SigningKeyReloadInterval, logger)
		close(refreshed)
	}()
	defer func() { stopPurge(); <-flushed; <-verifying; <-refreshed }()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish, then close the database.
	logger.Info("shutting down", slog.Int64("timeout_ms", cfg.ShutdownTimeout.Milliseconds()))
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("stopped")
	return nil
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, done, err := loadConfig("gatehouse migrate", args, getenv, stdout)
	if done || err != nil {
		return err
	}
	db, err := gormstore.Connect(gormstore.DatabaseURL(cfg.DatabaseURL), gormstore.Timeout(cfg.DatabaseTimeout))
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
	fmt.Fprintf(stdout, "database at version %d (%d migration(s) applied)\n", version, len(applied))
	return nil
}
