package harness

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Federation against a programmable upstream: a small OpenID provider (and
// a GitHub look-alike) on loopback that the test tells how to misbehave,
// so that every refusal of Gatehouse A can be asserted exactly: the
// callback's ?error= code, no session, nothing linked. The upstream also
// checks A's side of the protocol (PKCE S256, the nonce, client
// authentication, redirect URI, a code redeemed once) and fails the test
// when A breaks it.

// The client registration of A at the fake upstream. The secret has
// characters that RFC 6749 §2.3.1 form-encodes before HTTP Basic.
const (
	fuClientID     = "gatehouse-a"
	fuClientSecret = "s3cret/with+special:chars"
	fuKeyID        = "fu-1"
)

// FuKeys are the fake upstream's signing key (published) and a stranger's
// (never published), made once: RSA key generation is slow.
var FuKeys = sync.OnceValue(func() [2]*rsa.PrivateKey {
	var out [2]*rsa.PrivateKey
	for i := range out {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		out[i] = k
	}
	return out
})

// FuSign signs claims with key as a compact RS256 JWS naming kid fuKeyID.
func FuSign(t testing.TB, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: fuKeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// fuS256 is the PKCE challenge of verifier (RFC 7636 §4.2), computed here
// independently of Gatehouse.
func fuS256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// FuGitHubEmail is an entry of GitHub's GET /user/emails.
type FuGitHubEmail struct {
	Email    string `json:"email"`
	Primary  bool   `json:"primary"`
	Verified bool   `json:"verified"`
}

// FuUser is the person the fake upstream signs in next.
type FuUser struct {
	Sub           string
	Email         string
	EmailVerified bool
	// Name is in the ID token; UserinfoName only in userinfo (A reads
	// userinfo when the ID token has no name).
	Name         string
	UserinfoName string

	// GitHub: the numeric id, login, the profile's public address ("" is
	// null) and /user/emails.
	GitHubID    int64
	Login       string
	PublicEmail string
	Emails      []FuGitHubEmail
}

// fuGrant is an authorization code the fake issued.
type fuGrant struct {
	user                          FuUser
	redirectURI, challenge, nonce string
}

// FuFake is the programmable upstream. Set its knobs with set before the
// flow that reads them.
type FuFake struct {
	t   testing.TB
	srv *httptest.Server
	URL string

	mu sync.Mutex
	// redirectPrefix is where the fake lets redirect_uri point (A's
	// callbacks).
	redirectPrefix string
	// issInResponse is discovery's authorization_response_iss_parameter_supported.
	IssInResponse bool
	// decoy makes discovery name endpoints under /decoy, which fail the
	// test when called: the provider's overrides must be used instead.
	Decoy bool
	// callbackIss is the callback's iss: "" the fake's issuer (none for
	// GitHub), "-" none, else that value.
	CallbackIss string
	// callbackError makes the authorization answer error=callbackError.
	CallbackError string
	// user is who signs in at the next authorization.
	User FuUser
	// claims edits the ID token's claims; sign signs them (default: RS256
	// with the published key).
	Claims func(m map[string]any)
	Sign   func(m map[string]any) string
	// scope is the token response's scope ("" the usual).
	Scope string

	grants map[string]fuGrant
	tokens map[string]FuUser
	hits   map[string]int
}

// NewFuFake starts a fake upstream whose redirect URIs must be A's callbacks.
func NewFuFake(t testing.TB, a *App) *FuFake {
	t.Helper()
	f := &FuFake{t: t, redirectPrefix: a.URL + "/api/auth/callback/", IssInResponse: true,
		grants: map[string]fuGrant{}, tokens: map[string]FuUser{}, hits: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", f.discovery)
	mux.HandleFunc("GET /jwks", f.jwks)
	mux.HandleFunc("GET /authorize", f.authorize)
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("GET /userinfo", f.userinfo)
	mux.HandleFunc("GET /login/oauth/authorize", f.authorize)
	mux.HandleFunc("POST /login/oauth/access_token", f.token)
	mux.HandleFunc("GET /api/user", f.githubUser)
	mux.HandleFunc("GET /api/user/emails", f.githubEmails)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.t.Errorf("fake upstream: unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	return f
}

// set changes the fake under its lock.
func (f *FuFake) Set(fn func(f *FuFake)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// hit returns how many requests path had.
func (f *FuFake) Hit(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

// refuse fails the test for a protocol error of A's and answers it.
func (f *FuFake) refuse(w http.ResponseWriter, r *http.Request, status int, oauthError, why string) {
	f.t.Errorf("fake upstream: %s %s: %s", r.Method, r.URL.Path, why)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": oauthError})
}

func fuWriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (f *FuFake) discovery(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits[r.URL.Path]++
	ep := f.URL
	if f.Decoy {
		ep += "/decoy"
	}
	fuWriteJSON(w, map[string]any{
		"issuer":                                         f.URL,
		"authorization_endpoint":                         ep + "/authorize",
		"token_endpoint":                                 ep + "/token",
		"userinfo_endpoint":                              ep + "/userinfo",
		"jwks_uri":                                       ep + "/jwks",
		"response_types_supported":                       []string{"code"},
		"subject_types_supported":                        []string{"public"},
		"id_token_signing_alg_values_supported":          []string{"RS256"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic"},
		"code_challenge_methods_supported":               []string{"S256"},
		"authorization_response_iss_parameter_supported": f.IssInResponse,
	})
}

func (f *FuFake) jwks(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hits[r.URL.Path]++
	f.mu.Unlock()
	fuWriteJSON(w, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &FuKeys()[0].PublicKey, KeyID: fuKeyID, Algorithm: "RS256", Use: "sig"}}})
}

// authorize auto-approves: it checks A's request, records the PKCE
// challenge and nonce with a new code, and sends the browser back with
// code, state and (OpenID) iss, or with the error the test asked for.
func (f *FuFake) authorize(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits[r.URL.Path]++
	github := r.URL.Path == "/login/oauth/authorize"
	q := r.URL.Query()
	redirectURI := q.Get("redirect_uri")
	var why string
	switch {
	case q.Get("response_type") != "code":
		why = "response_type is not code"
	case q.Get("client_id") != fuClientID:
		why = "client_id is not A's"
	case !strings.HasPrefix(redirectURI, f.redirectPrefix):
		why = "redirect_uri " + redirectURI + " is not A's callback"
	case len(q.Get("state")) < 16:
		why = "no state, or a short one"
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43:
		why = "no PKCE S256 challenge"
	case !github && q.Get("nonce") == "":
		why = "no nonce"
	case !github && !slices.Contains(strings.Fields(q.Get("scope")), "openid"):
		why = "scope has no openid"
	case github && q.Has("nonce"):
		why = "a nonce sent to GitHub"
	}
	if why != "" {
		f.refuse(w, r, http.StatusBadRequest, "invalid_request", why)
		return
	}
	target, err := url.Parse(redirectURI)
	if err != nil {
		f.refuse(w, r, http.StatusBadRequest, "invalid_request", "redirect_uri is not a URL")
		return
	}
	back := target.Query()
	if f.CallbackError != "" {
		back.Set("error", f.CallbackError)
		back.Set("error_description", "<b>the upstream says no</b>")
	} else {
		code := rand.Text()
		f.grants[code] = fuGrant{user: f.User, redirectURI: redirectURI, challenge: q.Get("code_challenge"), nonce: q.Get("nonce")}
		back.Set("code", code)
	}
	back.Set("state", q.Get("state"))
	if github {
		if f.CallbackIss != "" && f.CallbackIss != "-" {
			back.Set("iss", f.CallbackIss) // GitHub sends none
		}
	} else {
		switch f.CallbackIss {
		case "":
			back.Set("iss", f.URL)
		case "-":
		default:
			back.Set("iss", f.CallbackIss)
		}
	}
	target.RawQuery = back.Encode()
	http.Redirect(w, r, target.String(), http.StatusFound)
}

// token redeems a code once: client_secret_basic for OpenID
// (client_secret_post for GitHub), the same redirect_uri, and a
// code_verifier whose S256 is the challenge. OpenID answers an ID token
// built as the test said.
func (f *FuFake) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits[r.URL.Path]++
	github := r.URL.Path == "/login/oauth/access_token"
	if err := r.ParseForm(); err != nil {
		f.refuse(w, r, http.StatusBadRequest, "invalid_request", "not a form")
		return
	}
	form := r.PostForm
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	switch {
	case github && (basic || form.Get("client_id") != fuClientID || form.Get("client_secret") != fuClientSecret):
		f.refuse(w, r, http.StatusUnauthorized, "invalid_client", "GitHub takes client_secret_post only")
		return
	case !github && (!basic || id != fuClientID || secret != fuClientSecret || form.Has("client_secret")):
		f.refuse(w, r, http.StatusUnauthorized, "invalid_client", "not client_secret_basic with A's credentials")
		return
	case form.Get("grant_type") != "authorization_code":
		f.refuse(w, r, http.StatusBadRequest, "unsupported_grant_type", "grant_type is not authorization_code")
		return
	}
	g, ok := f.grants[form.Get("code")]
	delete(f.grants, form.Get("code"))
	switch {
	case !ok:
		f.refuse(w, r, http.StatusBadRequest, "invalid_grant", "an unknown or used code")
		return
	case form.Get("redirect_uri") != g.redirectURI:
		f.refuse(w, r, http.StatusBadRequest, "invalid_grant", "redirect_uri is not the authorization's")
		return
	case fuS256(form.Get("code_verifier")) != g.challenge:
		f.refuse(w, r, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the challenge")
		return
	}
	access := rand.Text()
	f.tokens[access] = g.user
	if github {
		if !strings.Contains(r.Header.Get("Accept"), "application/json") {
			w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
			_, _ = io.WriteString(w, url.Values{"access_token": {access}, "token_type": {"bearer"}, "scope": {"read:user,user:email"}}.Encode())
			return
		}
		fuWriteJSON(w, map[string]any{"access_token": access, "token_type": "bearer", "scope": "read:user,user:email"})
		return
	}
	claims := f.ClaimsFor(g.user, g.nonce)
	if f.Claims != nil {
		f.Claims(claims)
	}
	sign := f.Sign
	if sign == nil {
		sign = func(m map[string]any) string { return FuSign(f.t, FuKeys()[0], m) }
	}
	scope := f.Scope
	if scope == "" {
		scope = "openid email profile"
	}
	fuWriteJSON(w, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "id_token": sign(claims), "scope": scope})
}

// claimsFor is u's ID token for A, valid for five minutes.
func (f *FuFake) ClaimsFor(u FuUser, nonce string) map[string]any {
	now := time.Now()
	c := map[string]any{"iss": f.URL, "sub": u.Sub, "aud": fuClientID, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	if nonce != "" {
		c["nonce"] = nonce
	}
	if u.Email != "" {
		c["email"], c["email_verified"] = u.Email, u.EmailVerified
	}
	if u.Name != "" {
		c["name"] = u.Name
	}
	return c
}

// bearer returns the user of the request's access token.
func (f *FuFake) bearer(r *http.Request) (FuUser, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return FuUser{}, false
	}
	u, ok := f.tokens[tok]
	return u, ok
}

func (f *FuFake) userinfo(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits[r.URL.Path]++
	u, ok := f.bearer(r)
	if !ok {
		f.refuse(w, r, http.StatusUnauthorized, "invalid_token", "no valid access token")
		return
	}
	name := u.Name
	if name == "" {
		name = u.UserinfoName
	}
	fuWriteJSON(w, map[string]any{"sub": u.Sub, "email": u.Email, "email_verified": u.EmailVerified, "name": name})
}

func (f *FuFake) githubUser(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits[r.URL.Path]++
	u, ok := f.bearer(r)
	if !ok {
		f.refuse(w, r, http.StatusUnauthorized, "bad_credentials", "no valid access token")
		return
	}
	var email any
	if u.PublicEmail != "" {
		email = u.PublicEmail
	}
	var name any
	if u.Name != "" {
		name = u.Name
	}
	fuWriteJSON(w, map[string]any{"id": u.GitHubID, "login": u.Login, "name": name, "email": email,
		"avatar_url": "https://avatars.example/u/" + u.Login})
}

func (f *FuFake) githubEmails(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits[r.URL.Path]++
	u, ok := f.bearer(r)
	if !ok {
		f.refuse(w, r, http.StatusUnauthorized, "bad_credentials", "no valid access token")
		return
	}
	emails := u.Emails
	if emails == nil {
		emails = []FuGitHubEmail{}
	}
	fuWriteJSON(w, emails)
}

// FuBrowser is a browser with a cookie jar that never follows a redirect:
// the test walks each step.
type FuBrowser struct {
	t  testing.TB
	a  *App
	Hc *http.Client
}

func NewFuBrowser(t testing.TB, a *App) *FuBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &FuBrowser{t: t, a: a, Hc: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Do sends a request; a target starting with / is at A. A body is JSON;
// a POST carries A's Origin.
func (b *FuBrowser) Do(method, target, body string, headers ...string) *Response {
	b.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = b.a.URL + target
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(b.t.Context(), method, target, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if method == http.MethodPost {
		req.Header.Set("Origin", b.a.URL)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := b.Hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: raw}
}

// cookie returns the value of A's cookie name in the jar, or "".
func (b *FuBrowser) Cookie(name string) string {
	u, _ := url.Parse(b.a.URL)
	for _, c := range b.Hc.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// signInWithPassword signs the browser in at A.
func (b *FuBrowser) SignInWithPassword(email, password string) {
	b.t.Helper()
	MustOK(b.t, b.Do(http.MethodPost, "/api/auth/sign-in/email", MustCredentials(b.t, email, password)))
}

// session returns the user of the browser's session at A, or nil.
func (b *FuBrowser) Session() map[string]any {
	b.t.Helper()
	r := b.Do(http.MethodGet, "/api/auth/get-session", "")
	MustStatus(b.t, r, http.StatusOK)
	if strings.TrimSpace(string(r.Body)) == "null" {
		return nil
	}
	return MustUser(b.t, r.JSON(b.t))
}

// MustNoSession fails unless get-session answers null.
func (b *FuBrowser) MustNoSession() {
	b.t.Helper()
	if u := b.Session(); u != nil {
		b.t.Fatalf("get-session = %v, want null", u)
	}
}

// accounts returns list-accounts as provider:accountId strings, in order.
func (b *FuBrowser) Accounts() ([]string, []map[string]any) {
	b.t.Helper()
	r := b.Do(http.MethodGet, "/api/auth/list-accounts", "")
	MustStatus(b.t, r, http.StatusOK)
	var list []map[string]any
	MustUnmarshal(b.t, r.Body, &list)
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = fmt.Sprintf("%v:%v", a["providerId"], a["accountId"])
	}
	return out, list
}

// FuWorld is A with an administrator and a fake upstream.
type FuWorld struct {
	A     *App
	Admin *Client
	Fake  *FuFake
}

const (
	FuSessionCookie = "gatehouse.session_token"
	FuStateCookie   = "gatehouse.state"
)

// MustFuWorld starts A on s with env (AdminEnv when nil) and a fake
// upstream. The administrator is signed in whether or not sign-up does.
func MustFuWorld(t *testing.T, s Store, env map[string]string) *FuWorld {
	t.Helper()
	if env == nil {
		env = AdminEnv
	}
	w := &FuWorld{A: MustStart(t, s, env)}
	MustVerifiedUser(t, w.A, "Root Admin", AdminEmail, AdminPassword)
	w.Admin = w.A.NewClient(t)
	MustSignIn(t, w.Admin, AdminEmail, AdminPassword)
	w.Fake = NewFuFake(t, w.A)
	return w
}

// register registers a provider at A: body's fields over preset oidc at
// fake with A's credentials there.
func (w *FuWorld) Register(t testing.TB, fake *FuFake, body map[string]any) map[string]any {
	t.Helper()
	full := map[string]any{"preset": "oidc", "issuer": fake.URL, "clientId": fuClientID, "clientSecret": fuClientSecret}
	for k, v := range body {
		if v == nil {
			delete(full, k)
		} else {
			full[k] = v
		}
	}
	r := w.Admin.Post("/api/admin/identity-providers", MustJSON(t, full))
	MustStatus(t, r, http.StatusCreated)
	if strings.Contains(string(r.Body), fuClientSecret) {
		t.Fatalf("the provider's answer shows its client secret: %s", r.Body)
	}
	p := r.JSON(t)
	if want := w.A.URL + "/api/auth/callback/" + body["id"].(string); p["callbackUrl"] != want {
		t.Fatalf("callbackUrl = %v, want %s", p["callbackUrl"], want)
	}
	return p
}

// start posts path (sign-in/social or link-social) and returns the
// authorization URL; the answer must set the state cookie.
func (w *FuWorld) Start(t testing.TB, b *FuBrowser, path string, body map[string]any) string {
	t.Helper()
	r := b.Do(http.MethodPost, path, MustJSON(t, body))
	MustStatus(t, r, http.StatusOK)
	var out struct {
		URL      string `json:"url"`
		Redirect bool   `json:"redirect"`
	}
	MustUnmarshal(t, r.Body, &out)
	if out.URL == "" || !out.Redirect || r.Header.Get("Location") != out.URL {
		t.Fatalf("%s answered %s (Location %q), want {url, redirect:true} and the url as Location", path, r.Body, r.Header.Get("Location"))
	}
	if RawSetCookie(r, FuStateCookie) == "" {
		t.Fatalf("%s set no state cookie: %q", path, r.Header.Values("Set-Cookie"))
	}
	return out.URL
}

// authorize visits the authorization URL and returns the callback at A it
// redirects to.
func (w *FuWorld) Authorize(t testing.TB, b *FuBrowser, authURL string) string {
	t.Helper()
	r := b.Do(http.MethodGet, authURL, "")
	loc := r.Header.Get("Location")
	if r.Status != http.StatusFound || !strings.HasPrefix(loc, w.A.URL+"/api/auth/callback/") {
		t.Fatalf("the upstream answered %d (Location %q) %s, want a redirect to A's callback", r.Status, loc, r.Body)
	}
	return loc
}

// signIn walks a whole sign-in at provider in b and returns the callback's
// answer (a redirect, not followed).
func (w *FuWorld) SignIn(t testing.TB, b *FuBrowser, provider string, body map[string]any) *Response {
	t.Helper()
	full := map[string]any{"provider": provider, "callbackURL": "/home", "newUserCallbackURL": "/welcome", "errorCallbackURL": "/signin-failed"}
	for k, v := range body {
		full[k] = v
	}
	return b.Do(http.MethodGet, w.Authorize(t, b, w.Start(t, b, "/api/auth/sign-in/social", full)), "")
}

// mustRedirect fails unless r is a 302 to exactly want (a path at A).
func (w *FuWorld) MustRedirect(t testing.TB, r *Response, want string) {
	t.Helper()
	if r.Status != http.StatusFound || r.Header.Get("Location") != w.A.URL+want {
		t.Fatalf("callback answered %d, Location %q; want 302 to %s%s; body %s", r.Status, r.Header.Get("Location"), w.A.URL, want, r.Body)
	}
}

// mustRefused fails unless r redirects to target?error=code and starts no
// session (no session cookie set), and b has no session at A.
func (w *FuWorld) MustRefused(t testing.TB, b *FuBrowser, r *Response, target, code string) {
	t.Helper()
	w.MustRedirect(t, r, target+"?error="+code)
	if c := RawSetCookie(r, FuSessionCookie); c != "" {
		t.Fatalf("a refused callback sets the session cookie: %s", c)
	}
	b.MustNoSession()
}

// mustSignedIn fails unless r redirects to target with a session cookie,
// and returns the session's user.
func (w *FuWorld) MustSignedIn(t testing.TB, b *FuBrowser, r *Response, target string) map[string]any {
	t.Helper()
	w.MustRedirect(t, r, target)
	if RawSetCookie(r, FuSessionCookie) == "" {
		t.Fatal("the callback set no session cookie")
	}
	if c := RawSetCookie(r, FuStateCookie); !strings.Contains(c, "Max-Age=0") {
		t.Fatalf("the callback does not clear the state cookie: %q", c)
	}
	u := b.Session()
	if u == nil {
		t.Fatal("no session at A after the callback")
	}
	return u
}

// usersNamed returns the e-mails of A's users matching email.
func (w *FuWorld) UsersNamed(t testing.TB, email string) []string {
	t.Helper()
	emails, _ := ListUsers(t, w.Admin, url.Values{"searchField": {"email"}, "searchValue": {email}})
	return emails
}
