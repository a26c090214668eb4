package harness

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// ServiceKeysPath is where administrators manage service keys.
const ServiceKeysPath = "/api/admin/service-keys"

// MustCreateKey issues a key through the administrator's client and
// returns the answer's body.
func MustCreateKey(t testing.TB, admin *Client, body map[string]any) map[string]any {
	t.Helper()
	r := admin.Post(ServiceKeysPath, MustJSON(t, body))
	MustStatus(t, r, http.StatusCreated)
	return r.JSON(t)
}

// KeyGet calls GET /api/service-key with header pairs and no cookies.
func KeyGet(t testing.TB, app *App, path string, headers ...string) *Response {
	t.Helper()
	return app.NewClient(t).Get(path, headers...)
}

// MustKeyWorks fails unless secret authenticates GET /api/service-key as
// Bearer and as x-api-key, and returns the answer.
func MustKeyWorks(t testing.TB, app *App, secret string) map[string]any {
	t.Helper()
	body := MustOK(t, KeyGet(t, app, "/api/service-key", "Authorization", "Bearer "+secret))
	if got := MustOK(t, KeyGet(t, app, "/api/service-key", "x-api-key", secret)); got["id"] != body["id"] {
		t.Fatalf("x-api-key = %v, Bearer = %v", got, body)
	}
	return body
}

// MustKeyRefused fails unless GET /api/service-key with header pairs answers
// a 401 problem with WWW-Authenticate: Bearer.
func MustKeyRefused(t testing.TB, app *App, path string, headers ...string) {
	t.Helper()
	r := KeyGet(t, app, path, headers...)
	MustStatus(t, r, http.StatusUnauthorized)
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, r.Body)
	}
	if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("WWW-Authenticate = %q, want Bearer …", r.Header.Get("WWW-Authenticate"))
	}
}

// MustKeyInList returns the listed key with id.
func MustKeyInList(t testing.TB, admin *Client, id string) map[string]any {
	t.Helper()
	r := admin.Get(ServiceKeysPath)
	for _, k := range MustOK(t, r)["data"].([]any) {
		if m := MustObject(t, k); m["id"] == id {
			return m
		}
	}
	t.Fatalf("key %s not in %s", id, r.Body)
	return nil
}

// MustFieldProblem fails unless r is a 400 problem naming location.
func MustFieldProblem(t *testing.T, r *Response, location string) {
	t.Helper()
	MustStatus(t, r, http.StatusBadRequest)
	p := MustProblem(t, r, http.StatusBadRequest, r.JSON(t)["code"].(string))
	for _, e := range p["errors"].([]any) {
		if MustObject(t, e)["location"] == location {
			return
		}
	}
	t.Fatalf("problem %s does not name %s", r.Body, location)
}

// MustJSDatesOrRFC3339 fails unless every named field of obj is an RFC 3339 time.
func MustJSDatesOrRFC3339(t testing.TB, obj map[string]any, fields ...string) {
	t.Helper()
	for _, f := range fields {
		s, _ := obj[f].(string)
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			t.Fatalf("%s = %v, want an RFC 3339 time", f, obj[f])
		}
	}
}

// ToStrings converts a JSON array of strings.
func ToStrings(v any) []string {
	a, _ := v.([]any)
	out := make([]string, len(a))
	for i, s := range a {
		out[i], _ = s.(string)
	}
	return out
}
