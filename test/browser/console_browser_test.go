package browser

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure an administrator drives the console in a real browser under its
// strict CSP, on the stores of the store policy (a tab each, in parallel): the
// console sends them to the hosted sign-in and back; "/" focuses the search,
// typing an address and Enter finds the user; they revoke that user's
// session and ban them; impersonate another user, see the banner on the
// console and stop; delete a third user with the typed confirmation. No
// page may raise an exception, log an error, violate its CSP or fail a
// request. Then a signed-in user who is not an administrator gets the
// refusal page. Every page's screenshot goes to GATEHOUSE_TEST_ARTIFACTS (a
// temporary directory when unset); the test logs their paths.
func TestConsole_browser(t *testing.T) {
	forBrowserStores(t, harness.StoresOnce, "console", func(t *testing.T, s harness.Store, chromium, dir string) {
		app := harness.MustStart(t, s, harness.AdminEnv)
		consoleBrowser(t, app, chromium, dir)
	})
}

func consoleBrowser(t *testing.T, app *harness.App, chromium, dir string) {
	harness.MustVerifiedUser(t, app, "Root Admin", harness.AdminEmail, harness.StrictPassword)
	harness.MustVerifiedUser(t, app, "Pat Plain", "pat@example.com", harness.StrictPassword)
	_, vicID := harness.MustPlainUser(t, app, "Vic Victim", "vic@example.com", harness.UserPassword)
	_, impID := harness.MustPlainUser(t, app, "Ivy Impersonated", "ivy@example.com", harness.UserPassword)
	_, delID := harness.MustPlainUser(t, app, "Dee Deleted", "dee@example.com", harness.UserPassword)

	tb := newTab(t, chromium, dir)
	ctx, report, shot, do := tb.ctx, tb.report, tb.shot, tb.do
	mustShow := tb.mustShow

	// Signed out: to the hosted sign-in, and back to the console.
	oidcBrowserNavigate(t, ctx, app.URL+"/console/users")
	oidcBrowserSignIn(t, ctx, app, harness.AdminEmail)
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/users")
	shot("01-users")
	oidcBrowserNoCSPViolations(t, ctx, "the users page")
	mustWholeHeadings(t, ctx, "the users page")
	// The dark theme (the system's setting) holds its contrast too.
	darkTheme(t, ctx, true)
	mustAccessible(t, ctx, "the users page in the dark theme")
	shot("01-users-dark")
	darkTheme(t, ctx, false)

	// "/" focuses the search; typing an address and Enter finds the user.
	do("press /", chromedp.KeyEvent("/"))
	if focused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement?.id ?? ""`)); err != nil || focused != "q" {
		t.Fatalf(`after "/" the focus is on %q (%v), want the search box`, focused, err)
	}
	do("type the address", chromedp.KeyEvent("vic@example.com"), chromedp.KeyEvent(kb.Enter))
	consoleWait(t, ctx, "the search results", `new URL(location.href).searchParams.get("q") === "vic@example.com"`)
	if rows := pageText(t, ctx, "tbody"); !strings.Contains(rows, "vic@example.com") || strings.Contains(rows, "ivy@example.com") {
		t.Fatalf("the search for vic@example.com shows:\n%s", rows)
	}
	shot("02-search")
	oidcBrowserNoCSPViolations(t, ctx, "the search results")
	do("open the user", chromedp.Click(chromedp.CSS(`a[href="/console/users/`+vicID+`"]`)))
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/users/"+vicID)
	shot("03-user")
	oidcBrowserNoCSPViolations(t, ctx, "the user page")

	// Revoke their session (the one sign-up started), then ban them.
	do("open the session's revocation", chromedp.Click(chromedp.CSS(`details:has(form[action$="/sessions/revoke"]) summary`)))
	do("revoke the session", chromedp.Click(chromedp.CSS(`form[action$="/sessions/revoke"] [type="submit"]`)))
	consoleWait(t, ctx, "the revocation", `location.search === "?done=revoked"`)
	mustShow("after revoking", "The session has ended.")
	mustShow("after revoking", "No live session.")
	do("open the ban form", chromedp.Click(chromedp.CSS(`details:has(form[action$="/ban"]) summary`)))
	do("ban", chromedp.SendKeys(chromedp.CSS(`#reason`), "spam from the browser"),
		chromedp.Click(chromedp.CSS(`form[action$="/ban"] [type="submit"]`)))
	consoleWait(t, ctx, "the ban", `location.search === "?done=banned"`)
	mustShow("after the ban", "The user is banned")
	mustShow("after the ban", "spam from the browser")
	shot("04-banned")
	oidcBrowserNoCSPViolations(t, ctx, "the banned user's page")

	// Impersonate another user: the banner, then stop.
	oidcBrowserNavigate(t, ctx, app.URL+"/console/users/"+impID)
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/users/"+impID)
	do("open the impersonation form", chromedp.Click(chromedp.CSS(`details:has(form[action$="/impersonate"]) summary`)))
	do("impersonate", chromedp.Click(chromedp.CSS(`form[action$="/impersonate"] [type="submit"]`)))
	oidcBrowserWaitPath(t, ctx, app.URL, "/console")
	if banner := pageText(t, ctx, "#impersonation-banner"); !strings.Contains(banner, "You are impersonating ivy@example.com") {
		t.Fatalf("the impersonation banner says %q", banner)
	}
	shot("05-impersonating")
	oidcBrowserNoCSPViolations(t, ctx, "the impersonation page")
	do("stop impersonating", chromedp.Click(chromedp.CSS(`#impersonation-banner [type="submit"]`)))
	consoleWait(t, ctx, "stopping", `location.search === "?done=stopped"`)
	mustShow("after stopping", "You stopped impersonating")
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#impersonation-banner").length`)); err != nil || n != 0 {
		t.Fatalf("the banner is still there after stopping (%d, %v)", n, err)
	}
	shot("06-stopped")

	// Delete a third user with the typed confirmation.
	oidcBrowserNavigate(t, ctx, app.URL+"/console/users/"+delID)
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/users/"+delID)
	do("open the delete form", chromedp.Click(chromedp.CSS(`details:has(form[action$="/delete"]) summary`)))
	do("delete", chromedp.SendKeys(chromedp.CSS(`#confirm`), "dee@example.com"),
		chromedp.Click(chromedp.CSS(`form[action$="/delete"] [type="submit"]`)))
	consoleWait(t, ctx, "the deletion", `location.pathname === "/console/users" && location.search === "?deleted=1"`)
	mustShow("after deleting", "The user is deleted.")
	shot("07-deleted")
	oidcBrowserNoCSPViolations(t, ctx, "the users page after deleting")
	report()

	// A user who is not an administrator is refused (the 403 is expected:
	// the page watch has reported already).
	if _, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	oidcBrowserNavigate(t, ctx, app.URL+"/console")
	oidcBrowserSignIn(t, ctx, app, "pat@example.com")
	oidcBrowserWaitPath(t, ctx, app.URL, "/console")
	mustShow("a plain user", "Not an administrator")
	shot("08-refused")
	oidcBrowserNoCSPViolations(t, ctx, "the refusal page")
}

