package framework

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// dbFaultTimeout is the database timeout of the fault tests: short, so they
// are quick. Their clients wait five times as long, which bounds every wait
// without asserting a timing.
const (
	dbFaultTimeout = time.Second
	dbFaultWait    = 5 * dbFaultTimeout
)

// faultApp is an app on PostgreSQL behind a fault proxy, with a signed-in
// user, an administrator and a service key, all made while the database was
// healthy.
type faultApp struct {
	*harness.App
	proxy  *harness.FaultProxy
	user   *harness.Client
	admin  *harness.Client
	secret string
}

const faultUserEmail = "ada@example.com"

func mustStartFaultApp(t *testing.T) *faultApp {
	t.Helper()
	return mustStartFaultAppWith(t, nil)
}

// mustStartFaultAppWith is mustStartFaultApp with env added (and winning).
func mustStartFaultAppWith(t *testing.T, env map[string]string) *faultApp {
	t.Helper()
	proxy := harness.NewFaultProxy(t, harness.PostgresURL(t))
	app := harness.MustStart(t, harness.StorePostgres, harness.Env(harness.AdminEnv, map[string]string{
		"GATEHOUSE_DATABASE_URL":     proxy.URL(),
		"GATEHOUSE_DATABASE_TIMEOUT": dbFaultTimeout.String(),
		// Every get-session must reach the database: with the session
		// cache a session checked just before the outage would still be
		// answered from it, within its lifetime, instead of 503.
		"GATEHOUSE_SESSION_CACHE_TTL": "0",
	}, env))
	admin, _ := harness.MustAdmin(t, app)
	secret := harness.MustCreateKey(t, admin, map[string]any{"name": "backend", "scopes": []string{"users:read"}})["secret"].(string)
	user, _ := harness.MustPlainUser(t, app, "Ada", faultUserEmail, harness.UserPassword)
	harness.MustSession(t, user)
	return &faultApp{App: app, proxy: proxy, user: user, admin: admin, secret: secret}
}

// faultCall is one request of the load the fault tests send.
type faultCall struct {
	name          string
	method, path  string
	body          string
	headers       map[string]string
	problem       bool // a problem+json route; else the framework's {message, code}
	wantSucceeded int  // its status once the database is back
}

// calls are get-session with a valid cookie, sign-in with the right
// password, a trusted route with a valid service key and an admin route
// with an administrator's session: each needs the database to answer.
func (a *faultApp) calls(t *testing.T) []faultCall {
	cookie := func(c *harness.Client) string {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(c.Cookies)) {
			parts = append(parts, name+"="+c.Cookies[name])
		}
		return strings.Join(parts, "; ")
	}
	origin := a.Cfg.HTTP.BaseURL
	return []faultCall{
		{name: "get-session", method: http.MethodGet, path: "/api/auth/get-session",
			headers: map[string]string{"Cookie": cookie(a.user)}, wantSucceeded: http.StatusOK},
		{name: "sign-in", method: http.MethodPost, path: "/api/auth/sign-in/email", body: harness.MustCredentials(t, faultUserEmail, harness.UserPassword),
			headers: map[string]string{"Origin": origin, "Content-Type": "application/json"}, wantSucceeded: http.StatusOK},
		{name: "service-key", method: http.MethodGet, path: "/api/service-key",
			headers: map[string]string{"Authorization": "Bearer " + a.secret}, problem: true, wantSucceeded: http.StatusOK},
		{name: "admin", method: http.MethodGet, path: harness.ServiceKeysPath,
			headers: map[string]string{"Cookie": cookie(a.admin)}, problem: true, wantSucceeded: http.StatusOK},
	}
}

// faultResult is what one call got.
type faultResult struct {
	call    faultCall
	status  int
	header  http.Header
	body    []byte
	err     error
	elapsed time.Duration
}

// send runs each call n times at once and returns every result. It never
// fails the test itself, so it may run beside others.
func (a *faultApp) send(calls []faultCall, n int) []faultResult {
	client := &http.Client{Timeout: dbFaultWait}
	results := make([]faultResult, len(calls)*n)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = a.do(client, calls[i%len(calls)]) })
	}
	wg.Wait()
	return results
}

