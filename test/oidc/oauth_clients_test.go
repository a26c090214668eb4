package oidc

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// oauthClientsPath is where administrators register OAuth clients.
const oauthClientsPath = "/api/admin/oauth-clients"

// oauthClientsForStores runs fn in parallel against a fresh app with
// AdminEnv on the stores a behaviour runs on (StoresOnce).
func oauthClientsForStores(t *testing.T, fn func(t *testing.T, app *harness.App)) {
	t.Helper()
	// A fresh application: the tests list every client it holds.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, fn)
}

var (
	clientIDPattern     = regexp.MustCompile(`^gh_ci_[A-Za-z0-9]{24}$`)
	clientSecretPattern = regexp.MustCompile(`^gh_cs_[A-Za-z0-9]{43}$`)
)

// ocCall sends an administrator's request about OAuth clients through c (a
// session, or none), with the service's Origin.
func ocCall(t testing.TB, app *harness.App, c *harness.Client, method, path, body string) *harness.Response {
	t.Helper()
	return c.Do(method, path, body, "Origin", app.Cfg.HTTP.BaseURL)
}

// mustRegisterClient registers a client and returns the 201 answer's body.
func mustRegisterClient(t testing.TB, app *harness.App, admin *harness.Client, body map[string]any) map[string]any {
	t.Helper()
	r := ocCall(t, app, admin, http.MethodPost, oauthClientsPath, harness.MustJSON(t, body))
	harness.MustStatus(t, r, http.StatusCreated)
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control = %q on an answer with a secret, want no-store", cc)
	}
	return r.JSON(t)
}

// listedClients returns the listed clients' ids, failing if the list shows
// any secret.
func listedClients(t testing.TB, app *harness.App, admin *harness.Client, secrets ...string) ([]string, map[string]map[string]any) {
	t.Helper()
	r := ocCall(t, app, admin, http.MethodGet, oauthClientsPath, "")
	body := harness.MustOK(t, r)
	if strings.Contains(string(r.Body), "clientSecret") || strings.Contains(string(r.Body), "gh_cs_") {
		t.Fatalf("the list shows a secret: %s", r.Body)
	}
	for _, s := range secrets {
		if strings.Contains(string(r.Body), s) {
			t.Fatalf("the list shows secret %s: %s", s, r.Body)
		}
	}
	var ids []string
	byID := map[string]map[string]any{}
	for _, c := range body["data"].([]any) {
		m := harness.MustObject(t, c)
		id, _ := m["clientId"].(string)
		ids = append(ids, id)
		byID[id] = m
	}
	return ids, byID
}

