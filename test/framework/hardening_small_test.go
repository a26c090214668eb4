package framework

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// hardeningKit is an administrator, a service key holding every scope and
// a signed-in user, on one app with AdminEnv.
type hardeningKit struct {
	app   *harness.App
	admin *harness.Client
	key   harness.KeyClient
	user  *harness.Client
}

func mustHardeningKit(t *testing.T, app *harness.App) *hardeningKit {
	t.Helper()
	admin, _ := harness.MustAdmin(t, app)
	key := harness.MustCreateKey(t, admin, map[string]any{"name": "everything backend", "scopes": []string{"*"}})
	user, _ := harness.MustPlainUser(t, app, "Ulla", harness.Email(t, "ulla@example.com"), harness.UserPassword)
	return &hardeningKit{app: app, admin: admin, user: user,
		key: harness.KeyClient{T: t, C: app.NewClient(t), Headers: []string{"Authorization", "Bearer " + key["secret"].(string), "Content-Type", "application/json"}}}
}

// Ensure the error page shows only words Gatehouse wrote: a code it sends
// there shows its message and the code, any other code a generic message
// without the code, and error_description never.
func TestHardening_error_page_shows_only_gatehouse_words(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreSQLite, harness.FwQuick)
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
			r := app.NewClient(t).Get("/api/auth/error?" + tt.query)
			harness.MustStatus(t, r, http.StatusOK)
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
	app := harness.Shared(t, harness.StoreSQLite, harness.AdminEnv)
	k := mustHardeningKit(t, app)
	userID := harness.MustID(t, harness.MustUser(t, harness.MustSession(t, k.user)))
	org := harness.MustOK(t, k.user.Post("/api/auth/organization/create", harness.MustJSON(t, map[string]any{"name": "Pics", "slug": harness.Own(t, "pics")})))
	orgID := harness.MustID(t, org)
	trustedUser := harness.MustID(t, mustCreated(t, k.key.Do(http.MethodPost, harness.UsersPath, map[string]any{"email": harness.Email(t, "tina@example.com"), "name": "Tina"})))
	trustedOrg := harness.MustID(t, mustCreated(t, k.key.Do(http.MethodPost, harness.OrgsPath, map[string]any{"name": "Trusted", "slug": harness.Own(t, "trusted"), "ownerUserId": trustedUser})))

	for _, bad := range []string{"javascript:alert(document.domain)", "JavaScript:alert(1)", "data:image/svg+xml,<svg onload=alert(1)>",
		"//evil.example/a.png", "https://user:pw@cdn.example/a.png", "ftp://cdn.example/a.png", "https://cdn.example/a b.png", "/avatar.png"} {
		t.Run(url.PathEscape(bad), func(t *testing.T) {
			// The framework's routes answer Better Auth's shape, with a code.
			harness.MustCode(t, k.user.Post("/api/auth/update-user", harness.MustJSON(t, map[string]any{"image": bad})), http.StatusBadRequest, "INVALID_IMAGE")
			harness.MustCode(t, app.NewClient(t).Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]any{"name": "Sam", "email": harness.Email(t, "sam@example.com"),
				"password": harness.UserPassword, "image": bad})), http.StatusBadRequest, "INVALID_IMAGE")
			harness.MustCode(t, k.admin.Post("/api/auth/admin/create-user", harness.MustJSON(t, map[string]any{"name": "Cy", "email": harness.Email(t, "cy@example.com"),
				"password": harness.UserPassword, "data": map[string]any{"image": bad}})), http.StatusBadRequest, "INVALID_IMAGE")
			harness.MustCode(t, k.admin.Post("/api/auth/admin/update-user", harness.MustJSON(t, map[string]any{"userId": userID, "data": map[string]any{"image": bad}})),
				http.StatusBadRequest, "INVALID_IMAGE")
			harness.MustCode(t, k.user.Post("/api/auth/organization/create", harness.MustJSON(t, map[string]any{"name": "Bad", "slug": harness.Own(t, "bad-logo"), "logo": bad})),
				http.StatusBadRequest, "INVALID_LOGO")
			harness.MustCode(t, k.user.Post("/api/auth/organization/update", harness.MustJSON(t, map[string]any{"organizationId": orgID, "data": map[string]any{"logo": bad}})),
				http.StatusBadRequest, "INVALID_LOGO")
			// The trusted API names the field.
			harness.MustFieldProblem(t, k.key.Do(http.MethodPost, harness.UsersPath, map[string]any{"email": harness.Email(t, "bad@example.com"), "name": "Bad", "image": bad}), "body.image")
			harness.MustFieldProblem(t, k.key.Do(http.MethodPatch, harness.UsersPath+"/"+trustedUser, map[string]any{"image": bad}), "body.image")
			harness.MustFieldProblem(t, k.key.Do(http.MethodPost, harness.OrgsPath, map[string]any{"name": "Bad", "slug": harness.Own(t, "bad-logo"), "logo": bad, "ownerUserId": trustedUser}), "body.logo")
			harness.MustFieldProblem(t, k.key.Do(http.MethodPatch, harness.OrgsPath+"/"+trustedOrg, map[string]any{"logo": bad}), "body.logo")
		})
	}
	// Nothing was stored, and an https address still is.
	if img := harness.MustUser(t, harness.MustSession(t, k.user))["image"]; img != nil {
		t.Fatalf("image = %v after refusals, want none", img)
	}
	harness.MustStatusTrue(t, k.user.Post("/api/auth/update-user", `{"image":"https://cdn.example/ulla.png"}`))
	if img := harness.MustUser(t, harness.MustSession(t, k.user))["image"]; img != "https://cdn.example/ulla.png" {
		t.Fatalf("image = %v, want the https address", img)
	}
	harness.MustOK(t, k.key.Do(http.MethodPatch, harness.OrgsPath+"/"+trustedOrg, map[string]any{"logo": "http://cdn.example/logo.png"}))
	harness.MustOK(t, k.key.Do(http.MethodPatch, harness.UsersPath+"/"+trustedUser, map[string]any{"image": ""}))
}

