package test

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
)

// serviceKeysPath is where administrators manage service keys.
const serviceKeysPath = "/api/admin/service-keys"

// secretPattern is a service key's secret: the prefix and 43 characters.
var secretPattern = regexp.MustCompile(`^gh_sk_[A-Za-z0-9]{43}$`)

// mustCreateKey issues a key through the administrator's client and
// returns the answer's body.
func mustCreateKey(t testing.TB, admin *fwClient, body map[string]any) map[string]any {
	t.Helper()
	r := admin.post(serviceKeysPath, mustJSON(t, body))
	mustStatus(t, r, http.StatusCreated)
	return r.JSON(t)
}

// keyGet calls GET /api/service-key with header pairs and no cookies.
func keyGet(t testing.TB, app *fwApp, path string, headers ...string) *response {
	t.Helper()
	return app.client(t).get(path, headers...)
}

// mustKeyWorks fails unless secret authenticates GET /api/service-key as
// Bearer and as x-api-key, and returns the answer.
func mustKeyWorks(t testing.TB, app *fwApp, secret string) map[string]any {
	t.Helper()
	body := mustOK(t, keyGet(t, app, "/api/service-key", "Authorization", "Bearer "+secret))
	if got := mustOK(t, keyGet(t, app, "/api/service-key", "x-api-key", secret)); got["id"] != body["id"] {
		t.Fatalf("x-api-key = %v, Bearer = %v", got, body)
	}
	return body
}

// mustKeyRefused fails unless GET /api/service-key with header pairs answers
// a 401 problem with WWW-Authenticate: Bearer.
func mustKeyRefused(t testing.TB, app *fwApp, path string, headers ...string) {
	t.Helper()
	r := keyGet(t, app, path, headers...)
	mustStatus(t, r, http.StatusUnauthorized)
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, r.Body)
	}
	if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("WWW-Authenticate = %q, want Bearer …", r.Header.Get("WWW-Authenticate"))
	}
}

// mustKeyInList returns the listed key with id.
func mustKeyInList(t testing.TB, admin *fwClient, id string) map[string]any {
	t.Helper()
	r := admin.get(serviceKeysPath)
	for _, k := range mustOK(t, r)["data"].([]any) {
		if m := mustObject(t, k); m["id"] == id {
			return m
		}
	}
	t.Fatalf("key %s not in %s", id, r.Body)
	return nil
}

// mustFieldProblem fails unless r is a 400 problem naming location.
func mustFieldProblem(t *testing.T, r *response, location string) {
	t.Helper()
	mustStatus(t, r, http.StatusBadRequest)
	p := mustProblem(t, r, http.StatusBadRequest, r.JSON(t)["code"].(string))
	for _, e := range p["errors"].([]any) {
		if mustObject(t, e)["location"] == location {
			return
		}
	}
	t.Fatalf("problem %s does not name %s", r.Body, location)
}

