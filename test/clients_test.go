package test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"maps"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/adapters/mailer/smtptest"
	"github.com/gatehouse/gatehouse/bootstrap"
)

// Bounds that only turn a hang into a failure.
const (
	npmCITimeout    = 5 * time.Minute
	nodeTestTimeout = 3 * time.Minute
)

// clientsDir holds the Node suite, relative to this package.
const clientsDir = "clients"

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
	node := mustTool(t, "node")
	mustNpmCI(t, mustTool(t, "npm"))
	for _, s := range []store{storeSQLite, storePostgres} {
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
			cfg := mustConfig(t, map[string]string{
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
// suite) in test/clients with env added, within nodeTestTimeout, and returns
// its output. A failure fails the test with the output and logs(), which
// says what the servers logged.
func runNodeSuite(t *testing.T, node, target string, s store, env []string, logs func() string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), nodeTestTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", target)
	cmd.Dir = clientsDir
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

// mustTool returns the path of a program the Node suite needs. Without it the
// test skips, except under CI, where the suite may not be skipped.
func mustTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s must be installed in CI: the better-auth client suite may not be skipped", name)
		}
		t.Skipf("%s is not on PATH: the better-auth client suite needs Node.js 20 and npm", name)
	}
	return p
}

// mustNpmCI installs test/clients' locked packages unless every dependency
// package.json pins is installed at its pinned version ("make clients" does
// the same by hand). A checkout whose pins changed since its last install
// (a new test's library, an upgrade) is installed again.
func mustNpmCI(t *testing.T, npm string) {
	t.Helper()
	if npmInstalled(t) {
		return
	}
	ctx, cancel := context.WithTimeout(t.Context(), npmCITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = clientsDir
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in test/%s: %v\n%s", clientsDir, err, out)
	}
	if !npmInstalled(t) {
		t.Fatalf("npm ci in test/%s left a pinned dependency missing or at another version", clientsDir)
	}
}

// npmInstalled reports whether every dependency of test/clients'
// package.json, development ones included (npm ci installs them, and suites
// import them), is in node_modules at exactly its pinned version.
func npmInstalled(t *testing.T) bool {
	t.Helper()
	var manifest struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	raw, err := os.ReadFile(filepath.Join(clientsDir, "package.json"))
	if err != nil {
		t.Fatalf("read test/%s/package.json: %v", clientsDir, err)
	}
	if err := json.Unmarshal(raw, &manifest); err != nil || len(manifest.Dependencies) == 0 {
		t.Fatalf("test/%s/package.json: no dependencies (%v)", clientsDir, err)
	}
	pins := maps.Clone(manifest.Dependencies)
	maps.Copy(pins, manifest.DevDependencies)
	for name, pinned := range pins {
		var installed struct {
			Version string `json:"version"`
		}
		raw, err := os.ReadFile(filepath.Join(clientsDir, "node_modules", name, "package.json")) // #nosec G304 -- names from our own package.json
		if err != nil || json.Unmarshal(raw, &installed) != nil || installed.Version != pinned {
			return false
		}
	}
	return true
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

// mustStartOn is mustStart serving on ln, for tests whose configuration must
// name the server's own URL. Only the SQL stores are offered.
func mustStartOn(t *testing.T, s store, cfg bootstrap.Config, ln net.Listener) *testApp {
	t.Helper()
	switch s {
	case storeSQLite:
		cfg.Database.URL = string(gormtest.SQLiteURL(t))
	case storePostgres:
		cfg.Database.URL = string(postgresURL(t))
	default:
		t.Fatalf("mustStartOn: store %s is not SQL", s)
	}
	logs := &syncBuffer{}
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
	return &testApp{Server: srv, App: app, Logs: logs}
}
