package browser

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure a real browser goes from the home page to the account and out
// again under the pages' strict CSP: / links to sign-in; the form signs a
// verified user in (verification is required, as by default) and lands on
// the account page, which shows the user's name, address and that it is
// confirmed; its sign-out button ends the session (get-session answers
// null) and the account page then sends the browser to sign in. No page
// may violate its CSP, log an error or fail a request.
func TestPagesBrowser_home_sign_in_account_sign_out(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := chromiumPath(t)
	app := harness.MustStart(t, harness.StoreSQLite, nil)
	const name, email = "Bruno Browser", "bruno.browser@example.com"
	harness.MustVerifiedUser(t, app, name, email, harness.StrictPassword)

	ctx := newTabContext(t, chromium)
	report := watchPage(t, ctx)

	oidcBrowserNavigate(t, ctx, app.URL+"/")
	oidcBrowserWaitPath(t, ctx, app.URL, "/")
	if h1 := pageText(t, ctx, "h1"); h1 != "Gatehouse" {
		t.Fatalf("the home page's heading is %q", h1)
	}
	oidcBrowserNoCSPViolations(t, ctx, "the home page")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`main a[href="/sign-in"]`))); err != nil {
		t.Fatalf("follow the home page's sign-in link: %v", err)
	}

	oidcBrowserSignIn(t, ctx, app, email)
	oidcBrowserWaitPath(t, ctx, app.URL, "/account")
	account := pageText(t, ctx, "main")
	for _, want := range []string{name, email, "Address confirmed\nYes"} {
		if !strings.Contains(account, want) {
			t.Fatalf("the account page lacks %q; it shows:\n%s", want, account)
		}
	}
	oidcBrowserNoCSPViolations(t, ctx, "the account page")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form[action="/api/auth/oauth2/end-session"] [type="submit"]`))); err != nil {
		t.Fatalf("press sign out on the account page: %v", err)
	}

	oidcBrowserWaitPath(t, ctx, app.URL, "/sign-out")
	if text := pageText(t, ctx, "main"); !strings.Contains(text, "You are signed out") {
		t.Fatalf("after signing out the page shows:\n%s", text)
	}
	oidcBrowserNoCSPViolations(t, ctx, "the signed-out page")

	oidcBrowserNavigate(t, ctx, app.URL+"/api/auth/get-session")
	oidcBrowserWaitPath(t, ctx, app.URL, "/api/auth/get-session")
	if body := pageText(t, ctx, "body"); body != "null" {
		t.Fatalf("get-session after signing out answers %q, want null", body)
	}

	oidcBrowserNavigate(t, ctx, app.URL+"/account")
	oidcBrowserWaitPath(t, ctx, app.URL, "/sign-in")
	cb, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new URL(location.href).searchParams.get("callbackURL") || ""`))
	if err != nil || cb != "/account" {
		t.Fatalf("the signed-out account page led to sign-in with callbackURL %q (%v)", cb, err)
	}
	report()
}

// pageText is the visible text of the first element matching selector.
func pageText(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+jsString(selector)+`)?.innerText ?? ""`))
	if err != nil {
		t.Fatalf("read %s: %v", selector, err)
	}
	return strings.TrimSpace(text)
}