// Ensure names refuse bidirectional controls (U+202E and its kin) on every
// route that sets one, and that a name stored with one before is shown in
// the console with each control replaced, not obeyed.
func TestHardening_bidi_controls_in_names(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreSQLite, harness.AdminEnv)
	k := mustHardeningKit(t, app)
	owner := harness.MustID(t, harness.MustUser(t, harness.MustSession(t, k.user)))
	whk := &harness.WebhookKit{T: t, App: app, Admin: k.admin, Secret: strings.TrimPrefix(k.key.Headers[1], "Bearer ")}
	for _, ctl := range []string{"\u202E", "\u202A", "\u2066", "\u2069", "\u200F", "\u061C"} {
		name := "Adm" + ctl + "nimda"
		t.Run(url.PathEscape(ctl), func(t *testing.T) {
			harness.MustCode(t, k.user.Post("/api/auth/update-user", harness.MustJSON(t, map[string]any{"name": name})), http.StatusBadRequest, "INVALID_NAME")
			harness.MustCode(t, app.NewClient(t).Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]any{"name": name, "email": harness.Email(t, "sid@example.com"), "password": harness.UserPassword})),
				http.StatusBadRequest, "INVALID_NAME")
			harness.MustCode(t, k.user.Post("/api/auth/organization/create", harness.MustJSON(t, map[string]any{"name": name, "slug": harness.Own(t, "bidi")})), http.StatusBadRequest, "INVALID_NAME")
			harness.MustFieldProblem(t, k.key.Do(http.MethodPost, harness.UsersPath, map[string]any{"email": harness.Email(t, "bidi@example.com"), "name": name}), "body.name")
			harness.MustFieldProblem(t, k.key.Do(http.MethodPost, harness.OrgsPath, map[string]any{"name": name, "slug": harness.Own(t, "bidi"), "ownerUserId": owner}), "body.name")
			harness.MustFieldProblem(t, k.admin.Post(harness.ServiceKeysPath, harness.MustJSON(t, map[string]any{"name": name, "scopes": []string{"users:read"}})), "body.name")
			harness.MustFieldProblem(t, whk.Call(http.MethodPost, harness.WebhooksPath, harness.MustJSON(t, map[string]any{"url": "https://hooks.example.com/in", "description": name})),
				"body.description")
		})
	}
	if got := harness.MustUser(t, harness.MustSession(t, k.user))["name"]; got != "Ulla" {
		t.Fatalf("name = %q after refusals", got)
	}
}

