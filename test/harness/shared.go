package harness

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Shared applications (docs/development.md, "Shared applications"): the
// tests of a package that need no settings of their own share one
// application per store and environment, started by the first test that
// asks for it and stopped when the package's tests are done. They keep
// apart by their own users, organizations and keys (Email gives each test
// addresses of its own). A test that changes settings, counts what the
// whole application holds, or stops or breaks the application keeps a fresh
// one (MustStart).

type sharedKey struct {
	store Store
	env   string
}

type sharedApp struct {
	once sync.Once
	app  *App
	err  string
	skip bool
}

var (
	sharedMu     sync.Mutex
	sharedApps   = map[sharedKey]*sharedApp{}
	sharedStop   []func()
	mainCalled   atomic.Bool
	sharedFailed atomic.Bool
)

// Main runs the package's tests, then stops its shared applications; a
// package whose tests call Shared has
//
//	func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
//
// A package whose tests mostly wait runs more of them at once: see
// DefaultParallel.
func Main(m *testing.M) int {
	mainCalled.Store(true)
	code := m.Run()
	sharedMu.Lock()
	stops := sharedStop
	sharedStop = nil
	sharedMu.Unlock()
	for _, stop := range slices.Backward(stops) {
		stop()
	}
	if code == 0 && sharedFailed.Load() {
		return 1
	}
	return code
}

// Shared returns the package's application on s with env, starting it if
// no test did yet. A failure to start fails (or, without PostgreSQL, skips)
// every test that asks for it.
func Shared(t testing.TB, s Store, env map[string]string) *App {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("harness.Shared: the package's TestMain must run harness.Main")
	}
	key := sharedKey{store: s, env: envKey(env)}
	sharedMu.Lock()
	sa := sharedApps[key]
	if sa == nil {
		sa = &sharedApp{}
		sharedApps[key] = sa
	}
	sharedMu.Unlock()
	sa.once.Do(func() { sa.app, sa.err, sa.skip = startShared(t, s, env) })
	switch {
	case sa.skip:
		t.Skip(sa.err)
	case sa.err != "":
		t.Fatalf("the shared application on %s: %s", s, sa.err)
	}
	return sa.app
}

// SharedForStores runs fn in parallel on the package's shared application
// with env on each of stores.
func SharedForStores(t *testing.T, stores []Store, env map[string]string, fn func(t *testing.T, app *App)) {
	t.Helper()
	for _, s := range stores {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			fn(t, Shared(t, s, env))
		})
	}
}

// Email returns local@domain made the test's own: the local part gains a
// tag from the name of the top-level test, so tests on one shared
// application never meet each other's accounts, and a test and its
// subtests mean the same account by the same name.
func Email(t testing.TB, address string) string {
	local, domain, ok := strings.Cut(address, "@")
	if !ok {
		t.Fatalf("Email(%q): not an address", address)
	}
	return local + "." + testTag(t) + "@" + domain
}

// Own returns name made the test's own as Email makes an address: name, a
// hyphen and the same tag (an organization's slug, an OAuth client's or a
// key's name, a hostname's first label), so tests sharing an application
// never meet each other's.
func Own(t testing.TB, name string) string { return name + "-" + testTag(t) }

// testTag is eight hex digits drawn from the top-level test's name.
func testTag(t testing.TB) string {
	top, _, _ := strings.Cut(t.Name(), "/")
	h := fnv.New32a()
	_, _ = h.Write([]byte(top))
	return fmt.Sprintf("%08x", h.Sum32())
}

func envKey(env map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(env)) {
		fmt.Fprintf(&b, "%s=%s\x00", k, env[k])
	}
	return b.String()
}