// startKeyUseFlusher runs the service's last-use flusher for app until the
// test ends, as "gatehouse serve" does, at a short interval.
func startKeyUseFlusher(t testing.TB, app *fwApp) {
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
	adminForStores(t, func(t *testing.T, app *fwApp) {
		admin, adminID := mustAdmin(t, app)
		startKeyUseFlusher(t, app)

		created := mustCreateKey(t, admin, map[string]any{"name": "billing backend", "scopes": []string{"users:read", "organizations:write"}})
		secret, _ := created["secret"].(string)
		id := mustID(t, created)
		if !secretPattern.MatchString(secret) {
			t.Fatalf("secret %q is not gh_sk_ and 43 characters", secret)
		}
		if created["name"] != "billing backend" || created["maskedKey"] != "gh_sk_…"+secret[len(secret)-4:] || created["createdBy"] != "user:"+adminID ||
			created["expiresAt"] != nil || created["lastUsedAt"] != nil || created["revokedAt"] != nil ||
			!slices.Equal(toStrings(created["scopes"]), []string{"users:read", "organizations:write"}) {
			t.Fatalf("created key = %v", created)
		}
		// Listed masked: the secret is never shown again.
		r := admin.get(serviceKeysPath)
		mustStatus(t, r, http.StatusOK)
		if strings.Contains(string(r.Body), secret) || strings.Contains(string(r.Body), `"secret"`) {
			t.Fatalf("the list shows the secret: %s", r.Body)
		}
		listed := mustKeyInList(t, admin, id)
		if listed["maskedKey"] != created["maskedKey"] || listed["lastUsedAt"] != nil || listed["createdAt"] == nil {
			t.Fatalf("listed key = %v", listed)
		}

		// Accepted in Authorization: Bearer or x-api-key only.
		if got := mustKeyWorks(t, app, secret); got["id"] != id || got["name"] != "billing backend" || got["expiresAt"] != nil ||
			!slices.Equal(toStrings(got["scopes"]), []string{"users:read", "organizations:write"}) {
			t.Fatalf("GET /api/service-key = %v", got)
		}
		for _, q := range []string{"key", "api_key", "apiKey", "x-api-key", "access_token", "token"} {
			mustKeyRefused(t, app, "/api/service-key?"+q+"="+secret)
		}
		mustKeyRefused(t, app, "/api/service-key")
		mustKeyRefused(t, app, "/api/service-key", "Authorization", "Bearer gh_sk_"+strings.Repeat("A", 43))
		mustKeyRefused(t, app, "/api/service-key", "x-api-key", secret[:len(secret)-1])
		mustKeyRefused(t, app, "/api/service-key", "Authorization", "Basic "+secret)
		if r := admin.get("/api/service-key"); r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("a session cookie alone = %d %s", r.Status, r.Body)
		}

		// Its use shows in the list once flushed.
		deadline := time.Now().Add(5 * time.Second)
		for mustKeyInList(t, admin, id)["lastUsedAt"] == nil {
			if time.Now().After(deadline) {
				t.Fatal("lastUsedAt never appeared after use")
			}
			time.Sleep(20 * time.Millisecond)
		}
		mustJSDatesOrRFC3339(t, mustKeyInList(t, admin, id), "lastUsedAt", "createdAt")

		// Rotation without overlap: the old secret stops at once.
		r = admin.post(serviceKeysPath+"/"+id+"/rotate", "")
		rotated := mustOK(t, r)
		secret2, _ := rotated["secret"].(string)
		if !secretPattern.MatchString(secret2) || secret2 == secret || rotated["id"] != id || rotated["maskedKey"] != "gh_sk_…"+secret2[len(secret2)-4:] {
			t.Fatalf("rotate = %s", r.Body)
		}
		mustKeyRefused(t, app, "/api/service-key", "Authorization", "Bearer "+secret)
		mustKeyWorks(t, app, secret2)
		if got := mustKeyInList(t, admin, id)["maskedKey"]; got != rotated["maskedKey"] {
			t.Fatalf("listed maskedKey %v after rotation, want %v", got, rotated["maskedKey"])
		}

		// Rotation with overlap: both work.
		secret3, _ := mustOK(t, admin.post(serviceKeysPath+"/"+id+"/rotate", `{"overlapSeconds":3600}`))["secret"].(string)
		mustKeyWorks(t, app, secret2)
		mustKeyWorks(t, app, secret3)
		mustFieldProblem(t, admin.post(serviceKeysPath+"/"+id+"/rotate", `{"overlapSeconds":-1}`), "body.overlapSeconds")
		mustFieldProblem(t, admin.post(serviceKeysPath+"/"+id+"/rotate", `{"overlapSeconds":2592001}`), "body.overlapSeconds")
		mustKeyWorks(t, app, secret3)

		// Another key is unaffected by what happens to this one.
		otherSecret := mustCreateKey(t, admin, map[string]any{"name": "other", "scopes": []string{"*"}})["secret"].(string)
		if keys := mustOK(t, admin.get(serviceKeysPath))["data"].([]any); len(keys) != 2 || mustObject(t, keys[0])["name"] != "other" {
			t.Fatalf("keys = %v, want two, newest first", keys)
		}

		// Revocation: the very next request with any of its secrets fails.
		r = admin.do(http.MethodDelete, serviceKeysPath+"/"+id, "", "Origin", app.Cfg.HTTP.BaseURL)
		mustStatus(t, r, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Fatalf("204 with a body: %s", r.Body)
		}
		mustKeyRefused(t, app, "/api/service-key", "Authorization", "Bearer "+secret3)
		mustKeyRefused(t, app, "/api/service-key", "x-api-key", secret2)
		mustKeyWorks(t, app, otherSecret)
		if got := mustKeyInList(t, admin, id); got["revokedAt"] == nil {
			t.Fatalf("revoked key listed as %v", got)
		}
		mustProblem(t, admin.post(serviceKeysPath+"/"+id+"/rotate", ""), http.StatusNotFound, "service_key.not_found")
		mustProblem(t, admin.do(http.MethodDelete, serviceKeysPath+"/no-such-key", "", "Origin", app.Cfg.HTTP.BaseURL), http.StatusNotFound, "service_key.not_found")
		mustProblem(t, admin.post(serviceKeysPath+"/no-such-key/rotate", ""), http.StatusNotFound, "service_key.not_found")
	})
}

