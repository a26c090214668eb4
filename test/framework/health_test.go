package framework

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure liveness and readiness answer on every store.
// It keeps a fresh application: no other test shares its environment.
func TestHealth(t *testing.T) {
	harness.ForStores(t, harness.StoresThatMatter, nil, func(t *testing.T, app *harness.App) {
		r := app.Do(t, http.MethodGet, "/api/auth/ok", "")
		harness.MustStatus(t, r, http.StatusOK)
		if strings.TrimSpace(string(r.Body)) != `{"ok":true}` {
			t.Fatalf("liveness body = %s", r.Body)
		}
		r = app.Do(t, http.MethodGet, "/api/health/ready", "")
		harness.MustStatus(t, r, http.StatusOK)
		body := r.JSON(t)
		if body["status"] != "ready" {
			t.Fatalf("readiness = %s", r.Body)
		}
	})
}

// Ensure liveness never waits on the database: with the database unreachable
// (a proxy that swallows traffic, so any query would hang), liveness still
// answers within 100 ms while readiness reports 503.
// It keeps a fresh application: it breaks the application's database.
func TestLiveness_does_not_touch_the_database(t *testing.T) {
	proxy := harness.NewFaultProxy(t, harness.PostgresURL(t))
	app := harness.MustStart(t, harness.StorePostgres, map[string]string{"GATEHOUSE_DATABASE_URL": proxy.URL()})

	harness.MustStatus(t, app.Do(t, http.MethodGet, "/api/health/ready", ""), http.StatusOK)
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
	r := app.Do(t, http.MethodGet, "/api/health/ready", "")
	harness.MustStatus(t, r, http.StatusServiceUnavailable)
	body := r.JSON(t)
	checks, _ := body["checks"].([]any)
	if body["status"] != "unavailable" || len(checks) != 1 || checks[0].(map[string]any)["status"] != "down" {
		t.Fatalf("readiness body = %s", r.Body)
	}

	proxy.Restore()
	deadline := time.Now().Add(10 * time.Second)
	for app.Do(t, http.MethodGet, "/api/health/ready", "").Status != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("readiness did not recover after the database came back")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