// Ensure a name stored with a bidirectional control before the rule above
// (written here to the database, as an operator could) is shown in the
// console and on the account pages with U+FFFD where each control was.
// It keeps a fresh application: the console's user list shows every user the application holds.
func TestHardening_console_neutralises_stored_bidi_controls(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreSQLite, harness.AdminEnv)
	admin, _ := harness.MustAdmin(t, app)
	user, id := harness.MustPlainUser(t, app, "Mallory", "mallory@example.com", harness.UserPassword)
	stored := "Mallory \u202Etxt.exe \u2067x\u2069"
	if err := harness.MustDB(t, app).Exec("UPDATE users SET name = ? WHERE id = ?", stored, id).Error; err != nil {
		t.Fatal(err)
	}
	for path, c := range map[string]*harness.Client{"/console/users": admin, "/console/users/" + id: admin, "/account": user} {
		page := harness.MustConsolePage(t, c.Get(path), http.StatusOK)
		if strings.ContainsAny(page, "\u202E\u2067\u2069") || !strings.Contains(page, "Mallory \uFFFDtxt.exe \uFFFDx\uFFFD") {
			t.Fatalf("%s shows the stored name as:\n%s", path, page)
		}
	}
}

// Ensure a webhook URL's host is read as resolvers read it (UTS #46) before
// the registration's checks: full stops of other scripts and full-width
// digits spell 127.0.0.1, which is refused, and a name is stored mapped.
// It keeps a fresh application: it registers a webhook, which every other test's events would be sent to.
func TestHardening_webhook_hosts_are_normalised(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreSQLite, harness.AdminEnv)
	k := harness.MustWebhookKit(t, app)
	for _, u := range []string{"https://127。0。0。1/in", "https://127．0．0．1/in", "https://１２７.0.0.1/in", "https://10｡0｡0｡1/in",
		"https://169.254.169%E3%80%82254/latest"} {
		harness.MustCodeAt(t, k.Call(http.MethodPost, harness.WebhooksPath, harness.MustJSON(t, map[string]any{"url": u})), "webhook.invalid", "body.url")
	}
	created := mustCreated(t, k.Call(http.MethodPost, harness.WebhooksPath, harness.MustJSON(t, map[string]any{"url": "https://Hooks。Example。com/in"})))
	if created["url"] != "https://hooks.example.com/in" {
		t.Fatalf("stored url = %v, want the mapped host", created["url"])
	}
	id := harness.MustID(t, created)
	harness.MustCodeAt(t, k.Call(http.MethodPatch, harness.WebhooksPath+"/"+id, `{"url":"https://127。0。0。1/in"}`), "webhook.invalid", "body.url")
}

// Ensure a service key has at most two live secrets: rotating with overlap
// keeps the previous secret for the overlap and ends every earlier one.
func TestHardening_service_key_keeps_two_secrets(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreSQLite, harness.AdminEnv)
	admin, _ := harness.MustAdmin(t, app)
	created := harness.MustCreateKey(t, admin, map[string]any{"name": "rotated backend", "scopes": []string{"users:read"}})
	id := harness.MustID(t, created)
	secrets := []string{created["secret"].(string)}
	for range 3 {
		secrets = append(secrets, harness.MustOK(t, admin.Post(harness.ServiceKeysPath+"/"+id+"/rotate", `{"overlapSeconds":3600}`))["secret"].(string))
	}
	for i, s := range secrets {
		if i < len(secrets)-2 {
			harness.MustKeyRefused(t, app, "/api/service-key", "Authorization", "Bearer "+s)
		} else {
			harness.MustKeyWorks(t, app, s)
		}
	}
}

// mustCreated fails unless r is a 201 and returns its JSON body.
func mustCreated(t testing.TB, r *harness.Response) map[string]any {
	t.Helper()
	harness.MustStatus(t, r, http.StatusCreated)
	return r.JSON(t)
}
