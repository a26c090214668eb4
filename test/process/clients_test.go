package process

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

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
			// A fresh platform administrator's address per run, which
			// admin.test.mjs signs up and verifies.
			adminEmail := "admin." + strings.ToLower(rand.Text()[:12]) + "@clients.example.test"
			// oidc.test.mjs's own administrator, who registers its OAuth
			// clients (the suites run in parallel processes).
			oidcAdminEmail := "oidc-admin." + strings.ToLower(rand.Text()[:12]) + "@clients.example.test"
			// Links in mails are built from the base URL, which is the
			// application's own address (MustStart).
			app := harness.MustStart(t, s, map[string]string{
				"GATEHOUSE_MAIL_FROM":    "gatehouse@example.test",
				"GATEHOUSE_RATE_LIMIT":   "off", // the suite signs in more often than 3 per 10 s
				"GATEHOUSE_ADMIN_EMAILS": adminEmail + "," + oidcAdminEmail,
			})
			mailbox := httptest.NewServer(app.Mail.Handler())
			t.Cleanup(mailbox.Close)

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
