package backend

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// secretPattern is a service key's secret: the prefix and 43 characters.
var secretPattern = regexp.MustCompile(`^gh_sk_[A-Za-z0-9]{43}$`)

// startKeyUseFlusher runs the service's last-use flusher for app until the
// test ends, as "gatehouse serve" does, at a short interval.
func startKeyUseFlusher(t testing.TB, app *harness.App) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		app.App.FlushKeyUseEvery(ctx, 20*time.Millisecond, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done }) // before the app's database closes
}

// Ensure a service key's life: issued once with its secret (gh_sk_ and 43
// characters), listed masked, accepted as Bearer or x-api-key and nowhere
// else, its use recorded, rotated with and without overlap, and revoked for
// the very next request.
func TestServiceKey_lifecycle(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every key.
	harness.AdminForStores(t, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		startKeyUseFlusher(t, app)

		created := harness.MustCreateKey(t, admin, map[string]any{"name": "billing backend", "scopes": []string{"users:read", "organizations:write"}})
		secret, _ := created["secret"].(string)
		id := harness.MustID(t, created)
		if !secretPattern.MatchString(secret) {
			t.Fatalf("secret %q is not gh_sk_ and 43 characters", secret)
		}
		if created["name"] != "billing backend" || created["maskedKey"] != "gh_sk_…"+secret[len(secret)-4:] || created["createdBy"] != "user:"+adminID ||
			created["expiresAt"] != nil || created["lastUsedAt"] != nil || created["revokedAt"] != nil ||
			!slices.Equal(harness.ToStrings(created["scopes"]), []string{"users:read", "organizations:write"}) {
			t.Fatalf("created key = %v", created)
		}
		// Listed masked: the secret is never shown again.
		r := admin.Get(harness.ServiceKeysPath)
		harness.MustStatus(t, r, http.StatusOK)
		if strings.Contains(string(r.Body), secret) || strings.Contains(string(r.Body), `"secret"`) {
			t.Fatalf("the list shows the secret: %s", r.Body)
		}
		listed := harness.MustKeyInList(t, admin, id)
		if listed["maskedKey"] != created["maskedKey"] || listed["lastUsedAt"] != nil || listed["createdAt"] == nil {
			t.Fatalf("listed key = %v", listed)
		}

		// Accepted in Authorization: Bearer or x-api-key only.
		if got := harness.MustKeyWorks(t, app, secret); got["id"] != id || got["name"] != "billing backend" || got["expiresAt"] != nil ||
			!slices.Equal(harness.ToStrings(got["scopes"]), []string{"users:read", "organizations:write"}) {
			t.Fatalf("GET /api/service-key = %v", got)
		}
		for _, q := range []string{"key", "api_key", "apiKey", "x-api-key", "access_token", "token"} {
			harness.MustKeyRefused(t, app, "/api/service-key?"+q+"="+secret)
		}
		harness.MustKeyRefused(t, app, "/api/service-key")
		harness.MustKeyRefused(t, app, "/api/service-key", "Authorization", "Bearer gh_sk_"+strings.Repeat("A", 43))
		harness.MustKeyRefused(t, app, "/api/service-key", "x-api-key", secret[:len(secret)-1])
		harness.MustKeyRefused(t, app, "/api/service-key", "Authorization", "Basic "+secret)
		if r := admin.Get("/api/service-key"); r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("a session cookie alone = %d %s", r.Status, r.Body)
		}

		// Its use shows in the list once flushed.
		deadline := time.Now().Add(5 * time.Second)
		for harness.MustKeyInList(t, admin, id)["lastUsedAt"] == nil {
			if time.Now().After(deadline) {
				t.Fatal("lastUsedAt never appeared after use")
			}
			time.Sleep(20 * time.Millisecond)
		}
		harness.MustJSDatesOrRFC3339(t, harness.MustKeyInList(t, admin, id), "lastUsedAt", "createdAt")

		// Rotation without overlap: the old secret stops at once.
		r = admin.Post(harness.ServiceKeysPath+"/"+id+"/rotate", "")
		rotated := harness.MustOK(t, r)
		secret2, _ := rotated["secret"].(string)
		if !secretPattern.MatchString(secret2) || secret2 == secret || rotated["id"] != id || rotated["maskedKey"] != "gh_sk_…"+secret2[len(secret2)-4:] {
			t.Fatalf("rotate = %s", r.Body)
		}
		harness.MustKeyRefused(t, app, "/api/service-key", "Authorization", "Bearer "+secret)
		harness.MustKeyWorks(t, app, secret2)
		if got := harness.MustKeyInList(t, admin, id)["maskedKey"]; got != rotated["maskedKey"] {
			t.Fatalf("listed maskedKey %v after rotation, want %v", got, rotated["maskedKey"])
		}

		// Rotation with overlap: both work.
		secret3, _ := harness.MustOK(t, admin.Post(harness.ServiceKeysPath+"/"+id+"/rotate", `{"overlapSeconds":3600}`))["secret"].(string)
		harness.MustKeyWorks(t, app, secret2)
		harness.MustKeyWorks(t, app, secret3)
		harness.MustFieldProblem(t, admin.Post(harness.ServiceKeysPath+"/"+id+"/rotate", `{"overlapSeconds":-1}`), "body.overlapSeconds")
		harness.MustFieldProblem(t, admin.Post(harness.ServiceKeysPath+"/"+id+"/rotate", `{"overlapSeconds":2592001}`), "body.overlapSeconds")
		harness.MustKeyWorks(t, app, secret3)

		// Another key is unaffected by what happens to this one.
		otherSecret := harness.MustCreateKey(t, admin, map[string]any{"name": "other", "scopes": []string{"*"}})["secret"].(string)
		if keys := harness.MustOK(t, admin.Get(harness.ServiceKeysPath))["data"].([]any); len(keys) != 2 || harness.MustObject(t, keys[0])["name"] != "other" {
			t.Fatalf("keys = %v, want two, newest first", keys)
		}

		// Revocation: the very next request with any of its secrets fails.
		r = admin.Do(http.MethodDelete, harness.ServiceKeysPath+"/"+id, "", "Origin", app.Cfg.HTTP.BaseURL)
		harness.MustStatus(t, r, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Fatalf("204 with a body: %s", r.Body)
		}
		harness.MustKeyRefused(t, app, "/api/service-key", "Authorization", "Bearer "+secret3)
		harness.MustKeyRefused(t, app, "/api/service-key", "x-api-key", secret2)
		harness.MustKeyWorks(t, app, otherSecret)
		if got := harness.MustKeyInList(t, admin, id); got["revokedAt"] == nil {
			t.Fatalf("revoked key listed as %v", got)
		}
		harness.MustProblem(t, admin.Post(harness.ServiceKeysPath+"/"+id+"/rotate", ""), http.StatusNotFound, "service_key.not_found")
		harness.MustProblem(t, admin.Do(http.MethodDelete, harness.ServiceKeysPath+"/no-such-key", "", "Origin", app.Cfg.HTTP.BaseURL), http.StatusNotFound, "service_key.not_found")
		harness.MustProblem(t, admin.Post(harness.ServiceKeysPath+"/no-such-key/rotate", ""), http.StatusNotFound, "service_key.not_found")
	})
}

