package harness

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// GatehouseBinary returns the gatehouse binary the process tests run:
// $GATEHOUSE_TEST_BINARY when set (make test builds bin/gatehouse once, with
// the release's flags, for every test package), else cmd/gatehouse built once
// per test package.
func GatehouseBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("GATEHOUSE_TEST_BINARY"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("GATEHOUSE_TEST_BINARY: %v", err)
		}
		return bin
	}
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

// Process is a running gatehouse binary.
type Process struct {
	Cmd    *exec.Cmd
	URL    string
	Stdout *SyncBuffer
	Stderr *SyncBuffer
	Done   chan error
}

var listeningRE = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

// StartProcess runs "gatehouse serve" with env and waits for its start-up line.
func StartProcess(t *testing.T, env ...string) *Process {
	t.Helper()
	cmd := exec.Command(GatehouseBinary(t), "serve")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GATEHOUSE_ADDR=127.0.0.1:0", "GATEHOUSE_DATA_DIR=" + t.TempDir()}, env...)
	p := &Process{Cmd: cmd, Stdout: &SyncBuffer{}, Stderr: &SyncBuffer{}, Done: make(chan error, 1)}
	pr, pw := io.Pipe()
	cmd.Stdout = io.MultiWriter(p.Stdout, pw)
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.Done <- cmd.Wait(); pw.Close() }()
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
	case p.URL = <-found:
	case err := <-p.Done:
		t.Fatalf("gatehouse exited before serving: %v\nstdout: %s\nstderr: %s", err, p.Stdout, p.Stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("gatehouse did not start\nstdout: %s\nstderr: %s", p.Stdout, p.Stderr)
	}
	return p
}

func (p *Process) Get(t *testing.T, path string) (int, string) {
	t.Helper()
	res, err := http.Get(p.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// wait waits for the process to exit and returns its error.
func (p *Process) Wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.Done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("gatehouse did not exit")
		return nil
	}
}
