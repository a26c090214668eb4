package harness

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/adapters/mailer/smtptest"
	"github.com/gatehouse/gatehouse/adapters/passwordhash"
	"github.com/gatehouse/gatehouse/bootstrap"
)

// App is a running Gatehouse whose base URL is its own address, so that the
// links it mails lead back to it, with what it logged, its clock and the
// SMTP server it mails through.
type App struct {
	*httptest.Server
	App  *bootstrap.App
	Logs *SyncBuffer
	// Clock is the application's clock, which the test advances to see
	// time pass (the Clock type says what it drives and what not).
	Clock       *Clock
	Store       Store
	Cfg         bootstrap.Config
	Mail        *smtptest.Server
	DatabaseURL string // "" on the memory store

	admin *adminAccount // MustAdmin's, once signed up (nil: an App not started here)
}

// FwQuick is the environment of tests that sign in often and need no
// verification step: no rate limits, sign-up signs in.
var FwQuick = map[string]string{"GATEHOUSE_RATE_LIMIT": "off", "GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "false"}

// Env merges environments, later ones winning.
func Env(envs ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, e := range envs {
		maps.Copy(out, e)
	}
	return out
}

// MustStart starts Gatehouse on s, serving on a loopback port that
// is also its base URL (unless env sets GATEHOUSE_BASE_URL), mailing through
// a fresh smtptest server, on a fresh database (unless env sets
// GATEHOUSE_DATABASE_URL, such as another app's DatabaseURL). Its clock
// (App.Clock) is a new one, or the clock of the app already started on the
// same database: instances of one database share a clock, as replicas share
// the wall clock.
func MustStart(t testing.TB, s Store, env map[string]string) *App {
	t.Helper()
	return MustStartWith(t, s, env, bootstrap.Fakes{})
}

// TestHashing are the argon2id costs the black-box applications hash with
// (bootstrap.Fakes.PasswordHashing): a mebibyte and one pass, not
// production's 19 MiB and two, which hundreds of sign-ups paid in the
// suite's time and memory for nothing the tests of hashing don't prove.
var TestHashing = passwordhash.Params{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}

// ProductionHashing, merged into an application's environment, has it hash
// at production's costs: for the tests of hashing itself (its memory bound,
// the parameters stored) and of timing (the enumeration statistics).
var ProductionHashing = map[string]string{productionHashing: "on"}

// productionHashing is the harness's own key in an environment; the
// configuration never reads it.
const productionHashing = "harness: production password hashing"

// databaseClocks holds the clock of each database an app was started on
// (by its URL), for the next app started on it.
var databaseClocks sync.Map

// MustStartWith is MustStart wired with fakes (the faults
// of the atomicity tests, say); the clock is the harness's, whatever
// fakes.Clock says.
func MustStartWith(t testing.TB, s Store, env map[string]string, fakes bootstrap.Fakes) *App {
	t.Helper()
	dbURL := env["GATEHOUSE_DATABASE_URL"]
	switch {
	case s == StoreMemory:
		dbURL = ""
	case dbURL != "":
	case s == StoreSQLite:
		dbURL = string(gormtest.SQLiteURL(t))
	case s == StorePostgres:
		dbURL = string(PostgresURL(t)) // skips without a server
	}
	clock := NewClock()
	if dbURL != "" {
		if shared, loaded := databaseClocks.LoadOrStore(dbURL, clock); loaded {
			clock = shared.(*Clock)
		} else {
			t.Cleanup(func() { databaseClocks.Delete(dbURL) })
		}
	}
	fakes.Clock = clock
	if fakes.PasswordHashing == nil && env[productionHashing] == "" {
		fakes.PasswordHashing = &TestHashing
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	mail := smtptest.Start(t)
	full := Env(map[string]string{
		"GATEHOUSE_BASE_URL":  "http://" + ln.Addr().String(),
		"GATEHOUSE_SMTP_HOST": mail.Host(),
		"GATEHOUSE_SMTP_PORT": strconv.Itoa(mail.Port()),
		"GATEHOUSE_SMTP_TLS":  "none",
		"GATEHOUSE_MAIL_FROM": "Gatehouse <no-reply@example.com>",
	}, env)
	// {port} in a value is the listener's port: a base URL on localhost
	// (which a browser accepts as a WebAuthn RP ID) on the same server.
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for k, v := range full {
		full[k] = strings.ReplaceAll(v, "{port}", port)
	}
	cfg := MustConfig(t, full)
	logs := &SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var (
		app     *bootstrap.App
		cleanup func()
	)
	if s == StoreMemory {
		app, cleanup, err = bootstrap.InitializeMemoryWithFakes(cfg, logger, fakes)
	} else {
		cfg.Database.URL = dbURL
		app, cleanup, err = bootstrap.InitializeSQLWithFakes(t.Context(), cfg, logger, fakes)
	}
	if err != nil {
		t.Fatalf("start on %s: %v", s, err)
	}
	srv := httptest.NewUnstartedServer(app.Handler)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	stopMail := app.StartMail(context.Background(), logger)
	t.Cleanup(func() { srv.Close(); stopMail(); cleanup() })
	return &App{Server: srv, App: app, Logs: logs, Clock: clock, Store: s, Cfg: cfg, Mail: mail, DatabaseURL: dbURL, admin: &adminAccount{}}
}

// ForStores runs fn in parallel against a fresh app with env on each of stores.
func ForStores(t *testing.T, stores []Store, env map[string]string, fn func(t *testing.T, app *App)) {
	t.Helper()
	for _, s := range stores {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			fn(t, MustStart(t, s, env))
		})
	}
}