// Ensure bad key requests are refused naming the field, and a key past its
// expiry stops working.
func TestServiceKey_validation_and_expiry(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every key, and the clock moves by an hour.
	harness.AdminForStores(t, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		for _, tt := range []struct {
			body     map[string]any
			location string
		}{
			{map[string]any{"name": "k", "scopes": []string{"users:read", "users:delete"}}, "body.scopes"},
			{map[string]any{"name": "k", "scopes": []string{"admin"}}, "body.scopes"},
			{map[string]any{"name": "k", "scopes": []string{}}, "body.scopes"},
			{map[string]any{"name": "k"}, "body.scopes"},
			{map[string]any{"name": "", "scopes": []string{"*"}}, "body.name"},
			{map[string]any{"name": "   ", "scopes": []string{"*"}}, "body.name"},
			{map[string]any{"name": "k", "scopes": []string{"*"}, "expiresAt": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}, "body.expiresAt"},
			{map[string]any{"name": "k", "scopes": []string{"*"}, "expiresAt": "next week"}, "body.expiresAt"},
		} {
			harness.MustFieldProblem(t, admin.Post(harness.ServiceKeysPath, harness.MustJSON(t, tt.body)), tt.location)
		}
		if keys := harness.MustOK(t, admin.Get(harness.ServiceKeysPath))["data"].([]any); len(keys) != 0 {
			t.Fatalf("refused requests created keys: %v", keys)
		}

		expires := app.Clock.Now().Add(time.Hour).Truncate(time.Millisecond)
		k := harness.MustCreateKey(t, admin, map[string]any{"name": "short-lived", "scopes": []string{"users:read"}, "expiresAt": expires.Format(time.RFC3339Nano)})
		secret := k["secret"].(string)
		if got, _ := time.Parse(time.RFC3339Nano, k["expiresAt"].(string)); !got.Equal(expires) {
			t.Fatalf("expiresAt = %v, want %v", k["expiresAt"], expires)
		}
		app.Clock.Advance(time.Hour - time.Minute)
		if r := harness.KeyGet(t, app, "/api/service-key", "x-api-key", secret); r.Status != http.StatusOK {
			t.Fatalf("a key a minute before its expiry = %d %s", r.Status, r.Body)
		}
		app.Clock.AdvancePast(expires)
		harness.MustKeyRefused(t, app, "/api/service-key", "x-api-key", secret)
		harness.MustKeyRefused(t, app, "/api/service-key", "Authorization", "Bearer "+secret)
	})
}

