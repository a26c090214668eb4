package process

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/dnsresolver/dnstest"
	"github.com/gatehouse/gatehouse/adapters/ratelimit/redistest"
	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/test/harness"
)

// replicaCount is how many "gatehouse serve" processes the cluster runs.
const replicaCount = 3

// seenWithin is how soon every replica must refuse a session that was
// signed out, or whose user was banned, on another replica.
const seenWithin = time.Second

// haproxySource is the address HAProxy connects to the replicas from, the
// one proxy they trust: requests the tests send straight to a replica come
// from another loopback address, whose X-Forwarded-For no replica believes.
const haproxySource = "127.0.0.2"

// cluster is three gatehouse processes on one PostgreSQL database (a schema
// of the test's own) and one Redis (a key prefix of the test's own), behind
// HAProxy on loopback, with a DNS server for the domain verifier.
type cluster struct {
	t        *testing.T
	env      []string // every replica's environment
	replicas []*harness.Process
	lb       string // HAProxy's URL, the replicas' base URL
	haproxy  *harness.Process
	dns      *dnstest.Server
	// AdminEmail signs in as a platform administrator; keySecret is a
	// service key with the domain, user and webhook scopes. The command
	// line made both.
	keySecret string
}

// needReplicaTools skips the test when HAProxy is missing (or under -short),
// except under CI, where that is a failure. PostgreSQL and Redis skip or
// fail the same way (gormtest, redistest).
func needReplicaTools(t *testing.T) {
	t.Helper()
	skip := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("the multi-replica test may not be skipped in CI: %s", why)
		}
		t.Skip("multi-replica test skipped: " + why)
	}
	if testing.Short() {
		t.Skip("multi-replica test skipped under -short") // asked for, under CI too
	}
	if _, err := exec.LookPath("haproxy"); err != nil {
		skip("no haproxy (Debian package haproxy)")
	}
}

// freeLoopbackPort returns a TCP port free on 127.0.0.1 a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startCluster creates the administrator and the service key with the
// command line, starts the replicas one after the other (each start waits
// on the migrations' lock otherwise), then HAProxy in front of them, and
// waits until HAProxy has sent a request to each. The replicas' and
// HAProxy's output is printed if the test fails.
func startCluster(t *testing.T, extraEnv ...string) *cluster {
	t.Helper()
	needReplicaTools(t)
	redis := redistest.URL(t)
	c := &cluster{t: t, dns: dnstest.Start(t)}
	lbPort := freeLoopbackPort(t)
	c.lb = "http://127.0.0.1:" + strconv.Itoa(lbPort)
	c.env = append([]string{
		"GATEHOUSE_SECRET=" + harness.TestSecret,
		"GATEHOUSE_BASE_URL=" + c.lb,
		"GATEHOUSE_DATABASE_URL=" + string(harness.PostgresURL(t)),
		"GATEHOUSE_REDIS_URL=" + redis,
		"GATEHOUSE_REDIS_PREFIX=" + redistest.Prefix(t, redis),
		"GATEHOUSE_TRUSTED_PROXIES=" + haproxySource + "/32",
		"GATEHOUSE_SIGNING_KEY_RELOAD_INTERVAL=1s",
		"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION=false",
		"GATEHOUSE_DNS_NAMESERVER=" + c.dns.Addr(),
		// Webhooks to a receiver on loopback, looked for every 100 ms.
		"GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=true",
		"GATEHOUSE_WEBHOOK_POLL_INTERVAL=100ms",
		"GATEHOUSE_WEBHOOK_TIMEOUT=2s",
		"GATEHOUSE_WEBHOOK_RETRY_SCHEDULE=200ms,500ms,1s,2s,5s",
		// The verifier looks every 100 ms; a verified domain is not
		// checked again for an hour unless an administrator asks.
		"GATEHOUSE_DOMAIN_CHECK_INTERVAL=100ms",
		"GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL=1h",
		"GATEHOUSE_DOMAIN_RECHECK_INTERVAL=1h",
	}, extraEnv...)
	cli := append([]string{"GATEHOUSE_DATA_DIR=" + t.TempDir()}, c.env...)
	harness.MustRunCLI(t, cli, harness.AdminPassword+"\n", "admin", "create", "--email", harness.AdminEmail, "--name", "Root Admin", "--password-stdin")
	out := harness.MustRunCLI(t, cli, "", "service-key", "create", "--name", "replicas", "--scopes",
		"domains:read,domains:write,users:read,users:write,webhooks:read,webhooks:write")
	m := harness.CLISecretRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("service-key create printed %q", out)
	}
	c.keySecret = m[1]

	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for i, p := range c.replicas {
			t.Logf("replica %d (%s) stdout:\n%s\nstderr:\n%s", i+1, p.URL, p.Stdout, p.Stderr)
		}
		if c.haproxy != nil {
			t.Logf("haproxy output:\n%s%s", c.haproxy.Stdout, c.haproxy.Stderr)
		}
	})
	for range replicaCount {
		c.replicas = append(c.replicas, harness.StartProcess(t, c.env...))
	}
	c.startHAProxy(lbPort)
	return c
}