// do sends one call with client and returns what it got.
func (a *faultApp) do(client *http.Client, c faultCall) (res faultResult) {
	res.call = c
	start := time.Now()
	defer func() { res.elapsed = time.Since(start) }()
	req, err := http.NewRequest(c.method, a.URL+c.path, strings.NewReader(c.body))
	if err != nil {
		res.err = err
		return res
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	r, err := client.Do(req)
	if err != nil {
		res.err = err
		return res
	}
	defer r.Body.Close()
	res.status, res.header = r.StatusCode, r.Header
	res.body, res.err = io.ReadAll(r.Body)
	return res
}

// mustAllUnavailable fails unless every result is a 503 with Retry-After in
// its route's error shape, and returns the slowest answer's time.
func mustAllUnavailable(t *testing.T, results []faultResult) time.Duration {
	t.Helper()
	var slowest time.Duration
	for _, r := range results {
		if r.err != nil {
			t.Fatalf("%s: no answer within %s: %v", r.call.name, dbFaultWait, r.err)
		}
		if got, want := r.status, http.StatusServiceUnavailable; got != want {
			t.Fatalf("%s: status = %d, want %d; body: %s", r.call.name, got, want, r.body)
		}
		if c := r.header.Values("Set-Cookie"); len(c) > 0 {
			t.Fatalf("%s: a 503 sets cookies %q: an outage must not sign anyone out", r.call.name, c)
		}
		if secs, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || secs < 1 {
			t.Fatalf("%s: Retry-After = %q, want a number of seconds", r.call.name, r.header.Get("Retry-After"))
		}
		var body struct {
			Code   string `json:"code"`
			Status int    `json:"status"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("%s: body is not JSON: %s", r.call.name, r.body)
		}
		if r.call.problem {
			if got, want := r.header.Get("Content-Type"), "application/problem+json"; got != want {
				t.Fatalf("%s: Content-Type = %q, want %q", r.call.name, got, want)
			}
			if got, want := body.Code, "database.unavailable"; got != want {
				t.Fatalf("%s: code = %q, want %q", r.call.name, got, want)
			}
		} else if got, want := body.Code, "SERVICE_UNAVAILABLE"; got != want {
			t.Fatalf("%s: code = %q, want %q; body: %s", r.call.name, got, want, r.body)
		}
		slowest = max(slowest, r.elapsed)
	}
	return slowest
}

// mustRecover waits until every call succeeds again once the proxy lets
// traffic through: the pool drops the poisoned connections and opens new ones.
func mustRecover(t *testing.T, a *faultApp, calls []faultCall) {
	t.Helper()
	a.proxy.Restore()
	deadline := time.Now().Add(10 * dbFaultWait)
	for {
		ok := true
		for _, r := range a.send(calls, 1) {
			if r.err != nil || r.status != r.call.wantSucceeded {
				ok = false
				if time.Now().After(deadline) {
					t.Fatalf("%s after the database came back: status %d, err %v; body: %s", r.call.name, r.status, r.err, r.body)
				}
			}
		}
		if ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Ensure a blackholed database fails closed and answers: under concurrent
// get-session, sign-in, service-key and admin load, with PostgreSQL
// swallowing every byte, each request gets a 503 with Retry-After (never "no
// session", a refused password or a 500, and never silence), and everything
// works again once the database is back.
// It keeps a fresh application: it breaks the application's database.
func TestDatabaseBlackhole_answers_503_with_retry_after(t *testing.T) {
	app := mustStartFaultApp(t)
	calls := app.calls(t)
	app.proxy.Blackhole()

	slowest := mustAllUnavailable(t, app.send(calls, 10))
	t.Logf("slowest 503 under a blackholed database: %s (database timeout %s)", slowest.Round(time.Millisecond), dbFaultTimeout)

	mustRecover(t, app, calls)
	// The outage ended no session: the one taken before it still works.
	harness.MustSession(t, app.user)
}

// Ensure a query cut mid-flight (the connection drops after the query was
// sent, before its answer: "unexpected EOF") answers 503 with Retry-After,
// not 500, and that the pool recovers.
// It keeps a fresh application: it breaks the application's database.
func TestDatabaseConnectionCut_answers_503(t *testing.T) {
	app := mustStartFaultApp(t)
	calls := app.calls(t)
	app.proxy.CutOnTraffic()

	mustAllUnavailable(t, app.send(calls, 2))

	mustRecover(t, app, calls)
}
