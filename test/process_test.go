package test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
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

	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// gatehouseBinary builds cmd/gatehouse once per test run.
func gatehouseBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gatehouse-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "gatehouse")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/gatehouse/gatehouse/cmd/gatehouse").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("go build: %s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build gatehouse: %v", buildErr)
	}
	return binPath
}

// process is a running gatehouse binary.
type process struct {
	cmd    *exec.Cmd
	url    string
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan error
}

var listeningRE = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

// startProcess runs "gatehouse serve" with env and waits for its start-up line.
func startProcess(t *testing.T, env ...string) *process {
	t.Helper()
	cmd := exec.Command(gatehouseBinary(t), "serve")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GATEHOUSE_ADDR=127.0.0.1:0", "GATEHOUSE_DATA_DIR=" + t.TempDir()}, env...)
	p := &process{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	pr, pw := io.Pipe()
	cmd.Stdout = io.MultiWriter(p.stdout, pw)
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	found := make(chan string, 1)
	go func() {
		// Start-up prints the listening line, then the explorer line; wait
		// for both so tests see the whole start-up output.
		sc := bufio.NewScanner(pr)
		addr := ""
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addr = m[1]
			}
			if addr != "" && strings.HasPrefix(sc.Text(), "API explorer: ") {
				found <- addr
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case p.url = <-found:
	case err := <-p.done:
		t.Fatalf("gatehouse exited before serving: %v\nstdout: %s\nstderr: %s", err, p.stdout, p.stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("gatehouse did not start\nstdout: %s\nstderr: %s", p.stdout, p.stderr)
	}
	return p
}

func (p *process) get(t *testing.T, path string) (int, string) {
	t.Helper()
	res, err := http.Get(p.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// wait waits for the process to exit and returns its error.
func (p *process) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("gatehouse did not exit")
		return nil
	}
}

// Ensure a newcomer's "make run" path works: the binary starts on embedded
// SQLite with no configuration, prints where it serves (the port the kernel
// picked, as no base URL is set) and where the explorer is, serves
// liveness, readiness, the contracts and the explorer, and stops cleanly on
// SIGTERM.
func TestProcess_serves_on_sqlite_by_default(t *testing.T) {
	p := startProcess(t)
	if out := p.stdout.String(); !strings.Contains(out, "serving "+p.url+" (") || !strings.Contains(out, "API explorer: "+p.url+"/api/docs") {
		t.Fatalf("start-up lines lack the service and explorer URLs (%s):\n%s", p.url, out)
	}
	for _, path := range []string{"/api/auth/ok", "/api/health/ready", "/api/auth-openapi.json", "/api/auth/open-api/generate-schema", "/api/backend-openapi.json", "/api/docs", "/api/docs/assets/swagger-ui-bundle.js"} {
		if status, body := p.get(t, path); status != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, status, body)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, p.stderr)
	}
}

// Ensure SIGTERM drains in-flight requests: a readiness check stuck on an
// unreachable database is answered, new connections are refused, and the
// process exits 0.
func TestProcess_sigterm_drains_in_flight_requests(t *testing.T) {
	proxy := newFaultProxy(t, postgresURL(t))
	p := startProcess(t, "GATEHOUSE_DATABASE_URL="+proxy.URL())
	if status, _ := p.get(t, "/api/health/ready"); status != http.StatusOK {
		t.Fatalf("readiness before the fault = %d", status)
	}
	proxy.Blackhole()

	type result struct {
		status int
		err    error
	}
	inFlight := make(chan result, 1)
	started := make(chan struct{})
	go func() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, p.url+"/api/health/ready", nil)
		close(started)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			inFlight <- result{err: err}
			return
		}
		res.Body.Close()
		inFlight <- result{status: res.StatusCode}
	}()
	<-started
	time.Sleep(300 * time.Millisecond) // let the request reach the hung database check (it waits up to 2 s)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := <-inFlight
	if r.err != nil || r.status != http.StatusServiceUnavailable {
		t.Fatalf("in-flight request during shutdown: status %d, err %v; want its 503 answer", r.status, r.err)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, p.stderr)
	}
	if _, err := http.Get(p.url + "/api/auth/ok"); err == nil {
		t.Fatal("a new request was served after shutdown")
	}
}

