package process

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/adapters/mailer/smtptest"
	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure the official better-auth JS client, pinned in test/clients, works
// against Gatehouse unmodified on SQLite and PostgreSQL: sign-up, e-mail
// verification, sign-in, sessions, profile, password change and reset, and
// sign-out, with the client's own error codes (test/clients/better-auth.test.mjs);
// organizations through organizationClient() (organization.test.mjs);
// platform administration through adminClient() (admin.test.mjs); and the
// OpenID Connect provider through openid-client, a strict client nobody here
// wrote (oidc.test.mjs).
func TestBetterAuthClient(t *testing.T) {
	if testing.Short() {
		t.Skip("Node client suite skipped in -short mode")
	}
	node := harness.MustTool(t, "node")
	harness.MustNpmCI(t, harness.MustTool(t, "npm"))
	for _, s := range []harness.Store{harness.StoreSQLite, harness.StorePostgres} {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			mail := smtptest.Start(t)
			mailbox := httptest.NewServer(mail.Handler())
			t.Cleanup(mailbox.Close)

			ln := mustListenLocal(t)
			base := "http://" + ln.Addr().String()
			// A fresh platform administrator's address per run, which
			// admin.test.mjs signs up and verifies.
			adminEmail := "admin." + strings.ToLower(rand.Text()[:12]) + "@clients.example.test"
			// oidc.test.mjs's own administrator, who registers its OAuth
			// clients (the suites run in parallel processes).
			oidcAdminEmail := "oidc-admin." + strings.ToLower(rand.Text()[:12]) + "@clients.example.test"
			cfg := harness.MustConfig(t, map[string]string{
				// Links in mails are built from the base URL, so it must be
				// where the suite reaches Gatehouse.
				"GATEHOUSE_BASE_URL":     base,
				"GATEHOUSE_SMTP_HOST":    mail.Host(),
				"GATEHOUSE_SMTP_PORT":    strconv.Itoa(mail.Port()),
				"GATEHOUSE_SMTP_TLS":     "none",
				"GATEHOUSE_MAIL_FROM":    "gatehouse@example.test",
				"GATEHOUSE_RATE_LIMIT":   "off", // the suite signs in more often than 3 per 10 s
				"GATEHOUSE_ADMIN_EMAILS": adminEmail + "," + oidcAdminEmail,
			})
			app := mustStartOn(t, s, cfg, ln)

			runNodeSuite(t, node, ".", s, []string{"GATEHOUSE_URL=" + app.URL, "MAILBOX_URL=" + mailbox.URL,
				"GATEHOUSE_TEST_ADMIN_EMAIL=" + adminEmail, "GATEHOUSE_TEST_OIDC_ADMIN_EMAIL=" + oidcAdminEmail},
				func() string { return "--- Gatehouse log ---\n" + app.Logs.String() })
		})
	}
}

// runNodeSuite runs node's test runner on target (a file, or "." for every
// suite) in test/clients with env added, within NodeTestTimeout, and returns
// its output. A failure fails the test with the output and logs(), which
// says what the servers logged.
func runNodeSuite(t *testing.T, node, target string, s harness.Store, env []string, logs func() string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), harness.NodeTestTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", target)
	cmd.Dir = harness.ClientsDir
	cmd.Env = append(append(os.Environ(), env...), "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		t.Fatalf("node --test %s on %s: %v\n--- suite output ---\n%s\n%s", target, s, err, out.String(), logs())
	}
	t.Logf("node --test %s on %s:\n%s", target, s, out.String())
	return out.String()
}

// mustListenLocal opens a listener on a free loopback port, so the URL is
// known before the configuration that names it is loaded.
func mustListenLocal(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() }) // in case the server never starts
	return ln
}

// mustStartOn is MustStart serving on ln, for tests whose configuration must
// name the server's own URL. Only the SQL stores are offered.
func mustStartOn(t *testing.T, s harness.Store, cfg bootstrap.Config, ln net.Listener) *harness.TestApp {
	t.Helper()
	switch s {
	case harness.StoreSQLite:
		cfg.Database.URL = string(gormtest.SQLiteURL(t))
	case harness.StorePostgres:
		cfg.Database.URL = string(harness.PostgresURL(t))
	default:
		t.Fatalf("mustStartOn: store %s is not SQL", s)
	}
	logs := &harness.SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	app, cleanup, err := bootstrap.InitializeSQL(t.Context(), cfg, logger)
	if err != nil {
		t.Fatalf("start on %s: %v", s, err)
	}
	srv := httptest.NewUnstartedServer(app.Handler)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	stopMail := app.StartMail(context.Background(), logger)
	t.Cleanup(func() { srv.Close(); stopMail(); cleanup() })
	return &harness.TestApp{Server: srv, App: app, Logs: logs}
}
