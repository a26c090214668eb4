package backend

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// trustedRoute is one operation of the trusted API with a request that
// passes validation, and the status a key holding its scope gets for it.
type trustedRoute struct {
	method string
	path   string // concrete: ids that do not exist unless the route creates
	scope  string // "" for any scope
	body   func(n int64) string
	want   int
}

// missing is an id no resource has.
const missing = "0192f5e4-8a4b-7cc1-9a51-000000000000"

// trustedRoutes lists every operation of the backend contract except the
// unauthenticated readiness probe. ownerID is an existing user.
func trustedRoutes(ownerID string) []trustedRoute {
	noBody := func(int64) string { return "" }
	body := func(format string) func(n int64) string {
		return func(n int64) string { return strings.ReplaceAll(format, "{n}", fmt.Sprint(n)) }
	}
	const (
		ur, uw = "users:read", "users:write"
		or, ow = "organizations:read", "organizations:write"
		dr, dw = "domains:read", "domains:write"
		wr, ww = "webhooks:read", "webhooks:write"
	)
	return []trustedRoute{
		{http.MethodGet, "/api/service-key", "", noBody, http.StatusOK},

		{http.MethodPost, "/api/users", uw, body(`{"email":"matrix{n}@example.com","name":"Matrix {n}"}`), http.StatusCreated},
		{http.MethodGet, "/api/users", ur, noBody, http.StatusOK},
		{http.MethodGet, "/api/users/" + missing, ur, noBody, http.StatusNotFound},
		{http.MethodPatch, "/api/users/" + missing, uw, body(`{"name":"Renamed"}`), http.StatusNotFound},
		{http.MethodDelete, "/api/users/" + missing, uw, noBody, http.StatusNotFound},
		{http.MethodPost, "/api/users/" + missing + "/ban", uw, body(`{"reason":"spam"}`), http.StatusNotFound},
		{http.MethodPost, "/api/users/" + missing + "/unban", uw, noBody, http.StatusNotFound},
		{http.MethodDelete, "/api/users/" + missing + "/sessions", uw, noBody, http.StatusNotFound},
		{http.MethodPut, "/api/users/" + missing + "/password", uw, body(`{"password":"a long enough passphrase {n}"}`), http.StatusNotFound},
		{http.MethodPost, "/api/users/" + missing + "/factors/reset", uw, noBody, http.StatusNotFound},
		{http.MethodDelete, "/api/users/" + missing + "/linked-accounts/" + missing, uw, noBody, http.StatusNotFound},

		{http.MethodPost, "/api/organizations", ow, body(`{"name":"Matrix {n}","slug":"matrix-{n}","ownerUserId":"` + ownerID + `"}`), http.StatusCreated},
		{http.MethodGet, "/api/organizations", or, noBody, http.StatusOK},
		{http.MethodGet, "/api/organizations/" + missing, or, noBody, http.StatusNotFound},
		{http.MethodGet, "/api/organizations/by-slug/no-such-slug", or, noBody, http.StatusNotFound},
		{http.MethodPatch, "/api/organizations/" + missing, ow, body(`{"name":"Renamed"}`), http.StatusNotFound},
		{http.MethodDelete, "/api/organizations/" + missing, ow, noBody, http.StatusNotFound},
		{http.MethodPost, "/api/organizations/" + missing + "/members", ow, body(`{"userId":"` + ownerID + `","role":"member"}`), http.StatusNotFound},
		{http.MethodGet, "/api/organizations/" + missing + "/members", or, noBody, http.StatusNotFound},
		{http.MethodPatch, "/api/organizations/" + missing + "/members/" + missing, ow, body(`{"role":"admin"}`), http.StatusNotFound},
		{http.MethodDelete, "/api/organizations/" + missing + "/members/" + missing, ow, noBody, http.StatusNotFound},
		{http.MethodPost, "/api/organizations/" + missing + "/invitations", ow, body(`{"email":"invitee{n}@example.com","role":"member"}`), http.StatusNotFound},
		{http.MethodGet, "/api/organizations/" + missing + "/invitations", or, noBody, http.StatusNotFound},
		{http.MethodDelete, "/api/organizations/" + missing + "/invitations/" + missing, ow, noBody, http.StatusNotFound},
		{http.MethodPost, "/api/organizations/" + missing + "/identity-providers", ow,
			body(`{"id":"m{n}","preset":"oidc","issuer":"https://idp.example.com","clientId":"c","clientSecret":"s"}`), http.StatusNotFound},
		{http.MethodGet, "/api/organizations/" + missing + "/identity-providers", or, noBody, http.StatusNotFound},
		{http.MethodPatch, "/api/organizations/" + missing + "/identity-providers/" + missing, ow, body(`{"name":"Renamed"}`), http.StatusNotFound},
		{http.MethodDelete, "/api/organizations/" + missing + "/identity-providers/" + missing, ow, noBody, http.StatusNotFound},

		{http.MethodPost, "/api/domains", dw, body(`{"hostname":"matrix{n}.example.com"}`), http.StatusCreated},
		{http.MethodGet, "/api/domains", dr, noBody, http.StatusOK},
		{http.MethodGet, "/api/domains/" + missing, dr, noBody, http.StatusNotFound},
		{http.MethodGet, "/api/domains/by-hostname/no-such.example.com", dr, noBody, http.StatusNotFound},
		{http.MethodGet, "/api/domains/" + missing + "/dns-records", dr, noBody, http.StatusNotFound},
		{http.MethodDelete, "/api/domains/" + missing, dw, noBody, http.StatusNotFound},

		{http.MethodPost, "/api/webhooks", ww, body(`{"url":"https://hooks{n}.example.com/in"}`), http.StatusCreated},
		{http.MethodGet, "/api/webhooks", wr, noBody, http.StatusOK},
		{http.MethodGet, "/api/webhooks/" + missing, wr, noBody, http.StatusNotFound},
		{http.MethodPatch, "/api/webhooks/" + missing, ww, body(`{"enabled":true}`), http.StatusNotFound},
		{http.MethodDelete, "/api/webhooks/" + missing, ww, noBody, http.StatusNotFound},
		{http.MethodPost, "/api/webhooks/" + missing + "/rotate-secret", ww, noBody, http.StatusNotFound},
		{http.MethodGet, "/api/webhooks/" + missing + "/messages", wr, noBody, http.StatusNotFound},
		{http.MethodGet, "/api/webhooks/" + missing + "/messages/" + missing + "/attempts", wr, noBody, http.StatusNotFound},
		{http.MethodPost, "/api/webhooks/" + missing + "/messages/" + missing + "/replay", ww, noBody, http.StatusNotFound},
		{http.MethodPost, "/api/webhooks/" + missing + "/replay", ww, body(`{"since":"2020-01-01T00:00:00Z"}`), http.StatusNotFound},
	}
}