// startShared starts an application whose cleanups run at the end of the
// package's tests (Main), not at the end of the test that started it.
func startShared(t testing.TB, s Store, env map[string]string) (app *App, msg string, skip bool) {
	ctx, cancel := context.WithCancel(context.Background())
	pt := &packageTB{TB: t, ctx: ctx}
	pt.cleanups = append(pt.cleanups, cancel)
	defer func() {
		if r := recover(); r != nil {
			stop, ok := r.(packageStop)
			if !ok {
				panic(r)
			}
			pt.runCleanups()
			app, msg, skip = nil, stop.msg, stop.skip
		}
	}()
	app = MustStart(pt, s, env)
	pt.started.Store(true)
	sharedMu.Lock()
	sharedStop = append(sharedStop, pt.runCleanups)
	sharedMu.Unlock()
	return app, "", false
}

// packageStop is how packageTB's Fatal and Skip leave a shared start.
type packageStop struct {
	msg  string
	skip bool
}

// packageTB is the testing.TB a shared application starts with: its
// cleanups, temporary folders and context last until Main ends them, what
// is logged after the start goes nowhere, and a failure or a skip during
// the start is the starting test's and every later asker's.
type packageTB struct {
	testing.TB
	ctx      context.Context
	started  atomic.Bool
	mu       sync.Mutex
	cleanups []func()
}

func (p *packageTB) Helper()                  {}
func (p *packageTB) Name() string             { return "Shared" }
func (p *packageTB) Context() context.Context { return p.ctx }
func (p *packageTB) Log(...any)               {}
func (p *packageTB) Logf(string, ...any)      {}
func (p *packageTB) Failed() bool             { return false }
func (p *packageTB) Skipped() bool            { return false }

func (p *packageTB) Cleanup(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

func (p *packageTB) TempDir() string {
	dir, err := os.MkdirTemp("", "gatehouse-shared-")
	if err != nil {
		p.Fatalf("TempDir: %v", err)
	}
	p.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func (p *packageTB) Setenv(string, string) {
	p.Fatal("a shared application cannot set the environment")
}

func (p *packageTB) Error(args ...any)                 { p.fail(fmt.Sprint(args...), false) }
func (p *packageTB) Errorf(format string, args ...any) { p.fail(fmt.Sprintf(format, args...), false) }
func (p *packageTB) Fail()                             { p.fail("failed", false) }
func (p *packageTB) FailNow()                          { p.stop("failed", false) }
func (p *packageTB) Fatal(args ...any)                 { p.stop(fmt.Sprint(args...), false) }
func (p *packageTB) Fatalf(format string, args ...any) { p.stop(fmt.Sprintf(format, args...), false) }
func (p *packageTB) Skip(args ...any)                  { p.stop(fmt.Sprint(args...), true) }
func (p *packageTB) Skipf(format string, args ...any)  { p.stop(fmt.Sprintf(format, args...), true) }
func (p *packageTB) SkipNow()                          { p.stop("skipped", true) }

// stop leaves a start under way (startShared recovers), or, once the
// application runs, reports msg and ends the goroutine that failed.
func (p *packageTB) stop(msg string, skip bool) {
	if !p.started.Load() {
		panic(packageStop{msg: msg, skip: skip})
	}
	p.fail(msg, skip)
	runtime.Goexit()
}

// fail fails a start under way, or, once the application runs, reports msg
// on stderr and makes Main's run fail: no test is there to fail.
func (p *packageTB) fail(msg string, skip bool) {
	if !p.started.Load() {
		panic(packageStop{msg: msg, skip: skip})
	}
	if !skip {
		fmt.Fprintf(os.Stderr, "harness: a shared application failed: %s\n", msg)
		sharedFailed.Store(true)
	}
}

// runCleanups runs the cleanups last first, as testing does.
func (p *packageTB) runCleanups() {
	p.mu.Lock()
	cs := p.cleanups
	p.cleanups = nil
	p.mu.Unlock()
	for _, f := range slices.Backward(cs) {
		f()
	}
}

// DefaultParallel has the package's parallel tests run n at a time, unless
// the command line says otherwise (-parallel). Go's default is GOMAXPROCS:
// 2 on CI's machine, too few for tests that mostly wait on processes,
// browsers and servers. Call it first in TestMain; each package's value,
// and the measurement it comes from, is beside its call.
func DefaultParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic("harness.DefaultParallel: " + err.Error())
		}
	}
}
