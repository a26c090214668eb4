package console

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// oaProvider registers an identity provider through the admin API and
// returns its id.
func oaProvider(t *testing.T, admin *harness.Client, id string) string {
	t.Helper()
	harness.MustStatus(t, admin.Post("/api/admin/identity-providers", matrixProvider(id)), http.StatusCreated)
	return id
}

// oaWebhook registers a webhook endpoint through the admin API and
// returns its id.
func oaWebhook(t *testing.T, admin *harness.Client, u string) string {
	t.Helper()
	r := admin.Post("/api/admin/webhooks", jsonBody("url", u))
	harness.MustStatus(t, r, http.StatusCreated)
	return harness.MustID(t, r.JSON(t))
}

// Ensure every route of the overview, the audit log, the identity
// providers and the webhooks sends a signed-out browser to sign in and
// back, refuses a plain user with the 403 page, serves the administrator,
// and that every form refuses a post without a token.
func TestConsoleOverviewAudit_authorization_matrix(t *testing.T) {
	t.Parallel()
	// A fresh application: it registers an identity provider and a webhook endpoint.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		idp := "/console/identity-providers/" + oaProvider(t, w.admin, "github")
		hook := "/console/webhooks/" + oaWebhook(t, w.admin, "https://hooks.example.com/in")
		gets := []string{"/console/overview", "/console/audit", "/console/audit?action=admin.ban-user&actorType=user&limit=5",
			"/console/identity-providers", idp, "/console/webhooks", hook, hook + "?status=failed"}
		posts := []string{"/console/identity-providers", "/console/webhooks"}
		for _, a := range []string{"/update", "/enable", "/disable", "/delete"} {
			posts = append(posts, idp+a)
		}
		for _, a := range []string{"/rotate-secret", "/enable", "/disable", "/replay", "/delete"} {
			posts = append(posts, hook+a)
		}
		mustConsoleGuards(t, w, gets, posts)
		// Nothing the refused forms asked for happened.
		if page := harness.MustConsolePage(t, w.admin.Get(idp), http.StatusOK); !strings.Contains(page, "enabled") {
			t.Fatalf("a refused form changed the provider: %s", page)
		}
		harness.MustConsolePage(t, w.admin.Get(hook), http.StatusOK)
	})
}

// oaStat is the number the overview shows under a label.
func oaStat(t testing.TB, page, label string) int {
	t.Helper()
	m := regexp.MustCompile(`<dt>` + regexp.QuoteMeta(label) + `</dt><dd>(?:<a [^>]*>)?(\d+)`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the overview has no %q: %s", label, page)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Ensure the overview shows the counts the test seeded (users,
// organizations, domains by status, active sessions), the two sign-in
// charts as inline SVG with their text alternative and the failed
// sign-in made here, and the latest audit entries linking to what they
// name.
func TestConsoleOverview_shows_the_seeded_counts(t *testing.T) {
	t.Parallel()
	// A fresh application: it counts everything the application holds.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		harness.MustCreateOrg(t, w.admin, "Acme", "acme")
		harness.MustCreateOrg(t, w.victimC, "Vic Corp", "vic-corp")
		key := harness.MustCreateKey(t, w.admin, map[string]any{"name": "domains", "scopes": []string{"domains:read", "domains:write"}})
		for _, host := range []string{"a.example.com", "b.example.com"} {
			r := app.NewClient(t).Do(http.MethodPost, "/api/domains", harness.MustJSON(t, map[string]any{"hostname": host}), "Authorization", "Bearer "+key["secret"].(string))
			harness.MustStatus(t, r, http.StatusCreated)
		}
		harness.MustStatus(t, app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, w.victimEmail, "wrong password!")), http.StatusUnauthorized)
		harness.MustSignIn(t, app.NewClient(t), w.plainEmail, harness.UserPassword)
		ban := consoleFormPost(t, w.admin, w.userPath(), w.userPath()+"/ban", url.Values{"reason": {"spam"}})
		mustConsoleSeeOther(t, ban, w.userPath()+"?done=banned")

		api := harness.MustOK(t, w.admin.Get("/api/admin/overview"))
		page := harness.MustConsolePage(t, w.admin.Get("/console/overview"), http.StatusOK)
		if got := oaStat(t, page, "Users"); got != 3 {
			t.Errorf("users = %d, want 3", got)
		}
		if got := oaStat(t, page, "Organizations"); got != 2 {
			t.Errorf("organizations = %d, want 2", got)
		}
		domains := 0
		for _, st := range []string{"pending", "verified", "failed"} {
			n := oaStat(t, page, "Domains "+st)
			if want := int(harness.MustObject(t, api["domains"])[st].(float64)); n != want {
				t.Errorf("domains %s = %d, the admin API says %d", st, n, want)
			}
			domains += n
		}
		if domains != 2 {
			t.Errorf("domains = %d, want 2", domains)
		}
		if got, want := oaStat(t, page, "Active sessions"), int(api["activeSessions"].(float64)); got != want || got != 3 {
			t.Errorf("active sessions = %d, the admin API says %d, want 3 (the administrator's and Pat's two; the ban ended Vic's)", got, want)
		}
		for _, id := range []string{"signins-day", "signins-month"} {
			if !strings.Contains(page, `aria-labelledby="`+id+`-title `+id+`-desc"`) || !strings.Contains(page, `<svg xmlns="http://www.w3.org/2000/svg" class="chart"`) {
				t.Fatalf("no %s chart: %s", id, page)
			}
		}
		for _, want := range []string{"Last 24 hours: 1 sign-in, 1 failed.", "Last 30 days: 1 sign-in, 1 failed."} {
			if !strings.Contains(page, want) {
				t.Fatalf("the charts' captions do not say %q: %s", want, page)
			}
		}
		if !strings.Contains(page, `<th scope="col">Failed sign-ins</th>`) {
			t.Fatal("no table of the chart's numbers")
		}
		recent := page[strings.Index(page, `id="recent"`):]
		if !strings.Contains(recent, "admin.ban-user") || !strings.Contains(recent, `href="/console/users/`+w.victim+`"`) ||
			!strings.Contains(recent, `href="/console/users/`+w.adminID+`"`) {
			t.Fatalf("the recent events lack the ban and its links: %s", recent)
		}
	})
}

