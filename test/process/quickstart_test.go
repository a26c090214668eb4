package process

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// quickStart is README's "Quick start" section cut into what a newcomer
// does: one block starts the service and stays in the foreground (the first
// terminal), the others are pasted one after the other into a second
// terminal, and the links are opened in a browser.
type quickStart struct {
	server string   // the block that serves ("make run")
	steps  []string // every other shell block, in order
	links  []string // the http://localhost:8080/… links of the prose
}

// readQuickStart extracts the quick start from README.md.
func readQuickStart(t *testing.T, readme string) quickStart {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		t.Fatal(`README.md has no "## Quick start" section`)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var qs quickStart
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		block := strings.TrimSpace(m[1])
		if block == "make run" {
			qs.server = block
			continue
		}
		qs.steps = append(qs.steps, block)
	}
	for _, m := range regexp.MustCompile(`<(http://localhost:8080/[^>]*)>`).FindAllStringSubmatch(section, -1) {
		qs.links = append(qs.links, m[1])
	}
	if qs.server == "" || len(qs.steps) == 0 || len(qs.links) == 0 {
		t.Fatalf("the quick start needs a `make run` block, shell steps and links; found server=%q, %d steps, %d links", qs.server, len(qs.steps), len(qs.links))
	}
	return qs
}

// TestQuickStart_runs_from_a_fresh_copy runs README's quick start as written,
// in a copy of the repository holding what a clone would (tracked and new
// files, nothing ignored: no bin/, no data/), committed to a git repository
// of its own: `make run` in the background, the other blocks in order in one
// bash, as pasted into one terminal, then every link it tells the reader to
// open. Only the port differs: 8080 may be taken, so the test substitutes a
// free one, through GATEHOUSE_ADDR as the README says. Afterwards the copy's
// git status is clean: the quick start leaves no file behind that git would
// show (a cookie jar in the checkout), and changes none.
func TestQuickStart_runs_from_a_fresh_copy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the service from a copy of the repository (-short)")
	}
	for _, tool := range []string{"bash", "make", "git", "curl", "openssl", "sed", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the quick start needs %s: %v", tool, err)
			}
			t.Skipf("the quick start needs %s: %v", tool, err)
		}
	}
	root, err := filepath.Abs(harness.Root())
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	qs := readQuickStart(t, string(readme))
	dir := freshCopy(t, root)
	commitCopy(t, dir)
	port := freePort(t)
	local := func(s string) string {
		return strings.ReplaceAll(s, "localhost:8080", fmt.Sprintf("localhost:%d", port))
	}
	env := append(withoutGatehouseEnv(os.Environ()), fmt.Sprintf("GATEHOUSE_ADDR=:%d", port))
	start := time.Now()

	// The first terminal.
	serverOut := &harness.SyncBuffer{}
	server := exec.Command("bash", "-c", qs.server)
	server.Dir, server.Env, server.Stdout, server.Stderr = dir, env, serverOut, serverOut
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- server.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-server.Process.Pid, syscall.SIGINT)
		select {
		case <-served:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-server.Process.Pid, syscall.SIGKILL)
			<-served
		}
		if t.Failed() {
			t.Logf("make run printed:\n%s", serverOut.String())
		}
	})
	waitLive(t, fmt.Sprintf("http://localhost:%d/api/auth/ok", port), served, serverOut)
	t.Logf("make run served after %s", time.Since(start).Round(time.Millisecond))

	// The second terminal: every block, in order, in one shell.
	script := "set -euo pipefail\n" + local(strings.Join(qs.steps, "\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	steps := exec.CommandContext(ctx, "bash", "-c", script)
	steps.Dir, steps.Env = dir, env
	out, err := steps.CombinedOutput()
	if err != nil {
		t.Fatalf("the quick start's steps failed: %v\n%s", err, out)
	}
	for _, want := range []string{`"emailVerified":true`, "gh_sk_", `"email":"ada@example.com"`, "_gatehouse-challenge.app.example.com", "gatehouse-verification="} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the quick start's output lacks %s:\n%s", want, out)
		}
	}

	// The links the reader opens.
	client := &http.Client{Timeout: 10 * time.Second}
	for _, link := range qs.links {
		res, err := client.Get(local(link))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s = %d %s, want a 200 HTML page:\n%.300s", link, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
	if status := gitStatus(t, dir); status != "" {
		t.Errorf("the quick start left the checkout unclean (git status --porcelain):\n%s", status)
	}
	t.Logf("the quick start took %s (make run building included)", time.Since(start).Round(time.Millisecond))
}

// commitCopy makes dir, a fresh copy, a git repository with everything it
// holds committed, as a clone is, so that git status shows what the quick
// start adds or changes.
func commitCopy(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=Quick Start", "-c", "user.email=quickstart@example.com", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null",
			"commit", "-q", "-m", "the copy"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// gitStatus returns git status --porcelain in dir, every untracked file
// listed.
func gitStatus(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=all")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git status: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// freshCopy copies what a clone of root would hold, with uncommitted changes:
// the tracked files and the untracked ones git does not ignore.
func freshCopy(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := t.TempDir()
	for name := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		info, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted but not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// withoutGatehouseEnv drops GATEHOUSE_ settings, so the quick start runs on
// the defaults a newcomer has.
func withoutGatehouseEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GATEHOUSE_") {
			out = append(out, kv)
		}
	}
	return out
}

// waitLive polls url until it answers 200, the server exits, or two minutes
// pass (the first make run builds the binary).
func waitLive(t *testing.T, url string, served <-chan error, out *harness.SyncBuffer) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-served:
			t.Fatalf("make run ended before serving: %v\n%s", err, out.String())
		default:
		}
		if res, err := client.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s did not answer within two minutes:\n%s", url, out.String())
}
