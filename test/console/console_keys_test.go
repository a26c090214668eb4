package console

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// consoleSecret matches the secret on a console page that shows one once.
var consoleSecret = regexp.MustCompile(`<code id="secret" class="secret" data-secret>([^<]+)</code>`)

// consoleNextPage matches a list page's link to the next page.
var consoleNextPage = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)

// mustConsoleSecret fails unless r is the page that shows a new secret
// once (200, no redirect, no-store, a copy button, the warning) and
// returns the secret.
func mustConsoleSecret(t testing.TB, r *harness.Response, prefix string) string {
	t.Helper()
	page := harness.MustConsolePage(t, r, http.StatusOK)
	if loc := r.Header.Get("Location"); loc != "" {
		t.Fatalf("the secret page redirects to %q", loc)
	}
	m := consoleSecret.FindStringSubmatch(page)
	if m == nil || !strings.HasPrefix(m[1], prefix) {
		t.Fatalf("no %s… secret on the page: %s", prefix, page)
	}
	if !strings.Contains(page, `<button type="button" class="copy" data-copy="secret">`) || !strings.Contains(page, "it will not be shown again") {
		t.Fatalf("the secret page lacks its copy button or its warning: %s", page)
	}
	return html.UnescapeString(m[1])
}

// mustNoSecret fails if the body of r holds any of secrets.
func mustNoSecret(t testing.TB, what string, r *harness.Response, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(string(r.Body), s) {
			t.Fatalf("%s shows a secret again", what)
		}
	}
}

// auditSuccesses returns the audit entries of action whose outcome is success.
func auditSuccesses(t testing.TB, admin *harness.Client, action string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range harness.AuditAll(t, admin, url.Values{"action": {action}}) {
		if e["outcome"] == "success" {
			out = append(out, e)
		}
	}
	return out
}

// Ensure every route of the Service keys, OAuth clients and Signing keys
// sections sends a signed-out browser to sign in, refuses a user who is
// not an administrator with the 403 page and serves the administrator, and
// that every form refuses a post without a token, changing nothing.
func TestConsoleKeys_authorization_matrix(t *testing.T) {
	t.Parallel()
	// A fresh application: it counts every key and the audit log.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		keyID := harness.MustID(t, harness.MustCreateKey(t, w.admin, map[string]any{"name": "matrix key", "scopes": []string{"users:read"}}))
		r := w.admin.Post("/api/admin/oauth-clients", matrixOAuthClient)
		harness.MustStatus(t, r, http.StatusCreated)
		clientID, _ := r.JSON(t)["clientId"].(string)
		key, client := "/console/service-keys/"+keyID, "/console/oauth-clients/"+clientID
		gets := []string{"/console/service-keys", "/console/service-keys?status=active&limit=5", key,
			"/console/oauth-clients", "/console/oauth-clients?limit=5", client, "/console/signing-keys"}
		posts := []string{"/console/service-keys", key + "/rotate", key + "/revoke",
			"/console/oauth-clients", client + "/update", client + "/rotate-secret", client + "/delete", "/console/signing-keys/rotate"}
		mustConsoleGuards(t, w, gets, posts)

		// Nothing changed: the key is active, the client is there, and no
		// signing key was rotated.
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get("/console/service-keys?status=active"), http.StatusOK)); !strings.Contains(rows, "matrix key") {
			t.Fatalf("the key is no longer active: %s", rows)
		}
		harness.MustConsolePage(t, w.admin.Get(client), http.StatusOK)
		if entries := harness.AuditAll(t, w.admin, url.Values{"action": {"admin.rotate-signing-key"}}); len(entries) != 0 {
			t.Fatalf("signing keys rotated by refused forms: %v", entries)
		}
		if entries := harness.AuditAll(t, w.admin, url.Values{"action": {"service-key.create"}}); len(entries) != 1 {
			t.Fatalf("service-key.create entries: %v", entries)
		}
		// Another form's token is refused too.
		tokens := mustConsoleTokens(t, w.admin, key)
		harness.MustConsolePage(t, consolePost(w.admin, key+"/revoke", url.Values{"_token": {tokens[key+"/rotate"]}}), http.StatusForbidden)
		harness.MustConsolePage(t, w.admin.Get("/console/service-keys/nope"), http.StatusNotFound)
		harness.MustConsolePage(t, w.admin.Get("/console/oauth-clients/nope"), http.StatusNotFound)
	})
}

