// Command loadtest is a development tool that measures Gatehouse over real
// connections. It wires Gatehouse in-process on a temporary SQLite database
// (and, when GATEHOUSE_TEST_POSTGRES_URL is set, on a schema of its own on
// that PostgreSQL server), serves it on 127.0.0.1, signs up one user, issues
// one service key, and then drives GET /api/auth/get-session (with that
// user's cookie), POST /api/auth/sign-in/email (with the right password),
// GET /api/service-key, GET /api/users?email= and GET /api/domains/by-hostname/{hostname} (with the key),
// GET /api/auth/token (a signed framework JWT for that user), GET /api/auth/jwks,
// GET /.well-known/openid-configuration, a client-credentials grant at
// POST /api/auth/oauth2/token, GET /api/auth/ok, and a two-factor sign-in (sign-in/email then
// verify-totp, timed together; each iteration signs in a user of its own, enrolled before the run,
// since a TOTP code is accepted once) and a signed-out passkey sign-in (generate-authenticate-options
// then verify-authentication with a software authenticator), and a sign-in through an upstream OpenID provider
// (a second Gatehouse in memory: sign-in/social, the provider's authorization, the callback, whose own cost
// and the upstream key set's cache hit rate are printed after the table), one after another, each with a pool of keep-alive
// clients for a fixed time. It prints requests per second, the median and
// 99th-percentile latency, and the number of errors (transport failures and
// non-2xx answers) per route, and then the webhook delivery latency (p50 and
// p99 from a trusted create-user's answer to its user.created event at a
// loopback receiver). The load and the service share the machine's
// CPUs, so compare runs on the same machine only.
//
//	go run ./cmd/loadtest [-duration 10s] [-concurrency 50] [-signin-concurrency 8]
//
// LOADTEST_DURATION, LOADTEST_CONCURRENCY and LOADTEST_SIGNIN_CONCURRENCY
// set the defaults of the flags. `make bench` runs it.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/bootstrap"
)

