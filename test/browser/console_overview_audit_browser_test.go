package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure an administrator, in a real browser under the console's strict
// CSP, on SQLite and PostgreSQL: opens the console on the overview and
// sees its sign-in chart drawn; bans a user from the Users section, finds
// the ban in the audit log filtered by its action and follows the entry's
// link to the user; opens the identity providers and the webhooks, and
// adds a webhook endpoint whose signing secret shows once with its copy
// button. No page may raise an exception, log an error, violate its CSP or
// fail a request. Every page's screenshot goes to GATEHOUSE_TEST_ARTIFACTS
// (a temporary directory when unset); the test logs their paths.
func TestConsoleOverviewAudit_browser(t *testing.T) {
	forBrowserStores(t, harness.StoresOnce, "console-overview-audit", func(t *testing.T, s harness.Store, chromium, dir string) {
		app := harness.MustStart(t, s, harness.AdminEnv)
		consoleOverviewAuditBrowser(t, app, chromium, dir)
	})
}

func consoleOverviewAuditBrowser(t *testing.T, app *harness.App, chromium, dir string) {
	harness.MustVerifiedUser(t, app, "Root Admin", harness.AdminEmail, harness.StrictPassword)
	_, vicID := harness.MustPlainUser(t, app, "Vic Victim", "vic@example.com", harness.UserPassword)

	tb := newTab(t, chromium, dir)
	ctx, report, shot, do := tb.ctx, tb.report, tb.shot, tb.do
	mustShow := tb.mustShowIn

	// Signed out: to the hosted sign-in, and back to the console, which
	// opens on the overview with its charts drawn.
	oidcBrowserNavigate(t, ctx, app.URL+"/console")
	oidcBrowserSignIn(t, ctx, app, harness.AdminEmail)
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/overview")
	consoleWait(t, ctx, "the day's chart", `(() => { const r = document.querySelector("#chart-day svg.chart")?.getBoundingClientRect();
		return !!r && r.width > 200 && r.height > 50 && document.querySelectorAll("#chart-day rect.chart-bar").length === 48; })()`)
	mustShow("the overview", ".stats", "Users")
	mustShow("the overview", "#chart-month figcaption", "Last 30 days")
	shot("01-overview")
	oidcBrowserNoCSPViolations(t, ctx, "the overview")

	// Ban the user from the Users section.
	do("open Users", chromedp.Click(chromedp.CSS(`nav a[href="/console/users"]`)))
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/users")
	do("open the user", chromedp.Click(chromedp.CSS(`a[href="/console/users/`+vicID+`"]`)))
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/users/"+vicID)
	do("open the ban form", chromedp.Click(chromedp.CSS(`details:has(form[action$="/ban"]) summary`)))
	do("ban", chromedp.SendKeys(chromedp.CSS(`#reason`), "spam seen in the audit"),
		chromedp.Click(chromedp.CSS(`form[action$="/ban"] [type="submit"]`)))
	consoleWait(t, ctx, "the ban", `location.search === "?done=banned"`)
	oidcBrowserNoCSPViolations(t, ctx, "the banned user's page")

	// The audit log, filtered by the action: "/" focuses the filter.
	do("open the audit log", chromedp.Click(chromedp.CSS(`nav a[href="/console/audit"]`)))
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/audit")
	do("press /", chromedp.KeyEvent("/"))
	do("filter by action", chromedp.KeyEvent("admin.ban-user"), chromedp.KeyEvent(kb.Enter))
	consoleWait(t, ctx, "the filtered log", `new URL(location.href).searchParams.get("action") === "admin.ban-user"`)
	rows := pageText(t, ctx, "tbody")
	if strings.Count(rows, "admin.ban-user") != 1 || !strings.Contains(rows, vicID) {
		t.Fatalf("the log filtered by admin.ban-user shows:\n%s", rows)
	}
	shot("02-audit-filtered")
	oidcBrowserNoCSPViolations(t, ctx, "the audit log")
	mustWholeHeadings(t, ctx, "the audit log")
	do("follow the entry to the user", chromedp.Click(chromedp.CSS(`tbody a[href="/console/users/`+vicID+`"]`)))
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/users/"+vicID)
	mustShow("the user reached from the log", "main", "spam seen in the audit")
	shot("03-user-from-audit")
	oidcBrowserNoCSPViolations(t, ctx, "the user reached from the log")

	// Identity providers, then webhooks: add an endpoint.
	do("open identity providers", chromedp.Click(chromedp.CSS(`nav a[href="/console/identity-providers"]`)))
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/identity-providers")
	do("open the registration form", chromedp.Click(chromedp.CSS(`#register summary`)))
	mustShow("the identity providers", "main", "No identity provider yet.")
	shot("04-identity-providers")
	oidcBrowserNoCSPViolations(t, ctx, "the identity providers")

	do("open webhooks", chromedp.Click(chromedp.CSS(`nav a[href="/console/webhooks"]`)))
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/webhooks")
	do("open the endpoint form", chromedp.Click(chromedp.CSS(`#register summary`)))
	do("add an endpoint", chromedp.SendKeys(chromedp.CSS(`#wh-url`), "https://hooks.example.com/console"),
		chromedp.SendKeys(chromedp.CSS(`#wh-desc`), "from the browser"),
		chromedp.Click(chromedp.CSS(`input[name="events"][value="user.banned"]`)))
	shot("05-webhook-form")
	oidcBrowserNoCSPViolations(t, ctx, "the webhooks with the form open")
	do("submit", chromedp.Click(chromedp.CSS(`form[action="/console/webhooks"] [type="submit"]`)))
	consoleWait(t, ctx, "the new endpoint", `!!document.getElementById("signing-secret")`)
	if secret := pageText(t, ctx, "#signing-secret"); !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the signing secret shows as %q", secret)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('button[data-copy="signing-secret"]').length`)); err != nil || n != 1 {
		t.Fatalf("%d copy buttons (%v)", n, err)
	}
	mustShow("the new endpoint", "main", "shown this once")
	mustShow("the new endpoint", "main", "https://hooks.example.com/console")
	shot("06-webhook-secret")
	oidcBrowserNoCSPViolations(t, ctx, "the new endpoint's page")

	// Its page, opened again from the list, does not show the secret.
	do("back to the list", chromedp.Click(chromedp.CSS(`nav a[href="/console/webhooks"]`)))
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/webhooks")
	do("open the endpoint", chromedp.Click(chromedp.CSS(`tbody a[href^="/console/webhooks/"]`)))
	consoleWait(t, ctx, "the endpoint's page", `location.pathname.startsWith("/console/webhooks/")`)
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#signing-secret").length + (document.body.innerText.includes("whsec_") ? 1 : 0)`)); err != nil || n != 0 {
		t.Fatalf("the endpoint's page shows its secret again (%d, %v)", n, err)
	}
	shot("07-webhook")
	oidcBrowserNoCSPViolations(t, ctx, "the endpoint's page")
	report()
}