// mustJSDatesOrRFC3339 fails unless every named field of obj is an RFC 3339 time.
func mustJSDatesOrRFC3339(t testing.TB, obj map[string]any, fields ...string) {
	t.Helper()
	for _, f := range fields {
		s, _ := obj[f].(string)
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			t.Fatalf("%s = %v, want an RFC 3339 time", f, obj[f])
		}
	}
}

// toStrings converts a JSON array of strings.
func toStrings(v any) []string {
	a, _ := v.([]any)
	out := make([]string, len(a))
	for i, s := range a {
		out[i], _ = s.(string)
	}
	return out
}

// Ensure bad key requests are refused naming the field, and a key past its
// expiry stops working.
func TestServiceKey_validation_and_expiry(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)
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
			mustFieldProblem(t, admin.post(serviceKeysPath, mustJSON(t, tt.body)), tt.location)
		}
		if keys := mustOK(t, admin.get(serviceKeysPath))["data"].([]any); len(keys) != 0 {
			t.Fatalf("refused requests created keys: %v", keys)
		}

		expires := time.Now().Add(2 * time.Second).UTC().Truncate(time.Millisecond)
		k := mustCreateKey(t, admin, map[string]any{"name": "short-lived", "scopes": []string{"users:read"}, "expiresAt": expires.Format(time.RFC3339Nano)})
		secret := k["secret"].(string)
		if got, _ := time.Parse(time.RFC3339Nano, k["expiresAt"].(string)); !got.Equal(expires) {
			t.Fatalf("expiresAt = %v, want %v", k["expiresAt"], expires)
		}
		if r := keyGet(t, app, "/api/service-key", "x-api-key", secret); r.Status != http.StatusOK && time.Now().Before(expires) {
			t.Fatalf("a live key = %d %s", r.Status, r.Body)
		}
		time.Sleep(time.Until(expires) + 100*time.Millisecond)
		mustKeyRefused(t, app, "/api/service-key", "x-api-key", secret)
		mustKeyRefused(t, app, "/api/service-key", "Authorization", "Bearer "+secret)
	})
}

// Ensure every /api/admin route answers 401 problem+json without a session
// and 403 to a signed-in user who is not a platform administrator, and that
// a service key is no session there.
func TestServiceKey_admin_routes_refuse_others(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)
		k := mustCreateKey(t, admin, map[string]any{"name": "k", "scopes": []string{"*"}})
		id, secret := mustID(t, k), k["secret"].(string)
		plain, _ := mustPlainUser(t, app, "Eve", "eve@example.com", userPassword)
		routes := []struct{ method, path, body string }{
			{http.MethodPost, serviceKeysPath, mustJSON(t, map[string]any{"name": "mine", "scopes": []string{"*"}})},
			{http.MethodGet, serviceKeysPath, ""},
			{http.MethodPost, serviceKeysPath + "/" + id + "/rotate", `{"overlapSeconds":60}`},
			{http.MethodDelete, serviceKeysPath + "/" + id, ""},
			{http.MethodGet, "/api/admin/audit-log", ""},
		}
		for _, rt := range routes {
			origin := []string{"Origin", app.Cfg.HTTP.BaseURL}
			mustProblem(t, app.client(t).do(rt.method, rt.path, rt.body, origin...), http.StatusUnauthorized, "auth.unauthenticated")
			mustProblem(t, app.client(t).do(rt.method, rt.path, rt.body, append(origin, "Authorization", "Bearer "+secret)...), http.StatusUnauthorized, "auth.unauthenticated")
			mustProblem(t, app.client(t).do(rt.method, rt.path, rt.body, append(origin, "x-api-key", secret)...), http.StatusUnauthorized, "auth.unauthenticated")
			p := mustProblem(t, plain.do(rt.method, rt.path, rt.body, origin...), http.StatusForbidden, "auth.not_platform_admin")
			if p["detail"] == "" {
				t.Fatalf("403 without detail: %v", p)
			}
		}
		// Nothing changed: the key still works and is the only one.
		mustKeyWorks(t, app, secret)
		if keys := mustOK(t, admin.get(serviceKeysPath))["data"].([]any); len(keys) != 1 {
			t.Fatalf("keys = %v, want the administrator's only", keys)
		}
		// Malformed input is a problem too, not the framework's shape.
		r := admin.post(serviceKeysPath, `{"name":`)
		mustStatus(t, r, http.StatusBadRequest)
		mustProblem(t, r, http.StatusBadRequest, r.JSON(t)["code"].(string))
	})
}