const (
	email    = "load@example.com"
	password = "correct horse battery staple"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args, os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// options are the run's settings.
type options struct {
	duration          time.Duration
	concurrency       int
	signInConcurrency int
	postgresURL       string
}

func parseOptions(args []string, getenv func(string) string) (options, error) {
	def := func(env, fallback string) string {
		if v := getenv(env); v != "" {
			return v
		}
		return fallback
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	duration := fs.String("duration", def("LOADTEST_DURATION", "10s"), "how long each route is driven (LOADTEST_DURATION)")
	conc := fs.String("concurrency", def("LOADTEST_CONCURRENCY", "50"), "clients for get-session and ok (LOADTEST_CONCURRENCY)")
	signIn := fs.String("signin-concurrency", def("LOADTEST_SIGNIN_CONCURRENCY", "8"),
		"clients for sign-in, whose password hash costs tens of milliseconds of CPU (LOADTEST_SIGNIN_CONCURRENCY)")
	if err := fs.Parse(args[1:]); err != nil {
		return options{}, err
	}
	var o options
	var err error
	if o.duration, err = time.ParseDuration(*duration); err != nil || o.duration <= 0 {
		return o, fmt.Errorf("duration %q: want a positive duration such as 10s", *duration)
	}
	if o.concurrency, err = strconv.Atoi(*conc); err != nil || o.concurrency < 1 {
		return o, fmt.Errorf("concurrency %q: want a whole number of at least 1", *conc)
	}
	if o.signInConcurrency, err = strconv.Atoi(*signIn); err != nil || o.signInConcurrency < 1 {
		return o, fmt.Errorf("signin-concurrency %q: want a whole number of at least 1", *signIn)
	}
	o.postgresURL = getenv("GATEHOUSE_TEST_POSTGRES_URL")
	return o, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	o, err := parseOptions(args, getenv)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Load run on loopback: %s per route, GOMAXPROCS=%d (client and server share the CPUs)\n", o.duration, runtime.GOMAXPROCS(0))
	dir, err := os.MkdirTemp("", "gatehouse-loadtest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := runStore(ctx, o, "sqlite", dir, "sqlite:"+filepath.Join(dir, "gatehouse.db"), stdout); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if o.postgresURL == "" {
		fmt.Fprintln(stdout, "\npostgres: skipped (set GATEHOUSE_TEST_POSTGRES_URL to include it)")
		return nil
	}
	dsn, drop, err := postgresSchema(o.postgresURL)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer drop()
	if err := runStore(ctx, o, "postgres", dir, dsn, stdout); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// postgresSchema creates an empty schema on the server at base and returns a
// URL that uses it, and a function that drops it, so the run leaves the
// database as it found it.
func postgresSchema(base string) (string, func(), error) {
	admin, err := gormstore.Connect(gormstore.DatabaseURL(base), 0)
	if err != nil {
		return "", nil, err
	}
	sqlAdmin, err := admin.DB()
	if err != nil {
		return "", nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "gh_load_" + hex.EncodeToString(b[:])
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		_ = sqlAdmin.Close()
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	drop := func() {
		_ = admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
		_ = sqlAdmin.Close()
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

// runStore starts Gatehouse on the database at dbURL, drives the routes
// and prints their table.
func runStore(ctx context.Context, o options, name, dir, dbURL string, stdout io.Writer) error {
	var secret [32]byte
	_, _ = rand.Read(secret[:])
	env := map[string]string{
		"GATEHOUSE_DATA_DIR":                   dir,
		"GATEHOUSE_DATABASE_URL":               dbURL,
		"GATEHOUSE_SECRET":                     hex.EncodeToString(secret[:]),
		"GATEHOUSE_RATE_LIMIT":                 "off",
		"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "false",
		"GATEHOUSE_LOG_LEVEL":                  "error",
		// The webhook latency run posts to a receiver on loopback.
		"GATEHOUSE_WEBHOOK_ALLOW_PRIVATE": "true",
	}
	// Only env is read, so settings in the caller's environment cannot change the run.
	cfg, err := bootstrap.LoadConfig("loadtest", nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		return err
	}
	logger := bootstrap.NewLogger(cfg, os.Stderr)
	app, cleanup, err := bootstrap.InitializeSQL(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer cleanup()
	// The sign-ups' verification mails go out through the outbox, as in
	// production; without a relay they would fill it and refuse sign-ups.
	stopMail := app.StartMail(ctx, logger)
	mailRunning := true
	defer func() {
		if mailRunning {
			stopMail()
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: app.Handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	base := "http://" + ln.Addr().String()

	transport := &http.Transport{
		MaxIdleConns:        2 * max(o.concurrency, o.signInConcurrency),
		MaxIdleConnsPerHost: max(o.concurrency, o.signInConcurrency),
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	defer transport.CloseIdleConnections()
	cookie, err := signUp(ctx, &http.Client{Transport: transport}, base, cfg.SessionCookieName())
	if err != nil {
		return err
	}
	key, err := app.CreateServiceKey(ctx, servicekey.CreateServiceKey{Name: "loadtest", Scopes: []string{"*"}})
	if err != nil {
		return err
	}

	withKey := func(ctx context.Context, path string) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err == nil {
			r.Header.Set("Authorization", "Bearer "+key.Secret)
		}
		return r, err
	}
	client, err := app.RegisterOAuthClient(ctx, oidc.RegisterOAuthClient{Name: "loadtest", Type: "confidential",
		RedirectURIs: []string{"https://rp.example.com/callback"}})
	if err != nil {
		return err
	}
	clientCredentials := func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/auth/oauth2/token", strings.NewReader("grant_type=client_credentials"))
		if err == nil {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.SetBasicAuth(string(client.Client.ID), client.Secret)
		}
		return r, err
	}
	claim, err := jsonRequest(ctx, base+"/api/domains", `{"hostname":"loadtest.example.com"}`)
	if err != nil {
		return err
	}
	claim.Header.Set("Authorization", "Bearer "+key.Secret)
	res, err := (&http.Client{Transport: transport}).Do(claim)
	if err != nil {
		return err
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("claim a domain: status %d", res.StatusCode)
	}

	twoFactor, err := newTOTPSignIns(ctx, &http.Client{Transport: transport}, base, cfg, o)
	if err != nil {
		return err
	}
	passkeys, err := newPasskeySignIns(ctx, &http.Client{Transport: transport}, base, cfg, o)
	if err != nil {
		return err
	}
	federated, err := newFederatedSignIns(ctx, &http.Client{Transport: transport}, app, base, cfg)
	if err != nil {
		return err
	}
	defer federated.stop()
	routes := []struct {
		name        string
		concurrency int
		request     func(ctx context.Context) (*http.Request, error)
		// op, when set, is one iteration of several requests instead.
		op op
	}{
		{"GET /api/auth/get-session", o.concurrency, func(ctx context.Context) (*http.Request, error) {
			r, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/auth/get-session", nil)
			if err == nil {
				r.Header.Set("Cookie", cookie)
			}
			return r, err
		}, nil},
		{"POST /api/auth/sign-in/email", o.signInConcurrency, func(ctx context.Context) (*http.Request, error) {
			return jsonRequest(ctx, base+"/api/auth/sign-in/email", `{"email":"`+email+`","password":"`+password+`"}`)
		}, nil},
		{"GET /api/service-key", o.concurrency, func(ctx context.Context) (*http.Request, error) {
			return withKey(ctx, "/api/service-key")
		}, nil},
		{"GET /api/users?email=", o.concurrency, func(ctx context.Context) (*http.Request, error) {
			return withKey(ctx, "/api/users?email="+url.QueryEscape(email))
		}, nil},
		{"GET /api/domains/by-hostname", o.concurrency, func(ctx context.Context) (*http.Request, error) {
			return withKey(ctx, "/api/domains/by-hostname/loadtest.example.com")
		}, nil},
		{"GET /api/auth/token", o.concurrency, func(ctx context.Context) (*http.Request, error) {
			r, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/auth/token", nil)
			if err == nil {
				r.Header.Set("Cookie", cookie)
			}
			return r, err
		}, nil},
		{"GET /api/auth/jwks", o.concurrency, func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/auth/jwks", nil)
		}, nil},
		{"GET /.well-known/openid-configuration", o.concurrency, func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, base+"/.well-known/openid-configuration", nil)
		}, nil},
		{"POST /api/auth/oauth2/token (client_credentials)", o.concurrency, clientCredentials, nil},
		{"GET /api/auth/ok", o.concurrency, func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/auth/ok", nil)
		}, nil},
		{"sign-in/email + verify-totp", o.signInConcurrency, nil, twoFactor.signIn},
		{"passkey options + verify-authentication", o.signInConcurrency, nil, passkeys.signIn},
		{"sign-in/social + provider + callback", o.signInConcurrency, nil, federated.signIn},
	}
	fmt.Fprintf(stdout, "\nstore=%s\n", name)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	// Routes are padded to one width, so the right-aligned column reads left-aligned.
	fmt.Fprintf(tw, "%-30s\tconcurrency\trequests\trps\tp50\tp99\terrors\t\n", "route")
	for _, rt := range routes {
		if err := ctx.Err(); err != nil {
			return err
		}
		run := rt.op
		if run == nil {
			run = single(rt.request)
		}
		res := drive(ctx, transport, rt.concurrency, o.duration, run)
		fmt.Fprintf(tw, "%-30s\t%d\t%d\t%.0f\t%s\t%s\t%d\t\n", rt.name, rt.concurrency, len(res.latencies),
			float64(len(res.latencies))/res.elapsed.Seconds(), round(res.percentile(0.50)), round(res.percentile(0.99)), res.errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	federated.report(stdout, app)

	// Webhook delivery latency, from commit to the receiver: the jobs
	// (fan-out and sender among them) run as in a served instance. They
	// include the mail relay, so the one started above stops first.
	stopMail()
	mailRunning = false
	stopJobs := app.StartJobs(ctx, logger)
	defer stopJobs()
	// The timed routes left events behind (a session.created per sign-in):
	// time the steady state, once the relays have drained them.
	drained := time.Now()
	backlog, err := drainEvents(ctx, app)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "outbox: %d events left by the routes above drained in %s\n", backlog, round(time.Since(drained)))
	hooks, err := webhookLatency(ctx, &http.Client{Transport: transport}, base, key.Secret, webhookEvents, 20*time.Millisecond)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "webhook delivery (user.created, commit to receiver, %d events): p50 %s, p99 %s\n",
		len(hooks.latencies), round(hooks.percentile(0.50)), round(hooks.percentile(0.99)))
	return nil
}

// webhookEvents is how many events the webhook latency run times.
const webhookEvents = 200

func jsonRequest(ctx context.Context, u, body string) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err == nil {
		r.Header.Set("Content-Type", "application/json")
	}
	return r, err
}

// signUp creates the run's user and returns its session cookie as a Cookie
// header value.
func signUp(ctx context.Context, c *http.Client, base, cookieName string) (string, error) {
	return signUpAs(ctx, c, base, cookieName, email)
}

// result is what one route's run measured.
type result struct {
	latencies []time.Duration // sorted
	errors    int
	elapsed   time.Duration
}

// percentile returns the latency below which a fraction p of the requests
// finished (nearest rank).
func (r result) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(p*float64(len(r.latencies))+0.5) - 1
	return r.latencies[min(max(i, 0), len(r.latencies)-1)]
}

// drive sends requests from concurrency clients until d has passed. Each
// worker records every latency in its own preallocated slice, so timing
// takes no lock; the slices are merged and sorted at the end.
func drive(ctx context.Context, transport http.RoundTripper, concurrency int, d time.Duration, run op) result {
	type worker struct {
		latencies []time.Duration
		errors    int
	}
	workers := make([]worker, concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i := range workers {
		w := &workers[i]
		w.latencies = make([]time.Duration, 0, 1<<14)
		wg.Go(func() {
			client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(deadline) {
					return
				}
				ok, done := run(ctx, client)
				if done {
					return
				}
				w.latencies = append(w.latencies, time.Since(t0))
				if !ok {
					w.errors++
				}
			}
		})
	}
	wg.Wait()
	var res result
	res.elapsed = time.Since(start)
	for _, w := range workers {
		res.latencies = append(res.latencies, w.latencies...)
		res.errors += w.errors
	}
	slices.Sort(res.latencies)
	return res
}

// op is one timed iteration: it reports whether it succeeded, or done when
// there is nothing left to do (it is then not counted).
type op func(ctx context.Context, c *http.Client) (ok, done bool)

// single is the op of one request.
func single(request func(context.Context) (*http.Request, error)) op {
	return func(ctx context.Context, c *http.Client) (bool, bool) { return do(ctx, c, request), false }
}

// do sends one request and reads the whole answer, so the connection is
// reused. It reports whether the answer was a 2xx.
func do(ctx context.Context, c *http.Client, request func(context.Context) (*http.Request, error)) bool {
	r, err := request(ctx)
	if err != nil {
		return false
	}
	res, err := c.Do(r)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode >= 200 && res.StatusCode < 300
}

// round keeps three significant figures or so: 1.234567ms prints as 1.235ms.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Microsecond)
	default:
		return d.Round(100 * time.Nanosecond)
	}
}
