package process

import (
	"errors"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure the command line bootstraps a fresh install on SQLite and
// PostgreSQL: "admin create --password-stdin" makes an administrator who
// signs in over HTTP and administers; without a password it prints a token
// that reset-password accepts; an existing account is promoted;
// "service-key create" prints a secret the trusted API accepts; a bad scope
// fails naming it; the audit log shows the command line as the actor.
func TestCLI_admin_and_service_key(t *testing.T) {
	t.Parallel()
	for _, s := range harness.SQLOnly(harness.StoresThatMatter) {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			env := []string{"GATEHOUSE_SECRET=" + harness.TestSecret, "GATEHOUSE_BASE_URL=" + harness.CLIBaseURL, "GATEHOUSE_RATE_LIMIT=off", "GATEHOUSE_DATA_DIR=" + t.TempDir()}
			if s == harness.StorePostgres {
				env = append(env, "GATEHOUSE_DATABASE_URL="+string(postgresEmptyURL(t)))
			}

			out := harness.MustRunCLI(t, env, harness.AdminPassword+"\n", "admin", "create", "--email", "Root@Example.com", "--name", "Root", "--password-stdin")
			m := harness.CLICreated.FindStringSubmatch(out)
			if m == nil || m[1] != "root@example.com" || m[2] != "created" {
				t.Fatalf("admin create printed %q", out)
			}
			rootID := m[3]
			if strings.Contains(out, harness.AdminPassword) {
				t.Fatal("admin create repeats the password")
			}

			out = harness.MustRunCLI(t, env, "", "admin", "create", "--email=helper@example.com", "--name=Helper")
			tm := harness.CLITokenRE.FindStringSubmatch(out)
			if !strings.Contains(out, "administrator helper@example.com created") || tm == nil {
				t.Fatalf("admin create without a password printed %q, want a token", out)
			}
			token := tm[1]

			out = harness.MustRunCLI(t, env, "", "service-key", "create", "--name", "ci", "--scopes", "users:read,organizations:read", "--expires-in", "720h")
			sm := harness.CLISecretRE.FindStringSubmatch(out)
			if sm == nil {
				t.Fatalf("service-key create printed %q, want a secret on its own line", out)
			}
			secret := sm[1]

			for _, bad := range [][]string{
				{"service-key", "create", "--name", "bad", "--scopes", "users:read,bogus:scope"},
				{"service-key", "create", "--name", "bad", "--scopes", "bogus:scope", "--expires-in", "720h"},
			} {
				out, errOut, err := harness.RunCLI(t, env, "", bad...)
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() == 0 {
					t.Fatalf("gatehouse %v: exit %v, want non-zero\nstdout: %s", bad, err, out)
				}
				if !strings.Contains(errOut, "bogus:scope") || harness.CLISecretRE.MatchString(out) {
					t.Fatalf("gatehouse %v: stderr %q does not name the scope (stdout %q)", bad, errOut, out)
				}
			}
			if _, errOut, err := harness.RunCLI(t, env, "short\n", "admin", "create", "--email", "weak@example.com", "--name", "Weak", "--password-stdin"); err == nil || !strings.Contains(strings.ToLower(errOut), "password") {
				t.Fatalf("admin create with a password under the policy: %v, stderr %q", err, errOut)
			}

			p := harness.StartProcess(t, env...)

			// The administrator signs in and administers.
			root := harness.ProcessClient(t, p)
			harness.MustSignIn(t, root, "root@example.com", harness.AdminPassword)
			if u := harness.MustUser(t, harness.MustSession(t, root)); u["id"] != rootID || u["role"] != "admin" || u["emailVerified"] != true {
				t.Fatalf("the CLI's administrator = %v", u)
			}
			emails, _ := harness.ListUsers(t, root, url.Values{"sortBy": {"email"}})
			if !slices.Equal(emails, []string{"helper@example.com", "root@example.com"}) {
				t.Fatalf("list-users = %v", emails)
			}

			// The token sets the helper's password, once.
			anon := harness.ProcessClient(t, p)
			const helperPw = "the helper's own passphrase"
			harness.MustStatusTrue(t, anon.Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": token, "newPassword": helperPw})))
			helper := harness.ProcessClient(t, p)
			harness.MustSignIn(t, helper, "helper@example.com", helperPw)
			harness.MustOK(t, helper.Get(harness.AdminPath("list-users")))
			harness.MustCode(t, anon.Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": token, "newPassword": "yet another passphrase"})), http.StatusBadRequest, "INVALID_TOKEN")

			// An existing account is promoted, verified, and given the password.
			harness.MustOK(t, anon.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Eve", "email": "eve@example.com", "password": harness.UserPassword})))
			out = harness.MustRunCLI(t, env, "eve's new passphrase\n", "admin", "create", "--email", "eve@example.com", "--name", "Eve", "--password-stdin")
			if m := harness.CLICreated.FindStringSubmatch(out); m == nil || m[2] != "promoted" {
				t.Fatalf("admin create for an existing account printed %q", out)
			}
			eve := harness.ProcessClient(t, p)
			harness.MustSignIn(t, eve, "eve@example.com", "eve's new passphrase")
			harness.MustOK(t, eve.Get(harness.AdminPath("list-users")))

			// The key works on the trusted API and is listed as the CLI's.
			r := p.KeyGet(t, secret)
			harness.MustStatus(t, r, http.StatusOK)
			key := r.JSON(t)
			exp, _ := time.Parse(time.RFC3339Nano, key["expiresAt"].(string))
			if key["name"] != "ci" || !slices.Equal(harness.ToStrings(key["scopes"]), []string{"users:read", "organizations:read"}) ||
				exp.Before(time.Now().Add(719*time.Hour)) || exp.After(time.Now().Add(720*time.Hour)) {
				t.Fatalf("GET /api/service-key = %s", r.Body)
			}
			if listed := harness.MustKeyInList(t, root, harness.MustID(t, key)); listed["createdBy"] != "cli" {
				t.Fatalf("listed key = %v, want createdBy cli", listed)
			}

			// The audit log shows the command line as the actor.
			entries := harness.AuditAll(t, root, url.Values{"actorType": {"cli"}})
			var got []string
			for _, e := range entries {
				if e["actorType"] != "cli" {
					t.Fatalf("actorType filter returned %v", e)
				}
				got = append(got, e["action"].(string)+" "+e["outcome"].(string)+" "+e["targetId"].(string))
			}
			want := []string{"admin.bootstrap success " + harness.MustID(t, harness.MustUser(t, harness.MustSession(t, eve)))}
			if len(entries) < 4 || got[0] != want[0] {
				t.Fatalf("CLI entries = %v, want the promotion first", got)
			}
			for _, w := range []string{"admin.bootstrap success " + rootID, "service-key.create success " + harness.MustID(t, key)} {
				if !slices.Contains(got, w) {
					t.Fatalf("CLI entries = %v, want %q", got, w)
				}
			}
		})
	}
}
