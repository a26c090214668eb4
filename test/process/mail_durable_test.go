package process

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/adapters/mailer/smtptest"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure mail outlives the process and the SMTP server's outage: with the
// SMTP server down, a password reset is requested and the process stopped
// right after (SIGTERM), or killed (SIGKILL) once it has tried to send the
// mail; a new process on the same database then delivers it when the server
// comes back, exactly once.
func TestProcess_mail_survives_a_restart_while_smtp_is_down(t *testing.T) {
	t.Parallel()
	for _, stop := range []string{"sigterm", "sigkill"} {
		for _, s := range []harness.Store{harness.StoreSQLite, harness.StorePostgres} {
			t.Run("stop="+stop+"/store="+string(s), func(t *testing.T) {
				t.Parallel()
				testMailSurvivesRestart(t, s, stop)
			})
		}
	}
}

func testMailSurvivesRestart(t *testing.T, s harness.Store, stop string) {
	// A port for the SMTP server, down until the end.
	down := smtptest.Start(t)
	smtpAddr := net.JoinHostPort(down.Host(), strconv.Itoa(down.Port()))
	down.Close()

	dbURL := string(gormtest.SQLiteURL(t))
	if s == harness.StorePostgres {
		dbURL = string(harness.PostgresURL(t))
	}
	env := []string{
		"GATEHOUSE_DATA_DIR=" + t.TempDir(),
		"GATEHOUSE_DATABASE_URL=" + dbURL,
		"GATEHOUSE_SECRET=a-process-test-secret-of-at-least-32-bytes",
		"GATEHOUSE_RATE_LIMIT=off",
		"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION=false",
		"GATEHOUSE_SMTP_HOST=127.0.0.1",
		"GATEHOUSE_SMTP_PORT=" + strconv.Itoa(down.Port()),
		"GATEHOUSE_SMTP_TLS=none",
		"GATEHOUSE_MAIL_FROM=Gatehouse <no-reply@example.com>",
	}
	const email = "ada@example.com"

	first := harness.StartProcess(t, env...)
	mustProcessPost(t, first, "/api/auth/sign-up/email", map[string]string{"name": "Ada", "email": email, "password": "correct horse battery"})
	mustProcessPost(t, first, "/api/auth/request-password-reset", map[string]string{"email": email, "redirectTo": "/reset"})
	switch stop {
	case "sigterm":
		// At once: the reset's lookup, queued after the answer, runs as the
		// process stops, and leaves its mail in the outbox.
		if err := first.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := first.Wait(t); err != nil {
			t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, first.Stderr)
		}
	case "sigkill":
		// Once the mail is in the outbox and its first attempt failed: a
		// crash, not a stop, so nothing runs after the signal.
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(first.Stdout.String(), `"mail delivery failed; retrying","id"`) ||
			!strings.Contains(first.Stdout.String(), `"kind":"reset-password"`) {
			if time.Now().After(deadline) {
				t.Fatalf("no failed attempt to send the reset mail was logged:\n%s", first.Stdout)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := first.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = first.Wait(t)
	}
	if strings.Contains(first.Stdout.String(), "mail not delivered") {
		t.Fatalf("the first process gave up on a mail:\n%s", first.Stdout)
	}

	second := harness.StartProcess(t, env...)
	up := smtptest.StartAt(t, smtpAddr)
	up.WaitFor(t, email, "Reset your", 90*time.Second)
	// Let the second process stop on its own terms: a mail sent twice
	// would have gone out by then.
	if err := second.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.Wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, second.Stderr)
	}
	var resets int
	for _, m := range up.Messages() {
		if m.IsTo(email) && strings.Contains(m.Subject, "Reset your") {
			resets++
		}
	}
	if resets != 1 {
		t.Fatalf("%d reset mails arrived, want exactly 1", resets)
	}
}

// mustProcessPost posts body as JSON to path on p, from p's origin, and
// fails unless the answer is 200.
func mustProcessPost(t *testing.T, p *harness.Process, path string, body any) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.URL+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", p.URL)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var out bytes.Buffer
		_, _ = out.ReadFrom(res.Body)
		t.Fatalf("POST %s = %d %s", path, res.StatusCode, out.String())
	}
}
