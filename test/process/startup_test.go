package process

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// freePort returns a TCP port nothing listens on just now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// mustFail runs the binary with env and args, wants a non-zero exit, and
// returns the lines of its standard error.
func mustFail(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	out, errOut, err := harness.RunCLI(t, env, "", args...)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("gatehouse %v: exit %v, want non-zero\nstdout: %s\nstderr: %s", args, err, out, errOut)
	}
	return strings.Split(strings.TrimSpace(errOut), "\n")
}

// Ensure production with nothing configured names all it needs in one run:
// the base URL (https), the secret, the SMTP host and the invitation URL.
func TestProcess_production_lists_every_missing_setting(t *testing.T) {
	t.Parallel()
	lines := mustFail(t, []string{"GATEHOUSE_ENV=production", "GATEHOUSE_DATA_DIR=" + t.TempDir()}, "serve")
	want := []string{"GATEHOUSE_BASE_URL", "GATEHOUSE_SECRET", "GATEHOUSE_SMTP_HOST", "GATEHOUSE_INVITATION_URL"}
	if len(lines) != len(want) {
		t.Fatalf("stderr has %d lines, want one per missing setting:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, v := range want {
		if !strings.HasPrefix(lines[i], "gatehouse: configuration: "+v+": ") {
			t.Fatalf("line %d = %q, want it to name %s", i+1, lines[i], v)
		}
	}
	if !strings.Contains(lines[0], "https") {
		t.Fatalf("the base URL's line does not say https: %q", lines[0])
	}
}

// Ensure a problem with a value given as a flag names the flag.
func TestProcess_problem_names_the_flag_used(t *testing.T) {
	t.Parallel()
	lines := mustFail(t, []string{"GATEHOUSE_DATA_DIR=" + t.TempDir(), "GATEHOUSE_LOG_LEVEL=loud"}, "serve", "--base-url", "ftp://id.example.com")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "gatehouse: configuration: --base-url: ") || !strings.HasPrefix(lines[1], "gatehouse: configuration: GATEHOUSE_LOG_LEVEL: ") {
		t.Fatalf("stderr = %q, want --base-url then GATEHOUSE_LOG_LEVEL", lines)
	}
}

// Ensure a database URL that is a bare word, or a SQLite file in a missing
// directory, stops the start instead of creating a file or a directory.
func TestProcess_refuses_bad_database_urls(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	missing := filepath.Join(work, "nonexistent", "dir")
	for _, tt := range []struct{ name, url, wantIn string }{
		{"bare_words", "not a url at all", "sqlite:PATH"},
		{"bare_word", "gatehouse", "postgres://"},
		{"missing_directory", "sqlite:" + filepath.Join(missing, "x.db"), missing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(harness.GatehouseBinary(t), "serve")
			cmd.Dir = work
			cmd.Env = []string{"GATEHOUSE_ADDR=127.0.0.1:0", "GATEHOUSE_DATA_DIR=" + filepath.Join(work, "data"), "GATEHOUSE_DATABASE_URL=" + tt.url}
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("serve started:\n%s", out)
			}
			if !strings.Contains(string(out), "GATEHOUSE_DATABASE_URL") || !strings.Contains(string(out), tt.wantIn) {
				t.Fatalf("output %q does not name GATEHOUSE_DATABASE_URL and %q", out, tt.wantIn)
			}
		})
	}
	entries, _ := os.ReadDir(work)
	if len(entries) != 0 {
		t.Fatalf("refused starts left %v in the working directory", entries)
	}
}

var (
	servingRE  = regexp.MustCompile(`^Gatehouse \S+ serving (\S+) \(listening on `)
	databaseRE = regexp.MustCompile(`^Database: SQLite (\S+) at migration version (\d+) \((\d+) applied by this start\)$`)
)

