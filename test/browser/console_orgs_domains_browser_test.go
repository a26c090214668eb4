package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/gatehouse/gatehouse/adapters/dnsresolver/dnstest"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure an administrator drives the Organizations and Domains sections in
// a real browser under the console's strict CSP, on SQLite and PostgreSQL:
// "/" focuses the search, typing part of a name finds the organization;
// they send an invitation and revoke it, and change a member's role; then
// they add a domain and see its DNS records, copy the challenge with its
// copy button, publish it (on a test DNS server), press "check now" and see
// the domain verified. No page may raise an exception, log an error,
// violate its CSP or fail a request. Every page's screenshot goes to
// GATEHOUSE_TEST_ARTIFACTS (a temporary directory when unset); the test
// logs their paths.
func TestConsoleOrgsDomains_browser(t *testing.T) {
	forBrowserStores(t, harness.StoresOnce, "console-orgs-domains", func(t *testing.T, s harness.Store, chromium, dir string) {
		dns := dnstest.Start(t)
		// Checks every 50 ms; a pending domain has a minute to verify.
		app := harness.MustStart(t, s, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_DNS_NAMESERVER": dns.Addr(),
			"GATEHOUSE_DOMAIN_CHECK_INTERVAL": "50ms", "GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL": "200ms", "GATEHOUSE_DOMAIN_VERIFICATION_WINDOW": "1m"}))
		harness.StartDomainVerifier(t, app)
		orgsDomainsBrowser(t, app, dns, chromium, dir)
	})
}

