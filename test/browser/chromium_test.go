package browser

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/gatehouse/gatehouse/test/harness"
)

// defaultParallel is how many of the package's tests run at once when the
// command line does not say (-parallel). A browser test mostly waits, on
// Chromium and on its applications, so more than GOMAXPROCS (2 on CI's
// machine) at a time finishes sooner. 4 is where the wall time stopped
// falling, measured with -race on 2 busy cores (the whole package: 2 at a
// time 99-104 s, 4 at a time 82-85 s, 8 at a time 81-85 s, all at once
// 84-91 s), while memory kept rising (Chromium and the test process
// together, resident: 2.9 GB at 2, 3.7 GB at 4, 4.9 GB at 8, 6.2 GB at 14).
const defaultParallel = 4

// TestMain runs the package's tests defaultParallel at a time unless
// -parallel is given, and closes the one Chromium they share when they are
// done.
func TestMain(m *testing.M) {
	harness.DefaultParallel(defaultParallel)
	code := m.Run()
	if err := chromium.close(); err != nil {
		fmt.Fprintf(os.Stderr, "close chromium: %v\n", err)
	}
	os.Exit(code)
}

// chromiumPath finds a Chromium or Chrome binary on PATH. Without one the test
// is skipped, except under CI, where the browser is part of the toolchain and
// its absence must not pass silently.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium must be installed in CI (none of chromium, chromium-browser, google-chrome is on PATH)")
	}
	t.Skip("no chromium, chromium-browser or google-chrome on PATH")
	return ""
}

// sharedChromium is the package's one headless Chromium, started by the
// first test that opens a tab and closed by TestMain. Its flags suit a
// closed network and running as root; its profile is a temporary folder that
// chromedp removes when the browser exits.
type sharedChromium struct {
	once   sync.Once
	err    error
	ctx    context.Context // the browser's first tab; its children are tabs
	cancel func()          // stops the browser
	output harness.SyncBuffer
}

var chromium sharedChromium

// start starts the browser once; later calls return the first one's outcome.
func (c *sharedChromium) start(path string) (context.Context, error) {
	c.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.CombinedOutput(&c.output),
		)
		// The browser lives as long as the test process, not a test: its
		// contexts come from context.Background, and TestMain ends them.
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelBrowser := chromedp.NewContext(allocCtx)
		c.ctx = ctx
		c.cancel = func() { cancelBrowser(); cancelAlloc() }
		c.err = chromedp.Do(ctx)
	})
	return c.ctx, c.err
}

// close closes the browser, if a test started it, and waits for it to exit.
func (c *sharedChromium) close() error {
	if c.ctx == nil {
		return nil
	}
	defer c.cancel()
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Cancel(ctx); err != nil && c.err == nil {
		return err
	}
	return nil
}

// newTabContext returns a context for a new tab of the package's one
// Chromium (started on first use), in a browser context of its own: an
// incognito-like profile, so that no cookie, storage, cache, permission or
// service worker passes between tests running at once (the clipboard is the
// browser's: mustCopy takes turns). The tab opens in a window of its own (a
// tab hidden behind another gets no animation frames) with its focus
// emulated, as the only window of a browser of its own would have it: a page
// without focus may not use the clipboard, and headless Chromium giving
// every window focus, as it does today, is not promised. The tab lives at
// most browserDeadline, so a stuck page fails the test instead of hanging
// it. Cleanup closes the tab and disposes of its browser context; should the
// test fail, it logs what Chromium printed meanwhile.
func newTabContext(t *testing.T, path string) context.Context {
	t.Helper()
	parent, err := chromium.start(path)
	if err != nil {
		t.Fatalf("start %s: %v\n%s", path, err, chromiumOutput(chromium.output.String()))
	}
	since := len(chromium.output.String())
	ctx, cancelTab := chromedp.NewContext(parent, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelTab)
	ctx, cancelDeadline := context.WithTimeout(ctx, browserDeadline)
	t.Cleanup(cancelDeadline)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chromium output while the tab was open (every tab's):\n%s", chromiumOutput(chromium.output.String()[since:]))
		}
	})
	// Open the tab now, so that a tab that cannot open reads as such.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab in %s: %v", path, err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatalf("emulate the tab's focus: %v", err)
	}
	return ctx
}

