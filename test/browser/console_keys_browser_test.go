package browser

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure an administrator drives the Service keys, OAuth clients and
// Signing keys sections in a real browser under the console's strict CSP,
// on SQLite and PostgreSQL: they create a service key, copy its secret with
// the copy button (the test reads it back from the clipboard), and that
// secret lists users on the trusted API; the key's page does not show it
// again; they rotate the key, rotate the signing keys, register an OAuth
// client (its secret shown once, with the client id) and see its redirect
// URI on its page, and going back to the secret's page does not show it. No page may raise an exception, log an error,
// violate its CSP or fail a request. Every page's screenshot goes to
// GATEHOUSE_TEST_ARTIFACTS (a temporary directory when unset); the test
// logs their paths.
func TestConsoleKeys_browser(t *testing.T) {
	forBrowserStores(t, harness.StoresOnce, "console-keys", func(t *testing.T, s harness.Store, chromium, dir string) {
		app := harness.MustStart(t, s, harness.AdminEnv)
		consoleKeysBrowser(t, app, chromium, dir)
	})
}

func consoleKeysBrowser(t *testing.T, app *harness.App, chromium, dir string) {
	harness.MustVerifiedUser(t, app, "Root Admin", harness.AdminEmail, harness.StrictPassword)

	tb := newTab(t, chromium, dir)
	ctx, report, shot, do := tb.ctx, tb.report, tb.shot, tb.do
	mustShow := tb.mustShow
	// The copy button writes to the clipboard, which the test reads back.
	grantClipboard(t, ctx, app.URL)
	mustNotShow := func(what, secret string) {
		t.Helper()
		html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(html, secret) {
			t.Fatalf("%s shows the secret again", what)
		}
	}
	// copySecret presses the copy button of the secret and returns what
	// the clipboard then holds.
	copySecret := func() string {
		t.Helper()
		copied := mustCopy(t, ctx, "secret")
		if shown := pageText(t, ctx, "#secret"); copied != shown {
			t.Fatalf("the clipboard holds %q, the page shows %q", copied, shown)
		}
		return copied
	}
	trusted := func(secret string) int {
		t.Helper()
		return app.NewClient(t).Get("/api/users", "Authorization", "Bearer "+secret).Status
	}

	// Signed out: to the hosted sign-in, and back to the section.
	oidcBrowserNavigate(t, ctx, app.URL+"/console/service-keys")
	oidcBrowserSignIn(t, ctx, app, harness.AdminEmail)
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/service-keys")
	mustShow("the empty list", "No service key")
	shot("01-service-keys")
	oidcBrowserNoCSPViolations(t, ctx, "the service keys page")

	// Create a key; its secret is shown once, copied, and works.
	do("open the create form", chromedp.Click(chromedp.CSS(`details:has(form[action="/console/service-keys"]) summary`)))
	do("create a key", chromedp.SendKeys(chromedp.CSS(`#name`), "browser backend"),
		chromedp.Click(chromedp.CSS(`input[name="scopes"][value="users:read"]`)),
		chromedp.SendKeys(chromedp.CSS(`#days`), "30"),
		chromedp.Click(chromedp.CSS(`form[method="post"][action="/console/service-keys"] [type="submit"]`)))
	consoleWait(t, ctx, "the new key's secret", `document.querySelector("#secret") !== null`)
	mustShow("the new key", "it will not be shown again")
	shot("02-service-key-secret")
	oidcBrowserNoCSPViolations(t, ctx, "the new key's secret")
	secret := copySecret()
	if !strings.HasPrefix(secret, "gh_sk_") {
		t.Fatalf("the copied secret is %q", secret)
	}
	if got := trusted(secret); got != http.StatusOK {
		t.Fatalf("GET /api/users with the copied key: %d", got)
	}

	// Continue to the key's page: no secret there, nor on the list.
	do("continue", chromedp.Click(chromedp.CSS(`.secret-box a`)))
	consoleWait(t, ctx, "the key's page", `location.pathname.startsWith("/console/service-keys/") && document.querySelector("#secret") === null`)
	keyPath, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	if err != nil {
		t.Fatal(err)
	}
	mustShow("the key's page", "users:read")
	mustNotShow("the key's page", secret)
	shot("03-service-key")
	oidcBrowserNoCSPViolations(t, ctx, "the key's page")
	oidcBrowserNavigate(t, ctx, app.URL+"/console/service-keys")
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/service-keys")
	mustShow("the list", "browser backend")
	mustNotShow("the list", secret)
	shot("04-service-keys-list")
	oidcBrowserNoCSPViolations(t, ctx, "the service keys list")

	// Rotate with the default overlap: both secrets work for now.
	oidcBrowserNavigate(t, ctx, app.URL+keyPath)
	oidcBrowserWaitPath(t, ctx, app.URL, keyPath)
	do("open the rotation", chromedp.Click(chromedp.CSS(`details:has(form[action$="/rotate"]) summary`)))
	do("rotate", chromedp.Click(chromedp.CSS(`form[action$="/rotate"] [type="submit"]`)))
	consoleWait(t, ctx, "the rotated secret", `document.querySelector("#secret") !== null`)
	mustShow("the rotation", "The old secret keeps working until")
	shot("05-service-key-rotated")
	oidcBrowserNoCSPViolations(t, ctx, "the rotated secret")
	rotated := copySecret()
	if rotated == secret || trusted(rotated) != http.StatusOK || trusted(secret) != http.StatusOK {
		t.Fatal("after the rotation the new and the old secret should both work")
	}

	// Rotate the signing keys: new pending keys show.
	oidcBrowserNavigate(t, ctx, app.URL+"/console/signing-keys")
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/signing-keys")
	shot("06-signing-keys")
	oidcBrowserNoCSPViolations(t, ctx, "the signing keys page")
	do("open the rotation", chromedp.Click(chromedp.CSS(`details:has(form[action="/console/signing-keys/rotate"]) summary`)))
	do("rotate the signing keys", chromedp.Click(chromedp.CSS(`form[action="/console/signing-keys/rotate"] [type="submit"]`)))
	consoleWait(t, ctx, "the rotation", `location.search === "?done=rotated"`)
	mustShow("after rotating", "New signing keys are made.")
	mustShow("after rotating", "pending")
	shot("07-signing-keys-rotated")
	oidcBrowserNoCSPViolations(t, ctx, "the signing keys after rotating")
	// Register a confidential OAuth client: its id and secret, once.
	oidcBrowserNavigate(t, ctx, app.URL+"/console/oauth-clients")
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/oauth-clients")
	mustShow("the empty clients list", "No OAuth client yet")
	do("open the registration", chromedp.Click(chromedp.CSS(`details:has(form[action="/console/oauth-clients"]) summary`)))
	do("register", chromedp.SendKeys(chromedp.CSS(`#name`), "Browser app"),
		chromedp.SendKeys(chromedp.CSS(`#redirectUris`), "https://app.example.com/callback"),
		chromedp.Click(chromedp.CSS(`form[action="/console/oauth-clients"] [type="submit"]`)))
	consoleWait(t, ctx, "the client's secret", `document.querySelector("#secret") !== null`)
	mustShow("the registration", "Client ID: gh_ci_")
	shot("08-oauth-client-secret")
	oidcBrowserNoCSPViolations(t, ctx, "the client's secret")
	clientSecret := copySecret()
	if !strings.HasPrefix(clientSecret, "gh_cs_") {
		t.Fatalf("the copied client secret is %q", clientSecret)
	}
	do("continue", chromedp.Click(chromedp.CSS(`.secret-box a`)))
	consoleWait(t, ctx, "the client's page", `location.pathname.startsWith("/console/oauth-clients/gh_ci_")`)
	mustShow("the client's page", "https://app.example.com/callback")
	mustNotShow("the client's page", clientSecret)
	shot("09-oauth-client")
	oidcBrowserNoCSPViolations(t, ctx, "the client's page")

	report()

	// Going back to the secret's page does not show it: the page is
	// no-store (Chromium may answer with a cache-miss page, after the page
	// watch's report), and should the back/forward cache keep it, it was
	// blanked when left.
	// (history.back, not NavigateBack: the cache miss is an answer here.
	// Called from a timer, so that the evaluation has answered before the
	// tab navigates: called at once, the navigation could overtake the
	// answer, and the DevTools call failed with "Inspected target
	// navigated or closed".)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`setTimeout(() => history.back(), 0)`)); err != nil {
		t.Fatalf("go back to the secret's page: %v", err)
	}
	consoleWait(t, ctx, "the page before", `!location.pathname.startsWith("/console/oauth-clients/")`)
	mustNotShow("the secret's page, visited again", clientSecret)
	shot("10-back-to-the-secret")
}