// Ensure an OAuth client's life: a confidential client registered with its
// secret shown once (gh_cs_ and 43 characters) and never listed, a public
// one without secret, both listed newest first, read, changed, the
// confidential one's secret rotated, and both deleted.
func TestOAuthClients_lifecycle(t *testing.T) {
	t.Parallel()
	oauthClientsForStores(t, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)

		conf := mustRegisterClient(t, app, admin, map[string]any{"name": "  Billing portal ", "type": "confidential",
			"redirectUris":           []string{"https://billing.example.com/callback", "http://localhost:3000/cb", "https://billing.example.com/callback"},
			"postLogoutRedirectUris": []string{"https://billing.example.com/"}, "firstParty": true})
		confID, _ := conf["clientId"].(string)
		secret, _ := conf["clientSecret"].(string)
		if !clientIDPattern.MatchString(confID) || !clientSecretPattern.MatchString(secret) {
			t.Fatalf("registered = %v: want clientId gh_ci_ and 24 characters, clientSecret gh_cs_ and 43", conf)
		}
		if conf["name"] != "Billing portal" || conf["type"] != "confidential" || conf["firstParty"] != true ||
			conf["secretLast4"] != secret[len(secret)-4:] ||
			!slices.Equal(harness.ToStrings(conf["redirectUris"]), []string{"https://billing.example.com/callback", "http://localhost:3000/cb"}) ||
			!slices.Equal(harness.ToStrings(conf["postLogoutRedirectUris"]), []string{"https://billing.example.com/"}) {
			t.Fatalf("registered confidential client = %v (name trimmed, duplicates dropped)", conf)
		}
		harness.MustJSDatesOrRFC3339(t, conf, "createdAt", "updatedAt")

		pub := mustRegisterClient(t, app, admin, map[string]any{"name": "Mobile app", "type": "public",
			"redirectUris": []string{"com.example.app:/oauth2redirect", "http://127.0.0.1:8765/callback", "http://[::1]/cb"}})
		pubID, _ := pub["clientId"].(string)
		if !clientIDPattern.MatchString(pubID) || pubID == confID {
			t.Fatalf("public clientId = %q", pubID)
		}
		if _, has := pub["clientSecret"]; has {
			t.Fatalf("a public client got a secret: %v", pub)
		}
		if _, has := pub["secretLast4"]; has || pub["firstParty"] != false || pub["type"] != "public" ||
			len(harness.ToStrings(pub["postLogoutRedirectUris"])) != 0 || pub["postLogoutRedirectUris"] == nil {
			t.Fatalf("registered public client = %v", pub)
		}

		// Listed newest first, without secrets.
		ids, byID := listedClients(t, app, admin, secret)
		if !slices.Equal(ids, []string{pubID, confID}) {
			t.Fatalf("listed %v, want %v newest first", ids, []string{pubID, confID})
		}
		if byID[confID]["secretLast4"] != secret[len(secret)-4:] || byID[confID]["name"] != "Billing portal" {
			t.Fatalf("listed confidential client = %v", byID[confID])
		}
		got := harness.MustOK(t, ocCall(t, app, admin, http.MethodGet, oauthClientsPath+"/"+confID, ""))
		if _, has := got["clientSecret"]; has || got["clientId"] != confID || got["secretLast4"] != conf["secretLast4"] {
			t.Fatalf("GET = %v", got)
		}

		// Changed: name, redirect URIs and the first-party flag; the rest stays.
		r := ocCall(t, app, admin, http.MethodPatch, oauthClientsPath+"/"+confID,
			`{"name":"Billing","redirectUris":["https://billing.example.com/v2/callback"],"firstParty":false,"postLogoutRedirectUris":[]}`)
		changed := harness.MustOK(t, r)
		if changed["name"] != "Billing" || changed["firstParty"] != false || changed["type"] != "confidential" ||
			!slices.Equal(harness.ToStrings(changed["redirectUris"]), []string{"https://billing.example.com/v2/callback"}) ||
			len(harness.ToStrings(changed["postLogoutRedirectUris"])) != 0 || changed["secretLast4"] != conf["secretLast4"] ||
			changed["createdAt"] != conf["createdAt"] {
			t.Fatalf("PATCH = %v", changed)
		}
		if got := harness.MustOK(t, ocCall(t, app, admin, http.MethodGet, oauthClientsPath+"/"+confID, "")); got["name"] != "Billing" ||
			!slices.Equal(harness.ToStrings(got["redirectUris"]), []string{"https://billing.example.com/v2/callback"}) {
			t.Fatalf("GET after PATCH = %v", got)
		}
		// Only the name: the URIs stay.
		if got := harness.MustOK(t, ocCall(t, app, admin, http.MethodPatch, oauthClientsPath+"/"+confID, `{"name":"Billing 2"}`)); got["name"] != "Billing 2" ||
			!slices.Equal(harness.ToStrings(got["redirectUris"]), []string{"https://billing.example.com/v2/callback"}) {
			t.Fatalf("PATCH name = %v", got)
		}
		// The type, the id and the secret cannot be changed.
		for _, field := range []string{"type", "clientSecret", "clientId", "secretLast4"} {
			harness.MustFieldProblem(t, ocCall(t, app, admin, http.MethodPatch, oauthClientsPath+"/"+confID, `{"`+field+`":"public"}`), "body."+field)
		}
		// A private-use scheme is for public clients only, on change too.
		harness.MustFieldProblem(t, ocCall(t, app, admin, http.MethodPatch, oauthClientsPath+"/"+confID,
			`{"redirectUris":["com.example.app:/cb"]}`), "body.redirectUris[0]")
		if got := harness.MustOK(t, ocCall(t, app, admin, http.MethodPatch, oauthClientsPath+"/"+pubID,
			`{"redirectUris":["com.example.app:/cb"]}`)); !slices.Equal(harness.ToStrings(got["redirectUris"]), []string{"com.example.app:/cb"}) {
			t.Fatalf("public client PATCH = %v", got)
		}

		// Rotation: a new secret, shown once; the last four follow it.
		r = ocCall(t, app, admin, http.MethodPost, oauthClientsPath+"/"+confID+"/rotate-secret", "")
		rotated := harness.MustOK(t, r)
		secret2, _ := rotated["clientSecret"].(string)
		if !clientSecretPattern.MatchString(secret2) || secret2 == secret || rotated["clientId"] != confID ||
			rotated["secretLast4"] != secret2[len(secret2)-4:] {
			t.Fatalf("rotate = %s", r.Body)
		}
		if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
			t.Fatalf("Cache-Control = %q on the rotation, want no-store", cc)
		}
		if _, byID := listedClients(t, app, admin, secret, secret2); byID[confID]["secretLast4"] != secret2[len(secret2)-4:] {
			t.Fatalf("listed after rotation = %v", byID[confID])
		}
		harness.MustProblem(t, ocCall(t, app, admin, http.MethodPost, oauthClientsPath+"/"+pubID+"/rotate-secret", ""),
			http.StatusBadRequest, "oauth_client.public_has_no_secret")

		// Deleted: gone from every route.
		r = ocCall(t, app, admin, http.MethodDelete, oauthClientsPath+"/"+confID, "")
		harness.MustStatus(t, r, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Fatalf("204 with a body: %s", r.Body)
		}
		if ids, _ := listedClients(t, app, admin); !slices.Equal(ids, []string{pubID}) {
			t.Fatalf("listed after delete = %v", ids)
		}
		for _, call := range []struct{ method, path, body string }{
			{http.MethodGet, oauthClientsPath + "/" + confID, ""},
			{http.MethodPatch, oauthClientsPath + "/" + confID, `{"name":"x"}`},
			{http.MethodPost, oauthClientsPath + "/" + confID + "/rotate-secret", ""},
			{http.MethodDelete, oauthClientsPath + "/" + confID, ""},
			{http.MethodGet, oauthClientsPath + "/gh_ci_unknown", ""},
		} {
			harness.MustProblem(t, ocCall(t, app, admin, call.method, call.path, call.body), http.StatusNotFound, "oauth_client.not_found")
		}
		harness.MustStatus(t, ocCall(t, app, admin, http.MethodDelete, oauthClientsPath+"/"+pubID, ""), http.StatusNoContent)
		if ids, _ := listedClients(t, app, admin); len(ids) != 0 {
			t.Fatalf("listed after deleting both = %v", ids)
		}
	})
}

