package console

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// consoleForm matches a console form and its token.
var consoleForm = regexp.MustCompile(`<form method="post" action="([^"]+)"[^>]*><input type="hidden" name="_token" value="([^"]+)">`)

// mustConsoleTokens returns the tokens of the forms on the page at path,
// by action, failing unless the page is a 200.
func mustConsoleTokens(t testing.TB, c *harness.Client, path string) map[string]string {
	t.Helper()
	r := c.Get(path)
	harness.MustConsolePage(t, r, http.StatusOK)
	out := map[string]string{}
	for _, m := range consoleForm.FindAllStringSubmatch(string(r.Body), -1) {
		out[html.UnescapeString(m[1])] = html.UnescapeString(m[2])
	}
	return out
}

// consolePost posts fields as an HTML form.
func consolePost(c *harness.Client, path string, fields url.Values) *harness.Response {
	c.T.Helper()
	return c.Post(path, fields.Encode(), "Content-Type", "application/x-www-form-urlencoded")
}

// consoleFormPost posts fields to the form at action found on the page at
// page, with that form's token.
func consoleFormPost(t testing.TB, c *harness.Client, page, action string, fields url.Values) *harness.Response {
	t.Helper()
	token := mustConsoleTokens(t, c, page)[action]
	if token == "" {
		t.Fatalf("no form for %s on %s", action, page)
	}
	if fields == nil {
		fields = url.Values{}
	}
	fields.Set("_token", token)
	return consolePost(c, action, fields)
}

// mustConsoleSeeOther fails unless r redirects to location after a form.
func mustConsoleSeeOther(t testing.TB, r *harness.Response, location string) {
	t.Helper()
	harness.MustStatus(t, r, http.StatusSeeOther)
	if got := r.Header.Get("Location"); got != location {
		t.Fatalf("Location = %q, want %q", got, location)
	}
}

// consoleRows is the body of a page's table.
func consoleRows(page string) string {
	_, rows, _ := strings.Cut(page, "<tbody>")
	rows, _, _ = strings.Cut(rows, "</tbody>")
	return rows
}

// mustAuditEntry fails unless the audit log holds the entry of the request
// that r answered, with action, actor, target and outcome success.
func mustAuditEntry(t testing.TB, admin *harness.Client, r *harness.Response, actorID, action, targetType, targetID string) {
	t.Helper()
	id := r.Header.Get("X-Request-Id")
	for _, e := range harness.AuditAll(t, admin, url.Values{"action": {action}}) {
		if e["requestId"] != id {
			continue
		}
		if e["actorType"] != "user" || e["actorId"] != actorID || e["targetType"] != targetType || e["targetId"] != targetID || e["outcome"] != "success" {
			t.Fatalf("audit entry of %s = %v", action, e)
		}
		return
	}
	t.Fatalf("no audit entry %s for request %s", action, id)
}

// consoleWorld is an app with an administrator, a plain user and a victim,
// the two users the test's own (harness.Email).
type consoleWorld struct {
	app                     *harness.App
	admin, plain            *harness.Client
	adminID, victim         string
	victimC                 *harness.Client
	victimEmail, plainEmail string
}

func newConsoleWorld(t *testing.T, app *harness.App) *consoleWorld {
	t.Helper()
	w := &consoleWorld{app: app, victimEmail: harness.Email(t, "vic@example.com"), plainEmail: harness.Email(t, "pat@example.com")}
	w.admin, w.adminID = harness.MustAdmin(t, app)
	w.plain, _ = harness.MustPlainUser(t, app, "Pat", w.plainEmail, harness.UserPassword)
	w.victimC, w.victim = harness.MustPlainUser(t, app, "Vic", w.victimEmail, harness.UserPassword)
	return w
}

func (w *consoleWorld) userPath() string { return "/console/users/" + w.victim }

