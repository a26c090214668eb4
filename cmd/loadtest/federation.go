package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/bootstrap"
)

// federatedSignIns is the sign-in through an upstream OpenID provider: a
// second Gatehouse, in memory, on its own loopback port. One iteration is
// sign-in/social at the service, the provider's authorization (already
// signed in there: a 302 back with a code), and the callback, which redeems
// the code, verifies the ID token against the provider's key set and starts
// a session. The callback's own latency is kept apart, for its cost alone.
type federatedSignIns struct {
	base, configured string // the service's listener, and its configured base URL
	upstreamSession  string // the Cookie header of the user signed in at the provider
	stop             func()

	mu        sync.Mutex
	callbacks []time.Duration
	failures  []string // the first few, for the report
}

func newFederatedSignIns(ctx context.Context, c *http.Client, app *bootstrap.App, base string, cfg bootstrap.Config) (*federatedSignIns, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	upBase := "http://" + ln.Addr().String()
	var secret [32]byte
	for i := range secret {
		secret[i] = byte(i*7 + 3)
	}
	env := map[string]string{"GATEHOUSE_BASE_URL": upBase, "GATEHOUSE_SECRET": hex.EncodeToString(secret[:]) + "-upstream",
		"GATEHOUSE_RATE_LIMIT": "off", "GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "false", "GATEHOUSE_LOG_LEVEL": "error",
		"GATEHOUSE_COOKIE_PREFIX": "upstream", "GATEHOUSE_DATA_DIR": os.TempDir()}
	upCfg, err := bootstrap.LoadConfig("loadtest upstream", nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	up, cleanup, err := bootstrap.InitializeMemory(upCfg, bootstrap.NewLogger(upCfg, os.Stderr))
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	srv := &http.Server{Handler: up.Handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	f := &federatedSignIns{base: base, configured: strings.TrimRight(cfg.HTTP.BaseURL, "/"), stop: func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		cleanup()
	}}
	fail := func(err error) (*federatedSignIns, error) { f.stop(); return nil, err }
	// A user whose address the provider has verified: Gatehouse makes no
	// user of an unverified upstream address.
	if f.upstreamSession, err = verifiedUpstreamUser(ctx, c, up, upBase, upCfg.SessionCookieName()); err != nil {
		return fail(fmt.Errorf("upstream user: %w", err))
	}
	client, err := up.RegisterOAuthClient(ctx, oidc.RegisterOAuthClient{Name: "loadtest", Type: "confidential", FirstParty: true,
		RedirectURIs: []string{f.configured + "/api/auth/callback/upstream"}})
	if err != nil {
		return fail(err)
	}
	preset, issuer, clientID := "oidc", upBase+"/api/auth", string(client.Client.ID)
	if _, err := app.PutIdentityProvider(ctx, federation.ProviderInput{ID: "upstream", Preset: &preset, Issuer: &issuer, ClientID: &clientID,
		ClientSecret: client.Secret}); err != nil {
		return fail(err)
	}
	return f, nil
}

// verifiedUpstreamUser creates a verified user at the provider through its
// trusted API, signs them in, and returns the session's Cookie header.
func verifiedUpstreamUser(ctx context.Context, c *http.Client, up *bootstrap.App, base, cookieName string) (string, error) {
	key, err := up.CreateServiceKey(ctx, servicekey.CreateServiceKey{Name: "loadtest", Scopes: []string{"users:write"}})
	if err != nil {
		return "", err
	}
	r, err := jsonRequest(ctx, base+"/api/users", `{"email":"federated@example.com","name":"Federated","password":"`+password+`","emailVerified":true}`)
	if err != nil {
		return "", err
	}
	r.Header.Set("Authorization", "Bearer "+key.Secret)
	res, err := c.Do(r)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("create the user: %d", res.StatusCode)
	}
	if r, err = jsonRequest(ctx, base+"/api/auth/sign-in/email", `{"email":"federated@example.com","password":"`+password+`"}`); err != nil {
		return "", err
	}
	if res, err = c.Do(r); err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.Name == cookieName {
			return ck.Name + "=" + ck.Value, nil
		}
	}
	return "", fmt.Errorf("sign-in at the provider: %d, no session cookie", res.StatusCode)
}

// signIn is one federated sign-in.
func (f *federatedSignIns) signIn(ctx context.Context, c *http.Client) (bool, bool) {
	err := f.run(ctx, c)
	if err != nil && ctx.Err() == nil {
		f.mu.Lock()
		if len(f.failures) < 3 {
			f.failures = append(f.failures, err.Error())
		}
		f.mu.Unlock()
	}
	return err == nil, false
}

func (f *federatedSignIns) run(ctx context.Context, c *http.Client) error {
	r, err := jsonRequest(ctx, f.base+"/api/auth/sign-in/social", `{"provider":"upstream","callbackURL":"/account"}`)
	if err != nil {
		return err
	}
	res, err := c.Do(r)
	if err != nil {
		return err
	}
	var started struct {
		URL string `json:"url"`
	}
	err = json.NewDecoder(res.Body).Decode(&started)
	_ = res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || started.URL == "" {
		return fmt.Errorf("sign-in/social: %d %v", res.StatusCode, err)
	}
	var state []string
	for _, ck := range res.Cookies() {
		state = append(state, ck.Name+"="+ck.Value)
	}
	// The provider: signed in already, it answers with the callback.
	loc, err := f.redirect(ctx, c, started.URL, f.upstreamSession)
	if err != nil {
		return err
	}
	// The callback, on the service's listener (its configured base URL is
	// another port).
	callback := strings.Replace(loc, f.configured, f.base, 1)
	t0 := time.Now()
	end, err := f.redirect(ctx, c, callback, strings.Join(state, "; "))
	if err != nil {
		return err
	}
	if u, _ := url.Parse(end); u == nil || u.Path != "/account" || u.Query().Get("error") != "" {
		return fmt.Errorf("the callback ended at %s", end)
	}
	f.mu.Lock()
	f.callbacks = append(f.callbacks, time.Since(t0))
	f.mu.Unlock()
	return nil
}

// redirect GETs target with cookie and returns its redirect's Location.
func (f *federatedSignIns) redirect(ctx context.Context, c *http.Client, target, cookie string) (string, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return "", err
	}
	r.Header.Set("Cookie", cookie)
	nc := *c
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := nc.Do(r)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusFound && res.StatusCode != http.StatusSeeOther {
		return "", fmt.Errorf("GET %s: %d", target, res.StatusCode)
	}
	loc := res.Header.Get("Location")
	if loc == "" {
		return "", errors.New("no Location")
	}
	return loc, nil
}

// report prints the callback's own latency and the key set's cache.
func (f *federatedSignIns) report(w io.Writer, app *bootstrap.App) {
	f.mu.Lock()
	lat := slices.Clone(f.callbacks)
	f.mu.Unlock()
	slices.Sort(lat)
	r := result{latencies: lat}
	verified, fetched := app.UpstreamKeySetStats()
	hit := 0.0
	if verified > 0 {
		hit = 100 * (1 - float64(fetched)/float64(verified))
	}
	fmt.Fprintf(w, "  callback alone (code exchange + ID-token verification + session): %d callbacks, p50 %s, p99 %s\n",
		len(lat), round(r.percentile(0.50)), round(r.percentile(0.99)))
	fmt.Fprintf(w, "  upstream key set: %d ID tokens verified, %d key-set fetches: %.3f%% cache hits\n", verified, fetched, hit)
	for _, e := range f.failures {
		fmt.Fprintf(w, "  a failed federated sign-in: %s\n", e)
	}
}