// Client is a browser-like client: it keeps the cookies it is given, sends
// them back, sends Origin on POSTs and never follows redirects.
type Client struct {
	T       testing.TB
	App     *App
	Origin  string            // sent on POSTs when not empty
	Cookies map[string]string // name → raw value, as the server set it
	HTTP    *http.Client
}

// Do sends one request as a script or a backend would: no Origin, no
// cookies, no redirect followed (a client of its own: Bare). Header pairs
// follow the body.
func (a *App) Do(t testing.TB, method, path, body string, headers ...string) *Response {
	t.Helper()
	return a.Bare(t).Do(method, path, body, headers...)
}

// Bare returns a client without cookies or Origin.
func (a *App) Bare(t testing.TB) *Client {
	c := a.NewClient(t)
	c.Origin = ""
	return c
}

// NewClient returns a client without cookies whose Origin is the base URL.
func (a *App) NewClient(t testing.TB) *Client {
	hc := *a.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{T: t, App: a, Origin: a.Cfg.HTTP.BaseURL, Cookies: map[string]string{}, HTTP: &hc}
}

// clone returns a client holding a copy of c's cookies: the same browser,
// replayed later.
func (c *Client) Clone() *Client {
	d := *c
	d.Cookies = maps.Clone(c.Cookies)
	return &d
}