// mustConsoleGuards fails unless every page in gets sends a signed-out
// browser to sign in and back, refuses a plain user with the 403 page and
// serves the administrator a console page (a 302 is allowed: a page that
// redirects the administrator elsewhere), and every form in posts sends a
// signed-out browser to sign in, refuses a plain user, and refuses the
// administrator without a token, changing nothing.
func mustConsoleGuards(t *testing.T, w *consoleWorld, gets, posts []string) {
	t.Helper()
	anon := w.app.NewClient(t)
	for _, path := range gets {
		harness.MustSignInRedirect(t, anon.Get(path), path)
		if body := harness.MustConsolePage(t, w.plain.Get(path), http.StatusForbidden); !strings.Contains(body, "Not an administrator") {
			t.Fatalf("GET %s as a plain user: %s", path, body)
		}
		if r := w.admin.Get(path); r.Status != http.StatusFound {
			harness.MustConsolePage(t, r, http.StatusOK)
		}
	}
	for _, path := range posts {
		harness.MustSignInRedirect(t, consolePost(anon, path, nil), "/console")
		if body := harness.MustConsolePage(t, consolePost(w.plain, path, nil), http.StatusForbidden); !strings.Contains(body, "Not an administrator") {
			t.Fatalf("POST %s as a plain user: %s", path, body)
		}
		if body := harness.MustConsolePage(t, consolePost(w.admin, path, nil), http.StatusForbidden); !strings.Contains(body, "Form refused") {
			t.Fatalf("POST %s without a token: %s", path, body)
		}
	}
}

// Ensure every console route sends a signed-out browser to sign in and
// back, refuses a signed-in user who is not an administrator with a 403
// page, and serves an administrator; that every form refuses a
// cross-origin post, a missing token, a reused one, another session's and
// another form's; and that every answer forbids framing and caching.
func TestConsole_authorization_matrix(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		gets := []string{"/console/users", "/console/users?q=" + url.QueryEscape(w.victimEmail) + "&by=email&status=active", w.userPath()}
		r := w.admin.Get("/console")
		harness.MustStatus(t, r, http.StatusFound)
		if got := r.Header.Get("Location"); got != "/console/overview" {
			t.Fatalf("/console Location = %q", got)
		}
		actions := []string{"/ban", "/unban", "/sessions/revoke", "/sessions/revoke-all", "/password-reset", "/factors/reset", "/linked/unlink", "/impersonate", "/delete"}
		posts := []string{"/console/impersonation/stop"}
		for _, a := range actions {
			posts = append(posts, w.userPath()+a)
		}
		mustConsoleGuards(t, w, append(gets, "/console"), posts)
		anon := app.NewClient(t)
		tokens := mustConsoleTokens(t, w.admin, w.userPath())
		ban := w.userPath() + "/ban"
		if tokens[ban] == "" {
			t.Fatalf("no ban form on the user page: %v", tokens)
		}
		// Cross-origin: refused before the token is even read.
		evil := w.admin.Clone()
		evil.Origin = "https://evil.example"
		harness.MustConsolePage(t, consolePost(evil, ban, url.Values{"_token": {tokens[ban]}, "reason": {"x"}}), http.StatusForbidden)
		// Another form's token.
		harness.MustConsolePage(t, consolePost(w.admin, w.userPath()+"/sessions/revoke-all", url.Values{"_token": {tokens[ban]}}), http.StatusForbidden)
		// Another session's token (the same administrator, signed in twice).
		other := app.NewClient(t)
		harness.MustSignIn(t, other, harness.AdminEmail, harness.AdminPassword)
		otherTokens := mustConsoleTokens(t, other, w.userPath())
		harness.MustConsolePage(t, consolePost(w.admin, ban, url.Values{"_token": {otherTokens[ban]}, "reason": {"x"}}), http.StatusForbidden)
		harness.MustConsolePage(t, w.admin.Get("/console/users?status=banned"), http.StatusOK)
		if rows := consoleRows(string(w.admin.Get("/console/users?status=banned&q=" + url.QueryEscape(w.victimEmail)).Body)); strings.Contains(rows, w.victimEmail) {
			t.Fatal("a refused form banned the user")
		}
		// The right token works once.
		harness.MustStatus(t, consolePost(w.admin, ban, url.Values{"_token": {tokens[ban]}, "reason": {"spam"}}), http.StatusSeeOther)
		if body := harness.MustConsolePage(t, consolePost(w.admin, ban, url.Values{"_token": {tokens[ban]}, "reason": {"spam"}}), http.StatusForbidden); !strings.Contains(body, "Form refused") {
			t.Fatalf("reused token: %s", body)
		}
		// Assets load from here, versioned and cacheable.
		for _, asset := range []string{"/console/assets/console.css", "/console/assets/console.js"} {
			harness.MustStatus(t, anon.Get(asset), http.StatusOK)
		}
	})
}

