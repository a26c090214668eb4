package framework

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// mustProblemRateLimited fails unless r is a 429 problem with a retry delay
// of at least one second and at most max.
func mustProblemRateLimited(t testing.TB, r *harness.Response, max int) {
	t.Helper()
	harness.MustStatus(t, r, http.StatusTooManyRequests)
	if got, want := r.Header.Get("Content-Type"), "application/problem+json"; got != want {
		t.Fatalf("Content-Type = %q, want %q; body %s", got, want, r.Body)
	}
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 || n > max {
		t.Fatalf("Retry-After = %q, want whole seconds in [1, %d]", r.Header.Get("Retry-After"), max)
	}
}

// Ensure requests no route matches share one budget per address, however
// many paths they invent: each path used to be a key of its own, so a flood
// of distinct paths was never refused and filled the limiter's memory.
// It keeps a fresh application: it counts its address's rate-limit budget.
func TestRateLimit_unmatched_paths_share_one_budget(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, nil)
	c := app.NewClient(t)
	for i := range 100 {
		path := "/api/auth/no-such-route-" + strconv.Itoa(i)
		if i%2 == 1 {
			path = "/no-such-page/" + strconv.Itoa(i)
		}
		harness.MustStatus(t, c.Get(path), http.StatusNotFound)
	}
	harness.MustRateLimited(t, c.Get("/api/auth/yet-another-route"), 10)
	mustProblemRateLimited(t, c.Get("/yet-another-page"), 10)
	// Routes that exist keep their own budget.
	harness.MustStatus(t, c.Get("/api/auth/get-session"), http.StatusOK)
}

// Ensure a route's limit holds across the values of its path parameters:
// the rule is keyed on the route template, not on the concrete path.
// It keeps a fresh application: it counts its address's rate-limit budget.
func TestRateLimit_path_parameters_share_their_route_budget(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.StoresThatMatter, nil, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		for i := range 100 {
			r := c.Get("/api/auth/reset-password/token-" + strconv.Itoa(i) + "?callbackURL=/done")
			if r.Status == http.StatusTooManyRequests {
				t.Fatalf("request %d refused within the budget of 100", i+1)
			}
		}
		harness.MustRateLimited(t, c.Get("/api/auth/reset-password/token-fresh?callbackURL=/done"), 10)
	})
}

// Ensure liveness and readiness are never limited: an orchestrator polling
// them must not see a healthy process fail.
// It keeps a fresh application: it counts its address's rate-limit budget.
func TestRateLimit_health_is_never_limited(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, nil)
	c := app.NewClient(t)
	for range 150 {
		harness.MustStatus(t, c.Get("/api/health/ready"), http.StatusOK)
		harness.MustStatus(t, c.Get("/api/auth/ok"), http.StatusOK)
	}
}

// Ensure discovery, the key set, the contracts and the explorer share a
// generous budget per address (600 a minute), well above the framework's
// 100 per 10 s, and are still limited past it.
func TestRateLimit_public_documents_have_a_generous_budget(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, nil)
	c := app.NewClient(t)
	paths := []string{"/api/auth/jwks", "/.well-known/openid-configuration", "/api/auth/.well-known/openid-configuration",
		"/api/backend-openapi.json", "/api/docs", "/.well-known/oauth-protected-resource"}
	for i := range 600 {
		path := paths[0]
		if i >= 150 { // the key set alone past the old budget, then the rest
			path = paths[i%len(paths)]
		}
		harness.MustStatus(t, c.Get(path), http.StatusOK)
	}
	harness.MustRateLimited(t, c.Get("/api/auth/jwks"), 60)
	mustProblemRateLimited(t, c.Get("/api/auth-openapi.json"), 60)
}

// Ensure trusted routes are limited per service key, not per address: a
// backend's 150 calls all succeed under the default budget; a small
// configured budget refuses one key past it while another key from the same
// address goes on; refused keys are limited per address, without locking
// out valid keys there.
// It keeps a fresh application: it counts rate-limit budgets, with settings of its own.
func TestRateLimit_trusted_routes_are_limited_per_service_key(t *testing.T) {
	t.Parallel()
	t.Run("default_budget", func(t *testing.T) {
		t.Parallel()
		harness.ForStores(t, harness.StoresThatMatter, harness.Env(harness.AdminEnv, harness.LimitsOn), func(t *testing.T, app *harness.App) {
			k, _, _ := harness.MustUsersKey(t, app)
			for i := range 150 {
				r := k.Do(http.MethodGet, harness.UsersPath+"?limit=1", nil)
				if r.Status != http.StatusOK {
					t.Fatalf("call %d: status %d, want 200; body %s", i+1, r.Status, r.Body)
				}
			}
		})
	})
	t.Run("configured_budget", func(t *testing.T) {
		t.Parallel()
		env := harness.Env(harness.AdminEnv, harness.LimitsOn, map[string]string{"GATEHOUSE_RATE_LIMIT_SERVICE_KEY": "5/1m"})
		harness.ForStores(t, harness.StoresThatMatter, env, func(t *testing.T, app *harness.App) {
			k, admin, _ := harness.MustUsersKey(t, app)
			other := harness.MustCreateKey(t, admin, map[string]any{"name": "other backend", "scopes": []string{"users:read"}})
			otherKey := harness.KeyClient{T: t, C: app.NewClient(t), Headers: []string{"x-api-key", other["secret"].(string)}}
			for range 5 {
				harness.MustStatus(t, k.Do(http.MethodGet, harness.UsersPath+"?limit=1", nil), http.StatusOK)
			}
			mustProblemRateLimited(t, k.Do(http.MethodGet, harness.UsersPath+"?limit=1", nil), 60)
			// The budget is the key's, whichever trusted route it calls.
			mustProblemRateLimited(t, k.Do(http.MethodGet, "/api/service-key", nil), 60)
			for range 5 {
				harness.MustStatus(t, otherKey.Do(http.MethodGet, harness.UsersPath+"?limit=1", nil), http.StatusOK)
			}
		})
	})
	t.Run("refused_keys_per_address", func(t *testing.T) {
		t.Parallel()
		harness.ForStores(t, harness.StoresThatMatter, harness.Env(harness.AdminEnv, harness.LimitsOn), func(t *testing.T, app *harness.App) {
			k, _, _ := harness.MustUsersKey(t, app)
			bad := harness.KeyClient{T: t, C: app.NewClient(t), Headers: []string{"Authorization", "Bearer gh_sk_" + strings.Repeat("A", 43)}}
			for i := range 100 {
				path := harness.UsersPath
				if i%2 == 1 {
					path = "/api/service-key"
				}
				harness.MustStatus(t, bad.Do(http.MethodGet, path, nil), http.StatusUnauthorized)
			}
			mustProblemRateLimited(t, bad.Do(http.MethodGet, harness.UsersPath, nil), 10)
			harness.MustStatus(t, k.Do(http.MethodGet, harness.UsersPath+"?limit=1", nil), http.StatusOK)
		})
	})
}