// Ensure an administrator creates, rotates and revokes service keys on the
// console through the admin API's use cases, with their audit entries; a
// secret appears in exactly one answer, works on the trusted API, and is
// never shown again (not by the list, the key's page, a reload of the form
// or the audit log); the list pages and filters with its state in the URL.
func TestConsoleKeys_service_keys(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every key and counts the audit log.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		const list = "/console/service-keys"
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get(list), http.StatusOK)); !strings.Contains(rows, "No service key") {
			t.Fatalf("an empty list shows: %s", rows)
		}
		tokens := mustConsoleTokens(t, w.admin, list)
		create := url.Values{"_token": {tokens[list]}, "name": {"billing backend"}, "scopes": {"users:read", "organizations:read"}, "days": {"30"}}
		r := consolePost(w.admin, list, create)
		secret := mustConsoleSecret(t, r, "gh_sk_")
		keys := auditSuccesses(t, w.admin, "service-key.create")
		if len(keys) != 1 {
			t.Fatalf("service-key.create entries: %v", keys)
		}
		keyID, _ := keys[0]["targetId"].(string)
		mustAuditEntry(t, w.admin, r, w.adminID, "service-key.create", "service_key", keyID)
		key := list + "/" + keyID

		// The secret works on the trusted API, with its scopes only.
		harness.MustStatus(t, app.NewClient(t).Get("/api/users", "Authorization", "Bearer "+secret), http.StatusOK)
		harness.MustStatus(t, app.NewClient(t).Post("/api/users", harness.MustJSON(t, map[string]any{"email": "new@example.com", "name": "New"}), "Authorization", "Bearer "+secret), http.StatusForbidden)

		// Never again: a reload re-posts the spent token; the list, the
		// key's page and the audit log show no secret.
		again := consolePost(w.admin, list, create)
		harness.MustConsolePage(t, again, http.StatusForbidden)
		mustNoSecret(t, "a reload of the form", again, secret)
		page := w.admin.Get(list)
		mustNoSecret(t, "the list", page, secret)
		rows := consoleRows(harness.MustConsolePage(t, page, http.StatusOK))
		for _, want := range []string{"billing backend", "users:read", "organizations:read", "gh_sk_…" + secret[len(secret)-4:], "<time datetime=", "active"} {
			if !strings.Contains(rows, want) {
				t.Fatalf("the list lacks %q: %s", want, rows)
			}
		}
		mustNoSecret(t, "the key's page", w.admin.Get(key), secret)
		mustNoSecret(t, "the audit log", w.admin.Get("/api/admin/audit-log?limit=100"), secret)

		// Rotate with an hour's overlap: both secrets work; the new one is
		// shown once.
		r = consoleFormPost(t, w.admin, key, key+"/rotate", url.Values{"overlap": {"1h"}})
		second := mustConsoleSecret(t, r, "gh_sk_")
		if second == secret {
			t.Fatal("the rotation kept the secret")
		}
		if page := string(r.Body); !strings.Contains(page, "The old secret keeps working until") {
			t.Fatalf("the rotation does not say how long the old secret works: %s", page)
		}
		mustAuditEntry(t, w.admin, r, w.adminID, "service-key.rotate", "service_key", keyID)
		for _, s := range []string{secret, second} {
			harness.MustStatus(t, app.NewClient(t).Get("/api/users", "Authorization", "Bearer "+s), http.StatusOK)
		}
		mustNoSecret(t, "the key's page after rotating", w.admin.Get(key), secret, second)
		// Rotate with no overlap: the previous secret stops now.
		third := mustConsoleSecret(t, consoleFormPost(t, w.admin, key, key+"/rotate", url.Values{"overlap": {"0"}}), "gh_sk_")
		harness.MustStatus(t, app.NewClient(t).Get("/api/users", "Authorization", "Bearer "+second), http.StatusUnauthorized)
		harness.MustStatus(t, app.NewClient(t).Get("/api/users", "Authorization", "Bearer "+third), http.StatusOK)
		// An unknown overlap is refused, naming the field.
		if page := harness.MustConsolePage(t, consoleFormPost(t, w.admin, key, key+"/rotate", url.Values{"overlap": {"forever"}}), http.StatusBadRequest); !strings.Contains(page, `id="overlap" name="overlap" aria-invalid="true"`) {
			t.Fatalf("an unknown overlap: %s", page)
		}

		// Revoke: the key stops working.
		r = consoleFormPost(t, w.admin, key, key+"/revoke", nil)
		mustConsoleSeeOther(t, r, key+"?done=revoked")
		mustAuditEntry(t, w.admin, r, w.adminID, "service-key.revoke", "service_key", keyID)
		harness.MustStatus(t, app.NewClient(t).Get("/api/users", "Authorization", "Bearer "+third), http.StatusUnauthorized)
		if page := harness.MustConsolePage(t, w.admin.Get(key+"?done=revoked"), http.StatusOK); !strings.Contains(page, "The key is revoked") || strings.Contains(page, key+"/revoke") {
			t.Fatalf("the revoked key's page: %s", page)
		}

		// Filters and paging, the state in the URL.
		for _, name := range []string{"k1", "k2", "k3"} {
			harness.MustCreateKey(t, w.admin, map[string]any{"name": name, "scopes": []string{"*"}})
		}
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get(list+"?status=revoked"), http.StatusOK)); !strings.Contains(rows, "billing backend") || strings.Contains(rows, "k1") {
			t.Fatalf("the revoked filter: %s", rows)
		}
		first := harness.MustConsolePage(t, w.admin.Get(list+"?status=active&limit=2"), http.StatusOK)
		m := consoleNextPage.FindStringSubmatch(first)
		if m == nil || !strings.Contains(consoleRows(first), "k3") || !strings.Contains(consoleRows(first), "k2") {
			t.Fatalf("the first page of two: %s", first)
		}
		next := html.UnescapeString(m[1])
		if !strings.Contains(next, "status=active") || !strings.Contains(next, "limit=2") {
			t.Fatalf("the next page's link %q loses the list's state", next)
		}
		second2 := harness.MustConsolePage(t, w.admin.Get(next), http.StatusOK)
		if rows := consoleRows(second2); !strings.Contains(rows, "k1") || strings.Contains(rows, "k2") || consoleNextPage.MatchString(second2) {
			t.Fatalf("the second page: %s", second2)
		}
	})
}

