package test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// hardeningKit is an administrator, a service key holding every scope and
// a signed-in user, on one app with adminEnv.
type hardeningKit struct {
	app   *fwApp
	admin *fwClient
	key   keyClient
	user  *fwClient
}

func mustHardeningKit(t *testing.T, app *fwApp) *hardeningKit {
	t.Helper()
	admin, _ := mustAdmin(t, app)
	key := mustCreateKey(t, admin, map[string]any{"name": "everything backend", "scopes": []string{"*"}})
	user, _ := mustPlainUser(t, app, "Ulla", "ulla@example.com", userPassword)
	return &hardeningKit{app: app, admin: admin, user: user,
		key: keyClient{t: t, c: app.client(t), headers: []string{"Authorization", "Bearer " + key["secret"].(string), "Content-Type", "application/json"}}}
}

// Ensure the error page shows only words Gatehouse wrote: a code it sends
// there shows its message and the code, any other code a generic message
// without the code, and error_description never.
func TestHardening_error_page_shows_only_gatehouse_words(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeSQLite, fwQuick)
	phish := "Your account is locked. Call +1 555 0100 to unlock it."
	tests := []struct {
		name, query string
		want        []string
		never       []string
	}{
		{"known_code", "error=state_mismatch&error_description=" + url.QueryEscape(phish),
			[]string{"The sign-in took too long", "<code>state_mismatch</code>"}, []string{"555", "locked"}},
		{"provider_code", "error=access_denied", []string{"cancelled at the provider", "access_denied"}, nil},
		{"unknown_code", "error=YOUR_ACCOUNT_IS_LOCKED_CALL_555_0100", []string{"The sign-in could not be completed"},
			[]string{"YOUR_ACCOUNT", "555", "Error code"}},
		{"description_only", "error_description=" + url.QueryEscape(phish), []string{"The sign-in could not be completed"}, []string{"555", "locked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := app.client(t).get("/api/auth/error?" + tt.query)
			mustStatus(t, r, http.StatusOK)
			page := string(r.Body)
			for _, w := range tt.want {
				if !strings.Contains(page, w) {
					t.Fatalf("page lacks %q:\n%s", w, page)
				}
			}
			for _, n := range tt.never {
				if strings.Contains(page, n) {
					t.Fatalf("page shows %q:\n%s", n, page)
				}
			}
		})
	}
}