// templatePath turns a concrete route path back into the contract's
// template, for comparing the table with the contract.
func templatePath(path string) string {
	r := strings.NewReplacer(
		"/users/"+missing, "/users/{id}",
		"/organizations/"+missing, "/organizations/{id}",
		"/members/"+missing, "/members/{memberId}",
		"/invitations/"+missing, "/invitations/{invitationId}",
		"/domains/"+missing, "/domains/{id}",
		"/webhooks/"+missing, "/webhooks/{id}",
		"/messages/"+missing, "/messages/{messageId}",
		"/linked-accounts/"+missing, "/linked-accounts/{accountId}",
		"/identity-providers/"+missing, "/identity-providers/{providerId}",
		"/by-slug/no-such-slug", "/by-slug/{slug}",
		"/by-hostname/no-such.example.com", "/by-hostname/{hostname}",
	)
	return r.Replace(path)
}

// Ensure every trusted route authenticates the same way: no key, an unknown
// key, a revoked key and a session cookie alone are 401 with
// WWW-Authenticate: Bearer; a key without the route's scope is 403
// auth.insufficient_scope; a key holding exactly the scope works in either
// header. The table must list every operation of the backend contract, so a
// new route cannot escape it.
func TestTrusted_every_route_authenticates_and_checks_scope(t *testing.T) {
	t.Parallel()
	// A fresh application: the matrix enumerates every route and key, and pages its lists.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		revoked := harness.MustCreateKey(t, admin, map[string]any{"name": "revoked", "scopes": []string{"*"}})
		harness.MustStatus(t, admin.Do(http.MethodDelete, harness.ServiceKeysPath+"/"+harness.MustID(t, revoked), "", "Origin", app.Cfg.HTTP.BaseURL), http.StatusNoContent)
		revokedSecret := revoked["secret"].(string)

		routes := trustedRoutes(adminID)
		mustCoverBackendContract(t, app, routes)

		// One key per scope holding exactly it, and one per scope holding
		// every other scope (never *).
		scopes := []string{"users:read", "users:write", "organizations:read", "organizations:write", "domains:read", "domains:write",
			"webhooks:read", "webhooks:write"}
		only, allBut := map[string]string{}, map[string]string{}
		for _, sc := range scopes {
			only[sc] = harness.MustCreateKey(t, admin, map[string]any{"name": "only " + sc, "scopes": []string{sc}})["secret"].(string)
			others := slices.DeleteFunc(slices.Clone(scopes), func(s string) bool { return s == sc })
			allBut[sc] = harness.MustCreateKey(t, admin, map[string]any{"name": "all but " + sc, "scopes": others})["secret"].(string)
		}
		anyKey := only["users:read"]

		var n atomic.Int64
		for _, rt := range routes {
			t.Run(rt.method+" "+templatePath(rt.path), func(t *testing.T) {
				call := func(c *harness.Client, headers ...string) *harness.Response {
					return c.Do(rt.method, rt.path, rt.body(n.Add(1)), append([]string{"Content-Type", "application/json"}, headers...)...)
				}
				anon := app.NewClient(t)
				for name, headers := range map[string][]string{
					"no key":            nil,
					"unknown key":       {"Authorization", "Bearer gh_sk_" + strings.Repeat("Z", 43)},
					"revoked bearer":    {"Authorization", "Bearer " + revokedSecret},
					"revoked x-api-key": {"x-api-key", revokedSecret},
					"basic scheme":      {"Authorization", "Basic " + revokedSecret},
				} {
					r := call(anon, headers...)
					if r.Status != http.StatusUnauthorized || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
						t.Fatalf("%s: %d (WWW-Authenticate %q) %s, want 401 with WWW-Authenticate: Bearer", name, r.Status, r.Header.Get("WWW-Authenticate"), r.Body)
					}
					harness.MustProblem(t, r, http.StatusUnauthorized, r.JSON(t)["code"].(string))
				}
				// The administrator's session cookie is no key.
				if r := call(admin); r.Status != http.StatusUnauthorized {
					t.Fatalf("session cookie alone: %d %s, want 401", r.Status, r.Body)
				}
				if rt.scope != "" {
					harness.MustProblem(t, call(anon, "Authorization", "Bearer "+allBut[rt.scope]), http.StatusForbidden, "auth.insufficient_scope")
					harness.MustProblem(t, call(anon, "x-api-key", allBut[rt.scope]), http.StatusForbidden, "auth.insufficient_scope")
				}
				secret := anyKey
				if rt.scope != "" {
					secret = only[rt.scope]
				}
				for _, headers := range [][]string{{"Authorization", "Bearer " + secret}, {"x-api-key", secret}} {
					if r := call(anon, headers...); r.Status != rt.want {
						t.Fatalf("%s with the scope: %d %s, want %d", headers[0], r.Status, r.Body, rt.want)
					}
				}
			})
		}
	})
}

// mustCoverBackendContract fails unless routes are exactly the secured
// operations of the backend contract.
func mustCoverBackendContract(t *testing.T, app *harness.App, routes []trustedRoute) {
	t.Helper()
	doc := harness.MustOK(t, app.NewClient(t).Get("/api/backend-openapi.json"))
	var inContract, inTable []string
	for path, item := range harness.MustObject(t, doc["paths"]) {
		for method, op := range harness.MustObject(t, item) {
			if sec, ok := harness.MustObject(t, op)["security"].([]any); ok && len(sec) > 0 {
				inContract = append(inContract, strings.ToUpper(method)+" "+path)
			}
		}
	}
	for _, rt := range routes {
		inTable = append(inTable, rt.method+" "+templatePath(rt.path))
	}
	slices.Sort(inContract)
	slices.Sort(inTable)
	if !slices.Equal(inContract, inTable) {
		t.Fatalf("the matrix and the backend contract differ:\ncontract %v\nmatrix   %v", inContract, inTable)
	}
}
