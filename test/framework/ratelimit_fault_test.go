package framework

import (
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/ratelimit/redistest"
	"github.com/gatehouse/gatehouse/test/harness"
)

// redisIOTimeout is the Redis client's bound on each read and write
// (ratelimit.OpenRedis): what every request on a replica paid, before the
// breaker, while Redis swallowed its bytes.
const redisIOTimeout = 500 * time.Millisecond

// withAddress returns call sent from the client address addr (through the
// trusted proxy 127.0.0.1), so that each kind of call has its own budget.
func withAddress(call faultCall, addr string) faultCall {
	call.headers = maps.Clone(call.headers)
	call.headers["X-Forwarded-For"] = addr
	return call
}

// Ensure a blackholed PostgreSQL costs a request one database timeout, not
// two, when the rate limits are counted in it: the shared counter gives up
// after its own short deadline and is then left alone for a while, so
// sign-in and get-session answer 503 when their own query times out; a
// get-session whose cookie is forged, which needs no query, answers at once;
// and the limits still hold meanwhile, counted in the process.
// It keeps a fresh application: it breaks the database and counts rate limits.
func TestDatabaseBlackhole_rate_limits_add_no_second_timeout(t *testing.T) {
	t.Parallel()
	app := mustStartFaultAppWith(t, harness.Env(harness.LimitsOn, map[string]string{"GATEHOUSE_TRUSTED_PROXIES": "127.0.0.1"}))
	if want := "counted in PostgreSQL"; !strings.HasPrefix(app.App.App.RateLimits, want) {
		t.Fatalf("rate limits %q, want them %s", app.App.App.RateLimits, want)
	}
	all := app.calls(t)
	getSession, signIn := withAddress(all[0], "198.51.100.1"), withAddress(all[1], "198.51.100.2")
	app.proxy.Blackhole()

	// Three of each at once: the sign-ins use up their address's budget.
	results := app.send([]faultCall{getSession, signIn}, 3)
	slowest := mustAllUnavailable(t, results)
	t.Logf("slowest 503 under a blackholed database: %s (database timeout %s)", slowest.Round(time.Millisecond), dbFaultTimeout)
	for _, r := range results {
		// Two stacked deadlines take at least twice the timeout; one, with
		// the counter's short deadline at most, well under it.
		if r.elapsed >= 2*dbFaultTimeout {
			t.Errorf("%s: 503 after %s: more than one database timeout (%s) under a blackholed database",
				r.call.name, r.elapsed.Round(time.Millisecond), dbFaultTimeout)
		}
	}

	// The limits hold, counted in this process: a fourth sign-in from the
	// same address is refused without asking the database.
	fourth := app.send([]faultCall{signIn}, 1)[0]
	if fourth.err != nil || fourth.status != http.StatusTooManyRequests {
		t.Fatalf("fourth sign-in from one address under a blackholed database: status %d, err %v, want 429; body: %s",
			fourth.status, fourth.err, fourth.body)
	}

	// A forged cookie names no session: nothing to ask the database, and
	// nothing to wait for.
	forged := withAddress(faultCall{name: "get-session (forged cookie)", method: http.MethodGet, path: "/api/auth/get-session",
		headers: map[string]string{"Cookie": "gatehouse.session_token=" + strings.Repeat("A", 32) + ".forged"}}, "198.51.100.3")
	for i := range 5 {
		r := app.send([]faultCall{forged}, 1)[0]
		if r.err != nil || r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != "null" {
			t.Fatalf("%s #%d: status %d, err %v, body %s; want 200 null", forged.name, i+1, r.status, r.err, r.body)
		}
		if r.elapsed >= dbFaultTimeout/2 {
			t.Errorf("%s #%d: answered after %s under a blackholed database; it needs no query (database timeout %s)",
				forged.name, i+1, r.elapsed.Round(time.Millisecond), dbFaultTimeout)
		}
	}
	if logs := app.Logs.String(); strings.Count(logs, "rate limits: the shared store failed") != 1 {
		t.Errorf("the logs say %d times that the shared store failed, want once", strings.Count(logs, "rate limits: the shared store failed"))
	}
}

// Ensure a blackholed Redis slows only the request that finds it gone:
// after the first failure the replica counts in its own memory without
// asking Redis, instead of making every request wait the Redis client's
// timeout. The limits still hold meanwhile.
// It keeps a fresh application: it breaks Redis and counts rate limits.
func TestRateLimit_redis_blackholed_costs_one_timeout_not_one_per_request(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	proxy := harness.NewFaultProxy(t, url)
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.LimitsOn, map[string]string{
		"GATEHOUSE_REDIS_URL": proxy.URL(), "GATEHOUSE_REDIS_PREFIX": redistest.Prefix(t, url)}))
	c := app.NewClient(t)
	harness.MustStatus(t, c.Get("/api/auth/get-session"), http.StatusOK) // counted in Redis
	proxy.Blackhole()

	const n = 20
	start := time.Now()
	for i := range n {
		if r := c.Get("/api/auth/get-session"); r.Status != http.StatusOK {
			t.Fatalf("get-session #%d under a blackholed Redis: status %d, want 200; body: %s", i+1, r.Status, r.Body)
		}
	}
	// Each waiting Redis's timeout would take n times it; this allows half.
	if elapsed := time.Since(start); elapsed >= n*redisIOTimeout/2 {
		t.Fatalf("%d get-sessions under a blackholed Redis took %s: each waits for Redis (its timeout %s)",
			n, elapsed.Round(time.Millisecond), redisIOTimeout)
	}

	signIn := func() *harness.Response {
		return c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, "nobody@example.com", "correct horse battery"))
	}
	for range 3 {
		harness.MustCode(t, signIn(), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
	}
	harness.MustRateLimited(t, signIn(), 10)
	if logs := app.Logs.String(); !strings.Contains(logs, "rate limits: the shared store failed") {
		t.Errorf("the logs do not say the shared store failed:\n%s", logs)
	}
}