// Ensure bad registrations are refused naming the malformed field (each
// redirect URI by its index), and create nothing.
func TestOAuthClients_validation(t *testing.T) {
	t.Parallel()
	oauthClientsForStores(t, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		ok := []string{"https://app.example.com/cb"}
		reg := func(name, typ string, uris []string) map[string]any {
			return map[string]any{"name": name, "type": typ, "redirectUris": uris}
		}
		many := make([]string, 21)
		for i := range many {
			many[i] = "https://app.example.com/cb" + string(rune('a'+i))
		}
		for _, tt := range []struct {
			name     string
			body     map[string]any
			location string
		}{
			{"empty_name", reg("", "public", ok), "body.name"},
			{"blank_name", reg("   ", "public", ok), "body.name"},
			{"long_name", reg(strings.Repeat("n", 129), "public", ok), "body.name"},
			{"unknown_type", reg("App", "native", ok), "body.type"},
			{"missing_type", map[string]any{"name": "App", "redirectUris": ok}, "body.type"},
			{"no_redirect_uri", reg("App", "public", []string{}), "body.redirectUris"},
			{"missing_redirect_uris", map[string]any{"name": "App", "type": "public"}, "body.redirectUris"},
			{"too_many_redirect_uris", reg("App", "public", many), "body.redirectUris"},
			{"relative", reg("App", "public", []string{"https://ok.example.com/cb", "/callback"}), "body.redirectUris[1]"},
			{"fragment", reg("App", "confidential", []string{"https://app.example.com/cb#x"}), "body.redirectUris[0]"},
			{"userinfo", reg("App", "confidential", []string{"https://user:pw@app.example.com/cb"}), "body.redirectUris[0]"},
			{"wildcard_host", reg("App", "confidential", []string{"https://*.example.com/cb"}), "body.redirectUris[0]"},
			{"wildcard_path", reg("App", "confidential", []string{"https://app.example.com/*"}), "body.redirectUris[0]"},
			{"plain_http", reg("App", "confidential", []string{"http://app.example.com/cb"}), "body.redirectUris[0]"},
			{"http_lookalike_loopback", reg("App", "public", []string{"http://localhost.example.com/cb"}), "body.redirectUris[0]"},
			{"private_scheme_confidential", reg("App", "confidential", []string{"com.example.app:/cb"}), "body.redirectUris[0]"},
			{"scheme_without_dot", reg("App", "public", []string{"myapp:/cb"}), "body.redirectUris[0]"},
			{"javascript", reg("App", "public", []string{"javascript:alert(1)"}), "body.redirectUris[0]"},
			{"space", reg("App", "public", []string{"https://app.example.com/a b"}), "body.redirectUris[0]"},
			{"empty_uri", reg("App", "public", []string{""}), "body.redirectUris[0]"},
			{"too_long", reg("App", "public", []string{"https://app.example.com/" + strings.Repeat("a", 2030)}), "body.redirectUris[0]"},
			{"https_without_host", reg("App", "public", []string{"https:///cb"}), "body.redirectUris[0]"},
			{"bad_post_logout", map[string]any{"name": "App", "type": "public", "redirectUris": ok,
				"postLogoutRedirectUris": []string{"https://app.example.com/", "http://evil.example.com/"}}, "body.postLogoutRedirectUris[1]"},
			{"unknown_field", map[string]any{"name": "App", "type": "public", "redirectUris": ok, "clientSecret": "mine"}, "body.clientSecret"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				harness.MustFieldProblem(t, ocCall(t, app, admin, http.MethodPost, oauthClientsPath, harness.MustJSON(t, tt.body)), tt.location)
			})
		}
		if ids, _ := listedClients(t, app, admin); len(ids) != 0 {
			t.Fatalf("refused registrations created clients: %v", ids)
		}
		// Several problems at once are all named.
		r := ocCall(t, app, admin, http.MethodPost, oauthClientsPath, harness.MustJSON(t, reg("", "public", []string{"https://ok.example.com/", "ftp://x", "https://a.example.com/#"})))
		for _, loc := range []string{"body.name", "body.redirectUris[1]", "body.redirectUris[2]"} {
			harness.MustFieldProblem(t, r, loc)
		}
		// At the edges of the rules: exactly 20 URIs, 128 characters, 2048-character URI.
		edge := mustRegisterClient(t, app, admin, reg(strings.Repeat("é", 128), "public",
			append(many[:19], "https://app.example.com/"+strings.Repeat("a", 2048-len("https://app.example.com/")))))
		if len(harness.ToStrings(edge["redirectUris"])) != 20 {
			t.Fatalf("edge registration = %v", edge)
		}
	})
}