// startHAProxy runs HAProxy on port, in front of the replicas: round robin,
// HTTP health checks on the liveness route every 100 ms, X-Forwarded-For
// added, and the name of the replica that answered in X-Replica.
func (c *cluster) startHAProxy(port int) {
	t := c.t
	t.Helper()
	var servers strings.Builder
	for i, p := range c.replicas {
		fmt.Fprintf(&servers, "    server r%d %s check\n", i+1, strings.TrimPrefix(p.URL, "http://"))
	}
	cfg := fmt.Sprintf(`global
    log stderr format raw local0 notice

defaults
    mode http
    log global
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    retries 2
    option redispatch

frontend gatehouse
    bind 127.0.0.1:%d
    default_backend replicas

backend replicas
    balance roundrobin
    option forwardfor
    source %s
    option httpchk GET /api/auth/ok
    http-check expect status 200
    default-server inter 100ms fall 2 rise 1
    http-response set-header X-Replica %%s
%s`, port, haproxySource, servers.String())
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("haproxy", "-db", "-f", path)
	p := &harness.Process{Cmd: cmd, URL: c.lb, Stdout: &harness.SyncBuffer{}, Stderr: &harness.SyncBuffer{}, Done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.Done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	c.haproxy = p
	// Wait until each replica has answered through HAProxy.
	served := map[string]bool{}
	deadline := time.Now().Add(harness.PollDeadline)
	for len(served) < replicaCount {
		if time.Now().After(deadline) {
			t.Fatalf("HAProxy sent requests to %v only", served)
		}
		select {
		case err := <-p.Done:
			t.Fatalf("haproxy exited: %v\n%s%s", err, p.Stdout, p.Stderr)
		default:
		}
		res, err := http.Get(c.lb + "/api/auth/ok")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				served[res.Header.Get("X-Replica")] = true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// client returns a browser-like client of url (HAProxy or one replica)
// whose requests come from the loopback address from, and whose Origin is
// the base URL.
func (c *cluster) client(url, from string) *harness.Client {
	c.t.Helper()
	app := &harness.App{Server: &httptest.Server{URL: url}, Cfg: bootstrap.Config{HTTP: bootstrap.HTTPConfig{BaseURL: c.lb}}}
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	hc := &http.Client{
		Transport:     &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 4},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
	return &harness.Client{T: c.t, App: app, Origin: c.lb, Cookies: map[string]string{}, HTTP: hc}
}

// at returns a copy of cl (its cookies, its address) that talks to url.
func (c *cluster) at(cl *harness.Client, url string) *harness.Client {
	d := cl.Clone()
	app := *cl.App
	app.Server = &httptest.Server{URL: url}
	d.App = &app
	return d
}

// everywhere returns cl's copies for each replica, then HAProxy.
func (c *cluster) everywhere(cl *harness.Client) []*harness.Client {
	var out []*harness.Client
	for _, p := range c.replicas {
		out = append(out, c.at(cl, p.URL))
	}
	return append(out, c.at(cl, c.lb))
}

// newClientAddr returns a loopback address of its own for one part of the
// test, so that its rate-limit budget is its own.
func newClientAddr() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("127.%d.%d.%d", 10+b[0]%200, b[1], 1+b[2]%250)
}

// mustSeenEverywhere polls get-session with cl's cookies on every replica
// until each answers null, and fails if any took seenWithin or longer
// after since.
func (c *cluster) mustSeenEverywhere(cl *harness.Client, since time.Time, what string) {
	c.t.Helper()
	clients := c.everywhere(cl)[:replicaCount]
	took := make([]time.Duration, len(clients))
	for pending := len(clients); pending > 0; {
		for i, rc := range clients {
			if took[i] != 0 {
				continue
			}
			r := rc.Get("/api/auth/get-session")
			harness.MustStatus(c.t, r, http.StatusOK)
			if strings.TrimSpace(string(r.Body)) == "null" {
				took[i] = time.Since(since)
				pending--
			}
		}
		if time.Since(since) > harness.PollDeadline {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i, d := range took {
		if d == 0 || d >= seenWithin {
			c.t.Errorf("replica %d refused the session %v after the %s (0: never), want within %v", i+1, d, what, seenWithin)
		}
	}
}

// Ensure three replicas on one PostgreSQL database and one Redis behave as
// one service behind HAProxy: sessions work on every replica, sign-out and
// bans reach every replica within a second, the sign-in limit holds in
// total, a signing-key rotation reaches every replica, and the domain
// verifier checks each due domain once per pass.
func TestReplicas_behind_haproxy(t *testing.T) {
	c := startCluster(t)

	t.Run("session_works_on_every_replica", func(t *testing.T) {
		c.t = t
		from := newClientAddr()
		lb := c.client(c.lb, from)
		signUp := harness.MustSignUp(t, lb, "Ada", "ada@example.com", harness.UserPassword)
		userID := harness.MustID(t, signUp["user"])
		// Signed in through one replica, the session is known to all,
		// however HAProxy spreads the requests.
		one := c.at(lb, c.replicas[0].URL)
		one.Cookies = map[string]string{}
		harness.MustSignIn(t, one, "ada@example.com", harness.UserPassword)
		for i, rc := range c.everywhere(one) {
			for range replicaCount {
				if u := harness.MustUser(t, harness.MustSession(t, rc)); u["id"] != userID {
					t.Fatalf("client %d: get-session user %v, want %s", i, u["id"], userID)
				}
			}
		}
		// Signed out on the second replica, it is refused on every one.
		two := c.at(one, c.replicas[1].URL)
		harness.MustStatus(t, two.Post("/api/auth/sign-out", "{}"), http.StatusOK)
		c.mustSeenEverywhere(one, time.Now(), "sign-out")

		// Banned on the third replica by an administrator, the user's
		// session is refused on every one.
		harness.MustSignIn(t, one, "ada@example.com", harness.UserPassword)
		admin := c.client(c.replicas[2].URL, newClientAddr())
		harness.MustSignIn(t, admin, harness.AdminEmail, harness.AdminPassword)
		harness.MustOK(t, admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": userID, "banReason": "replica test"})))
		c.mustSeenEverywhere(one, time.Now(), "ban")
	})

	t.Run("sign_in_limit_holds_in_total", func(t *testing.T) {
		c.t = t
		// Three sign-ins per 10 s from one address: the three go to the
		// three replicas, the fourth goes through HAProxy with a forged
		// X-Forwarded-For, which HAProxy's own line below it outweighs.
		from := newClientAddr()
		signIn := func(url string, headers ...string) *harness.Response {
			return c.client(url, from).Post("/api/auth/sign-in/email", harness.MustCredentials(t, "nobody@example.com", "correct horse battery"), headers...)
		}
		for _, p := range c.replicas {
			harness.MustCode(t, signIn(p.URL), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		}
		harness.MustRateLimited(t, signIn(c.lb, "X-Forwarded-For", "203.0.113.9"), 10)
		for _, p := range c.replicas {
			harness.MustRateLimited(t, signIn(p.URL), 10)
		}
		// Another address has its own budget.
		harness.MustCode(t, c.client(c.replicas[0].URL, newClientAddr()).Post("/api/auth/sign-in/email",
			harness.MustCredentials(t, "nobody@example.com", "correct horse battery")), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
	})

	t.Run("rotated_signing_key_reaches_every_replica", func(t *testing.T) {
		c.t = t
		admin := c.client(c.replicas[0].URL, newClientAddr())
		harness.MustSignIn(t, admin, harness.AdminEmail, harness.AdminPassword)
		rotated := harness.MustOK(t, admin.Post("/api/admin/signing-keys/rotate", harness.MustJSON(t, map[string]any{"alg": "EdDSA"})))
		keys, _ := rotated["data"].([]any)
		if len(keys) != 1 {
			t.Fatalf("rotate = %v, want one key", rotated)
		}
		kid := harness.MustID(t, keys[0])
		for i, p := range c.replicas {
			deadline := time.Now().Add(harness.PollDeadline)
			for !slices.Contains(jwksKids(t, c.client(p.URL, "127.0.0.1")), kid) {
				if time.Now().After(deadline) {
					t.Fatalf("replica %d never published the rotated key %s", i+1, kid)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	})

	t.Run("verifier_checks_each_due_domain_once_per_pass", func(t *testing.T) {
		c.t = t
		c.mustVerifyOncePerPass()
	})

	// Last: it kills a replica.
	t.Run("sigkill_during_a_webhook_burst_loses_no_event", func(t *testing.T) {
		c.t = t
		c.mustDeliverThroughAKill()
	})
}

// trusted sends a trusted request through HAProxy with the service key.
func (c *cluster) trusted(method, path, body string) *harness.Response {
	c.t.Helper()
	return c.client(c.lb, "127.0.0.1").Do(method, path, body, "Authorization", "Bearer "+c.keySecret, "Content-Type", "application/json")
}

// webhookReceiver records the webhook-id of every delivery it is posted,
// with the id of the user the event is about, and answers 204.
type webhookReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	users map[string]string // webhook-id → data.id
}

func newWebhookReceiver(t *testing.T) *webhookReceiver {
	t.Helper()
	r := &webhookReceiver{users: map[string]string{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			Type string `json:"type"`
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		id := req.Header.Get("webhook-id")
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil || id == "" || !strings.HasPrefix(req.Header.Get("webhook-signature"), "v1,") {
			http.Error(w, "not a webhook", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.users[id] = body.Data.ID
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// seen returns the webhook-ids received, and the users they were about.
func (r *webhookReceiver) seen() (ids, users map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids, users = map[string]bool{}, map[string]bool{}
	for id, user := range r.users {
		ids[id], users[user] = true, true
	}
	return ids, users
}

// webhookDeadline bounds the wait for the events of a killed replica: what
// it had claimed comes back when the claim ends (a minute for the fan-out,
// the delivery timeout and 30 s for a delivery).
const webhookDeadline = 3 * time.Minute

// mustDeliverThroughAKill registers an endpoint for user.created, creates
// users through HAProxy from several goroutines, kills the second replica
// with SIGKILL a third of the way through, and waits until the receiver
// has seen an event for every user that exists, and every message the
// endpoint's log lists.
func (c *cluster) mustDeliverThroughAKill() {
	t := c.t
	t.Helper()
	rcv := newWebhookReceiver(t)
	r := c.trusted(http.MethodPost, "/api/webhooks", harness.MustJSON(t, map[string]any{"url": rcv.URL + "/in", "eventTypes": []string{"user.created"}}))
	harness.MustStatus(t, r, http.StatusCreated)
	endpoint := harness.MustID(t, r.JSON(t))

	const users, workers = 60, 4
	var created atomic.Int32
	killed := make(chan struct{})
	// create creates burst user i through HAProxy and reports whether it
	// answered 201. A request the killed replica was serving may fail
	// (502): whether its user exists is read afterwards.
	create := func(i int) bool {
		body := fmt.Sprintf(`{"email":"burst-%02d@example.com","name":"Burst %d"}`, i, i)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, c.lb+"/api/users", strings.NewReader(body))
		if err != nil {
			return false
		}
		req.Header.Set("Authorization", "Bearer "+c.keySecret)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusCreated
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < users; i += workers {
				if create(i) && created.Add(1) == users/3 {
					close(killed)
				}
			}
		})
	}
	select {
	case <-killed:
	case <-time.After(harness.PollDeadline):
		t.Fatalf("only %d users created before the kill", created.Load())
	}
	if err := c.replicas[1].Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	// The users that exist, whichever replica made them.
	var want []string
	for cursor := ""; ; {
		page := harness.MustOK(t, c.trusted(http.MethodGet, "/api/users?limit=100"+cursor, ""))
		for _, u := range page["data"].([]any) {
			if m := harness.MustObject(t, u); strings.HasPrefix(m["email"].(string), "burst-") {
				want = append(want, harness.MustID(t, m))
			}
		}
		next, _ := page["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(next)
	}
	if len(want) < int(created.Load()) {
		t.Fatalf("%d burst users listed, %d were created", len(want), created.Load())
	}
	deadline := time.Now().Add(webhookDeadline)
	for {
		_, got := rcv.seen()
		missing := slices.DeleteFunc(slices.Clone(want), func(id string) bool { return got[id] })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no user.created event reached the receiver for %d of %d users: %v", len(missing), len(want), missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Every message the endpoint's log lists reached it.
	ids, _ := rcv.seen()
	listed := 0
	for cursor := ""; ; {
		page := harness.MustOK(t, c.trusted(http.MethodGet, "/api/webhooks/"+endpoint+"/messages?limit=100"+cursor, ""))
		for _, m := range page["data"].([]any) {
			listed++
			if id := harness.MustObject(t, m)["messageId"].(string); !ids[id] {
				t.Errorf("message %s is in the endpoint's log but never reached the receiver", id)
			}
		}
		next, _ := page["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(next)
	}
	if listed < len(want) {
		t.Errorf("the endpoint's log lists %d messages for %d users", listed, len(want))
	}
}

// jwksKids returns the key ids the key set at cl's URL publishes.
func jwksKids(t *testing.T, cl *harness.Client) []string {
	t.Helper()
	var kids []string
	for _, k := range harness.MustOK(t, cl.Get("/api/auth/jwks"))["keys"].([]any) {
		kids = append(kids, harness.MustObject(t, k)["kid"].(string))
	}
	return kids
}

// mustVerifyOncePerPass creates domains through HAProxy, publishes their
// challenges and waits until every one is verified. Then, twice, an
// administrator asks for a recheck of every domain, and each domain's TXT
// record must have been asked for exactly once more. The DNS server
// answers slowly, so that replicas looking at one domain at once would
// show as extra queries.
func (c *cluster) mustVerifyOncePerPass() {
	t := c.t
	t.Helper()
	c.dns.Delay(300 * time.Millisecond)
	trusted := c.client(c.lb, newClientAddr())
	call := func(method, path, body string) *harness.Response {
		return trusted.Do(method, path, body, "Authorization", "Bearer "+c.keySecret)
	}
	const n = 8
	ids := make([]string, n)
	names := make([]string, n)
	for i := range n {
		r := call(http.MethodPost, harness.DomainsPath, harness.MustJSON(t, map[string]any{"hostname": fmt.Sprintf("shop%d.example.com", i)}))
		harness.MustStatus(t, r, http.StatusCreated)
		d := r.JSON(t)
		ids[i] = harness.MustID(t, d)
		var value string
		names[i], value = harness.Challenge(t, d)
		c.dns.SetTXT(names[i], value)
	}
	get := func(id string) map[string]any {
		return harness.MustOK(t, call(http.MethodGet, harness.DomainsPath+"/"+id, ""))
	}
	// waitChecked waits until every domain is verified and its last check
	// is another than last[i] (none: any), and returns the last checks.
	waitChecked := func(last []any) []any {
		t.Helper()
		deadline := time.Now().Add(harness.PollDeadline)
		checked := make([]any, n)
		for i := 0; i < n; {
			d := get(ids[i])
			if d["status"] == "verified" && d["lastCheckedAt"] != nil && (last == nil || d["lastCheckedAt"] != last[i]) {
				checked[i] = d["lastCheckedAt"]
				i++
				continue
			}
			if time.Now().After(deadline) {
				t.Fatalf("domain %s not checked (again): %v", ids[i], d)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return checked
	}
	last := waitChecked(nil)
	admin := c.client(c.lb, newClientAddr())
	harness.MustSignIn(t, admin, harness.AdminEmail, harness.AdminPassword)
	// The waits of this loop are real, the exception to advancing a
	// clock: the replicas are processes of their own, on the wall clock,
	// and the queries they may still send can only be waited for.
	for pass := 1; pass <= 2; pass++ {
		time.Sleep(500 * time.Millisecond) // any lookup still under way lands
		before := make([]int, n)
		for i := range n {
			before[i] = c.dns.Queries(names[i], "TXT")
		}
		for i := range n {
			r := admin.Do(http.MethodPatch, "/api/admin/domains/"+ids[i], `{"recheck":true}`, "Origin", c.lb, "Content-Type", "application/json")
			harness.MustStatus(t, r, http.StatusOK)
		}
		last = waitChecked(last)
		// Every replica's verifier has ticked several times since; a
		// lookup of a domain another replica also took would have arrived.
		time.Sleep(time.Second)
		for i := range n {
			if got := c.dns.Queries(names[i], "TXT") - before[i]; got != 1 {
				t.Errorf("pass %d: %s was asked for %d times, want once", pass, names[i], got)
			}
		}
	}
}