// Ensure every /api/admin route answers 401 problem+json without a session
// and 403 to a signed-in user who is not a platform administrator, and that
// a service key is no session there.
func TestServiceKey_admin_routes_refuse_others(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every key.
	harness.AdminForStores(t, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		k := harness.MustCreateKey(t, admin, map[string]any{"name": "k", "scopes": []string{"*"}})
		id, secret := harness.MustID(t, k), k["secret"].(string)
		plain, _ := harness.MustPlainUser(t, app, "Eve", "eve@example.com", harness.UserPassword)
		routes := []struct{ method, path, body string }{
			{http.MethodPost, harness.ServiceKeysPath, harness.MustJSON(t, map[string]any{"name": "mine", "scopes": []string{"*"}})},
			{http.MethodGet, harness.ServiceKeysPath, ""},
			{http.MethodPost, harness.ServiceKeysPath + "/" + id + "/rotate", `{"overlapSeconds":60}`},
			{http.MethodDelete, harness.ServiceKeysPath + "/" + id, ""},
			{http.MethodGet, "/api/admin/audit-log", ""},
		}
		for _, rt := range routes {
			origin := []string{"Origin", app.Cfg.HTTP.BaseURL}
			harness.MustProblem(t, app.NewClient(t).Do(rt.method, rt.path, rt.body, origin...), http.StatusUnauthorized, "auth.unauthenticated")
			harness.MustProblem(t, app.NewClient(t).Do(rt.method, rt.path, rt.body, append(origin, "Authorization", "Bearer "+secret)...), http.StatusUnauthorized, "auth.unauthenticated")
			harness.MustProblem(t, app.NewClient(t).Do(rt.method, rt.path, rt.body, append(origin, "x-api-key", secret)...), http.StatusUnauthorized, "auth.unauthenticated")
			p := harness.MustProblem(t, plain.Do(rt.method, rt.path, rt.body, origin...), http.StatusForbidden, "auth.not_platform_admin")
			if p["detail"] == "" {
				t.Fatalf("403 without detail: %v", p)
			}
		}
		// Nothing changed: the key still works and is the only one.
		harness.MustKeyWorks(t, app, secret)
		if keys := harness.MustOK(t, admin.Get(harness.ServiceKeysPath))["data"].([]any); len(keys) != 1 {
			t.Fatalf("keys = %v, want the administrator's only", keys)
		}
		// Malformed input is a problem too, not the framework's shape.
		r := admin.Post(harness.ServiceKeysPath, `{"name":`)
		harness.MustStatus(t, r, http.StatusBadRequest)
		harness.MustProblem(t, r, http.StatusBadRequest, r.JSON(t)["code"].(string))
	})
}
