package process

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// signUpAndIn signs a new account up and then in over HTTP, as a browser
// would, and returns an error instead of failing the test (it runs beside
// it).
func signUpAndIn(base, email string) error {
	for _, step := range []struct{ path, body string }{
		{"/api/auth/sign-up/email", fmt.Sprintf(`{"name":"Writer","email":%q,"password":%q}`, email, harness.UserPassword)},
		{"/api/auth/sign-in/email", fmt.Sprintf(`{"email":%q,"password":%q}`, email, harness.UserPassword)},
	} {
		req, err := http.NewRequest(http.MethodPost, base+step.path, strings.NewReader(step.body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", harness.CLIBaseURL)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%s %s: %d", step.path, email, res.StatusCode)
		}
	}
	return nil
}

// mustFailCLI runs the binary and fails unless it exits non-zero with a
// line on standard error that contains want.
func mustFailCLI(t *testing.T, env []string, want string, args ...string) {
	t.Helper()
	out, errOut, err := harness.RunCLI(t, env, "", args...)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("gatehouse %s: exit %v, want non-zero\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	if !strings.Contains(errOut, want) {
		t.Fatalf("gatehouse %s: stderr %q, want it to say %q", strings.Join(args, " "), errOut, want)
	}
}

var asideRE = regexp.MustCompile(`(?m)^the previous database is kept at (\S+)$`)

// Ensure a backup taken while users sign up and in restores to a working
// service: "gatehouse backup" succeeds while another goroutine keeps
// writing over HTTP, refuses to overwrite a file, and "gatehouse restore"
// refuses while the service runs and refuses a file that is not a Gatehouse
// database; once the service is stopped, it puts the backup in place with
// the previous database kept aside, and the service started again on the
// same data directory (and its development secret) signs in a user made
// before the backup, whose session from before the backup still works,
// while a user made after it is gone.
func TestBackupRestore_while_writing_restores_to_a_working_service(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	env := []string{"GATEHOUSE_DATA_DIR=" + dir, "GATEHOUSE_BASE_URL=" + harness.CLIBaseURL, "GATEHOUSE_RATE_LIMIT=off", "GATEHOUSE_REQUIRE_EMAIL_VERIFICATION=false"}
	p := harness.StartProcess(t, env...)

	before := harness.ProcessClient(t, p)
	harness.MustSignUp(t, before, "Before", "before@example.com", harness.UserPassword)
	harness.MustSignIn(t, before, "before@example.com", harness.UserPassword)

	// A writer signs users up and in until told to stop.
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		written int
		failed  error
	)
	stop, some := make(chan struct{}), make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := signUpAndIn(p.URL, fmt.Sprintf("writer-%d@example.com", i))
			mu.Lock()
			if err != nil {
				failed = err
			} else {
				written++
			}
			n := written
			mu.Unlock()
			if err != nil {
				return
			}
			if n == 3 {
				close(some)
			}
		}
	})
	<-some
	backup := filepath.Join(t.TempDir(), "gatehouse-backup.db")
	out := harness.MustRunCLI(t, env, "", "backup", "--to", backup)
	mu.Lock()
	atBackup := written
	mu.Unlock()
	if !strings.Contains(out, "backed up SQLite "+filepath.Join(dir, "gatehouse.db")+" to "+backup) || !strings.Contains(out, "integrity ok") || !strings.Contains(out, filepath.Join(dir, "secret")) {
		t.Fatalf("backup printed %q", out)
	}
	// Writes go on after the backup too, then stop.
	for {
		mu.Lock()
		n, err := written, failed
		mu.Unlock()
		if n >= atBackup+3 || err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if failed != nil {
		t.Fatalf("a sign-up or sign-in failed while the backup ran: %v", failed)
	}
	t.Logf("%d users signed up and in, %d of them before the backup finished", written, atBackup)
	harness.MustSignUp(t, harness.ProcessClient(t, p), "After", "after@example.com", harness.UserPassword)

	mustFailCLI(t, env, "already exists", "backup", "--to", backup)
	mustFailCLI(t, env, "in use", "restore", "--from", backup)
	junk := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a database\n", 400)), 0o600); err != nil {
		t.Fatal(err)
	}

	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, p.Stderr)
	}
	mustFailCLI(t, env, "is not a SQLite database", "restore", "--from", junk)

	out = harness.MustRunCLI(t, env, "", "restore", "--from", backup)
	m := asideRE.FindStringSubmatch(out)
	if m == nil || !strings.HasPrefix(m[1], filepath.Join(dir, "gatehouse.db.before-restore-")) {
		t.Fatalf("restore printed %q, want where the previous database is kept", out)
	}
	if info, err := os.Stat(m[1]); err != nil || info.Size() == 0 {
		t.Fatalf("the previous database kept aside: %v, %v", info, err)
	}

	p = harness.StartProcess(t, env...)
	again := harness.ProcessClient(t, p)
	kept := harness.ProcessClient(t, p)
	kept.Cookies = before.Cookies
	harness.MustSignIn(t, again, "before@example.com", harness.UserPassword)
	if u := harness.MustUser(t, harness.MustSession(t, kept)); u["email"] != "before@example.com" {
		t.Fatalf("the session from before the backup = %v", u)
	}
	harness.MustOK(t, again.Post("/api/auth/update-user", `{"name":"Before, restored"}`))
	if u := harness.MustUser(t, harness.MustSession(t, again)); u["name"] != "Before, restored" {
		t.Fatalf("after an update, the restored user = %v", u)
	}
	harness.MustSignIn(t, harness.ProcessClient(t, p), "writer-0@example.com", harness.UserPassword)
	harness.MustCode(t, harness.ProcessClient(t, p).Post("/api/auth/sign-in/email", harness.MustCredentials(t, "after@example.com", harness.UserPassword)), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
}

// Ensure backup and restore refuse PostgreSQL, naming its own tools.
func TestBackupRestore_refuse_postgres(t *testing.T) {
	t.Parallel()
	env := []string{"GATEHOUSE_DATA_DIR=" + t.TempDir(), "GATEHOUSE_DATABASE_URL=" + string(postgresEmptyURL(t))}
	mustFailCLI(t, env, "pg_dump --format=custom", "backup", "--to", filepath.Join(t.TempDir(), "b.db"))
	mustFailCLI(t, env, "pg_restore ", "restore", "--from", filepath.Join(t.TempDir(), "b.db"))
}
