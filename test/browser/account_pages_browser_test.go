package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure a user manages their account in a real browser under the strict
// CSP, on the stores of the store policy (a tab each): signed in on the
// hosted page without callbackURL they land on /account; they change their
// name; they see the session another client signed in and sign it out;
// they decline one invitation and accept another. No page may raise an
// exception, log an error, violate its CSP or fail a request. Every page's
// screenshot goes to GATEHOUSE_TEST_ARTIFACTS (a temporary directory when
// unset); the test logs their paths.
func TestAccountPages_browser(t *testing.T) {
	forBrowserStores(t, harness.StoresOnce, "account", func(t *testing.T, s harness.Store, chromium, dir string) {
		app := harness.MustStart(t, s, harness.FwQuick)
		accountBrowser(t, app, chromium, dir)
	})
}

func accountBrowser(t *testing.T, app *harness.App, chromium, dir string) {
	const email = "ada@example.com"
	harness.MustVerifiedUser(t, app, "Ada Lovelace", email, harness.StrictPassword)
	owner := harness.MustVerifiedClient(t, app, "Olive Owner", "olive@example.com")
	join := harness.AccountTestInvite(t, owner, "Join Corp", "join-corp", email, "admin")
	skip := harness.AccountTestInvite(t, owner, "Skip Corp", "skip-corp", email, "member")
	// Another client signs in (besides the one that signed up).
	other := app.NewClient(t)
	harness.MustSignIn(t, other, email, harness.StrictPassword)
	otherID, _ := harness.MustObject(t, harness.MustSession(t, other)["session"])["id"].(string)

	tb := newTab(t, chromium, dir)
	ctx, report, shot, do := tb.ctx, tb.report, tb.shot, tb.do
	mustShow := tb.mustShow
	// openAll opens every <details> of the page, so that the forms inside
	// are checked (axe, CSP) and seen in the screenshots too.
	openAll := func() {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { document.querySelectorAll("details").forEach(d => d.open = true); return true })()`)); err != nil {
			t.Fatal(err)
		}
	}

	// The hosted sign-in without callbackURL lands on the account.
	oidcBrowserNavigate(t, ctx, app.URL+"/sign-in")
	oidcBrowserSignIn(t, ctx, app, email)
	oidcBrowserWaitPath(t, ctx, app.URL, "/account")
	mustShow("the account page", email)
	shot("01-profile")
	oidcBrowserNoCSPViolations(t, ctx, "the profile page")
	openAll()
	shot("01b-profile-forms")
	oidcBrowserNoCSPViolations(t, ctx, "the profile page with its forms open")
	oidcBrowserNavigate(t, ctx, app.URL+"/account")
	oidcBrowserWaitPath(t, ctx, app.URL, "/account")

	// Change the name.
	do("open the profile form", chromedp.Click(chromedp.CSS(`details:has(form[action="/account/profile"]) summary`)))
	do("change the name", chromedp.Clear(chromedp.CSS(`#name`)), chromedp.SendKeys(chromedp.CSS(`#name`), "Ada King"),
		chromedp.Click(chromedp.CSS(`form[action="/account/profile"] [type="submit"]`)))
	consoleWait(t, ctx, "the profile saved", `location.search === "?done=profile"`)
	mustShow("after saving", "Your profile is saved.")
	if name := pageText(t, ctx, "#profile-name"); name != "Ada King" {
		t.Fatalf("the name shows as %q", name)
	}
	if u := harness.MustUser(t, harness.MustSession(t, other)); u["name"] != "Ada King" {
		t.Fatalf("get-session after the change: %v", u)
	}
	shot("02-profile-saved")
	oidcBrowserNoCSPViolations(t, ctx, "the saved profile")

	// The other client's session, and signing it out.
	oidcBrowserNavigate(t, ctx, app.URL+"/account/sessions")
	oidcBrowserWaitPath(t, ctx, app.URL, "/account/sessions")
	if rows := pageText(t, ctx, "tbody"); !strings.Contains(rows, "this device") || !strings.Contains(rows, "Headless Chrome on Linux") || !strings.Contains(rows, "Go program") {
		t.Fatalf("the sessions show:\n%s", rows)
	}
	shot("03-sessions")
	oidcBrowserNoCSPViolations(t, ctx, "the sessions page")
	openAll()
	oidcBrowserNoCSPViolations(t, ctx, "the sessions page with its forms open")
	oidcBrowserNavigate(t, ctx, app.URL+"/account/sessions")
	oidcBrowserWaitPath(t, ctx, app.URL, "/account/sessions")
	row := `details:has(input[name="session"][value="` + otherID + `"])`
	do("open the other session's sign-out", chromedp.Click(chromedp.CSS(row+` summary`)))
	do("sign it out", chromedp.Click(chromedp.CSS(row+` [type="submit"]`)))
	consoleWait(t, ctx, "the revocation", `location.search === "?done=revoked"`)
	mustShow("after signing it out", "The session has ended")
	harness.MustNoSession(t, other)
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('input[name="session"][value="`+otherID+`"]').length`)); err != nil || n != 0 {
		t.Fatalf("the ended session is still listed (%d, %v):\n%s", n, err, pageText(t, ctx, "tbody"))
	}
	shot("04-session-revoked")
	oidcBrowserNoCSPViolations(t, ctx, "the sessions page after revoking")

	// Decline one invitation, accept the other.
	oidcBrowserNavigate(t, ctx, app.URL+"/account/organizations")
	oidcBrowserWaitPath(t, ctx, app.URL, "/account/organizations")
	mustShow("the organizations page", "Skip Corp")
	mustShow("the organizations page", "Join Corp")
	shot("05-invitations")
	oidcBrowserNoCSPViolations(t, ctx, "the organizations page")
	openAll()
	oidcBrowserNoCSPViolations(t, ctx, "the organizations page with its forms open")
	oidcBrowserNavigate(t, ctx, app.URL+"/account/organizations")
	oidcBrowserWaitPath(t, ctx, app.URL, "/account/organizations")
	decline := `details:has(input[name="invitation"][value="` + skip + `"])`
	do("open the decline form", chromedp.Click(chromedp.CSS(decline+` summary`)))
	do("decline", chromedp.Click(chromedp.CSS(decline+` [type="submit"]`)))
	consoleWait(t, ctx, "the decline", `location.search === "?done=declined"`)
	mustShow("after declining", "The invitation is declined.")
	do("accept", chromedp.Click(chromedp.CSS(`form[action="/account/invitations/accept"]:has(input[value="`+join+`"]) [type="submit"]`)))
	consoleWait(t, ctx, "the acceptance", `location.search === "?done=accepted"`)
	mustShow("after accepting", "You joined the organization.")
	if orgs := pageText(t, ctx, "section[aria-labelledby=orgs] tbody"); !strings.Contains(orgs, "Join Corp") || !strings.Contains(orgs, "admin") || strings.Contains(orgs, "Skip Corp") {
		t.Fatalf("the organizations after answering:\n%s", orgs)
	}
	if invs := pageText(t, ctx, "section[aria-labelledby=invitations] tbody"); !strings.Contains(invs, "No open invitation") {
		t.Fatalf("the invitations after answering:\n%s", invs)
	}
	shot("06-organizations")
	oidcBrowserNoCSPViolations(t, ctx, "the organizations page after answering")
	report()
}
