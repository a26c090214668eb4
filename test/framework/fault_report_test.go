package framework

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/ratelimit/redistest"
	"github.com/gatehouse/gatehouse/test/harness"
)

// The fault report is a measurement, not a test: it asserts nothing about
// timings, and runs only when asked.
const (
	faultReportEnv         = "GATEHOUSE_FAULT_REPORT"          // 1 runs it
	faultReportDurationEnv = "GATEHOUSE_FAULT_REPORT_DURATION" // how long each outage lasts (default 1m)
	faultReportHealthy     = 5 * time.Second                   // load before each outage
	faultReportWorkers     = 2                                 // concurrent clients per kind of request
	faultReportPace        = 200 * time.Millisecond            // at most one request per client this often
)

// TestFaultReport measures how long requests take to be answered while a
// store is blackholed, with the settings a deployment gets by default
// (database timeout 5 s, rate limits on, session cache 500 ms): once with
// PostgreSQL blackholed (the rate limits counted in it, no Redis), once with
// Redis blackholed (the database healthy). Each runs a mixed load (sign-in,
// get-session with a real cookie, get-session with a forged cookie, a
// trusted API read; every request from an address of its own, so no rate
// limit refuses it) for 5 s, then blackholes the store for the outage, and
// logs per kind the statuses, p50 and max of the requests answered before
// it (healthy) and of those it met (outage: answered after it began, and
// sent before it ended). Run it on a quiet machine:
//
//	GATEHOUSE_FAULT_REPORT=1 GATEHOUSE_TEST_POSTGRES_URL=… GATEHOUSE_TEST_REDIS_URL=… \
//	  go test -count=1 -run TestFaultReport -v -timeout 10m ./test/
//
// It keeps a fresh application: it breaks the application's database and Redis.
func TestFaultReport(t *testing.T) {
	if os.Getenv(faultReportEnv) != "1" {
		t.Skipf("a measurement, not a test: set %s=1 to run it", faultReportEnv)
	}
	outage := time.Minute
	if v := os.Getenv(faultReportDurationEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a duration such as 1m", faultReportDurationEnv, v)
		}
		outage = d
	}
	t.Run("blackholed=postgres", func(t *testing.T) { runFaultReport(t, false, outage) })
	t.Run("blackholed=redis", func(t *testing.T) { runFaultReport(t, true, outage) })
}

// faultSample is one request of the report's load.
type faultSample struct {
	kind    string
	sent    time.Time
	elapsed time.Duration
	status  int // 0: no answer
}

func runFaultReport(t *testing.T, redis bool, outage time.Duration) {
	env := harness.Env(harness.LimitsOn, map[string]string{
		"GATEHOUSE_TRUSTED_PROXIES":   "127.0.0.1",
		"GATEHOUSE_DATABASE_TIMEOUT":  "5s",
		"GATEHOUSE_SESSION_CACHE_TTL": "500ms",
	})
	var redisProxy *harness.FaultProxy
	if redis {
		url := redistest.URL(t)
		redisProxy = harness.NewFaultProxy(t, url)
		env["GATEHOUSE_REDIS_URL"] = redisProxy.URL()
		env["GATEHOUSE_REDIS_PREFIX"] = redistest.Prefix(t, url)
	}
	app := mustStartFaultAppWith(t, env)
	victim, what := app.proxy, "PostgreSQL"
	if redis {
		victim, what = redisProxy, "Redis"
	}
	base := app.calls(t)
	kinds := []faultCall{
		base[1], // sign-in with the right password
		base[0], // get-session with a real cookie
		{name: "get-session (forged cookie)", method: http.MethodGet, path: "/api/auth/get-session",
			headers: map[string]string{"Cookie": "gatehouse.session_token=" + strings.Repeat("A", 32) + ".forged"}},
		{name: "trusted read", method: http.MethodGet, path: harness.UsersPath + "?limit=1",
			headers: map[string]string{"Authorization": "Bearer " + app.secret}},
	}

	var (
		mu      sync.Mutex
		samples []faultSample
		address atomic.Uint32
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	client := &http.Client{Timeout: 30 * time.Second}
	for _, k := range kinds {
		for range faultReportWorkers {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					n := address.Add(1)
					call := k
					call.headers = maps.Clone(k.headers)
					call.headers["X-Forwarded-For"] = fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)
					sent := time.Now()
					r := app.do(client, call)
					mu.Lock()
					samples = append(samples, faultSample{kind: k.name, sent: sent, elapsed: r.elapsed, status: r.status})
					mu.Unlock()
					time.Sleep(time.Until(sent.Add(faultReportPace)))
				}
			})
		}
	}
	time.Sleep(faultReportHealthy)
	victim.Blackhole()
	blackholed := time.Now()
	time.Sleep(outage)
	close(stop)
	wg.Wait()
	victim.Restore()

	t.Logf("%s blackholed for %s under mixed load (%d clients per kind, each at most one request per %s; database timeout 5s; rate limits %s)",
		what, outage, faultReportWorkers, faultReportPace, app.App.App.RateLimits)
	t.Logf("%-28s %-7s %6s  %-24s %9s %9s", "kind", "phase", "n", "statuses", "p50", "max")
	for _, k := range kinds {
		for _, phase := range []string{"healthy", "outage"} {
			var times []time.Duration
			statuses := map[int]int{}
			for _, s := range samples {
				// A request answered after the blackhole began met the
				// outage, even if it was sent just before.
				if s.kind != k.name || (phase == "outage") != !s.sent.Add(s.elapsed).Before(blackholed) {
					continue
				}
				times = append(times, s.elapsed)
				statuses[s.status]++
			}
			t.Logf("%-28s %-7s %6d  %-24s %9s %9s", k.name, phase, len(times), statusList(statuses), quantile(times, 0.5), quantile(times, 1))
		}
	}
}

// statusList spells statuses as "503×12 200×3", 0 being "none" (no answer).
func statusList(statuses map[int]int) string {
	var parts []string
	for _, code := range slices.Sorted(maps.Keys(statuses)) {
		name := fmt.Sprint(code)
		if code == 0 {
			name = "none"
		}
		parts = append(parts, fmt.Sprintf("%s×%d", name, statuses[code]))
	}
	return strings.Join(parts, " ")
}

// quantile returns the q-quantile of times (1 is the max), rounded to the
// millisecond, or "-" when there are none.
func quantile(times []time.Duration, q float64) string {
	if len(times) == 0 {
		return "-"
	}
	sorted := slices.Clone(times)
	slices.Sort(sorted)
	i := min(len(sorted)-1, int(q*float64(len(sorted))))
	return sorted[i].Round(time.Millisecond).String()
}
