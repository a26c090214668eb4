package test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Ensure an administrator drives the console in a real browser under its
// strict CSP, on every store (one Chromium each, one after the other): the
// console sends them to the hosted sign-in and back; "/" focuses the search,
// typing an address and Enter finds the user; they revoke that user's
// session and ban them; impersonate another user, see the banner on the
// console and stop; delete a third user with the typed confirmation. No
// page may raise an exception, log an error, violate its CSP or fail a
// request. Then a signed-in user who is not an administrator gets the
// refusal page. Every page's screenshot goes to GATEHOUSE_TEST_ARTIFACTS (a
// temporary directory when unset); the test logs their paths.
func TestConsole_browser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := chromiumPath(t)
	artifacts := os.Getenv("GATEHOUSE_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	for _, s := range allStores {
		t.Run("store="+string(s), func(t *testing.T) {
			app := mustStartFramework(t, s, adminEnv)
			consoleBrowser(t, app, chromium, filepath.Join(artifacts, "console-"+string(s)))
		})
	}
}

func consoleBrowser(t *testing.T, app *fwApp, chromium, dir string) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	mustVerifiedUser(t, app, "Root Admin", adminEmail, strictPassword)
	mustVerifiedUser(t, app, "Pat Plain", "pat@example.com", strictPassword)
	_, vicID := mustPlainUser(t, app, "Vic Victim", "vic@example.com", userPassword)
	_, impID := mustPlainUser(t, app, "Ivy Impersonated", "ivy@example.com", userPassword)
	_, delID := mustPlainUser(t, app, "Dee Deleted", "dee@example.com", userPassword)

	ctx := newBrowser(t, chromium)
	report := watchPage(t, ctx)
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		path := filepath.Join(dir, name+".png")
		if err := os.WriteFile(path, png, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	mustShow := func(what, want string) {
		t.Helper()
		if text := pageText(t, ctx, "body"); !strings.Contains(text, want) {
			t.Fatalf("%s: the page does not show %q; it shows:\n%s", what, want, text)
		}
	}

	// Signed out: to the hosted sign-in, and back to the console.
	oidcBrowserNavigate(t, ctx, app.URL+"/console/users")
	oidcBrowserSignIn(t, ctx, app, adminEmail)
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/users")
	shot("01-users")
	oidcBrowserNoCSPViolations(t, ctx, "the users page")

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