// chromiumOutput is what Chromium printed, less the lines about D-Bus (there
// is none in a container; harmless).
func chromiumOutput(s string) string {
	var lines []string
	for l := range strings.Lines(s) {
		if !strings.Contains(l, "dbus/") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "")
}

// grantClipboard lets origin's pages read and write the clipboard in the
// tab's browser context (and only there: the permission is the context's,
// though the clipboard is not: see mustCopy).
func grantClipboard(t *testing.T, ctx context.Context, origin string) {
	t.Helper()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true}, Setting: browser.PermissionSettingGranted,
			Origin: origin, BrowserContextID: chromedp.FromContext(ctx).BrowserContextID}); err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
	}
}

// clipboardMu is held from a copy button's press until the clipboard is
// read back: Chromium has one clipboard for all its browser contexts, so a
// test copying at the same time as another read the other's text.
var clipboardMu sync.Mutex

// mustCopy presses the copy button of the element id (button[data-copy=id])
// and returns what the clipboard holds once the button says "Copied". The
// tab needs the clipboard permission (grantClipboard).
func mustCopy(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	clipboardMu.Lock()
	defer clipboardMu.Unlock()
	button := `button[data-copy=` + jsString(id) + `]`
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(button))); err != nil {
		t.Fatalf("press the copy button of #%s: %v", id, err)
	}
	consoleWait(t, ctx, "the copy of #"+id, `document.querySelector(`+jsString(button)+`).textContent === "Copied"`)
	copied, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("read the clipboard: %v", err)
	}
	return copied
}

// Ensure two tabs open at once in the shared Chromium keep apart what two
// browsers would: a cookie, local storage and a granted permission of one
// are not the other's, clearing one's cookies leaves the other's, and both
// pages have focus.
func TestChromium_tabs_are_isolated(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	path := chromiumPath(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "who", Value: r.URL.Query().Get("v"), Path: "/"})
		}
		_, _ = io.WriteString(w, "<!doctype html><title>tab</title><p>tab</p>")
	}))
	t.Cleanup(srv.Close)
	a, b := newTabContext(t, path), newTabContext(t, path)
	eval := func(ctx context.Context, js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	oidcBrowserNavigate(t, a, srv.URL+"/set?v=a")
	oidcBrowserNavigate(t, b, srv.URL+"/")
	eval(a, `(localStorage.setItem("who", "a"), "")`)
	grantClipboard(t, a, srv.URL)
	oidcBrowserNavigate(t, b, srv.URL+"/")
	for _, c := range []struct{ name, js, a, b string }{
		{"the cookie", `document.cookie`, "who=a", ""},
		{"local storage", `localStorage.getItem("who") ?? ""`, "a", ""},
		{"the clipboard permission", `navigator.permissions.query({name: "clipboard-read"}).then(p => p.state)`, "granted", "prompt"},
		{"focus", `String(document.hasFocus())`, "true", "true"},
	} {
		if got := eval(a, c.js); got != c.a {
			t.Errorf("%s in the first tab: %q, want %q", c.name, got, c.a)
		}
		if got := eval(b, c.js); got != c.b {
			t.Errorf("%s in the second tab: %q, want %q", c.name, got, c.b)
		}
	}
	oidcBrowserNavigate(t, b, srv.URL+"/set?v=b")
	if _, err := chromedp.Call(b, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if got := eval(a, `document.cookie`); got != "who=a" {
		t.Errorf("after the second tab cleared its cookies the first has %q, want who=a", got)
	}
	if got := eval(b, `document.cookie`); got != "" {
		t.Errorf("the second tab's cookies after clearing them: %q", got)
	}
}
