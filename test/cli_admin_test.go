package test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/bootstrap"
)

// cliBaseURL is the base URL the CLI tests configure, and so the Origin
// their browser-like requests send.
const cliBaseURL = "http://localhost:8080"

// runCLI runs the gatehouse binary with args and env (besides PATH), with
// stdin as its standard input, and returns its output and exit error.
func runCLI(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(gatehouseBinary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// mustRunCLI runs the binary and fails unless it exits 0.
func mustRunCLI(t *testing.T, env []string, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := runCLI(t, env, stdin, args...)
	if err != nil {
		t.Fatalf("gatehouse %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// processClient is a browser-like client of a running binary.
func processClient(t testing.TB, p *process) *fwClient {
	app := &fwApp{testApp: &testApp{Server: &httptest.Server{URL: p.url}}, Cfg: bootstrap.Config{HTTP: bootstrap.HTTPConfig{BaseURL: cliBaseURL}}}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &fwClient{t: t, app: app, Origin: cliBaseURL, Cookies: map[string]string{}, http: hc}
}

var (
	cliTokenRE  = regexp.MustCompile(`"token":"([^"]+)"`)
	cliSecretRE = regexp.MustCompile(`(?m)^(gh_sk_[A-Za-z0-9]{43})$`)
	cliCreated  = regexp.MustCompile(`administrator (\S+) (created|promoted) \(id ([^)]+)\)`)
)

// Ensure the command line bootstraps a fresh install on SQLite and
// PostgreSQL: "admin create --password-stdin" makes an administrator who
// signs in over HTTP and administers; without a password it prints a token
// that reset-password accepts; an existing account is promoted;
// "service-key create" prints a secret the trusted API accepts; a bad scope
// fails naming it; the audit log shows the command line as the actor.
func TestCLI_admin_and_service_key(t *testing.T) {
	t.Parallel()
	for _, s := range sqlOnly(storesThatMatter) {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			env := []string{"GATEHOUSE_SECRET=" + testSecret, "GATEHOUSE_BASE_URL=" + cliBaseURL, "GATEHOUSE_RATE_LIMIT=off", "GATEHOUSE_DATA_DIR=" + t.TempDir()}
			if s == storePostgres {
				env = append(env, "GATEHOUSE_DATABASE_URL="+string(postgresEmptyURL(t)))
			}

			out := mustRunCLI(t, env, adminPassword+"\n", "admin", "create", "--email", "Root@Example.com", "--name", "Root", "--password-stdin")
			m := cliCreated.FindStringSubmatch(out)
			if m == nil || m[1] != "root@example.com" || m[2] != "created" {
				t.Fatalf("admin create printed %q", out)
			}
			rootID := m[3]
			if strings.Contains(out, adminPassword) {
				t.Fatal("admin create repeats the password")
			}

			out = mustRunCLI(t, env, "", "admin", "create", "--email=helper@example.com", "--name=Helper")
			tm := cliTokenRE.FindStringSubmatch(out)
			if !strings.Contains(out, "administrator helper@example.com created") || tm == nil {
				t.Fatalf("admin create without a password printed %q, want a token", out)
			}
			token := tm[1]

			out = mustRunCLI(t, env, "", "service-key", "create", "--name", "ci", "--scopes", "users:read,organizations:read", "--expires-in", "720h")
			sm := cliSecretRE.FindStringSubmatch(out)
			if sm == nil {
				t.Fatalf("service-key create printed %q, want a secret on its own line", out)
			}
			secret := sm[1]

			for _, bad := range [][]string{
				{"service-key", "create", "--name", "bad", "--scopes", "users:read,bogus:scope"},
				{"service-key", "create", "--name", "bad", "--scopes", "bogus:scope", "--expires-in", "720h"},
			} {
				out, errOut, err := runCLI(t, env, "", bad...)
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() == 0 {
					t.Fatalf("gatehouse %v: exit %v, want non-zero\nstdout: %s", bad, err, out)
				}
				if !strings.Contains(errOut, "bogus:scope") || cliSecretRE.MatchString(out) {
					t.Fatalf("gatehouse %v: stderr %q does not name the scope (stdout %q)", bad, errOut, out)
				}
			}
			if _, errOut, err := runCLI(t, env, "short\n", "admin", "create", "--email", "weak@example.com", "--name", "Weak", "--password-stdin"); err == nil || !strings.Contains(strings.ToLower(errOut), "password") {
				t.Fatalf("admin create with a password under the policy: %v, stderr %q", err, errOut)
			}

			p := startProcess(t, env...)

			// The administrator signs in and administers.
			root := processClient(t, p)
			mustSignIn(t, root, "root@example.com", adminPassword)
			if u := mustUser(t, mustSession(t, root)); u["id"] != rootID || u["role"] != "admin" || u["emailVerified"] != true {
				t.Fatalf("the CLI's administrator = %v", u)
			}
			emails, _ := listUsers(t, root, url.Values{"sortBy": {"email"}})
			if !slices.Equal(emails, []string{"helper@example.com", "root@example.com"}) {
				t.Fatalf("list-users = %v", emails)
			}

			// The token sets the helper's password, once.
			anon := processClient(t, p)
			const helperPw = "the helper's own passphrase"
			mustStatusTrue(t, anon.post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": token, "newPassword": helperPw})))
			helper := processClient(t, p)
			mustSignIn(t, helper, "helper@example.com", helperPw)
			mustOK(t, helper.get(adminPath("list-users")))
			mustCode(t, anon.post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": token, "newPassword": "yet another passphrase"})), http.StatusBadRequest, "INVALID_TOKEN")

			// An existing account is promoted, verified, and given the password.
			mustOK(t, anon.post("/api/auth/sign-up/email", mustJSON(t, map[string]string{"name": "Eve", "email": "eve@example.com", "password": userPassword})))
			out = mustRunCLI(t, env, "eve's new passphrase\n", "admin", "create", "--email", "eve@example.com", "--name", "Eve", "--password-stdin")
			if m := cliCreated.FindStringSubmatch(out); m == nil || m[2] != "promoted" {
				t.Fatalf("admin create for an existing account printed %q", out)
			}
			eve := processClient(t, p)
			mustSignIn(t, eve, "eve@example.com", "eve's new passphrase")
			mustOK(t, eve.get(adminPath("list-users")))

			// The key works on the trusted API and is listed as the CLI's.
			r := p.keyGet(t, secret)
			mustStatus(t, r, http.StatusOK)
			key := r.JSON(t)
			exp, _ := time.Parse(time.RFC3339Nano, key["expiresAt"].(string))
			if key["name"] != "ci" || !slices.Equal(toStrings(key["scopes"]), []string{"users:read", "organizations:read"}) ||
				exp.Before(time.Now().Add(719*time.Hour)) || exp.After(time.Now().Add(720*time.Hour)) {
				t.Fatalf("GET /api/service-key = %s", r.Body)
			}
			if listed := mustKeyInList(t, root, mustID(t, key)); listed["createdBy"] != "cli" {
				t.Fatalf("listed key = %v, want createdBy cli", listed)
			}

			// The audit log shows the command line as the actor.
			entries := auditAll(t, root, url.Values{"actorType": {"cli"}})
			var got []string
			for _, e := range entries {
				if e["actorType"] != "cli" {
					t.Fatalf("actorType filter returned %v", e)
				}
				got = append(got, e["action"].(string)+" "+e["outcome"].(string)+" "+e["targetId"].(string))
			}
			want := []string{"admin.bootstrap success " + mustID(t, mustUser(t, mustSession(t, eve)))}
			if len(entries) < 4 || got[0] != want[0] {
				t.Fatalf("CLI entries = %v, want the promotion first", got)
			}
			for _, w := range []string{"admin.bootstrap success " + rootID, "service-key.create success " + mustID(t, key)} {
				if !slices.Contains(got, w) {
					t.Fatalf("CLI entries = %v, want %q", got, w)
				}
			}
		})
	}
}

// keyGet calls GET /api/service-key on the process with secret as Bearer.
func (p *process) keyGet(t *testing.T, secret string) *response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.url+"/api/service-key", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	return &response{Status: res.StatusCode, Header: res.Header, Body: b.Bytes()}
}