// Ensure the service-key form keeps the input and names the field on a
// validation error, and that hostile input is a 400 page naming the
// field, never a 500, and creates nothing.
func TestConsoleKeys_validation_and_hostile_input(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every key and counts the audit log.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		const list = "/console/service-keys"
		for _, tt := range []struct {
			fields url.Values
			status int
			want   []string
		}{
			{url.Values{"name": {"kept name"}}, http.StatusBadRequest, []string{`value="kept name"`, "Choose at least one scope", "Field: <code>scopes</code>"}},
			{url.Values{"name": {"kept name"}, "scopes": {"users:read"}, "days": {"forever"}}, http.StatusBadRequest,
				[]string{`value="kept name"`, `value="forever"`, `id="days" name="days" inputmode="numeric" value="forever" aria-invalid="true"`, `value="users:read" checked`}},
			{url.Values{"name": {"  "}, "scopes": {"users:read"}}, http.StatusBadRequest, []string{`id="name" name="name" maxlength="128" required value="  " aria-invalid="true"`}},
			{url.Values{"name": {strings.Repeat("n", 200)}, "scopes": {"users:read"}}, http.StatusBadRequest, []string{`aria-invalid="true"`, strings.Repeat("n", 200)}},
			{url.Values{"name": {"x"}, "scopes": {"root"}}, http.StatusBadRequest, []string{"Field: <code>scopes</code>"}},
			{url.Values{"name": {"x"}, "scopes": {"users:read", "users:read", "users:read", "users:read", "users:read", "users:read", "users:read", "users:read", "users:read", "users:read"}}, http.StatusBadRequest, []string{"Field: <code>scopes</code>"}},
			{url.Values{"name": {"a\x00b"}, "scopes": {"users:read"}}, http.StatusBadRequest, []string{"body.name"}},
			{url.Values{"name": {"\xff\xfe"}, "scopes": {"users:read"}}, http.StatusBadRequest, []string{"body.name"}},
			{url.Values{"name": {"x"}, "scopes": {"users:read\x00"}}, http.StatusBadRequest, []string{"body.scopes"}},
			{url.Values{"name": {strings.Repeat("n", 2<<20)}, "scopes": {"users:read"}}, http.StatusRequestEntityTooLarge, []string{"larger than"}},
		} {
			page := harness.MustConsolePage(t, consoleFormPost(t, w.admin, list, list, tt.fields), tt.status)
			for _, want := range tt.want {
				if !strings.Contains(page, want) {
					t.Fatalf("create with %.80v: the page lacks %q: %.3000s", tt.fields, want, page)
				}
			}
		}
		for _, q := range []string{"status=%00", "status=lost", "cursor=nope", "limit=0", "limit=" + strings.Repeat("9", 40), "cursor=" + strings.Repeat("c", 300)} {
			harness.MustConsolePage(t, w.admin.Get(list+"?"+q), http.StatusBadRequest)
		}
		harness.MustConsolePage(t, w.admin.Get("/console/service-keys/a%00b"), http.StatusBadRequest)
		harness.MustConsolePage(t, w.admin.Get("/console/oauth-clients?cursor=%FF"), http.StatusBadRequest)
		harness.MustConsolePage(t, w.admin.Get("/console/oauth-clients/a%00b"), http.StatusBadRequest)
		harness.MustConsolePage(t, w.admin.Get("/console/oauth-clients/"+strings.Repeat("c", 200)), http.StatusBadRequest)
		harness.MustConsolePage(t, w.admin.Get("/console/signing-keys?limit=-1"), http.StatusBadRequest)
		if entries := auditSuccesses(t, w.admin, "service-key.create"); len(entries) != 0 {
			t.Fatalf("refused forms created keys: %v", entries)
		}
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get(list), http.StatusOK)); !strings.Contains(rows, "No service key") {
			t.Fatalf("refused forms created keys: %s", rows)
		}
	})
}

