package test

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
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/adapters/mailer/smtptest"
	"github.com/gatehouse/gatehouse/bootstrap"
)

// fwApp is a Gatehouse whose base URL is its own address, so that the links
// it mails lead back to it, with the SMTP server it mails through.
type fwApp struct {
	*testApp
	Store       store
	Cfg         bootstrap.Config
	Mail        *smtptest.Server
	DatabaseURL string // "" on the memory store
}

// fwQuick is the environment of tests that sign in often and need no
// verification step: no rate limits, sign-up signs in.
var fwQuick = map[string]string{"GATEHOUSE_RATE_LIMIT": "off", "GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "false"}

// fwEnv merges environments, later ones winning.
func fwEnv(envs ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, e := range envs {
		maps.Copy(out, e)
	}
	return out
}

// mustStartFramework starts Gatehouse on s, serving on a loopback port that
// is also its base URL (unless env sets GATEHOUSE_BASE_URL), mailing through
// a fresh smtptest server, on a fresh database (unless env sets
// GATEHOUSE_DATABASE_URL, such as another app's DatabaseURL).
func mustStartFramework(t testing.TB, s store, env map[string]string) *fwApp {
	t.Helper()
	return mustStartFrameworkWith(t, s, env, bootstrap.InitializeMemory)
}

// mustStartFrameworkWith is mustStartFramework wiring the memory store with
// initMemory (an injector taking fakes, say).
func mustStartFrameworkWith(t testing.TB, s store, env map[string]string,
	initMemory func(bootstrap.Config, *slog.Logger) (*bootstrap.App, func(), error)) *fwApp {
	t.Helper()
	dbURL := env["GATEHOUSE_DATABASE_URL"]
	switch {
	case s == storeMemory:
		dbURL = ""
	case dbURL != "":
	case s == storeSQLite:
		dbURL = string(gormtest.SQLiteURL(t))
	case s == storePostgres:
		dbURL = string(postgresURL(t)) // skips without a server
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	mail := smtptest.Start(t)
	full := fwEnv(map[string]string{
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
	cfg := mustConfig(t, full)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var (
		app     *bootstrap.App
		cleanup func()
	)
	if s == storeMemory {
		app, cleanup, err = initMemory(cfg, logger)
	} else {
		cfg.Database.URL = dbURL
		app, cleanup, err = bootstrap.InitializeSQL(t.Context(), cfg, logger)
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
	return &fwApp{testApp: &testApp{Server: srv, App: app, Logs: logs}, Store: s, Cfg: cfg, Mail: mail, DatabaseURL: dbURL}
}

// fwForStores runs fn in parallel against a fresh app with env on each of stores.
func fwForStores(t *testing.T, stores []store, env map[string]string, fn func(t *testing.T, app *fwApp)) {
	t.Helper()
	for _, s := range stores {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			fn(t, mustStartFramework(t, s, env))
		})
	}
}

// fwClient is a browser-like client: it keeps the cookies it is given, sends
// them back, sends Origin on POSTs and never follows redirects.
type fwClient struct {
	t       testing.TB
	app     *fwApp
	Origin  string            // sent on POSTs when not empty
	Cookies map[string]string // name → raw value, as the server set it
	http    *http.Client
}

// client returns a client without cookies whose Origin is the base URL.
func (a *fwApp) client(t testing.TB) *fwClient {
	hc := *a.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &fwClient{t: t, app: a, Origin: a.Cfg.HTTP.BaseURL, Cookies: map[string]string{}, http: &hc}
}

// clone returns a client holding a copy of c's cookies: the same browser,
// replayed later.
func (c *fwClient) clone() *fwClient {
	d := *c
	d.Cookies = maps.Clone(c.Cookies)
	return &d
}

// do sends a request. Header pairs follow the body; an empty value removes
// a header the client would send (Origin, Cookie, Content-Type). path may be
// an absolute URL (a link from a mail).
func (c *fwClient) do(method, path, body string, headers ...string) *response {
	c.t.Helper()
	target := path
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		target = c.app.URL + path
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, target, rd)
	if err != nil {
		c.t.Fatal(err)
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
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, ck := range res.Cookies() {
		if ck.MaxAge < 0 || ck.Value == "" {
			delete(c.Cookies, ck.Name)
		} else {
			c.Cookies[ck.Name] = ck.Value
		}
	}
	return &response{Status: res.StatusCode, Header: res.Header, Body: b}
}

func (c *fwClient) post(path, body string, headers ...string) *response {
	c.t.Helper()
	return c.do(http.MethodPost, path, body, headers...)
}

func (c *fwClient) get(path string, headers ...string) *response {
	c.t.Helper()
	return c.do(http.MethodGet, path, "", headers...)
}

// mustJSON encodes v as a request body.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustCredentials returns a sign-in body.
func mustCredentials(t testing.TB, email, password string) string {
	t.Helper()
	return mustJSON(t, map[string]any{"email": email, "password": password})
}

// mustCode fails unless r is a framework error with status and code, and
// returns its message.
func mustCode(t testing.TB, r *response, status int, code string) string {
	t.Helper()
	mustStatus(t, r, status)
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

// mustOK fails unless r is a 200 with a JSON object, and returns it.
func mustOK(t testing.TB, r *response) map[string]any {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	return r.JSON(t)
}

// mustNull fails unless r is 200 with the JSON body null.
func mustNull(t testing.TB, r *response) {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	if got := string(bytes.TrimSpace(r.Body)); got != "null" {
		t.Fatalf("body = %s, want null", r.Body)
	}
}

// mustSignUp signs up through c and returns the answer's body.
func mustSignUp(t testing.TB, c *fwClient, name, email, password string) map[string]any {
	t.Helper()
	return mustOK(t, c.post("/api/auth/sign-up/email", mustJSON(t, map[string]any{"name": name, "email": email, "password": password})))
}

// mustSignIn signs in through c and returns the session token.
func mustSignIn(t testing.TB, c *fwClient, email, password string) string {
	t.Helper()
	body := mustOK(t, c.post("/api/auth/sign-in/email", mustCredentials(t, email, password)))
	token, _ := body["token"].(string)
	if len(token) != 32 {
		t.Fatalf("sign-in token = %v, want 32 characters", body["token"])
	}
	return token
}

// mustSession returns c's session ({session, user}), failing when signed out.
func mustSession(t testing.TB, c *fwClient) map[string]any {
	t.Helper()
	r := c.get("/api/auth/get-session")
	mustStatus(t, r, http.StatusOK)
	if string(bytes.TrimSpace(r.Body)) == "null" {
		t.Fatal("get-session = null, want a session")
	}
	return r.JSON(t)
}

// mustUser returns the user object of a get-session answer.
func mustUser(t testing.TB, s map[string]any) map[string]any {
	t.Helper()
	u, ok := s["user"].(map[string]any)
	if !ok {
		t.Fatalf("no user in %v", s)
	}
	return u
}

// mustNoSession fails unless c is signed out.
func mustNoSession(t testing.TB, c *fwClient) {
	t.Helper()
	mustNull(t, c.get("/api/auth/get-session"))
}

// mustSignInFails fails unless signing in with email and password is refused.
func mustSignInFails(t testing.TB, app *fwApp, email, password string) {
	t.Helper()
	mustCode(t, app.client(t).post("/api/auth/sign-in/email", mustCredentials(t, email, password)), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
}

// signCookie is Better Auth's signed cookie value for token, computed here
// independently of the implementation: encodeURIComponent(token + "." +
// base64std(HMAC-SHA256(secret, token))).
func signCookie(token, secret string) (raw, encoded string) {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(token))
	raw = token + "." + base64.StdEncoding.EncodeToString(m.Sum(nil))
	// For [A-Za-z0-9.+/=] QueryEscape escapes exactly as encodeURIComponent.
	return raw, url.QueryEscape(raw)
}

// setCookies parses the Set-Cookie headers of r by name.
func setCookies(r *response) map[string]*http.Cookie {
	out := map[string]*http.Cookie{}
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		out[c.Name] = c
	}
	return out
}

// rawSetCookie returns the Set-Cookie line for name, or "".
func rawSetCookie(r *response, name string) string {
	for _, line := range r.Header.Values("Set-Cookie") {
		if strings.HasPrefix(line, name+"=") {
			return line
		}
	}
	return ""
}

// jsDatePattern is how Better Auth (JavaScript's Date.toJSON) writes dates.
var jsDatePattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// mustJSDates fails unless every named field of obj is a JavaScript date.
func mustJSDates(t testing.TB, obj map[string]any, fields ...string) {
	t.Helper()
	for _, f := range fields {
		s, _ := obj[f].(string)
		if !jsDatePattern.MatchString(s) {
			t.Fatalf("%s = %v, want a date like 2026-01-02T03:04:05.678Z", f, obj[f])
		}
	}
}

// mailWait bounds how long a mail may take through the queue.
const mailWait = 10 * time.Second

// mustLink waits for a mail to to whose subject contains subject and returns
// its only link.
func mustLink(t testing.TB, app *fwApp, to, subject string) string {
	t.Helper()
	m := app.Mail.WaitFor(t, to, subject, mailWait)
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

// mustNoMail fails if a mail to to whose subject contains subject arrives
// within a short wait (the queue delivers in the background).
func mustNoMail(t testing.TB, app *fwApp, to, subject string) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	for _, m := range app.Mail.Messages() {
		if m.IsTo(to) && strings.Contains(m.Subject, subject) {
			t.Fatalf("unexpected mail to %s: %q", to, m.Subject)
		}
	}
}

// mustDB opens the app's SQL database directly, as an operator would.
func mustDB(t testing.TB, app *fwApp) *gorm.DB {
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

// mustUnmarshal decodes a JSON body into v.
func mustUnmarshal(t testing.TB, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
}

// commonPasswordsFile returns the embedded list of common passwords, read
// from the source tree.
func commonPasswordsFile() (string, error) {
	b, err := os.ReadFile(filepath.Join("..", "adapters", "blocklist", "common-passwords.txt"))
	return string(b), err
}
