package console

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// orgsDomainsWorld is a console world with an organization the victim owns
// (the administrator is not a member) and a domain the administrator added
// through the console.
type orgsDomainsWorld struct {
	*consoleWorld
	orgID, domainID string
}

func (w *orgsDomainsWorld) orgPath() string    { return "/console/organizations/" + w.orgID }
func (w *orgsDomainsWorld) domainPath() string { return "/console/domains/" + w.domainID }

func newOrgsDomainsWorld(t *testing.T, app *harness.App) *orgsDomainsWorld {
	t.Helper()
	w := &orgsDomainsWorld{consoleWorld: newConsoleWorld(t, app)}
	org := harness.MustOK(t, w.victimC.Post("/api/auth/organization/create", harness.MustJSON(t, map[string]any{"name": "Vic Corp", "slug": "vic-corp"})))
	w.orgID = harness.MustID(t, org)
	r := consoleSubmit(t, w.admin, "/console/domains", "/console/domains", url.Values{"hostname": {"login.vic.example.com"}, "organization": {w.orgID}})
	harness.MustStatus(t, r, http.StatusSeeOther)
	loc := r.Header.Get("Location")
	id, ok := strings.CutPrefix(loc, "/console/domains/")
	id, _, _ = strings.Cut(id, "?")
	if !ok || id == "" || !strings.HasSuffix(loc, "?done=created") {
		t.Fatalf("adding a domain: Location = %q", loc)
	}
	w.domainID = id
	return w
}

// consoleSubmit posts fields to the form action found on page, with that
// form's token, failing if the page has no such form.
func consoleSubmit(t testing.TB, c *harness.Client, page, action string, fields url.Values) *harness.Response {
	t.Helper()
	token := mustConsoleTokens(t, c, page)[action]
	if token == "" {
		t.Fatalf("no form posting to %s on %s", action, page)
	}
	if fields == nil {
		fields = url.Values{}
	}
	fields.Set("_token", token)
	return consolePost(c, action, fields)
}

// hiddenValueFor returns the value of the hidden input name in the table row
// of page that mentions text.
func hiddenValueFor(t testing.TB, page, text, name string) string {
	t.Helper()
	re := regexp.MustCompile(`<input type="hidden" name="` + name + `" value="([^"]+)">`)
	for _, row := range strings.Split(consoleRowsAll(page), "</tr>") {
		if strings.Contains(row, text) {
			if m := re.FindStringSubmatch(row); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no %s for %q on the page: %s", name, text, page)
	return ""
}

// consoleRowsAll is every table body of a page, one after the other.
func consoleRowsAll(page string) string {
	var out strings.Builder
	for _, part := range strings.Split(page, "<tbody>")[1:] {
		rows, _, _ := strings.Cut(part, "</tbody>")
		out.WriteString(rows)
	}
	return out.String()
}

// Ensure every route of the Organizations and Domains sections sends a
// signed-out browser to sign in and back, refuses a user who is not an
// administrator (even the organization's owner) with the 403 page, serves
// the administrator, and refuses a form without its token.
func TestConsoleOrgsDomains_authorization_matrix(t *testing.T) {
	t.Parallel()
	// A fresh application: its world's domain has a hostname of the other tests' worlds.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newOrgsDomainsWorld(t, app)
		gets := []string{"/console/organizations", "/console/organizations?q=vic", w.orgPath(),
			"/console/domains", "/console/domains?status=pending&org=" + w.orgID, w.domainPath()}
		posts := []string{"/console/domains"}
		for _, a := range []string{"/settings", "/members/role", "/members/remove", "/invitations", "/invitations/revoke", "/invitations/resend", "/delete"} {
			posts = append(posts, w.orgPath()+a)
		}
		for _, a := range []string{"/check", "/update", "/delete"} {
			posts = append(posts, w.domainPath()+a)
		}
		mustConsoleGuards(t, w.consoleWorld, gets, posts)
		// The owner of the organization is refused too: the console is for
		// administrators, whatever their memberships.
		if body := harness.MustConsolePage(t, w.victimC.Get(w.orgPath()), http.StatusForbidden); !strings.Contains(body, "Not an administrator") {
			t.Fatalf("the owner on the console: %s", body)
		}
		// Nothing the refused forms sent changed anything.
		if page := harness.MustConsolePage(t, w.admin.Get(w.orgPath()), http.StatusOK); !strings.Contains(page, "Vic Corp") || !strings.Contains(page, w.victimEmail) {
			t.Fatalf("the organization after refused forms: %s", page)
		}
		harness.MustConsolePage(t, w.admin.Get(w.domainPath()), http.StatusOK)
		// Unknown ids are 404 pages.
		harness.MustConsolePage(t, w.admin.Get("/console/organizations/no-such-org"), http.StatusNotFound)
		harness.MustConsolePage(t, w.admin.Get("/console/domains/no-such-domain"), http.StatusNotFound)
	})
}