// Ensure a bad setting stops the process with one line naming the
// variable, and a non-zero exit.
func TestProcess_bad_configuration_exits_with_one_line(t *testing.T) {
	prod := []string{"GATEHOUSE_ENV=production", "GATEHOUSE_SMTP_HOST=smtp.example.com", "GATEHOUSE_INVITATION_URL=https://app.example.com/i/{id}"}
	tests := []struct {
		name    string
		env     []string
		wantVar string
	}{
		{"production_without_secret", append([]string{"GATEHOUSE_BASE_URL=https://id.example.com"}, prod...), "GATEHOUSE_SECRET"},
		{"production_on_http", append([]string{"GATEHOUSE_BASE_URL=http://id.example.com", "GATEHOUSE_SECRET=" + testSecret}, prod...), "GATEHOUSE_BASE_URL"},
		{"bad_listen_address", []string{"GATEHOUSE_ADDR=not-an-address"}, "GATEHOUSE_ADDR"},
		{"listen_address_in_use", []string{"GATEHOUSE_ADDR=" + busyAddr(t)}, "GATEHOUSE_ADDR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(gatehouseBinary(t), "serve")
			cmd.Env = append([]string{"GATEHOUSE_DATA_DIR=" + t.TempDir()}, tt.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("exit = %v, want non-zero", err)
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tt.wantVar) {
				t.Fatalf("stderr = %q, want one line naming %s", stderr.String(), tt.wantVar)
			}
			if strings.Contains(stderr.String(), testSecret) {
				t.Fatal("stderr repeats the secret")
			}
		})
	}
}

// busyAddr returns an address something listens on until the test ends.
func busyAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// Ensure "gatehouse migrate" applies pending migrations once and "version"
// prints the version.
func TestProcess_migrate_and_version(t *testing.T) {
	bin := gatehouseBinary(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "gatehouse ") {
		t.Fatalf("version: %q, %v", out, err)
	}
	dir := t.TempDir()
	migrate := func() string {
		cmd := exec.Command(bin, "migrate", "--data-dir", dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("migrate: %v\n%s", err, out)
		}
		return string(out)
	}
	first := migrate()
	if !strings.Contains(first, "applied 00001_users.sql") {
		t.Fatalf("first migrate:\n%s", first)
	}
	if second := migrate(); strings.Contains(second, "applied ") || !strings.Contains(second, "0 migration(s) applied") {
		t.Fatalf("second migrate applied again:\n%s", second)
	}
	if _, err := os.Stat(filepath.Join(dir, "gatehouse.db")); err != nil {
		t.Fatalf("no SQLite file in the data directory: %v", err)
	}
}

// Ensure a running service writes the sign-in counts it gathers in memory
// within seconds, and once more as it stops: a refused sign-in shows in the
// database while the process runs, and one made just before SIGTERM is
// written by the time it exits.
func TestProcess_writes_sign_in_counts_while_running_and_at_stop(t *testing.T) {
	dbURL := gormtest.SQLiteURL(t)
	p := startProcess(t, "GATEHOUSE_DATABASE_URL="+string(dbURL))
	db := gormtest.Open(t, dbURL)
	total := func() int {
		var n int
		if err := db.Raw("SELECT COALESCE(SUM(total), 0) FROM sign_in_counts").Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	signIn := func() {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.url+"/api/auth/sign-in/email",
			strings.NewReader(`{"email":"nobody@example.com","password":"not a password of anyone"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", p.url)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("sign-in of an unknown address: %d", res.StatusCode)
		}
	}
	signIn()
	deadline := time.Now().Add(15 * time.Second)
	for total() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the refused sign-in is not in sign_in_counts 15 s later")
		}
		time.Sleep(100 * time.Millisecond)
	}
	signIn()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, p.stderr)
	}
	if n := total(); n != 2 {
		t.Fatalf("sign_in_counts holds %d sign-ins after the stop, want 2", n)
	}
}