// Ensure an administrator registers, edits, rotates and deletes OAuth
// clients on the console through the admin API's use cases, with their
// audit entries; a confidential client's secret is shown once, a public
// client has none; the forms keep their input and name the field; delete
// needs the client's name typed.
func TestConsoleKeys_oauth_clients(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every client and counts the audit log.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		const list = "/console/oauth-clients"
		// A refused registration keeps the input and names the field.
		bad := url.Values{"name": {"Example app"}, "type": {"confidential"}, "redirectUris": {"https://app.example.com/cb\nhttps://app.example.com/#frag"}}
		page := harness.MustConsolePage(t, consoleFormPost(t, w.admin, list, list, bad), http.StatusBadRequest)
		for _, want := range []string{`value="Example app"`, "https://app.example.com/#frag</textarea>", `id="redirectUris" name="redirectUris" rows="3" required aria-invalid="true"`, "(line 2)", "fragment"} {
			if !strings.Contains(page, want) {
				t.Fatalf("a refused registration lacks %q: %s", want, page)
			}
		}
		for _, tt := range []struct {
			fields url.Values
			status int
			want   string
		}{
			{url.Values{"name": {"x"}, "type": {"secretive"}, "redirectUris": {"https://a.example/cb"}}, http.StatusBadRequest, "Field: <code>type</code>"},
			{url.Values{"name": {"x\x00"}, "type": {"public"}, "redirectUris": {"https://a.example/cb"}}, http.StatusBadRequest, "body.name"},
			{url.Values{"name": {"x"}, "type": {"public"}, "redirectUris": {strings.Repeat("https://a.example/cb\n", 3000)}}, http.StatusBadRequest, "Field: <code>redirectUris</code>"},
			{url.Values{"name": {"x"}, "type": {"public"}, "redirectUris": {"\xff"}}, http.StatusBadRequest, "body.redirectUris"},
		} {
			if page := harness.MustConsolePage(t, consoleFormPost(t, w.admin, list, list, tt.fields), tt.status); !strings.Contains(page, tt.want) {
				t.Fatalf("register with %.80v: the page lacks %q: %.3000s", tt.fields, tt.want, page)
			}
		}

		// A confidential client: its id and secret once.
		good := url.Values{"name": {"Example app"}, "type": {"confidential"}, "redirectUris": {"https://app.example.com/cb\r\nhttps://app.example.com/cb2"}}
		r := consoleFormPost(t, w.admin, list, list, good)
		secret := mustConsoleSecret(t, r, "gh_cs_")
		entries := auditSuccesses(t, w.admin, "admin.create-oauth-client")
		if len(entries) != 1 {
			t.Fatalf("admin.create-oauth-client entries: %v", entries)
		}
		clientID, _ := entries[0]["targetId"].(string)
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.create-oauth-client", "oauth_client", clientID)
		if !strings.Contains(string(r.Body), `<code id="client-id">`+clientID+`</code>`) {
			t.Fatalf("the secret page lacks the client id %s", clientID)
		}
		client := list + "/" + clientID
		view := harness.MustConsolePage(t, w.admin.Get(client), http.StatusOK)
		mustNoSecret(t, "the client's page", w.admin.Get(client), secret)
		mustNoSecret(t, "the list", w.admin.Get(list), secret)
		if !strings.Contains(view, "https://app.example.com/cb2") || !strings.Contains(view, "…"+secret[len(secret)-4:]) {
			t.Fatalf("the client's page: %s", view)
		}

		// Edit: a bad URI keeps the input and names the field; then a good one.
		edit := url.Values{"name": {"Renamed app"}, "redirectUris": {"http://app.example.com/cb"}}
		page = harness.MustConsolePage(t, consoleFormPost(t, w.admin, client, client+"/update", edit), http.StatusBadRequest)
		if !strings.Contains(page, `value="Renamed app"`) || !strings.Contains(page, "http://app.example.com/cb</textarea>") || !strings.Contains(page, `rows="4" required aria-invalid="true"`) {
			t.Fatalf("a refused edit: %s", page)
		}
		edit.Set("redirectUris", "https://app.example.com/new")
		edit.Set("firstParty", "on")
		r = consoleFormPost(t, w.admin, client, client+"/update", edit)
		mustConsoleSeeOther(t, r, client+"?done=updated")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.update-oauth-client", "oauth_client", clientID)
		got := harness.MustOK(t, w.admin.Get("/api/admin/oauth-clients/"+clientID))
		if got["name"] != "Renamed app" || got["firstParty"] != true || len(got["redirectUris"].([]any)) != 1 {
			t.Fatalf("after the edit the client is %v", got)
		}

		// Rotate the secret: a new one, once.
		r = consoleFormPost(t, w.admin, client, client+"/rotate-secret", nil)
		rotated := mustConsoleSecret(t, r, "gh_cs_")
		if rotated == secret {
			t.Fatal("the rotation kept the secret")
		}
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.rotate-oauth-client-secret", "oauth_client", clientID)
		mustNoSecret(t, "the client's page after rotating", w.admin.Get(client), secret, rotated)

		// A public client: no secret, no rotation.
		pub := url.Values{"name": {"Mobile"}, "type": {"public"}, "redirectUris": {"com.example.app:/callback"}}
		r = consoleFormPost(t, w.admin, list, list, pub)
		harness.MustStatus(t, r, http.StatusSeeOther)
		if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, "?done=registered") {
			t.Fatalf("a public client's registration goes to %q", loc)
		}
		if page := harness.MustConsolePage(t, w.admin.Get(r.Header.Get("Location")), http.StatusOK); strings.Contains(page, "/rotate-secret") || !strings.Contains(page, "no secret") {
			t.Fatalf("a public client's page: %s", page)
		}

		// Delete: the typed confirmation, kept when wrong.
		page = harness.MustConsolePage(t, consoleFormPost(t, w.admin, client, client+"/delete", url.Values{"confirm": {"Example"}}), http.StatusBadRequest)
		if !strings.Contains(page, `id="confirm-error"`) || !strings.Contains(page, `value="Example"`) {
			t.Fatalf("a wrong confirmation: %s", page)
		}
		harness.MustConsolePage(t, w.admin.Get(client), http.StatusOK)
		r = consoleFormPost(t, w.admin, client, client+"/delete", url.Values{"confirm": {"Renamed app"}})
		mustConsoleSeeOther(t, r, list+"?deleted=1")
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.delete-oauth-client", "oauth_client", clientID)
		harness.MustConsolePage(t, w.admin.Get(client), http.StatusNotFound)
		if rows := consoleRows(harness.MustConsolePage(t, w.admin.Get(list+"?deleted=1"), http.StatusOK)); strings.Contains(rows, "Renamed app") || !strings.Contains(rows, "Mobile") {
			t.Fatalf("the list after deleting: %s", rows)
		}
	})
}