// Ensure the audit log filters by action, actor, target and time, pages
// with its cursor in the URL, links each entry to what it names, and shows
// a ban done in the console under its action.
func TestConsoleAudit_filters_and_pages(t *testing.T) {
	t.Parallel()
	// A fresh application: it pages through the whole audit log.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		ban := consoleFormPost(t, w.admin, w.userPath(), w.userPath()+"/ban", url.Values{"reason": {"spam"}})
		mustConsoleSeeOther(t, ban, w.userPath()+"?done=banned")
		mustConsoleSeeOther(t, consoleFormPost(t, w.admin, w.userPath(), w.userPath()+"/unban", nil), w.userPath()+"?done=unbanned")
		mustConsoleSeeOther(t, consoleFormPost(t, w.admin, w.userPath(), w.userPath()+"/ban", url.Values{"reason": {"again"}}), w.userPath()+"?done=banned")
		reqID := ban.Header.Get("X-Request-Id")

		// By action: both bans, not the unban, each linking to the user
		// and the administrator.
		rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/audit?action=admin.ban-user"), http.StatusOK))
		if strings.Count(rows, "<tr>") != 2 || strings.Contains(rows, "admin.unban-user") || !strings.Contains(rows, reqID) {
			t.Fatalf("filtered by admin.ban-user: %s", rows)
		}
		if !strings.Contains(rows, `<a href="/console/users/`+w.victim+`">user `+w.victim+`</a>`) || !strings.Contains(rows, `<a href="/console/users/`+w.adminID+`">`) {
			t.Fatalf("the entries do not link to the user and the actor: %s", rows)
		}
		// By actor and target.
		rows = consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/audit?actorType=user&actor="+w.adminID+"&targetType=user&target="+w.victim), http.StatusOK))
		if strings.Count(rows, "<tr>") != 3 {
			t.Fatalf("filtered by actor and target: %s", rows)
		}
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/audit?actor=nobody"), http.StatusOK)); !strings.Contains(rows, "No entry matches") {
			t.Fatalf("an unknown actor: %s", rows)
		}
		// By time: from the future, none; until an hour from now, all three.
		future := time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04")
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/audit?action=admin.ban-user&since="+future), http.StatusOK)); !strings.Contains(rows, "No entry matches") {
			t.Fatalf("since the future: %s", rows)
		}
		rows = consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/audit?target="+w.victim+"&until="+url.QueryEscape(time.Now().UTC().Add(time.Hour).Format(time.RFC3339))), http.StatusOK))
		if strings.Count(rows, "<tr>") != 3 {
			t.Fatalf("until an hour from now: %s", rows)
		}

		// A service key's entry links to the key's page.
		key := harness.MustID(t, harness.MustCreateKey(t, w.admin, map[string]any{"name": "ci", "scopes": []string{"users:read"}}))
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/audit?targetType=service_key"), http.StatusOK)); !strings.Contains(rows, `href="/console/service-keys/`+key+`"`) {
			t.Fatalf("the key's entry does not link to its page: %s", rows)
		}

		// Paging: two at a time, the filters kept in the next page's link.
		seen := map[string]bool{}
		path, pages := "/console/audit?target="+w.victim+"&limit=2", 0
		for path != "" {
			page := harness.MustConsolePage(t, w.admin.Get(path), http.StatusOK)
			for _, m := range regexp.MustCompile(`<code>(admin\.[a-z-]+)</code></td><td>.*?</td><td>.*?</td><td>.*?</td><td><code>([^<]*)</code>`).FindAllStringSubmatch(consoleRows(page), -1) {
				seen[m[1]+" "+m[2]] = true
			}
			pages++
			path = ""
			if m := regexp.MustCompile(`<a href="([^"]+)" rel="next">`).FindStringSubmatch(page); m != nil {
				path = strings.ReplaceAll(m[1], "&amp;", "&")
				if !strings.Contains(path, "target="+w.victim) || !strings.Contains(path, "limit=2") || !strings.Contains(path, "cursor=") {
					t.Fatalf("the next page's link loses the filters: %s", path)
				}
			}
		}
		if pages != 2 || len(seen) != 3 {
			t.Fatalf("%d pages and %d distinct entries, want 2 and 3: %v", pages, len(seen), seen)
		}
	})
}

