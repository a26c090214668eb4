package process

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// startMakeRun runs "make run" at the repository's root in a process group
// of its own, on a free port and a data directory of the test's own, the
// binary built into the test's directory, and waits until the service
// answers its liveness route. It returns the command and the service's
// address.
func startMakeRun(t *testing.T) (*exec.Cmd, *harness.SyncBuffer, string) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("make is not installed; CI must run the make run tests")
		}
		t.Skip("make is not installed: the make run tests need GNU make")
	}
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("make run builds the binary: skipped in -short mode")
	}
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command("make", "--no-print-directory", "run", "BIN="+filepath.Join(dir, "gatehouse"))
	cmd.Dir = harness.Root()
	// The caller's environment (make and go need it) without its Gatehouse settings.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GATEHOUSE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GATEHOUSE_ADDR="+addr, "GATEHOUSE_DATA_DIR="+filepath.Join(dir, "data"))
	out := &harness.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	deadline := time.Now().Add(3 * time.Minute) // make run builds first
	for {
		res, err := http.Get("http://" + addr + "/api/auth/ok")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return cmd, out, addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("make run did not serve on %s:\n%s", addr, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitExit waits for cmd and returns its wait error.
func waitExit(t *testing.T, cmd *exec.Cmd, out *harness.SyncBuffer) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("make run did not exit:\n%s", out)
		return nil
	}
}

// mustBeClosed fails unless nothing listens on addr any more.
func mustBeClosed(t *testing.T, addr string, out *harness.SyncBuffer) {
	t.Helper()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("the service still listens on %s after make exited:\n%s", addr, out)
	}
}

// Ensure "make run" runs the service itself, not under "go run", so that
// signals reach it: Ctrl-C (SIGINT to the whole foreground process group)
// stops it cleanly and make reports no error; a SIGTERM to make alone (a
// process manager stopping it) is passed on by make and stops the service.
// Both subtests run one after the other: each builds the binary.
func TestMakeRun_signals(t *testing.T) {
	t.Run("sigint_to_the_group", func(t *testing.T) {
		cmd, out, addr := startMakeRun(t)
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		err := waitExit(t, cmd, out)
		t.Logf("make run after SIGINT to the group: %v", err)
		// GNU make, interrupted, waits for its child and then re-raises
		// SIGINT on itself: it ends by the signal (a shell shows 130), not
		// with status 0, whatever the child did. What matters is that the
		// service stopped cleanly and make printed no error.
		var exit *exec.ExitError
		if err != nil && (!errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT) {
			t.Fatalf("make run after SIGINT: %v, want exit 0 or ended by SIGINT\n%s", err, out)
		}
		text := out.String()
		if strings.Contains(text, "make: ***") || strings.Contains(text, "Error") {
			t.Fatalf("make reported an error after Ctrl-C:\n%s", text)
		}
		if !strings.Contains(text, `"msg":"stopped"`) {
			t.Fatalf("the service did not stop cleanly:\n%s", text)
		}
		mustBeClosed(t, addr, out)
	})
	t.Run("sigterm_to_make", func(t *testing.T) {
		cmd, out, addr := startMakeRun(t)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		t.Logf("make run after SIGTERM to make: %v", waitExit(t, cmd, out))
		if !strings.Contains(out.String(), `"msg":"stopped"`) {
			t.Fatalf("the service did not stop cleanly on make's SIGTERM:\n%s", out)
		}
		mustBeClosed(t, addr, out)
	})
}
