package harness

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds that only turn a hang into a failure.
const (
	npmCITimeout    = 5 * time.Minute
	NodeTestTimeout = 3 * time.Minute
)

// ClientsDir holds the Node suite, relative to this package.
var ClientsDir = RootPath("test", "clients")

// MustTool returns the path of a program the Node suite needs. Without it the
// test skips, except under CI, where the suite may not be skipped.
func MustTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s must be installed in CI: the better-auth client suite may not be skipped", name)
		}
		t.Skipf("%s is not on PATH: the better-auth client suite needs Node.js 20 and npm", name)
	}
	return p
}

// npmMu keeps the parallel tests of one package from running npm ci in
// test/clients at the same time: the second would delete node_modules under
// the first.
var npmMu sync.Mutex

// MustNpmCI installs test/clients' locked packages unless every dependency
// package.json pins is installed at its pinned version ("make clients" does
// the same by hand). A checkout whose pins changed since its last install
// (a new test's library, an upgrade) is installed again. Tests that call
// it at once wait for one another, in one test process (npmMu) and across
// the test packages make test runs side by side (an flock on a file in
// test/clients): a second npm ci would delete node_modules under the first.
func MustNpmCI(t *testing.T, npm string) {
	t.Helper()
	npmMu.Lock()
	defer npmMu.Unlock()
	lock, err := os.OpenFile(filepath.Join(ClientsDir, ".npm-ci.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("npm ci lock: %v", err)
	}
	defer func() { _ = lock.Close() }()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("npm ci lock: %v", err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	if npmInstalled(t) {
		return
	}
	ctx, cancel := context.WithTimeout(t.Context(), npmCITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = ClientsDir
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", ClientsDir, err, out)
	}
	if !npmInstalled(t) {
		t.Fatalf("npm ci in %s left a pinned dependency missing or at another version", ClientsDir)
	}
}

// npmInstalled reports whether every dependency of test/clients'
// package.json, development ones included (npm ci installs them, and suites
// import them), is in node_modules at exactly its pinned version.
func npmInstalled(t *testing.T) bool {
	t.Helper()
	var manifest struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	raw, err := os.ReadFile(filepath.Join(ClientsDir, "package.json"))
	if err != nil {
		t.Fatalf("read %s/package.json: %v", ClientsDir, err)
	}
	if err := json.Unmarshal(raw, &manifest); err != nil || len(manifest.Dependencies) == 0 {
		t.Fatalf("%s/package.json: no dependencies (%v)", ClientsDir, err)
	}
	pins := maps.Clone(manifest.Dependencies)
	maps.Copy(pins, manifest.DevDependencies)
	for name, pinned := range pins {
		var installed struct {
			Version string `json:"version"`
		}
		raw, err := os.ReadFile(filepath.Join(ClientsDir, "node_modules", name, "package.json")) // #nosec G304 -- names from our own package.json
		if err != nil || json.Unmarshal(raw, &installed) != nil || installed.Version != pinned {
			return false
		}
	}
	return true
}