// Ensure hostile input in the audit filters and the forms of the identity
// providers and the webhooks is a 400 page naming the field, never a 500,
// keeps what the administrator typed and changes nothing.
func TestConsoleOverviewAudit_hostile_input(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every identity provider and webhook endpoint.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		for _, tt := range []struct{ query, field string }{
			{"action=a%00b", "query.action"},
			{"actor=%FF%FE", "query.actor"},
			{"actorType=robot", "actorType"},
			{"target=" + strings.Repeat("t", 200), "target"},
			{"since=yesterday", "since"},
			{"since=2026-01-02T00:00&until=2026-01-01T00:00", "until"},
			{"limit=1000", "limit"},
			{"cursor=not-a-cursor", "cursor"},
		} {
			page := harness.MustConsolePage(t, w.admin.Get("/console/audit?"+tt.query), http.StatusBadRequest)
			if !strings.Contains(page, tt.field) {
				t.Fatalf("%s: the page does not name %s: %s", tt.query, tt.field, page)
			}
		}
		const providers = "/console/identity-providers"
		for _, tt := range []struct {
			fields url.Values
			status int
			want   string
		}{
			{url.Values{"id": {"x\x00y"}, "clientId": {"c"}, "clientSecret": {"s"}}, http.StatusBadRequest, "body.id"},
			{url.Values{"id": {"okid"}, "name": {"\xff\xfe"}, "clientId": {"c"}, "clientSecret": {"s"}}, http.StatusBadRequest, "body.name"},
			{url.Values{"id": {"Bad Id"}, "preset": {"github"}, "clientId": {"kept-client"}, "clientSecret": {"s"}}, http.StatusBadRequest, `value="kept-client"`},
			{url.Values{"id": {"gh"}, "preset": {"github"}, "clientId": {"c"}}, http.StatusBadRequest, `id="idp-secret" name="clientSecret" type="password" required maxlength="4096" autocomplete="off" aria-invalid="true"`},
			{url.Values{"id": {"gh"}, "preset": {"github"}, "issuer": {"https://github.com"}, "clientId": {"c"}, "clientSecret": {"s"}}, http.StatusBadRequest, `name="issuer" type="url" maxlength="2048" value="https://github.com" aria-invalid="true"`},
			{url.Values{"id": {"gh"}, "preset": {"github"}, "clientId": {strings.Repeat("c", 600)}, "clientSecret": {"s"}}, http.StatusBadRequest, `name="clientId" required maxlength="512" value="" autocomplete="off" aria-invalid="true"`},
			{url.Values{"id": {"gh"}, "clientId": {"c"}, "clientSecret": {strings.Repeat("s", 2<<20)}}, http.StatusRequestEntityTooLarge, "larger than"},
		} {
			page := harness.MustConsolePage(t, consoleFormPost(t, w.admin, providers, providers, tt.fields), tt.status)
			if !strings.Contains(page, tt.want) {
				t.Fatalf("provider %.80v: the page does not show %s: %.3000s", tt.fields, tt.want, page)
			}
			if secret := tt.fields.Get("clientSecret"); len(secret) > 1 && strings.Contains(page, secret) {
				t.Fatal("a refused form shows the client secret back")
			}
		}
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get(providers), http.StatusOK)); !strings.Contains(rows, "No identity provider") {
			t.Fatalf("hostile input registered a provider: %s", rows)
		}
		const hooks = "/console/webhooks"
		for _, tt := range []struct {
			fields url.Values
			status int
			want   string
		}{
			{url.Values{"url": {"http://hooks.example.com/in"}, "description": {"kept description"}}, http.StatusBadRequest, `value="kept description"`},
			{url.Values{"url": {"https://127.0.0.1/in"}}, http.StatusBadRequest, `value="https://127.0.0.1/in" placeholder="https://backend.example.com/webhooks" autocomplete="off" aria-invalid="true"`},
			{url.Values{"url": {"https://hooks.example.com/in"}, "events": {"user.created", "no.such"}}, http.StatusBadRequest, `<fieldset aria-describedby="wh-error">`},
			{url.Values{"url": {"https://hooks.example.com/\x00"}}, http.StatusBadRequest, "body.url"},
			{url.Values{"url": {"https://hooks.example.com/in"}, "description": {"\xff"}}, http.StatusBadRequest, "body.description"},
		} {
			page := harness.MustConsolePage(t, consoleFormPost(t, w.admin, hooks, hooks, tt.fields), tt.status)
			if !strings.Contains(page, tt.want) {
				t.Fatalf("webhook %.80v: the page does not show %s: %.3000s", tt.fields, tt.want, page)
			}
		}
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get(hooks), http.StatusOK)); !strings.Contains(rows, "No endpoint") {
			t.Fatalf("hostile input registered an endpoint: %s", rows)
		}
		harness.MustConsolePage(t, w.admin.Get("/console/webhooks/a%00b"), http.StatusBadRequest)
		harness.MustConsolePage(t, w.admin.Get("/console/identity-providers/"+strings.Repeat("i", 200)), http.StatusBadRequest)
		harness.MustConsolePage(t, w.admin.Get("/console/webhooks/nope"), http.StatusNotFound)
		harness.MustConsolePage(t, w.admin.Get("/console/identity-providers/nope"), http.StatusNotFound)
	})
}

