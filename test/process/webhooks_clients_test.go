package process

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/mailer/smtptest"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure Gatehouse's webhooks verify with the standardwebhooks npm package,
// the Standard Webhooks reference library, on a receiver on loopback
// (test/clients/webhooks.test.mjs): retries after 500s keep the webhook-id
// and are signed with current timestamps, which the library's tolerance
// accepts while it refuses a stale one; a rotation signs with both secrets;
// one message and everything since a time replay; an endpoint failing past
// the threshold is disabled and the administrators get a mail; private
// targets are refused at registration and, through a name resolving to
// loopback, when connecting. Instance A allows private targets (the
// receiver is on loopback) and retries every 1.5 s; instance B does not.
// The suite waits for those retries and the disabling for real (seconds):
// it runs in Node, a process of its own, which cannot move the apps'
// clocks.
func TestWebhookClients(t *testing.T) {
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
			adminEmail := "hooks-admin." + strings.ToLower(rand.Text()[:12]) + "@clients.example.test"
			common := map[string]string{
				"GATEHOUSE_RATE_LIMIT":            "off",
				"GATEHOUSE_WEBHOOK_POLL_INTERVAL": "100ms",
				"GATEHOUSE_SMTP_HOST":             mail.Host(),
				"GATEHOUSE_SMTP_PORT":             strconv.Itoa(mail.Port()),
				"GATEHOUSE_SMTP_TLS":              "none",
				"GATEHOUSE_MAIL_FROM":             "gatehouse@example.test",
				"GATEHOUSE_ADMIN_EMAILS":          adminEmail,
			}
			a := startWithJobs(t, s, harness.Env(common, map[string]string{
				"GATEHOUSE_WEBHOOK_ALLOW_PRIVATE":  "true",
				"GATEHOUSE_WEBHOOK_RETRY_SCHEDULE": "1500ms,1500ms,1500ms,1500ms",
				"GATEHOUSE_WEBHOOK_DISABLE_AFTER":  "4s",
			}))
			b := startWithJobs(t, s, common)

			out := runNodeSuite(t, node, "webhooks.test.mjs", s, []string{"WEBHOOK_A_URL=" + a.URL,
				"WEBHOOK_A_KEY=" + mustAllScopesKey(t, a), "WEBHOOK_B_URL=" + b.URL, "WEBHOOK_B_KEY=" + mustAllScopesKey(t, b),
				"MAILBOX_URL=" + mailbox.URL, "WEBHOOK_ADMIN_EMAIL=" + adminEmail},
				func() string {
					return "--- Gatehouse A log ---\n" + a.Logs.String() + "\n--- Gatehouse B log ---\n" + b.Logs.String()
				})
			if !regexp.MustCompile(`(?m)\bpass 6$`).MatchString(out) {
				t.Fatalf("the suite did not run its 6 tests:\n%s", out)
			}
		})
	}
}

// startWithJobs starts Gatehouse on s with env and runs its background
// jobs (the webhook fan-out and sender among them) until the test ends.
func startWithJobs(t *testing.T, s harness.Store, env map[string]string) *harness.App {
	t.Helper()
	app := harness.MustStart(t, s, env)
	logger := slog.New(slog.NewJSONHandler(app.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	stop := app.App.StartJobs(context.WithoutCancel(t.Context()), logger)
	t.Cleanup(stop)
	return app
}

// mustAllScopesKey issues a service key with every scope.
func mustAllScopesKey(t *testing.T, app *harness.App) string {
	t.Helper()
	k, err := app.App.CreateServiceKey(t.Context(), servicekey.CreateServiceKey{Name: "webhooks", Scopes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	return k.Secret
}