// Do sends a request. Header pairs follow the body; an empty value removes
// a header the client would send (Origin, Cookie, Content-Type). path may be
// an absolute URL (a link from a mail).
func (c *Client) Do(method, path, body string, headers ...string) *Response {
	c.T.Helper()
	target := path
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		target = c.App.URL + path
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(c.T.Context(), method, target, rd)
	if err != nil {
		c.T.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if method == http.MethodPost && c.Origin != "" {
		req.Header.Set("Origin", c.Origin)
	}
	if len(c.Cookies) > 0 {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(c.Cookies)) {
			parts = append(parts, name+"="+c.Cookies[name])
		}
		req.Header.Set("Cookie", strings.Join(parts, "; "))
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.T.Fatal(err)
	}
	for _, ck := range res.Cookies() {
		if ck.MaxAge < 0 || ck.Value == "" {
			delete(c.Cookies, ck.Name)
		} else {
			c.Cookies[ck.Name] = ck.Value
		}
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

func (c *Client) Post(path, body string, headers ...string) *Response {
	c.T.Helper()
	return c.Do(http.MethodPost, path, body, headers...)
}

func (c *Client) Get(path string, headers ...string) *Response {
	c.T.Helper()
	return c.Do(http.MethodGet, path, "", headers...)
}

// MustJSON encodes v as a request body.
func MustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// MustCredentials returns a sign-in body.
func MustCredentials(t testing.TB, email, password string) string {
	t.Helper()
	return MustJSON(t, map[string]any{"email": email, "password": password})
}

// MustCode fails unless r is a framework error with status and code, and
// returns its message.
func MustCode(t testing.TB, r *Response, status int, code string) string {
	t.Helper()
	MustStatus(t, r, status)
	var body struct {
		Message *string `json:"message"`
		Code    string  `json:"code"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || body.Message == nil {
		t.Fatalf("body is not {message, code}: %s", r.Body)
	}
	if body.Code != code {
		t.Fatalf("code = %q, want %q; body: %s", body.Code, code, r.Body)
	}
	return *body.Message
}

// MustOK fails unless r is a 200 with a JSON object, and returns it.
func MustOK(t testing.TB, r *Response) map[string]any {
	t.Helper()
	MustStatus(t, r, http.StatusOK)
	return r.JSON(t)
}

// MustNull fails unless r is 200 with the JSON body null.
func MustNull(t testing.TB, r *Response) {
	t.Helper()
	MustStatus(t, r, http.StatusOK)
	if got := string(bytes.TrimSpace(r.Body)); got != "null" {
		t.Fatalf("body = %s, want null", r.Body)
	}
}

// MustSignUp signs up through c and returns the answer's body.
func MustSignUp(t testing.TB, c *Client, name, email, password string) map[string]any {
	t.Helper()
	return MustOK(t, c.Post("/api/auth/sign-up/email", MustJSON(t, map[string]any{"name": name, "email": email, "password": password})))
}

// MustSignIn signs in through c and returns the session token.
func MustSignIn(t testing.TB, c *Client, email, password string) string {
	t.Helper()
	body := MustOK(t, c.Post("/api/auth/sign-in/email", MustCredentials(t, email, password)))
	token, _ := body["token"].(string)
	if len(token) != 32 {
		t.Fatalf("sign-in token = %v, want 32 characters", body["token"])
	}
	return token
}

// MustSession returns c's session ({session, user}), failing when signed out.
func MustSession(t testing.TB, c *Client) map[string]any {
	t.Helper()
	r := c.Get("/api/auth/get-session")
	MustStatus(t, r, http.StatusOK)
	if string(bytes.TrimSpace(r.Body)) == "null" {
		t.Fatal("get-session = null, want a session")
	}
	return r.JSON(t)
}

// MustUser returns the user object of a get-session answer.
func MustUser(t testing.TB, s map[string]any) map[string]any {
	t.Helper()
	u, ok := s["user"].(map[string]any)
	if !ok {
		t.Fatalf("no user in %v", s)
	}
	return u
}

// MustNoSession fails unless c is signed out.
func MustNoSession(t testing.TB, c *Client) {
	t.Helper()
	MustNull(t, c.Get("/api/auth/get-session"))
}

// MustSignInFails fails unless signing in with email and password is refused.
func MustSignInFails(t testing.TB, app *App, email, password string) {
	t.Helper()
	MustCode(t, app.NewClient(t).Post("/api/auth/sign-in/email", MustCredentials(t, email, password)), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
}

// SignCookie is Better Auth's signed cookie value for token, computed here
// independently of the implementation: encodeURIComponent(token + "." +
// base64std(HMAC-SHA256(secret, token))).
func SignCookie(token, secret string) (raw, encoded string) {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(token))
	raw = token + "." + base64.StdEncoding.EncodeToString(m.Sum(nil))
	// For [A-Za-z0-9.+/=] QueryEscape escapes exactly as encodeURIComponent.
	return raw, url.QueryEscape(raw)
}

// SetCookies parses the Set-Cookie headers of r by name.
func SetCookies(r *Response) map[string]*http.Cookie {
	out := map[string]*http.Cookie{}
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		out[c.Name] = c
	}
	return out
}

// RawSetCookie returns the Set-Cookie line for name, or "".
func RawSetCookie(r *Response, name string) string {
	for _, line := range r.Header.Values("Set-Cookie") {
		if strings.HasPrefix(line, name+"=") {
			return line
		}
	}
	return ""
}

// jsDatePattern is how Better Auth (JavaScript's Date.toJSON) writes dates.
var jsDatePattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// MustJSDates fails unless every named field of obj is a JavaScript date.
func MustJSDates(t testing.TB, obj map[string]any, fields ...string) {
	t.Helper()
	for _, f := range fields {
		s, _ := obj[f].(string)
		if !jsDatePattern.MatchString(s) {
			t.Fatalf("%s = %v, want a date like 2026-01-02T03:04:05.678Z", f, obj[f])
		}
	}
}

// MailWait bounds how long a mail may take through the queue.
const MailWait = 10 * time.Second

// MustLink waits for a mail to to whose subject contains subject and returns
// its only link.
func MustLink(t testing.TB, app *App, to, subject string) string {
	t.Helper()
	m := app.Mail.WaitFor(t, to, subject, MailWait)
	links := m.Links()
	if len(links) != 1 {
		t.Fatalf("mail %q has links %v, want one", m.Subject, links)
	}
	// The link leads to the base URL: the app's own address, or the
	// name it goes by (localhost:{port}).
	if base := app.Cfg.HTTP.BaseURL; !strings.HasPrefix(links[0], base+"/api/auth/") {
		t.Fatalf("link %q does not lead to %s", links[0], base)
	}
	return links[0]
}

// MustNoMail fails if a mail to to whose subject contains subject arrives
// within a short wait (the queue delivers in the background).
func MustNoMail(t testing.TB, app *App, to, subject string) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	for _, m := range app.Mail.Messages() {
		if m.IsTo(to) && strings.Contains(m.Subject, subject) {
			t.Fatalf("unexpected mail to %s: %q", to, m.Subject)
		}
	}
}

// MustDB opens the app's SQL database directly, as an operator would.
func MustDB(t testing.TB, app *App) *gorm.DB {
	t.Helper()
	if app.DatabaseURL == "" {
		t.Fatal("mustDB: the memory store has no database")
	}
	db, err := gormstore.Connect(gormstore.DatabaseURL(app.DatabaseURL), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	return db
}

// MustUnmarshal decodes a JSON body into v.
func MustUnmarshal(t testing.TB, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}