// Ensure an administrator lists and rotates the signing keys on the
// console through the admin API's use case, with its audit entry, and that
// an unknown algorithm is refused naming the field.
func TestConsoleKeys_signing_keys(t *testing.T) {
	t.Parallel()
	// A fresh application: it rotates the application's signing keys and counts them.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		const list = "/console/signing-keys"
		before := harness.MustOK(t, w.admin.Get("/api/admin/signing-keys"))["data"].([]any)
		page := harness.MustConsolePage(t, consoleFormPost(t, w.admin, list, list+"/rotate", url.Values{"alg": {"HS256"}}), http.StatusBadRequest)
		if !strings.Contains(page, `id="alg" name="alg" aria-invalid="true"`) {
			t.Fatalf("an unknown algorithm: %s", page)
		}
		r := consoleFormPost(t, w.admin, list, list+"/rotate", url.Values{"alg": {"EdDSA"}})
		mustConsoleSeeOther(t, r, list+"?done=rotated")
		after := harness.MustOK(t, w.admin.Get("/api/admin/signing-keys"))["data"].([]any)
		if len(after) != len(before)+1 {
			t.Fatalf("signing keys: %d before, %d after", len(before), len(after))
		}
		newest := harness.MustObject(t, after[0])
		kid, _ := newest["id"].(string)
		mustAuditEntry(t, w.admin, r, w.adminID, "admin.rotate-signing-key", "signing_key", kid)
		page = harness.MustConsolePage(t, w.admin.Get(list+"?done=rotated"), http.StatusOK)
		if rows := consoleRows(page); !strings.Contains(rows, kid) || !strings.Contains(rows, "pending") || !strings.Contains(rows, "EdDSA") {
			t.Fatalf("the list after rotating: %s", page)
		}
		first := harness.MustConsolePage(t, w.admin.Get(list+"?limit=1"), http.StatusOK)
		if m := consoleNextPage.FindStringSubmatch(first); m == nil || strings.Count(consoleRows(first), "<tr>") != 1 {
			t.Fatalf("the first page of one: %s", first)
		}
	})
}