// Ensure a user's image and an organization's logo are absolute http or
// https URLs on every contract that sets them (the framework's account,
// admin and organization routes, the trusted API), refused otherwise with
// the field named where the contract names fields.
func TestHardening_picture_urls_are_http_only(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeSQLite, adminEnv)
	k := mustHardeningKit(t, app)
	userID := mustID(t, mustUser(t, mustSession(t, k.user)))
	org := mustOK(t, k.user.post("/api/auth/organization/create", mustJSON(t, map[string]any{"name": "Pics", "slug": "pics"})))
	orgID := mustID(t, org)
	trustedUser := mustID(t, mustCreated(t, k.key.do(http.MethodPost, usersPath, map[string]any{"email": "tina@example.com", "name": "Tina"})))
	trustedOrg := mustID(t, mustCreated(t, k.key.do(http.MethodPost, orgsPath, map[string]any{"name": "Trusted", "slug": "trusted", "ownerUserId": trustedUser})))

	for _, bad := range []string{"javascript:alert(document.domain)", "JavaScript:alert(1)", "data:image/svg+xml,<svg onload=alert(1)>",
		"//evil.example/a.png", "https://user:pw@cdn.example/a.png", "ftp://cdn.example/a.png", "https://cdn.example/a b.png", "/avatar.png"} {
		t.Run(url.PathEscape(bad), func(t *testing.T) {
			// The framework's routes answer Better Auth's shape, with a code.
			mustCode(t, k.user.post("/api/auth/update-user", mustJSON(t, map[string]any{"image": bad})), http.StatusBadRequest, "INVALID_IMAGE")
			mustCode(t, app.client(t).post("/api/auth/sign-up/email", mustJSON(t, map[string]any{"name": "Sam", "email": "sam@example.com",
				"password": userPassword, "image": bad})), http.StatusBadRequest, "INVALID_IMAGE")
			mustCode(t, k.admin.post("/api/auth/admin/create-user", mustJSON(t, map[string]any{"name": "Cy", "email": "cy@example.com",
				"password": userPassword, "data": map[string]any{"image": bad}})), http.StatusBadRequest, "INVALID_IMAGE")
			mustCode(t, k.admin.post("/api/auth/admin/update-user", mustJSON(t, map[string]any{"userId": userID, "data": map[string]any{"image": bad}})),
				http.StatusBadRequest, "INVALID_IMAGE")
			mustCode(t, k.user.post("/api/auth/organization/create", mustJSON(t, map[string]any{"name": "Bad", "slug": "bad-logo", "logo": bad})),
				http.StatusBadRequest, "INVALID_LOGO")
			mustCode(t, k.user.post("/api/auth/organization/update", mustJSON(t, map[string]any{"organizationId": orgID, "data": map[string]any{"logo": bad}})),
				http.StatusBadRequest, "INVALID_LOGO")
			// The trusted API names the field.
			mustFieldProblem(t, k.key.do(http.MethodPost, usersPath, map[string]any{"email": "bad@example.com", "name": "Bad", "image": bad}), "body.image")
			mustFieldProblem(t, k.key.do(http.MethodPatch, usersPath+"/"+trustedUser, map[string]any{"image": bad}), "body.image")
			mustFieldProblem(t, k.key.do(http.MethodPost, orgsPath, map[string]any{"name": "Bad", "slug": "bad-logo", "logo": bad, "ownerUserId": trustedUser}), "body.logo")
			mustFieldProblem(t, k.key.do(http.MethodPatch, orgsPath+"/"+trustedOrg, map[string]any{"logo": bad}), "body.logo")
		})
	}
	// Nothing was stored, and an https address still is.
	if img := mustUser(t, mustSession(t, k.user))["image"]; img != nil {
		t.Fatalf("image = %v after refusals, want none", img)
	}
	mustStatusTrue(t, k.user.post("/api/auth/update-user", `{"image":"https://cdn.example/ulla.png"}`))
	if img := mustUser(t, mustSession(t, k.user))["image"]; img != "https://cdn.example/ulla.png" {
		t.Fatalf("image = %v, want the https address", img)
	}
	mustOK(t, k.key.do(http.MethodPatch, orgsPath+"/"+trustedOrg, map[string]any{"logo": "http://cdn.example/logo.png"}))
	mustOK(t, k.key.do(http.MethodPatch, usersPath+"/"+trustedUser, map[string]any{"image": ""}))
}

// Ensure names refuse bidirectional controls (U+202E and its kin) on every
// route that sets one, and that a name stored with one before is shown in
// the console with each control replaced, not obeyed.
func TestHardening_bidi_controls_in_names(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeSQLite, adminEnv)
	k := mustHardeningKit(t, app)
	owner := mustID(t, mustUser(t, mustSession(t, k.user)))
	whk := &webhookKit{t: t, app: app, admin: k.admin, secret: strings.TrimPrefix(k.key.headers[1], "Bearer ")}
	for _, ctl := range []string{"\u202E", "\u202A", "\u2066", "\u2069", "\u200F", "\u061C"} {
		name := "Adm" + ctl + "nimda"
		t.Run(url.PathEscape(ctl), func(t *testing.T) {
			mustCode(t, k.user.post("/api/auth/update-user", mustJSON(t, map[string]any{"name": name})), http.StatusBadRequest, "INVALID_NAME")
			mustCode(t, app.client(t).post("/api/auth/sign-up/email", mustJSON(t, map[string]any{"name": name, "email": "sid@example.com", "password": userPassword})),
				http.StatusBadRequest, "INVALID_NAME")
			mustCode(t, k.user.post("/api/auth/organization/create", mustJSON(t, map[string]any{"name": name, "slug": "bidi"})), http.StatusBadRequest, "INVALID_NAME")
			mustFieldProblem(t, k.key.do(http.MethodPost, usersPath, map[string]any{"email": "bidi@example.com", "name": name}), "body.name")
			mustFieldProblem(t, k.key.do(http.MethodPost, orgsPath, map[string]any{"name": name, "slug": "bidi", "ownerUserId": owner}), "body.name")
			mustFieldProblem(t, k.admin.post(serviceKeysPath, mustJSON(t, map[string]any{"name": name, "scopes": []string{"users:read"}})), "body.name")
			mustFieldProblem(t, whk.call(http.MethodPost, webhooksPath, mustJSON(t, map[string]any{"url": "https://hooks.example.com/in", "description": name})),
				"body.description")
		})
	}
	if got := mustUser(t, mustSession(t, k.user))["name"]; got != "Ulla" {
		t.Fatalf("name = %q after refusals", got)
	}
}