// consoleWait waits until the tab's document has loaded and cond, a
// JavaScript expression, holds.
func consoleWait(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	expr := `(() => document.readyState === "complete" && (` + cond + `))()`
	deadline := time.Now().Add(oidcBrowserStepTimeout)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
			t.Fatalf("waiting for %s: last error %v; the tab shows %s", what, err, href)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// forBrowserStores runs a browser test once per store, the stores in
// parallel with each other and with the package's other tests (each in its
// own tab of the one Chromium), skipped in -short mode: fn gets the store,
// Chromium's path and the folder for its screenshots,
// GATEHOUSE_TEST_ARTIFACTS/name-<store> (under a temporary directory when
// that is unset).
func forBrowserStores(t *testing.T, stores []harness.Store, name string, fn func(t *testing.T, s harness.Store, chromium, dir string)) {
	t.Helper()
	t.Parallel()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := chromiumPath(t)
	artifacts := os.Getenv("GATEHOUSE_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	for _, s := range stores {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			fn(t, s, chromium, filepath.Join(artifacts, name+"-"+string(s)))
		})
	}
}

// tab is a browser test's Chromium tab, watched (watchPage: report fails
// the test on any exception, console error, failed request or CSP
// violation so far), with the steps every console and account browser test
// takes.
type tab struct {
	t      *testing.T
	ctx    context.Context
	dir    string
	report func()
}

// newTab opens a tab for t (newTabContext) and watches it; screenshots go
// to dir.
func newTab(t *testing.T, chromium, dir string) *tab {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	ctx := newTabContext(t, chromium)
	return &tab{t: t, ctx: ctx, dir: dir, report: watchPage(t, ctx)}
}

// shot writes the page's full screenshot to name.png and logs its path.
func (b *tab) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(path, png, 0o600); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

// do runs actions, failing the test with what when one fails.
func (b *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// mustShow fails unless the page's text holds want.
func (b *tab) mustShow(what, want string) {
	b.t.Helper()
	b.mustShowIn(what, "body", want)
}

// mustShowIn fails unless the text of the element selector holds want.
func (b *tab) mustShowIn(what, selector, want string) {
	b.t.Helper()
	if text := pageText(b.t, b.ctx, selector); !strings.Contains(text, want) {
		b.t.Fatalf("%s: %s does not show %q; it shows:\n%s", what, selector, want, text)
	}
}

// darkTheme has the tab's system setting ask for the dark theme, or for
// none (the light one).
func darkTheme(t *testing.T, ctx context.Context, on bool) {
	t.Helper()
	params := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}}
	if on {
		params.Features[0].Value = "dark"
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, params); err != nil {
		t.Fatalf("emulate the color scheme: %v", err)
	}
}

// mustWholeHeadings fails unless every table heading on the tab's page
// renders on one line, at the window's width: a heading broken inside its
// word ("Outcom e") or over two lines reads badly, and the cells below
// may wrap instead.
func mustWholeHeadings(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("th"))
  .filter(th => { const r = document.createRange(); r.selectNodeContents(th);
    return new Set(Array.from(r.getClientRects(), q => Math.round(q.top))).size > 1; })
  .map(th => th.textContent.trim())`))
	if err != nil {
		t.Fatalf("read the headings of %s: %v", what, err)
	}
	if len(broken) > 0 {
		t.Fatalf("%s breaks the table headings %q over lines", what, broken)
	}
}