// Ensure the console applies the admin API's step-up rule to the forms
// that hand out a secret: an administrator with two-factor on whose
// session has not proven it recently is sent from creating or rotating a
// service key to the hosted step-up page, which brings them back to the
// form's page (no secret, nothing created), and may once they answer a
// code.
func TestConsoleKeys_step_up(t *testing.T) {
	t.Parallel()
	// A fresh application: the administrator enrols a second factor.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		secret := harness.MustEnrolTOTP(t, admin, harness.AdminPassword)
		keyID := harness.MustID(t, harness.MustCreateKey(t, admin, map[string]any{"name": "fresh", "scopes": []string{"users:read"}}))
		stale := app.NewClient(t)
		{
			c := app.NewClient(t)
			harness.MustOK(t, c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, harness.AdminEmail, harness.AdminPassword)))
			harness.MustOK(t, c.Post("/api/auth/two-factor/verify-totp", harness.MustJSON(t, map[string]any{"code": harness.TOTPAt(app.Clock, secret, 0), "trustDevice": true})))
			stale.Cookies[harness.TrustCookie] = c.Cookies[harness.TrustCookie]
			harness.MustSignIn(t, stale, harness.AdminEmail, harness.AdminPassword)
		}
		const list = "/console/service-keys"
		key := list + "/" + keyID
		create := url.Values{"name": {"stale key"}, "scopes": {"users:read"}}
		r := consoleFormPost(t, stale, list+"?status=active", list, create)
		mustConsoleSeeOther(t, r, "/two-factor?callbackURL="+url.QueryEscape(list+"?status=active"))
		mustNoSecret(t, "the step-up detour", r, "gh_sk_")
		r = consoleFormPost(t, stale, key, key+"/rotate", url.Values{"overlap": {"24h"}})
		mustConsoleSeeOther(t, r, "/two-factor?callbackURL="+url.QueryEscape(key))
		mustNoSecret(t, "the step-up detour", r, "gh_sk_")
		if got := len(auditSuccesses(t, admin, "service-key.create")); got != 1 {
			t.Fatalf("%d keys created", got)
		}
		if got := len(auditSuccesses(t, admin, "service-key.rotate")); got != 0 {
			t.Fatalf("%d keys rotated", got)
		}
		harness.MustOK(t, harness.VerifyTOTP(t, stale, harness.TOTPAt(app.Clock, secret, 1)))
		mustConsoleSecret(t, consoleFormPost(t, stale, list, list, create), "gh_sk_")
		mustConsoleSecret(t, consoleFormPost(t, stale, key, key+"/rotate", url.Values{"overlap": {"24h"}}), "gh_sk_")
	})
}
