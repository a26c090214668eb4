package process

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/ratelimit/redistest"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure the sign-in limit (3 per 10 s per address) holds in total across
// two replicas on one PostgreSQL database, however the attempts are spread:
// counted in Redis when it is set, and in the database when it is not.
// Counted per process, each replica would allow its own three.
func TestRateLimit_sign_in_limit_holds_across_replicas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		env       func(t *testing.T) map[string]string
		countedIn string
	}{
		{"limiter=postgres", func(*testing.T) map[string]string { return nil }, "counted in PostgreSQL"},
		{"limiter=redis", func(t *testing.T) map[string]string {
			url := redistest.URL(t)
			return map[string]string{"GATEHOUSE_REDIS_URL": url, "GATEHOUSE_REDIS_PREFIX": redistest.Prefix(t, url)}
		}, "counted in Redis redis://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := harness.Env(harness.LimitsOn, tt.env(t))
			one := harness.MustStart(t, harness.StorePostgres, env)
			two := harness.MustStart(t, harness.StorePostgres, harness.Env(env, map[string]string{"GATEHOUSE_DATABASE_URL": one.DatabaseURL}))
			for _, app := range []*harness.App{one, two} {
				if !strings.HasPrefix(app.App.RateLimits, tt.countedIn) {
					t.Fatalf("rate limits %q, want them %s", app.App.RateLimits, tt.countedIn)
				}
			}
			signIn := func(app *harness.App) *harness.Response {
				return app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, "nobody@example.com", "correct horse battery"))
			}
			for _, app := range []*harness.App{one, two, one} {
				harness.MustCode(t, signIn(app), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
			}
			harness.MustRateLimited(t, signIn(two), 10)
			harness.MustRateLimited(t, signIn(one), 10)
			// The budget is sign-in's alone, on both replicas.
			harness.MustStatus(t, two.NewClient(t).Get("/api/auth/get-session"), http.StatusOK)
		})
	}
}

// Ensure a Redis that does not answer neither stops Gatehouse nor lifts the
// limits: it starts, says so in its logs and its metrics, and counts in its
// own memory meanwhile.
func TestRateLimit_redis_away_counts_in_the_process(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.LimitsOn, map[string]string{"GATEHOUSE_REDIS_URL": "redis://:hunter2@" + closed + "/0",
		"GATEHOUSE_METRICS_ADDR": "127.0.0.1:0"}))
	if want := "counted in Redis redis://" + closed + "/0"; !strings.HasPrefix(app.App.RateLimits, want) {
		t.Fatalf("rate limits %q, want them %s", app.App.RateLimits, want)
	}
	signIn := func() *harness.Response {
		return app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, "nobody@example.com", "correct horse battery"))
	}
	for range 3 {
		harness.MustCode(t, signIn(), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
	}
	harness.MustRateLimited(t, signIn(), 10)
	logs := app.Logs.String()
	for _, want := range []string{"Redis does not answer", "the shared store failed"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the logs do not say %q", want)
		}
	}
	if strings.Contains(logs, "hunter2") {
		t.Error("the logs hold Redis's password")
	}
	metrics := httptest.NewServer(app.App.Metrics)
	defer metrics.Close()
	scraped := scrapeMetrics(t, metrics.URL+"/metrics")
	if n, ok := sample(scraped, "gatehouse_rate_limit_store_failures_total", nil); !ok || n < 4 {
		t.Errorf("gatehouse_rate_limit_store_failures_total = %v (present %v), want at least the 4 sign-ins", n, ok)
	}
	if n, ok := sample(scraped, "gatehouse_rate_limit_store_down", nil); !ok || n != 1 {
		t.Errorf("gatehouse_rate_limit_store_down = %v (present %v), want 1", n, ok)
	}
}