func orgsDomainsBrowser(t *testing.T, app *harness.App, dns *dnstest.Server, chromium, dir string) {
	harness.MustVerifiedUser(t, app, "Root Admin", harness.AdminEmail, harness.StrictPassword)
	owner, _ := harness.MustVerifiedUser(t, app, "Olga Owner", "olga@example.com", harness.UserPassword)
	mia, _ := harness.MustVerifiedUser(t, app, "Mia Member", "mia@example.com", harness.UserPassword)
	orgID := harness.MustID(t, harness.MustOK(t, owner.Post(harness.OrgPath("create"), harness.MustJSON(t, map[string]any{"name": "Northwind Traders", "slug": "northwind"}))))
	harness.MustOK(t, owner.Post(harness.OrgPath("create"), harness.MustJSON(t, map[string]any{"name": "Southwind", "slug": "southwind"})))
	inv := harness.MustOK(t, owner.Post(harness.OrgPath("invite-member"), harness.MustJSON(t, map[string]any{"email": "mia@example.com", "role": "member", "organizationId": orgID})))
	harness.MustOK(t, mia.Post(harness.OrgPath("accept-invitation"), harness.MustJSON(t, map[string]any{"invitationId": harness.MustID(t, inv)})))

	tb := newTab(t, chromium, dir)
	ctx, report, shot, do := tb.ctx, tb.report, tb.shot, tb.do
	mustShow := tb.mustShowIn
	orgPage := "/console/organizations/" + orgID

	// Signed out: to the hosted sign-in, and back to the organizations.
	oidcBrowserNavigate(t, ctx, app.URL+"/console/organizations")
	oidcBrowserSignIn(t, ctx, app, harness.AdminEmail)
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/organizations")
	shot("01-organizations")
	oidcBrowserNoCSPViolations(t, ctx, "the organizations page")

	// "/" focuses the search; part of the name finds the organization.
	do("press /", chromedp.KeyEvent("/"))
	do("type the search", chromedp.KeyEvent("NORTH"), chromedp.KeyEvent(kb.Enter))
	consoleWait(t, ctx, "the search results", `new URL(location.href).searchParams.get("q") === "NORTH"`)
	if rows := pageText(t, ctx, "tbody"); !strings.Contains(rows, "Northwind Traders") || strings.Contains(rows, "Southwind") {
		t.Fatalf("the search for NORTH shows:\n%s", rows)
	}
	shot("02-search")
	oidcBrowserNoCSPViolations(t, ctx, "the search results")
	do("open the organization", chromedp.Click(chromedp.CSS(`a[href="`+orgPage+`"]`)))
	oidcBrowserWaitPath(t, ctx, app.URL, orgPage)
	mustShow("the organization", "#main", "olga@example.com")
	mustShow("the organization", "#main", "mia@example.com")
	shot("03-organization")
	oidcBrowserNoCSPViolations(t, ctx, "the organization page")

	// Send an invitation, as an admin of the organization.
	do("open the invitation form", chromedp.Click(chromedp.CSS(`details:has(form[action$="/invitations"]) summary`)))
	do("invite", chromedp.SendKeys(chromedp.CSS(`#invite-email`), "newbie@example.com"),
		chromedp.SetValue(chromedp.CSS(`#invite-role`), "admin"),
		chromedp.Click(chromedp.CSS(`form[action$="/invitations"] [type="submit"]`)))
	consoleWait(t, ctx, "the invitation", `location.search === "?done=invited"`)
	mustShow("after inviting", "[role=status]", "The invitation is on its way.")
	mustShow("after inviting", "section[aria-labelledby=invitations] tbody", "newbie@example.com")
	app.Mail.WaitFor(t, "newbie@example.com", "Northwind Traders", harness.MailWait)
	shot("04-invited")
	oidcBrowserNoCSPViolations(t, ctx, "the page after inviting")

	// Revoke it.
	do("open the revocation", chromedp.Click(chromedp.CSS(`details:has(form[action$="/invitations/revoke"]) summary`)))
	do("revoke", chromedp.Click(chromedp.CSS(`form[action$="/invitations/revoke"] [type="submit"]`)))
	consoleWait(t, ctx, "the revocation", `location.search === "?done=revoked"`)
	mustShow("after revoking", "section[aria-labelledby=invitations] tbody", "canceled")
	shot("05-revoked")
	oidcBrowserNoCSPViolations(t, ctx, "the page after revoking")

	// Make Mia an admin of the organization.
	const miaRow = `//section[@aria-labelledby="members"]//tr[.//a[text()="mia@example.com"]]`
	do("open Mia's role form", chromedp.Click(chromedp.Search(miaRow+`//summary[starts-with(., "Change role")]`)))
	do("make Mia an admin", chromedp.SetValue(chromedp.Search(miaRow+`//select[@name="role"]`), "admin"),
		chromedp.Click(chromedp.Search(miaRow+`//form[contains(@action, "/members/role")]//button`)))
	consoleWait(t, ctx, "the role change", `location.search === "?done=role"`)
	if role := harness.MustOK(t, mia.Get(harness.OrgPath("get-active-member-role")+"?organizationId="+orgID)); role["role"] != "admin" {
		t.Fatalf("Mia's role = %v", role)
	}
	shot("06-role-changed")
	oidcBrowserNoCSPViolations(t, ctx, "the page after the role change")

	// Add a domain and see its DNS records.
	oidcBrowserNavigate(t, ctx, app.URL+"/console/domains")
	oidcBrowserWaitPath(t, ctx, app.URL, "/console/domains")
	shot("07-domains")
	oidcBrowserNoCSPViolations(t, ctx, "the domains page")
	do("add a domain", chromedp.SendKeys(chromedp.CSS(`#hostname`), "login.northwind.example"),
		chromedp.SendKeys(chromedp.CSS(`#organization`), orgID),
		chromedp.Click(chromedp.CSS(`form[method="post"][action="/console/domains"] [type="submit"]`)))
	consoleWait(t, ctx, "the new domain", `location.pathname.startsWith("/console/domains/") && location.search === "?done=created"`)
	mustShow("the new domain", "section[aria-labelledby=records] tbody", "_gatehouse-challenge.login.northwind.example")
	mustShow("the new domain", "section[aria-labelledby=records] tbody", "TXT")
	name, value := pageText(t, ctx, "#record-1-name"), pageText(t, ctx, "#record-1-value")
	if name != "_gatehouse-challenge.login.northwind.example" || !strings.HasPrefix(value, "gatehouse-verification=") {
		t.Fatalf("the TXT record shown is %q = %q", name, value)
	}
	shot("08-domain-records")
	oidcBrowserNoCSPViolations(t, ctx, "the domain page")

	// The copy button copies the value.
	grantClipboard(t, ctx, app.URL)
	if copied := mustCopy(t, ctx, "record-1-value"); copied != value {
		t.Fatalf("the clipboard holds %q, want %q", copied, value)
	}

	// Publish the record, press "check now": the domain turns verified.
	dns.SetTXT(name, value)
	do("check now", chromedp.Click(chromedp.CSS(`#check-now`)))
	consoleWait(t, ctx, "the check", `location.search === "?done=checking"`)
	mustShow("after asking for a check", "[role=status]", "A check is asked for")
	shot("09-checking")
	oidcBrowserNoCSPViolations(t, ctx, "the page after asking for a check")
	for range 100 {
		if strings.Contains(pageText(t, ctx, "#domain-status"), "verified") {
			break
		}
		do("reload", chromedp.Reload())
		consoleWait(t, ctx, "the reload", `document.getElementById("domain-status") !== null`)
	}
	mustShow("after the check", "#domain-status", "verified")
	mustShow("after the check", "#last-check", "Every required record was found.")
	mustShow("after the check", "section[aria-labelledby=records] tbody", "found")
	shot("10-verified")
	oidcBrowserNoCSPViolations(t, ctx, "the verified domain")
	report()
}