// Ensure the routes are the platform administrator's alone: 401 without a
// session, 403 for anyone else (audited as refusals), and that every change
// is audited with its client as target.
func TestOAuthClients_access_and_audit(t *testing.T) {
	t.Parallel()
	oauthClientsForStores(t, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		c := mustRegisterClient(t, app, admin, map[string]any{"name": "App", "type": "confidential", "redirectUris": []string{"https://app.example.com/cb"}})
		id, _ := c["clientId"].(string)
		plain, plainID := harness.MustPlainUser(t, app, "Eve", harness.Email(t, "eve@example.com"), harness.UserPassword)
		calls := []struct{ method, path, body string }{
			{http.MethodPost, oauthClientsPath, `{"name":"X","type":"public","redirectUris":["https://x.example.com/cb"]}`},
			{http.MethodGet, oauthClientsPath, ""},
			{http.MethodGet, oauthClientsPath + "/" + id, ""},
			{http.MethodPatch, oauthClientsPath + "/" + id, `{"name":"Mine"}`},
			{http.MethodPost, oauthClientsPath + "/" + id + "/rotate-secret", ""},
			{http.MethodDelete, oauthClientsPath + "/" + id, ""},
		}
		for _, call := range calls {
			r := ocCall(t, app, app.NewClient(t), call.method, call.path, call.body)
			harness.MustProblem(t, r, http.StatusUnauthorized, r.JSON(t)["code"].(string))
			harness.MustProblem(t, ocCall(t, app, plain, call.method, call.path, call.body), http.StatusForbidden, "auth.not_platform_admin")
		}
		if got := harness.MustOK(t, ocCall(t, app, admin, http.MethodGet, oauthClientsPath+"/"+id, "")); got["name"] != "App" || got["secretLast4"] != c["secretLast4"] {
			t.Fatalf("refused calls changed the client: %v", got)
		}
		refused := harness.AuditAll(t, admin, url.Values{"actorId": {plainID}})
		var actions []string
		for _, e := range refused {
			if e["outcome"] == "success" || e["code"] != "auth.not_platform_admin" {
				t.Fatalf("refusal entry = %v", e)
			}
			actions = append(actions, e["action"].(string))
		}
		slices.Sort(actions)
		if want := []string{"admin.create-oauth-client", "admin.delete-oauth-client", "admin.get-oauth-client", "admin.list-oauth-clients",
			"admin.rotate-oauth-client-secret", "admin.update-oauth-client"}; !slices.Equal(actions, want) {
			t.Fatalf("refusals audited = %v, want %v", actions, want)
		}

		// The administrator's changes, successes and failures alike.
		harness.MustStatus(t, ocCall(t, app, admin, http.MethodPatch, oauthClientsPath+"/"+id, `{"name":"Renamed"}`), http.StatusOK)
		harness.MustStatus(t, ocCall(t, app, admin, http.MethodPatch, oauthClientsPath+"/"+id, `{"redirectUris":["http://evil.example.com/"]}`), http.StatusBadRequest)
		harness.MustStatus(t, ocCall(t, app, admin, http.MethodPost, oauthClientsPath+"/"+id+"/rotate-secret", ""), http.StatusOK)
		harness.MustStatus(t, ocCall(t, app, admin, http.MethodDelete, oauthClientsPath+"/"+id, ""), http.StatusNoContent)
		harness.MustStatus(t, ocCall(t, app, admin, http.MethodDelete, oauthClientsPath+"/"+id, ""), http.StatusNotFound)
		entries := harness.AuditAll(t, admin, url.Values{"actorId": {adminID}, "targetId": {id}})
		var got []string
		for _, e := range entries {
			if e["targetType"] != "oauth_client" || e["actorType"] != "user" || e["requestId"] == "" {
				t.Fatalf("entry = %v", e)
			}
			got = append(got, e["action"].(string)+":"+e["outcome"].(string))
		}
		slices.Reverse(got) // oldest first
		want := []string{"admin.create-oauth-client:success", "admin.update-oauth-client:success", "admin.update-oauth-client:failure",
			"admin.rotate-oauth-client-secret:success", "admin.delete-oauth-client:success", "admin.delete-oauth-client:failure"}
		if !slices.Equal(got, want) {
			t.Fatalf("audited = %v, want %v", got, want)
		}
		// Newest first: the refused delete, then the refused change.
		for i, code := range map[int]string{0: "oauth_client.not_found", 3: "oauth_client.invalid"} {
			if entries[i]["code"] != code {
				t.Fatalf("failure entry = %v, want code %s", entries[i], code)
			}
		}
		// Refusals are denied, not failed.
		if refused[0]["outcome"] != "denied" {
			t.Fatalf("refusal outcome = %v, want denied", refused[0]["outcome"])
		}
	})
}