// Ensure a name stored with a bidirectional control before the rule above
// (written here to the database, as an operator could) is shown in the
// console and on the account pages with U+FFFD where each control was.
func TestHardening_console_neutralises_stored_bidi_controls(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeSQLite, adminEnv)
	admin, _ := mustAdmin(t, app)
	user, id := mustPlainUser(t, app, "Mallory", "mallory@example.com", userPassword)
	stored := "Mallory \u202Etxt.exe \u2067x\u2069"
	if err := mustDB(t, app).Exec("UPDATE users SET name = ? WHERE id = ?", stored, id).Error; err != nil {
		t.Fatal(err)
	}
	for path, c := range map[string]*fwClient{"/console/users": admin, "/console/users/" + id: admin, "/account": user} {
		page := mustConsolePage(t, c.get(path), http.StatusOK)
		if strings.ContainsAny(page, "\u202E\u2067\u2069") || !strings.Contains(page, "Mallory \uFFFDtxt.exe \uFFFDx\uFFFD") {
			t.Fatalf("%s shows the stored name as:\n%s", path, page)
		}
	}
}

// Ensure a webhook URL's host is read as resolvers read it (UTS #46) before
// the registration's checks: full stops of other scripts and full-width
// digits spell 127.0.0.1, which is refused, and a name is stored mapped.
func TestHardening_webhook_hosts_are_normalised(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeSQLite, adminEnv)
	k := mustWebhookKit(t, app)
	for _, u := range []string{"https://127。0。0。1/in", "https://127．0．0．1/in", "https://１２７.0.0.1/in", "https://10｡0｡0｡1/in",
		"https://169.254.169%E3%80%82254/latest"} {
		mustCodeAt(t, k.call(http.MethodPost, webhooksPath, mustJSON(t, map[string]any{"url": u})), "webhook.invalid", "body.url")
	}
	created := mustCreated(t, k.call(http.MethodPost, webhooksPath, mustJSON(t, map[string]any{"url": "https://Hooks。Example。com/in"})))
	if created["url"] != "https://hooks.example.com/in" {
		t.Fatalf("stored url = %v, want the mapped host", created["url"])
	}
	id := mustID(t, created)
	mustCodeAt(t, k.call(http.MethodPatch, webhooksPath+"/"+id, `{"url":"https://127。0。0。1/in"}`), "webhook.invalid", "body.url")
}

// Ensure a service key has at most two live secrets: rotating with overlap
// keeps the previous secret for the overlap and ends every earlier one.
func TestHardening_service_key_keeps_two_secrets(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeSQLite, adminEnv)
	admin, _ := mustAdmin(t, app)
	created := mustCreateKey(t, admin, map[string]any{"name": "rotated backend", "scopes": []string{"users:read"}})
	id := mustID(t, created)
	secrets := []string{created["secret"].(string)}
	for range 3 {
		secrets = append(secrets, mustOK(t, admin.post(serviceKeysPath+"/"+id+"/rotate", `{"overlapSeconds":3600}`))["secret"].(string))
	}
	for i, s := range secrets {
		if i < len(secrets)-2 {
			mustKeyRefused(t, app, "/api/service-key", "Authorization", "Bearer "+s)
		} else {
			mustKeyWorks(t, app, s)
		}
	}
}

// mustCreated fails unless r is a 201 and returns its JSON body.
func mustCreated(t testing.TB, r *response) map[string]any {
	t.Helper()
	mustStatus(t, r, http.StatusCreated)
	return r.JSON(t)
}
