package process

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure a newcomer's "make run" path works: the binary starts on embedded
// SQLite with no configuration, prints where it serves (the port the kernel
// picked, as no base URL is set) and where the explorer is, serves
// liveness, readiness, the contracts and the explorer, and stops cleanly on
// SIGTERM.
func TestProcess_serves_on_sqlite_by_default(t *testing.T) {
	p := harness.StartProcess(t)
	if out := p.Stdout.String(); !strings.Contains(out, "serving "+p.URL+" (") || !strings.Contains(out, "API explorer: "+p.URL+"/api/docs") {
		t.Fatalf("start-up lines lack the service and explorer URLs (%s):\n%s", p.URL, out)
	}
	for _, path := range []string{"/api/auth/ok", "/api/health/ready", "/api/auth-openapi.json", "/api/auth/open-api/generate-schema", "/api/backend-openapi.json", "/api/docs", "/api/docs/assets/swagger-ui-bundle.js"} {
		if status, body := p.Get(t, path); status != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, status, body)
		}
	}
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, p.Stderr)
	}
}

// Ensure SIGTERM drains in-flight requests: a readiness check stuck on an
// unreachable database is answered, new connections are refused, and the
// process exits 0.
func TestProcess_sigterm_drains_in_flight_requests(t *testing.T) {
	proxy := harness.NewFaultProxy(t, harness.PostgresURL(t))
	p := harness.StartProcess(t, "GATEHOUSE_DATABASE_URL="+proxy.URL())
	if status, _ := p.Get(t, "/api/health/ready"); status != http.StatusOK {
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
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, p.URL+"/api/health/ready", nil)
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
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := <-inFlight
	if r.err != nil || r.status != http.StatusServiceUnavailable {
		t.Fatalf("in-flight request during shutdown: status %d, err %v; want its 503 answer", r.status, r.err)
	}
	if err := p.Wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, p.Stderr)
	}
	if _, err := http.Get(p.URL + "/api/auth/ok"); err == nil {
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
		{"production_on_http", append([]string{"GATEHOUSE_BASE_URL=http://id.example.com", "GATEHOUSE_SECRET=" + harness.TestSecret}, prod...), "GATEHOUSE_BASE_URL"},
		{"bad_listen_address", []string{"GATEHOUSE_ADDR=not-an-address"}, "GATEHOUSE_ADDR"},
		{"listen_address_in_use", []string{"GATEHOUSE_ADDR=" + busyAddr(t)}, "GATEHOUSE_ADDR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(harness.GatehouseBinary(t), "serve")
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
			if strings.Contains(stderr.String(), harness.TestSecret) {
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
	bin := harness.GatehouseBinary(t)
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
	p := harness.StartProcess(t, "GATEHOUSE_DATABASE_URL="+string(dbURL))
	db := gormtest.Open(t, dbURL)
	total := func() int {
		var n int
		if err := db.Raw("SELECT COALESCE(SUM(total), 0) FROM sign_in_counts").Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	signIn := func() {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, p.URL+"/api/auth/sign-in/email",
			strings.NewReader(`{"email":"nobody@example.com","password":"not a password of anyone"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", p.URL)
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
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, p.Stderr)
	}
	if n := total(); n != 2 {
		t.Fatalf("sign_in_counts holds %d sign-ins after the stop, want 2", n)
	}
}