// Ensure each console action works through the admin API's use cases and
// writes the audit entry the admin API writes, and that the list searches,
// filters and pages with its state in the URL.
func TestConsole_user_actions_are_audited(t *testing.T) {
	t.Parallel()
	// A fresh application: the list's filters are read over every user.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		post := func(action string, fields url.Values) *harness.Response {
			t.Helper()
			path := w.userPath() + action
			tokens := mustConsoleTokens(t, w.admin, w.userPath())
			if tokens[path] == "" {
				t.Fatalf("no form for %s on the user page", path)
			}
			if fields == nil {
				fields = url.Values{}
			}
			fields.Set("_token", tokens[path])
			return consolePost(w.admin, path, fields)
		}
		done := func(r *harness.Response, what string) {
			t.Helper()
			harness.MustStatus(t, r, http.StatusSeeOther)
			if got, want := r.Header.Get("Location"), w.userPath()+"?done="+what; got != want {
				t.Fatalf("Location = %q, want %q", got, want)
			}
		}

		// Search by e-mail and by name, and the banned filter.
		local, domain, _ := strings.Cut(w.victimEmail, "@")
		list := string(harness.MustConsolePage(t, w.admin.Get("/console/users?q="+url.QueryEscape(local+"@")), http.StatusOK))
		if !strings.Contains(list, w.victimEmail) || strings.Contains(list, w.plainEmail) {
			t.Fatalf("search by e-mail: %s", list)
		}
		// A whole address finds that account alone (exact, in any case),
		// not the others that contain it; one no account has is searched
		// within addresses.
		kevin := harness.Email(t, "kevic@example.com")
		harness.MustPlainUser(t, app, "Kevin", kevin, harness.UserPassword)
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/users?q="+url.QueryEscape(strings.ToUpper(w.victimEmail))), http.StatusOK)); !strings.Contains(rows, w.victimEmail) || strings.Contains(rows, kevin) {
			t.Fatalf("search for a whole address: %s", rows)
		}
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/users?q="+url.QueryEscape(strings.TrimPrefix(local, "v")+"@"+domain)), http.StatusOK)); !strings.Contains(rows, w.victimEmail) || !strings.Contains(rows, kevin) {
			t.Fatalf("search within addresses: %s", rows)
		}
		if list := harness.MustConsolePage(t, w.admin.Get("/console/users?q=pat&by=name"), http.StatusOK); !strings.Contains(list, w.plainEmail) || strings.Contains(list, w.victimEmail) {
			t.Fatalf("search by name: %s", list)
		}
		if list := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/users?verified=no"), http.StatusOK)); !strings.Contains(list, w.victimEmail) || strings.Contains(list, harness.AdminEmail) {
			t.Fatalf("unverified filter: %s", list)
		}
		if list := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/users?verified=yes"), http.StatusOK)); strings.Contains(list, w.victimEmail) || !strings.Contains(list, harness.AdminEmail) {
			t.Fatalf("verified filter: %s", list)
		}

		// The user's organizations show on their page, each linking to its
		// members in the list.
		org := harness.MustOK(t, w.victimC.Post("/api/auth/organization/create", harness.MustJSON(t, map[string]any{"name": "Vic Corp", "slug": "vic-corp"})))
		orgID, _ := org["id"].(string)
		if page := harness.MustConsolePage(t, w.admin.Get(w.userPath()), http.StatusOK); !strings.Contains(page, "Vic Corp") || !strings.Contains(page, "/console/users?org="+orgID) {
			t.Fatalf("the user page lacks their organization %s: %s", orgID, page)
		}
		if list := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/users?org="+orgID), http.StatusOK)); !strings.Contains(list, w.victimEmail) || strings.Contains(list, w.plainEmail) {
			t.Fatalf("organization filter: %s", list)
		}

		// One session revoked, then all.
		victim2 := app.NewClient(t)
		harness.MustSignIn(t, victim2, w.victimEmail, harness.UserPassword)
		sid, _ := harness.MustObject(t, harness.MustSession(t, victim2)["session"])["id"].(string)
		r := post("/sessions/revoke", url.Values{"session": {sid}})
		done(r, "revoked")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.revoke-user-session", "session", sid)
		harness.MustNoSession(t, victim2)
		harness.MustSession(t, w.victimC)
		r = post("/sessions/revoke-all", nil)
		done(r, "revoked-all")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.revoke-user-sessions", "user", w.victim)
		harness.MustNoSession(t, w.victimC)

		// Ban, for a week, with a reason; then unban.
		r = post("/ban", url.Values{"reason": {"spam"}, "days": {"7"}})
		done(r, "banned")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.ban-user", "user", w.victim)
		if page := harness.MustConsolePage(t, w.admin.Get(w.userPath()), http.StatusOK); !strings.Contains(page, "banned") || !strings.Contains(page, "spam") {
			t.Fatalf("user page after the ban: %s", page)
		}
		if list := harness.MustConsolePage(t, w.admin.Get("/console/users?status=banned"), http.StatusOK); !strings.Contains(list, w.victimEmail) {
			t.Fatalf("banned filter: %s", list)
		}
		r = post("/unban", nil)
		done(r, "unbanned")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.unban-user", "user", w.victim)

		// A password reset link goes out.
		r = post("/password-reset", nil)
		done(r, "reset-sent")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.send-password-reset", "user", w.victim)
		harness.MustLink(t, app, w.victimEmail, "Reset your")

		// Impersonation: the banner shows on every page, and stopping
		// restores the administrator's session.
		impersonated := post("/impersonate", nil)
		harness.MustStatus(t, impersonated, http.StatusSeeOther)
		for _, path := range []string{"/console", "/console/users", w.userPath()} {
			if page := harness.MustConsolePage(t, w.admin.Get(path), http.StatusOK); !strings.Contains(page, "You are impersonating") || !strings.Contains(page, w.victimEmail) {
				t.Fatalf("%s while impersonating: %s", path, page)
			}
		}
		stop := mustConsoleTokens(t, w.admin, "/console")["/console/impersonation/stop"]
		r = consolePost(w.admin, "/console/impersonation/stop", url.Values{"_token": {stop}})
		done(r, "stopped")
		if page := harness.MustConsolePage(t, w.admin.Get(w.userPath()), http.StatusOK); strings.Contains(page, "You are impersonating") {
			t.Fatalf("banner after stopping: %s", page)
		}
		mustAuditEntry(t, w.admin, impersonated, w.adminID, "admin.impersonate-user", "user", w.victim)
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.stop-impersonating", "user", w.victim)

		// Delete: a wrong confirmation keeps the input and names the field.
		r = post("/delete", url.Values{"confirm": {"someone@example.com"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="confirm-error"`) || !strings.Contains(page, `value="someone@example.com"`) {
			t.Fatalf("wrong confirmation: %s", page)
		}
		harness.MustConsolePage(t, w.admin.Get(w.userPath()), http.StatusOK)
		r = post("/delete", url.Values{"confirm": {w.victimEmail}})
		harness.MustStatus(t, r, http.StatusSeeOther)
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.remove-user", "user", w.victim)
		harness.MustConsolePage(t, w.admin.Get(w.userPath()), http.StatusNotFound)
	})
}

// Ensure hostile input in the search and the forms is a 400 page naming
// the field, never a 500, and changes nothing.
func TestConsole_hostile_input(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		for _, tt := range []struct{ query, field string }{
			{"q=a%00b", "query.q"},
			{"q=%FF%FE", "query.q"},
			{"q=" + strings.Repeat("a", 300), "q"},
			{"org=" + strings.Repeat("o", 200), "org"},
			{"status=%00", "query.status"},
			{"verified=maybe", "verified"},
			{"cursor=not-a-cursor", "cursor"},
		} {
			page := harness.MustConsolePage(t, w.admin.Get("/console/users?"+tt.query), http.StatusBadRequest)
			if !strings.Contains(page, tt.field) {
				t.Fatalf("%s: the page does not name %s: %s", tt.query, tt.field, page)
			}
		}
		ban := w.userPath() + "/ban"
		for _, tt := range []struct {
			fields url.Values
			status int
			field  string
		}{
			{url.Values{"reason": {"a\x00b"}}, http.StatusBadRequest, "body.reason"},
			{url.Values{"reason": {"\xff\xfe"}}, http.StatusBadRequest, "body.reason"},
			{url.Values{"reason": {strings.Repeat("r", 2000)}}, http.StatusBadRequest, `id="reason"`},
			{url.Values{"reason": {"x"}, "days": {"forever"}}, http.StatusBadRequest, `value="forever"`},
			{url.Values{"reason": {"x"}, "days": {"0"}}, http.StatusBadRequest, `id="days"`},
			{url.Values{"reason": {strings.Repeat("r", 2<<20)}}, http.StatusRequestEntityTooLarge, "larger than"},
		} {
			tt.fields.Set("_token", mustConsoleTokens(t, w.admin, w.userPath())[ban])
			page := harness.MustConsolePage(t, consolePost(w.admin, ban, tt.fields), tt.status)
			if !strings.Contains(page, tt.field) {
				t.Fatalf("ban with %.60v: the page does not name %s: %.2000s", tt.fields, tt.field, page)
			}
		}
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/users?status=banned&q="+url.QueryEscape(w.victimEmail)), http.StatusOK)); strings.Contains(rows, w.victimEmail) {
			t.Fatal("hostile input banned the user")
		}
		harness.MustConsolePage(t, w.admin.Get("/console/users/a%00b"), http.StatusBadRequest)
	})
}

// Ensure a console visit after the idle timeout sends the browser to sign
// in for the console again without ending its session, and that signing
// in again opens the console.
func TestConsole_idle_timeout(t *testing.T) {
	t.Parallel()
	// A fresh application: a setting of its own, and the clock moves by minutes.
	env := harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_CONSOLE_IDLE_TIMEOUT": "1m"})
	harness.ForStores(t, harness.StoresOnce, env, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		fresh := app.NewClient(t)
		harness.MustSignIn(t, fresh, harness.AdminEmail, harness.AdminPassword)
		harness.MustConsolePage(t, fresh.Get("/console/users"), http.StatusOK)
		app.Clock.Advance(40 * time.Second)
		harness.MustConsolePage(t, fresh.Get("/console/users"), http.StatusOK) // activity keeps it open
		app.Clock.Advance(40 * time.Second)
		harness.MustConsolePage(t, fresh.Get("/console/users"), http.StatusOK)
		app.Clock.Advance(time.Minute + time.Second)
		harness.MustSignInRedirect(t, fresh.Get("/console/users"), "/console/users")
		harness.MustSession(t, fresh) // the session lives on
		harness.MustSession(t, admin) // and so do the others
		harness.MustSignIn(t, fresh, harness.AdminEmail, harness.AdminPassword)
		harness.MustConsolePage(t, fresh.Get("/console/users"), http.StatusOK)
	})
}

// Ensure the console applies the admin API's multi-factor rule: while
// administrators must have a second factor, one without gets the admin
// API's refusal as a 403 page on every console page and form, and is
// admitted once they enrol one.
func TestConsole_administrators_need_a_second_factor(t *testing.T) {
	t.Parallel()
	// A fresh application: a setting of its own, and the administrator enrols a second factor.
	env := harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_ADMIN_REQUIRE_MFA": "true"})
	harness.ForStores(t, harness.StoresOnce, env, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		_, victim := harness.MustPlainUser(t, app, "Vic", "vic@example.com", harness.UserPassword)
		for _, path := range []string{"/console/users", "/console/users/" + victim} {
			if page := harness.MustConsolePage(t, admin.Get(path), http.StatusForbidden); !strings.Contains(page, "second factor") {
				t.Fatalf("GET %s without a second factor: %s", path, page)
			}
		}
		harness.MustConsolePage(t, consolePost(admin, "/console/users/"+victim+"/ban", url.Values{"reason": {"x"}}), http.StatusForbidden)
		harness.MustEnrolTOTP(t, admin, harness.AdminPassword)
		harness.MustConsolePage(t, admin.Get("/console/users/"+victim), http.StatusOK)
	})
}