// Ensure "serve --addr :PORT" with no base URL serves and announces
// http://localhost:PORT, so the hosted sign-in form posted from that origin
// is not refused as a foreign origin; and that the start-up lines say the
// data directory was created, which SQLite file is used and at which
// migration version.
func TestProcess_base_url_follows_addr(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(harness.GatehouseBinary(t), "serve", "--addr", fmt.Sprintf(":%d", port))
	cmd.Env = []string{"GATEHOUSE_DATA_DIR=" + dataDir}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr harness.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if !strings.HasPrefix(sc.Text(), "{") {
				lines <- sc.Text()
			}
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var startup []string
	for line := range lines {
		startup = append(startup, line)
		if strings.HasPrefix(line, "API explorer: ") {
			break
		}
	}
	base := fmt.Sprintf("http://localhost:%d", port)
	text := strings.Join(startup, "\n")
	if len(startup) != 5 {
		t.Fatalf("start-up lines:\n%s\nstderr: %s", text, stderr.String())
	}
	if m := servingRE.FindStringSubmatch(startup[0]); m == nil || m[1] != base {
		t.Fatalf("first line %q, want it serving %s", startup[0], base)
	}
	if startup[1] != "Created the data directory "+dataDir+" (mode 0700)" {
		t.Fatalf("second line %q, want the data directory created", startup[1])
	}
	m := databaseRE.FindStringSubmatch(startup[2])
	if m == nil || m[1] != filepath.Join(dataDir, "gatehouse.db") || m[2] == "0" || m[3] != m[2] {
		t.Fatalf("database line %q, want the SQLite file, its version and every migration applied", startup[2])
	}
	if startup[3] != "Rate limits: counted in this process's memory" {
		t.Fatalf("rate limits line %q, want them counted in memory on SQLite", startup[3])
	}
	if startup[4] != "API explorer: "+base+"/api/docs" {
		t.Fatalf("explorer line %q", startup[4])
	}
	if info, err := os.Stat(dataDir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("data directory: %v, %v", err, info)
	}

	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page, err := hc.Get(fmt.Sprintf("http://127.0.0.1:%d/sign-in", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK || !strings.Contains(string(body), `action="/api/auth/sign-in/email"`) {
		t.Fatalf("GET /sign-in = %d\n%s", page.StatusCode, body)
	}
	form := url.Values{"email": {"nobody@example.com"}, "password": {"not the password"}, "callbackURL": {"/"}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/api/auth/sign-in/email", port), strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Origin", base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || loc == nil || loc.Query().Get("error") != "INVALID_EMAIL_OR_PASSWORD" {
		t.Fatalf("form sign-in from %s = %d, Location %q; want back to the form with INVALID_EMAIL_OR_PASSWORD", base, res.StatusCode, res.Header.Get("Location"))
	}
}

// Ensure "gatehouse healthcheck" exits 0 while the service answers its
// liveness route, and 1, saying why, when nothing listens.
func TestProcess_healthcheck(t *testing.T) {
	t.Parallel()
	p := harness.StartProcess(t)
	addr := strings.TrimPrefix(p.URL, "http://")
	out := harness.MustRunCLI(t, []string{"GATEHOUSE_ADDR=" + addr}, "", "healthcheck")
	if !strings.Contains(out, "200") {
		t.Fatalf("healthcheck printed %q", out)
	}
	_, port, _ := net.SplitHostPort(addr)
	harness.MustRunCLI(t, nil, "", "healthcheck", "--addr", ":"+port) // every interface: asked on 127.0.0.1
	harness.MustRunCLI(t, nil, "", "healthcheck", "--url", p.URL+"/api/auth/ok")

	closed := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	start := time.Now()
	lines := mustFail(t, []string{"GATEHOUSE_ADDR=" + closed}, "healthcheck")
	if len(lines) != 1 || !strings.Contains(lines[0], "refused") {
		t.Fatalf("healthcheck with nothing listening: %q", lines)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("healthcheck took too long")
	}
	// A redirect is not health, and only loopback is asked.
	lines = mustFail(t, nil, "healthcheck", "--url", p.URL+"/consent")
	if !strings.Contains(lines[0], "answered 302") {
		t.Fatalf("healthcheck of a redirecting route: %q", lines)
	}
	if lines = mustFail(t, nil, "healthcheck", "--url", "http://192.0.2.1/api/auth/ok"); !strings.Contains(lines[0], "loopback") {
		t.Fatalf("healthcheck of a remote host: %q", lines)
	}
}