// Ensure an administrator registers, changes, disables, enables and
// deletes an identity provider from the console through the admin API's
// use cases (audited as they are), and that its client secret is never
// rendered, not even on the page that registered it.
func TestConsoleIdentityProviders_manage(t *testing.T) {
	t.Parallel()
	// A fresh application: it registers identity providers, which every sign-in page offers.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		const list, secret = "/console/identity-providers", "idp-secret-never-shown-1234"
		const path = list + "/gh-corp"
		r := consoleFormPost(t, w.admin, list, list, url.Values{"id": {"gh-corp"}, "preset": {"github"}, "name": {"GitHub Corp"},
			"clientId": {"client-1"}, "clientSecret": {secret}, "enabled": {"on"}})
		mustConsoleSeeOther(t, r, path+"?done=created")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.create-identity-provider", "identity_provider", "gh-corp")
		page := harness.MustConsolePage(t, w.admin.Get(path+"?done=created"), http.StatusOK)
		if !strings.Contains(page, "GitHub Corp") || !strings.Contains(page, "/api/auth/callback/gh-corp") || !strings.Contains(page, "client-1") {
			t.Fatalf("the provider's page: %s", page)
		}
		if got := harness.MustOK(t, w.admin.Get("/api/admin/identity-providers/gh-corp")); got["clientSecretSet"] != true || got["name"] != "GitHub Corp" {
			t.Fatalf("the admin API sees %v", got)
		}

		// A change keeps the sealed secret when none is typed.
		r = consoleFormPost(t, w.admin, path, path+"/update", url.Values{"preset": {"github"}, "name": {"GitHub Inc"}, "clientId": {"client-2"},
			"scopes": {"read:user user:email"}, "enabled": {"on"}, "trustedForLinking": {"on"}})
		mustConsoleSeeOther(t, r, path+"?done=updated")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.update-identity-provider", "identity_provider", "gh-corp")
		got := harness.MustOK(t, w.admin.Get("/api/admin/identity-providers/gh-corp"))
		if got["name"] != "GitHub Inc" || got["clientId"] != "client-2" || got["trustedForLinking"] != true || got["clientSecretSet"] != true {
			t.Fatalf("after the change the admin API sees %v", got)
		}
		mustConsoleSeeOther(t, consoleFormPost(t, w.admin, path, path+"/disable", nil), path+"?done=disabled")
		if got := harness.MustOK(t, w.admin.Get("/api/admin/identity-providers/gh-corp")); got["enabled"] != false {
			t.Fatalf("after disabling: %v", got)
		}
		mustConsoleSeeOther(t, consoleFormPost(t, w.admin, path, path+"/enable", nil), path+"?done=enabled")

		// Delete: a wrong confirmation keeps the input and deletes nothing.
		r = consoleFormPost(t, w.admin, path, path+"/delete", url.Values{"confirm": {"gh"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="confirm-error"`) || !strings.Contains(page, `value="gh"`) {
			t.Fatalf("wrong confirmation: %s", page)
		}
		for _, p := range []string{list, path} {
			if page := harness.MustConsolePage(t, w.admin.Get(p), http.StatusOK); strings.Contains(page, secret) {
				t.Fatalf("%s shows the client secret", p)
			}
		}
		r = consoleFormPost(t, w.admin, path, path+"/delete", url.Values{"confirm": {"gh-corp"}})
		mustConsoleSeeOther(t, r, list+"?deleted=1")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.delete-identity-provider", "identity_provider", "gh-corp")
		harness.MustConsolePage(t, w.admin.Get(path), http.StatusNotFound)
		// The audit entries link back to the provider's page.
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/audit?targetType=identity_provider"), http.StatusOK)); !strings.Contains(rows, `href="`+path+`"`) {
			t.Fatalf("the audit log does not link to the provider: %s", rows)
		}
	})
}

// oaWhsec matches a webhook signing secret in a page.
var oaWhsec = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`)

// Ensure an administrator registers a webhook endpoint from the console,
// sees its signing secret once (the endpoint's page never shows it
// again), rotates it (a new one, shown once), sees a message and replays
// it, disables and enables the endpoint and deletes it with the typed
// confirmation, each through the admin API's use cases and audited.
func TestConsoleWebhooks_manage(t *testing.T) {
	t.Parallel()
	// A fresh application: a setting of its own.
	harness.ForStores(t, harness.StoresOnce, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_WEBHOOK_POLL_INTERVAL": "100ms"}), func(t *testing.T, app *harness.App) {
		// The fan-out of events to the endpoints runs, as "gatehouse serve"
		// runs it (the sender too: hooks.example.com does not answer).
		t.Cleanup(app.App.StartJobs(context.WithoutCancel(t.Context()), slog.New(slog.DiscardHandler)))
		w := newConsoleWorld(t, app)
		const list, endpoint = "/console/webhooks", "https://hooks.example.com/in"
		fields := url.Values{"url": {endpoint}, "description": {"billing"}, "events": {"user.banned", "user.unbanned"},
			"_token": {mustConsoleTokens(t, w.admin, list)[list]}}
		r := consolePost(w.admin, list, fields)
		page := harness.MustConsolePage(t, r, http.StatusCreated)
		secrets := oaWhsec.FindAllString(page, -1)
		if len(secrets) != 1 || !strings.Contains(page, `data-copy="signing-secret"`) || !strings.Contains(page, "shown this once") {
			t.Fatalf("the new endpoint's page shows %d secrets: %s", len(secrets), page)
		}
		all := harness.MustOK(t, w.admin.Get("/api/admin/webhooks"))["data"].([]any)
		if len(all) != 1 {
			t.Fatalf("%d endpoints", len(all))
		}
		id := harness.MustID(t, all[0])
		path := list + "/" + id
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.create-webhook", "webhook", id)
		for _, p := range []string{list, path} {
			if page := harness.MustConsolePage(t, w.admin.Get(p), http.StatusOK); oaWhsec.MatchString(page) || !strings.Contains(page, endpoint) {
				t.Fatalf("%s shows a secret, or not the endpoint: %s", p, page)
			}
		}
		// Posting the same form again (a reload) is refused: no second
		// endpoint, no secret.
		if page := harness.MustConsolePage(t, consolePost(w.admin, list, fields), http.StatusForbidden); oaWhsec.MatchString(page) {
			t.Fatal("a reposted form shows a secret")
		}

		// Rotating shows a new secret, once.
		r = consoleFormPost(t, w.admin, path, path+"/rotate-secret", nil)
		page = harness.MustConsolePage(t, r, http.StatusOK)
		if got := oaWhsec.FindAllString(page, -1); len(got) != 1 || got[0] == secrets[0] || !strings.Contains(page, "still signs until") {
			t.Fatalf("after rotating the page shows %v: %s", got, page)
		}
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.rotate-secret-webhook", "webhook", id)
		if oaWhsec.MatchString(harness.MustConsolePage(t, w.admin.Get(path), http.StatusOK)) {
			t.Fatal("the endpoint's page shows a secret after the rotation")
		}

		// A ban is a message for it; replaying it is audited.
		mustConsoleSeeOther(t, consoleFormPost(t, w.admin, w.userPath(), w.userPath()+"/ban", url.Values{"reason": {"spam"}}), w.userPath()+"?done=banned")
		var m []string
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			page = harness.MustConsolePage(t, w.admin.Get(path), http.StatusOK)
			m = regexp.MustCompile(`<input type="hidden" name="message" value="([^"]+)">`).FindStringSubmatch(page)
			if m != nil && strings.Contains(consoleRows(page), "user.banned") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no message for the ban: %s", page)
			}
		}
		r = consoleFormPost(t, w.admin, path, path+"/replay", url.Values{"message": {m[1]}})
		mustConsoleSeeOther(t, r, path+"?done=replayed")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.replay-webhook", "webhook", id)
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get(path+"?status=succeeded"), http.StatusOK)); !strings.Contains(rows, "No message succeeded") {
			t.Fatalf("filtered by succeeded: %s", rows)
		}
		harness.MustConsolePage(t, w.admin.Get(path+"?status=lost"), http.StatusBadRequest)

		// Disable, enable.
		r = consoleFormPost(t, w.admin, path, path+"/disable", nil)
		mustConsoleSeeOther(t, r, path+"?done=disabled")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.update-webhook", "webhook", id)
		if got := harness.MustOK(t, w.admin.Get("/api/admin/webhooks/"+id)); got["enabled"] != false {
			t.Fatalf("after disabling: %v", got)
		}
		mustConsoleSeeOther(t, consoleFormPost(t, w.admin, path, path+"/enable", nil), path+"?done=enabled")
		if got := harness.MustOK(t, w.admin.Get("/api/admin/webhooks/"+id)); got["enabled"] != true {
			t.Fatalf("after enabling: %v", got)
		}

		// Delete with the typed confirmation.
		r = consoleFormPost(t, w.admin, path, path+"/delete", url.Values{"confirm": {"https://hooks.example.com"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="confirm-error"`) || !strings.Contains(page, `value="https://hooks.example.com"`) || oaWhsec.MatchString(page) {
			t.Fatalf("wrong confirmation: %s", page)
		}
		r = consoleFormPost(t, w.admin, path, path+"/delete", url.Values{"confirm": {endpoint}})
		mustConsoleSeeOther(t, r, list+"?deleted=1")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.delete-webhook", "webhook", id)
		harness.MustConsolePage(t, w.admin.Get(path), http.StatusNotFound)
	})
}

// Ensure an administrator with a second factor who has not proven it
// recently is sent to prove it before a webhook's secret is shown, as the
// admin API asks (mfa.step_up_required), and nothing is created.
func TestConsoleWebhooks_secrets_need_a_fresh_second_factor(t *testing.T) {
	t.Parallel()
	// A fresh application: the administrator enrols a second factor.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		secret := harness.MustEnrolTOTP(t, admin, harness.AdminPassword)
		// A session signed in on a trusted device: no second factor proven.
		stale := app.NewClient(t)
		{
			c := app.NewClient(t)
			harness.MustOK(t, c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, harness.AdminEmail, harness.AdminPassword)))
			harness.MustOK(t, c.Post("/api/auth/two-factor/verify-totp", harness.MustJSON(t, map[string]any{"code": harness.TOTPAt(app.Clock, secret, 0), "trustDevice": true})))
			stale.Cookies[harness.TrustCookie] = c.Cookies[harness.TrustCookie]
			harness.MustSignIn(t, stale, harness.AdminEmail, harness.AdminPassword)
		}
		const list = "/console/webhooks"
		r := consoleFormPost(t, stale, list, list, url.Values{"url": {"https://hooks.example.com/in"}})
		mustConsoleSeeOther(t, r, "/two-factor?callbackURL="+url.QueryEscape(list))
		if got := harness.MustOK(t, admin.Get("/api/admin/webhooks"))["data"].([]any); len(got) != 0 {
			t.Fatalf("an endpoint was created: %v", got)
		}
	})
}