// Ensure the administrator finds an organization by name or slug, edits
// its settings (a refused edit keeps the input and names the field),
// invites, resends and revokes, changes a member's role, removes a member
// and deletes it with the typed confirmation, each through the trusted
// API's use cases and audited with the administrator as the actor.
func TestConsoleOrgsDomains_organization_actions_are_audited(t *testing.T) {
	t.Parallel()
	// A fresh application: it searches every organization.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newOrgsDomainsWorld(t, app)
		harness.MustOK(t, w.plain.Post("/api/auth/organization/create", harness.MustJSON(t, map[string]any{"name": "Pat Industries", "slug": "pat-ind"})))
		org := w.orgPath()
		submit := func(action string, fields url.Values) *harness.Response {
			t.Helper()
			return consoleSubmit(t, w.admin, org, org+action, fields)
		}
		done := func(r *harness.Response, what string) {
			t.Helper()
			harness.MustStatus(t, r, http.StatusSeeOther)
			if got, want := r.Header.Get("Location"), org+"?done="+what; got != want {
				t.Fatalf("Location = %q, want %q", got, want)
			}
		}

		// Search by name, by slug, whatever the case.
		for q, want := range map[string]string{"vic+corp": "Vic Corp", "PAT-IND": "Pat Industries"} {
			rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/organizations?q="+q), http.StatusOK))
			if !strings.Contains(rows, want) || strings.Count(rows, "<tr>") != 1 {
				t.Fatalf("search %q: %s", q, rows)
			}
		}
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/organizations?q=nothing"), http.StatusOK)); !strings.Contains(rows, "No organization matches") {
			t.Fatalf("search with no match: %s", rows)
		}

		// Settings: a taken slug keeps the input and names the field.
		r := submit("/settings", url.Values{"name": {"Vic Renamed"}, "slug": {"pat-ind"}, "logo": {""}, "metadata": {`{"tier":"gold"}`}})
		page := harness.MustConsolePage(t, r, http.StatusBadRequest)
		if !strings.Contains(page, `id="org-slug" name="slug" maxlength="64" required value="pat-ind" aria-invalid="true"`) || !strings.Contains(page, `value="Vic Renamed"`) ||
			!strings.Contains(page, "{&#34;tier&#34;:&#34;gold&#34;}") {
			t.Fatalf("a refused settings form: %s", page)
		}
		r = submit("/settings", url.Values{"name": {"Vic Renamed"}, "slug": {"vic-corp"}, "metadata": {"[1]"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="org-metadata" name="metadata" rows="4" aria-invalid="true"`) {
			t.Fatalf("bad metadata: %s", page)
		}
		r = submit("/settings", url.Values{"name": {"Vic Renamed"}, "slug": {"vic-renamed"}, "logo": {"https://vic.example.com/logo.png"}, "metadata": {`{"tier":"gold"}`}})
		done(r, "updated")
		mustAuditEntry(t, w.admin, r, w.adminID, "organization.update", "organization", w.orgID)
		if page := harness.MustConsolePage(t, w.admin.Get(org+"?done=updated"), http.StatusOK); !strings.Contains(page, "<h1>Vic Renamed</h1>") || !strings.Contains(page, "The settings are saved.") {
			t.Fatalf("after saving: %s", page)
		}

		// Invitations: a bad address keeps the input; send, resend, revoke.
		r = submit("/invitations", url.Values{"email": {"not-an-address"}, "role": {"admin"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `value="not-an-address" aria-invalid="true"`) || !strings.Contains(page, `<option value="admin" selected>`) {
			t.Fatalf("a refused invitation: %s", page)
		}
		r = submit("/invitations", url.Values{"email": {"mem@example.com"}, "role": {"superuser"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="invite-role" name="role" aria-invalid="true"`) {
			t.Fatalf("an unknown role: %s", page)
		}
		r = submit("/invitations", url.Values{"email": {"mem@example.com"}, "role": {"admin"}})
		done(r, "invited")
		mustAuditEntry(t, w.admin, r, w.adminID, "organization.invite-member", "organization", w.orgID)
		links := app.Mail.WaitFor(t, "mem@example.com", "Vic Renamed", harness.MailWait).Links()
		if len(links) != 1 {
			t.Fatalf("invitation mail links = %v", links)
		}
		invID := links[0][strings.LastIndex(links[0], "/")+1:]
		page = harness.MustConsolePage(t, w.admin.Get(org), http.StatusOK)
		if got := hiddenValueFor(t, page, "mem@example.com", "invitation"); got != invID {
			t.Fatalf("the page lists invitation %s, the mail %s", got, invID)
		}
		r = submit("/invitations", url.Values{"email": {"mem@example.com"}, "role": {"member"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `value="mem@example.com" aria-invalid="true"`) {
			t.Fatalf("inviting twice: %s", page)
		}
		r = submit("/invitations/resend", url.Values{"invitation": {invID}})
		done(r, "resent")
		mustAuditEntry(t, w.admin, r, w.adminID, "organization.invite-member", "organization", w.orgID)
		r = submit("/invitations/revoke", url.Values{"invitation": {invID}})
		done(r, "revoked")
		mustAuditEntry(t, w.admin, r, w.adminID, "organization.cancel-invitation", "organization", w.orgID)
		if page := harness.MustConsolePage(t, w.admin.Get(org), http.StatusOK); !strings.Contains(consoleRowsAll(page), "canceled") {
			t.Fatalf("the revoked invitation: %s", page)
		}
		mem, _ := harness.MustVerifiedUser(t, app, "Mem Ber", "mem@example.com", harness.UserPassword)
		harness.MustStatus(t, mem.Post(harness.OrgPath("accept-invitation"), harness.MustJSON(t, map[string]any{"invitationId": invID})), http.StatusBadRequest)

		// A new invitation, accepted: the member shows, linking to the user.
		done(submit("/invitations", url.Values{"email": {"mem@example.com"}, "role": {"member"}}), "invited")
		page = harness.MustConsolePage(t, w.admin.Get(org), http.StatusOK)
		harness.MustOK(t, mem.Post(harness.OrgPath("accept-invitation"), harness.MustJSON(t, map[string]any{"invitationId": hiddenValueFor(t, page, "mem@example.com", "invitation")})))
		page = harness.MustConsolePage(t, w.admin.Get(org), http.StatusOK)
		memberID := hiddenValueFor(t, page, `>mem@example.com</a>`, "member")
		if !regexp.MustCompile(`<a href="/console/users/[^"]+">mem@example.com</a>`).MatchString(page) {
			t.Fatalf("the member does not link to their user: %s", page)
		}

		// Roles: the last owner keeps theirs; a member becomes an admin.
		ownerID := hiddenValueFor(t, page, `>`+w.victimEmail+`</a>`, "member")
		r = submit("/members/role", url.Values{"member": {ownerID}, "role": {"member"}})
		harness.MustConsolePage(t, r, http.StatusBadRequest)
		r = submit("/members/role", url.Values{"member": {memberID}, "role": {"admin"}})
		done(r, "role")
		mustAuditEntry(t, w.admin, r, w.adminID, "organization.update-member-role", "organization", w.orgID)
		if role := harness.MustOK(t, mem.Get(harness.OrgPath("get-active-member-role")+"?organizationId="+w.orgID)); role["role"] != "admin" {
			t.Fatalf("the member's role = %v", role)
		}
		r = submit("/members/remove", url.Values{"member": {memberID}})
		done(r, "removed")
		mustAuditEntry(t, w.admin, r, w.adminID, "organization.remove-member", "organization", w.orgID)
		if page := harness.MustConsolePage(t, w.admin.Get(org), http.StatusOK); strings.Contains(page, ">mem@example.com</a>") {
			t.Fatalf("the removed member still shows: %s", page)
		}

		// Delete: a wrong confirmation keeps the input and deletes nothing.
		r = submit("/delete", url.Values{"confirm": {"vic-corp"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="confirm-error"`) || !strings.Contains(page, `value="vic-corp"`) {
			t.Fatalf("wrong confirmation: %s", page)
		}
		r = submit("/delete", url.Values{"confirm": {"vic-renamed"}})
		harness.MustStatus(t, r, http.StatusSeeOther)
		mustAuditEntry(t, w.admin, r, w.adminID, "organization.delete", "organization", w.orgID)
		harness.MustConsolePage(t, w.admin.Get(org), http.StatusNotFound)
		// Deleting the organization deleted its domain.
		harness.MustConsolePage(t, w.admin.Get(w.domainPath()), http.StatusNotFound)
	})
}

// Ensure the administrator adds a domain and sees its DNS records, each
// with a copy button; asks for a check now; moves it and verifies it by
// hand (refused input kept, naming the field); lists domains by status;
// and deletes it with the typed confirmation: each audited as the admin
// API's domain actions are.
func TestConsoleOrgsDomains_domain_actions_are_audited(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every domain.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newOrgsDomainsWorld(t, app)
		d := w.domainPath()
		entries := harness.AuditAll(t, w.admin, url.Values{"action": {"admin.create-domain"}, "targetId": {w.domainID}})
		if len(entries) != 1 || entries[0]["outcome"] != "success" || entries[0]["actorId"] != w.adminID {
			t.Fatalf("admin.create-domain entries = %v", entries)
		}
		page := harness.MustConsolePage(t, w.admin.Get(d+"?done=created"), http.StatusOK)
		for _, want := range []string{"The domain is claimed", "_gatehouse-challenge.login.vic.example.com", "gatehouse-verification=",
			`data-copy="record-1-name"`, `data-copy="record-1-value"`, `id="record-1-value"`, "Not checked yet", `id="check-now"`, w.orgID} {
			if !strings.Contains(page, want) {
				t.Fatalf("the domain page lacks %q: %s", want, page)
			}
		}

		// The add form: a bad hostname, a taken one, an unknown organization
		// keep the input and name the field.
		for _, tt := range []struct {
			host, org, field, kept string
		}{
			{"com", "", "hostname", `value="com" aria-invalid="true"`},
			{"Login.Vic.Example.com", "", "hostname", `value="Login.Vic.Example.com" aria-invalid="true"`},
			{"free.example.com", "no-such-org", "organization", `value="no-such-org" aria-invalid="true"`},
		} {
			r := consoleSubmit(t, w.admin, "/console/domains", "/console/domains", url.Values{"hostname": {tt.host}, "organization": {tt.org}})
			if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, tt.kept) || !strings.Contains(page, `id="add-error"`) {
				t.Fatalf("adding %q: %s", tt.host, page)
			}
		}

		// Check now: the admin API's recheck.
		r := consoleSubmit(t, w.admin, d, d+"/check", nil)
		harness.MustStatus(t, r, http.StatusSeeOther)
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.update-domain", "domain", w.domainID)

		// The list filters by status and organization.
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/domains?status=pending"), http.StatusOK)); !strings.Contains(rows, "login.vic.example.com") {
			t.Fatalf("pending domains: %s", rows)
		}
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/domains?status=verified"), http.StatusOK)); strings.Contains(rows, "login.vic.example.com") {
			t.Fatalf("verified domains: %s", rows)
		}

		// Move: an unknown organization keeps the input; detaching works.
		r = consoleSubmit(t, w.admin, d, d+"/update", url.Values{"part": {"organization"}, "organization": {"nope"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `value="nope" aria-invalid="true"`) {
			t.Fatalf("moving to an unknown organization: %s", page)
		}
		r = consoleSubmit(t, w.admin, d, d+"/update", url.Values{"part": {"organization"}, "organization": {""}})
		harness.MustStatus(t, r, http.StatusSeeOther)
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.update-domain", "domain", w.domainID)
		// Verify by hand: a blank reason is refused, then a reason works.
		r = consoleSubmit(t, w.admin, d, d+"/update", url.Values{"part": {"verify"}, "reason": {"   "}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="reason-error"`) {
			t.Fatalf("a blank reason: %s", page)
		}
		r = consoleSubmit(t, w.admin, d, d+"/update", url.Values{"part": {"verify"}, "reason": {"checked by phone"}})
		harness.MustStatus(t, r, http.StatusSeeOther)
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/domains?status=verified"), http.StatusOK)); !strings.Contains(rows, "login.vic.example.com") {
			t.Fatalf("verified domains after verifying by hand: %s", rows)
		}

		// Delete with the typed confirmation.
		r = consoleSubmit(t, w.admin, d, d+"/delete", url.Values{"confirm": {"login.vic.example"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `value="login.vic.example"`) || !strings.Contains(page, `id="confirm-error"`) {
			t.Fatalf("a wrong confirmation: %s", page)
		}
		r = consoleSubmit(t, w.admin, d, d+"/delete", url.Values{"confirm": {"login.vic.example.com"}})
		harness.MustStatus(t, r, http.StatusSeeOther)
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.delete-domain", "domain", w.domainID)
		harness.MustConsolePage(t, w.admin.Get(d), http.StatusNotFound)
	})
}

// Ensure hostile input in the sections' queries and forms is a 400 page
// naming the field, never a 500, and changes nothing.
func TestConsoleOrgsDomains_hostile_input(t *testing.T) {
	t.Parallel()
	// A fresh application: it counts every domain.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newOrgsDomainsWorld(t, app)
		for _, tt := range []struct{ path, field string }{
			{"/console/organizations?q=a%00b", "query.q"},
			{"/console/organizations?q=%FF%FE", "query.q"},
			{"/console/organizations?q=" + strings.Repeat("a", 300), "q"},
			{"/console/organizations?cursor=not-a-cursor", "cursor"},
			{w.orgPath() + "?members=not-a-cursor", "query.members"},
			{"/console/organizations/" + strings.Repeat("o", 200), "path.id"},
			{"/console/domains?status=bogus", "status"},
			{"/console/domains?status=%00", "query.status"},
			{"/console/domains?org=" + strings.Repeat("o", 200), "org"},
			{"/console/domains?cursor=not-a-cursor", "cursor"},
			{"/console/domains/" + strings.Repeat("d", 200), "path.id"},
		} {
			page := harness.MustConsolePage(t, w.admin.Get(tt.path), http.StatusBadRequest)
			if !strings.Contains(page, tt.field) {
				t.Fatalf("%.80s: the page does not name %s: %.3000s", tt.path, tt.field, page)
			}
		}
		org, d := w.orgPath(), w.domainPath()
		harness.MustStatus(t, consoleSubmit(t, w.admin, org, org+"/invitations", url.Values{"email": {"inv@example.com"}, "role": {"member"}}), http.StatusSeeOther)
		for _, tt := range []struct {
			page, action string
			fields       url.Values
			status       int
			field        string
		}{
			{org, org + "/settings", url.Values{"name": {"a\x00b"}, "slug": {"vic-corp"}}, http.StatusBadRequest, "body.name"},
			{org, org + "/settings", url.Values{"name": {"\xff\xfe"}, "slug": {"vic-corp"}}, http.StatusBadRequest, "body.name"},
			{org, org + "/settings", url.Values{"name": {strings.Repeat("n", 5000)}, "slug": {"vic-corp"}}, http.StatusBadRequest, `id="org-name" name="name" maxlength="256" required value="" aria-invalid="true"`},
			{org, org + "/settings", url.Values{"name": {"Vic"}, "slug": {"Bad Slug"}}, http.StatusBadRequest, `value="Bad Slug" aria-invalid="true"`},
			{org, org + "/settings", url.Values{"name": {"Vic"}, "slug": {"vic-corp"}, "logo": {"https://x.example/" + strings.Repeat("l", 3000)}}, http.StatusBadRequest, `id="org-logo" name="logo" type="url" maxlength="2048" value="" aria-invalid="true"`},
			{org, org + "/settings", url.Values{"name": {"Vic"}, "slug": {"vic-corp"}, "metadata": {strings.Repeat("{", 9000)}}, http.StatusBadRequest, `id="org-metadata" name="metadata" rows="4" aria-invalid="true"`},
			{org, org + "/invitations", url.Values{"email": {"a\x00@example.com"}, "role": {"member"}}, http.StatusBadRequest, "body.email"},
			{org, org + "/members/role", url.Values{"member": {strings.Repeat("m", 200)}, "role": {"owner"}}, http.StatusBadRequest, "body.member"},
			{org, org + "/members/remove", url.Values{}, http.StatusBadRequest, "body.member"},
			{org, org + "/invitations/revoke", url.Values{"invitation": {strings.Repeat("i", 200)}}, http.StatusBadRequest, "body.invitation"},
			{org, org + "/invitations/resend", url.Values{"invitation": {"no-such-invitation"}}, http.StatusNotFound, "body.invitation"},
			{org, org + "/delete", url.Values{"confirm": {strings.Repeat("c", 5000)}}, http.StatusBadRequest, `id="confirm-error"`},
			{"/console/domains", "/console/domains", url.Values{"hostname": {"a\x00b.example.com"}}, http.StatusBadRequest, "body.hostname"},
			{"/console/domains", "/console/domains", url.Values{"hostname": {strings.Repeat("h", 5000) + ".com"}}, http.StatusBadRequest, `id="hostname" name="hostname" maxlength="1024" required autocomplete="off" placeholder="login.example.com" value="" aria-invalid="true"`},
			{"/console/domains", "/console/domains", url.Values{"hostname": {"x.example.com"}, "organization": {strings.Repeat("o", 200)}}, http.StatusBadRequest, `id="add-error"`},
			{d, d + "/update", url.Values{"part": {"everything"}}, http.StatusBadRequest, "body.part"},
			{d, d + "/update", url.Values{"part": {"verify"}, "reason": {strings.Repeat("r", 600)}}, http.StatusBadRequest, `id="reason-error"`},
			{d, d + "/update", url.Values{"part": {"organization"}, "organization": {strings.Repeat("o", 200)}}, http.StatusBadRequest, `id="move-error"`},
			{d, d + "/delete", url.Values{"confirm": {"a\x00b"}}, http.StatusBadRequest, "body.confirm"},
			{d, d + "/update", url.Values{"part": {"verify"}, "reason": {strings.Repeat("r", 2<<20)}}, http.StatusRequestEntityTooLarge, "larger than"},
		} {
			r := consoleSubmit(t, w.admin, tt.page, tt.action, tt.fields)
			if r.Status != tt.status {
				t.Fatalf("%s with %.60v: status %d, want %d", tt.action, tt.fields, r.Status, tt.status)
			}
			page := harness.MustConsolePage(t, r, tt.status)
			if !strings.Contains(page, tt.field) {
				t.Fatalf("%s with %.60v: the page does not name %s: %.3000s", tt.action, tt.fields, tt.field, page)
			}
		}
		// Nothing changed.
		page := harness.MustConsolePage(t, w.admin.Get(org), http.StatusOK)
		if !strings.Contains(page, "<h1>Vic Corp</h1>") || !strings.Contains(page, "<dt>Members</dt><dd>1</dd>") || strings.Count(consoleRowsAll(page), "pending") != 1 {
			t.Fatalf("hostile input changed the organization: %s", page)
		}
		if page := harness.MustConsolePage(t, w.admin.Get(d), http.StatusOK); !strings.Contains(page, `id="domain-status">pending`) {
			t.Fatalf("hostile input changed the domain: %s", page)
		}
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/domains"), http.StatusOK)); strings.Count(rows, "<tr>") != 1 {
			t.Fatalf("hostile input added a domain: %s", rows)
		}
	})
}
