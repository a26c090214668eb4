package test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Ensure liveness and readiness answer on every store.
func TestHealth(t *testing.T) {
	forStores(t, storesThatMatter, func(t *testing.T, app *testApp) {
		r := do(t, app, http.MethodGet, "/api/auth/ok", "")
		mustStatus(t, r, http.StatusOK)
		if strings.TrimSpace(string(r.Body)) != `{"ok":true}` {
			t.Fatalf("liveness body = %s", r.Body)
		}
		r = do(t, app, http.MethodGet, "/api/health/ready", "")
		mustStatus(t, r, http.StatusOK)
		body := r.JSON(t)
		if body["status"] != "ready" {
			t.Fatalf("readiness = %s", r.Body)
		}
	})
}

// Ensure liveness never waits on the database: with the database unreachable
// (a proxy that swallows traffic, so any query would hang), liveness still
// answers within 100 ms while readiness reports 503.
func TestLiveness_does_not_touch_the_database(t *testing.T) {
	proxy := newFaultProxy(t, postgresURL(t))
	cfg := mustConfig(t, nil)
	cfg.Database.URL = proxy.URL()
	app := mustStart(t, storePostgres, cfg)

	mustStatus(t, do(t, app, http.MethodGet, "/api/health/ready", ""), http.StatusOK)
	proxy.Blackhole()

	fast := &http.Client{Timeout: 100 * time.Millisecond, Transport: app.Client().Transport}
	for range 5 {
		res, err := fast.Get(app.URL + "/api/auth/ok")
		if err != nil {
			t.Fatalf("liveness with the database unreachable: %v", err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("liveness status = %d, want 200", res.StatusCode)
		}
	}
	r := do(t, app, http.MethodGet, "/api/health/ready", "")
	mustStatus(t, r, http.StatusServiceUnavailable)
	body := r.JSON(t)
	checks, _ := body["checks"].([]any)
	if body["status"] != "unavailable" || len(checks) != 1 || checks[0].(map[string]any)["status"] != "down" {
		t.Fatalf("readiness body = %s", r.Body)
	}

	proxy.Restore()
	deadline := time.Now().Add(10 * time.Second)
	for do(t, app, http.MethodGet, "/api/health/ready", "").Status != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("readiness did not recover after the database came back")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
