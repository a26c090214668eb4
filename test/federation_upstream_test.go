package test

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

// fuKeys are the fake upstream's signing key (published) and a stranger's
// (never published), made once: RSA key generation is slow.
var fuKeys = sync.OnceValue(func() [2]*rsa.PrivateKey {
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

// fuSign signs claims with key as a compact RS256 JWS naming kid fuKeyID.
func fuSign(t testing.TB, key *rsa.PrivateKey, claims map[string]any) string {
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

// fuUnsigned is claims as a JWT with alg none.
func fuUnsigned(t testing.TB, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(payload) + "."
}

// fuS256 is the PKCE challenge of verifier (RFC 7636 §4.2), computed here
// independently of Gatehouse.
func fuS256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// fuGitHubEmail is an entry of GitHub's GET /user/emails.
type fuGitHubEmail struct {
	Email    string `json:"email"`
	Primary  bool   `json:"primary"`
	Verified bool   `json:"verified"`
}

// fuUser is the person the fake upstream signs in next.
type fuUser struct {
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
	Emails      []fuGitHubEmail
}

// fuGrant is an authorization code the fake issued.
type fuGrant struct {
	user                          fuUser
	redirectURI, challenge, nonce string
}

// fuFake is the programmable upstream. Set its knobs with set before the
// flow that reads them.
type fuFake struct {
	t   testing.TB
	srv *httptest.Server
	URL string

	mu sync.Mutex
	// redirectPrefix is where the fake lets redirect_uri point (A's
	// callbacks).
	redirectPrefix string
	// issInResponse is discovery's authorization_response_iss_parameter_supported.
	issInResponse bool
	// decoy makes discovery name endpoints under /decoy, which fail the
	// test when called: the provider's overrides must be used instead.
	decoy bool
	// callbackIss is the callback's iss: "" the fake's issuer (none for
	// GitHub), "-" none, else that value.
	callbackIss string
	// callbackError makes the authorization answer error=callbackError.
	callbackError string
	// user is who signs in at the next authorization.
	user fuUser
	// claims edits the ID token's claims; sign signs them (default: RS256
	// with the published key).
	claims func(m map[string]any)
	sign   func(m map[string]any) string
	// scope is the token response's scope ("" the usual).
	scope string

	grants map[string]fuGrant
	tokens map[string]fuUser
	hits   map[string]int
}

// newFuFake starts a fake upstream whose redirect URIs must be A's callbacks.
func newFuFake(t testing.TB, a *fwApp) *fuFake {
	t.Helper()
	f := &fuFake{t: t, redirectPrefix: a.URL + "/api/auth/callback/", issInResponse: true,
		grants: map[string]fuGrant{}, tokens: map[string]fuUser{}, hits: map[string]int{}}
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
func (f *fuFake) set(fn func(f *fuFake)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// hit returns how many requests path had.
func (f *fuFake) hit(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

// refuse fails the test for a protocol error of A's and answers it.
func (f *fuFake) refuse(w http.ResponseWriter, r *http.Request, status int, oauthError, why string) {
	f.t.Errorf("fake upstream: %s %s: %s", r.Method, r.URL.Path, why)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": oauthError})
}

func fuWriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fuFake) discovery(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits[r.URL.Path]++
	ep := f.URL
	if f.decoy {
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
		"authorization_response_iss_parameter_supported": f.issInResponse,
	})
}

func (f *fuFake) jwks(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hits[r.URL.Path]++
	f.mu.Unlock()
	fuWriteJSON(w, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &fuKeys()[0].PublicKey, KeyID: fuKeyID, Algorithm: "RS256", Use: "sig"}}})
}

// authorize auto-approves: it checks A's request, records the PKCE
// challenge and nonce with a new code, and sends the browser back with
// code, state and (OpenID) iss, or with the error the test asked for.
func (f *fuFake) authorize(w http.ResponseWriter, r *http.Request) {
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
	if f.callbackError != "" {
		back.Set("error", f.callbackError)
		back.Set("error_description", "<b>the upstream says no</b>")
	} else {
		code := rand.Text()
		f.grants[code] = fuGrant{user: f.user, redirectURI: redirectURI, challenge: q.Get("code_challenge"), nonce: q.Get("nonce")}
		back.Set("code", code)
	}
	back.Set("state", q.Get("state"))
	if github {
		if f.callbackIss != "" && f.callbackIss != "-" {
			back.Set("iss", f.callbackIss) // GitHub sends none
		}
	} else {
		switch f.callbackIss {
		case "":
			back.Set("iss", f.URL)
		case "-":
		default:
			back.Set("iss", f.callbackIss)
		}
	}
	target.RawQuery = back.Encode()
	http.Redirect(w, r, target.String(), http.StatusFound)
}

// token redeems a code once: client_secret_basic for OpenID
// (client_secret_post for GitHub), the same redirect_uri, and a
// code_verifier whose S256 is the challenge. OpenID answers an ID token
// built as the test said.
func (f *fuFake) token(w http.ResponseWriter, r *http.Request) {
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
	claims := f.claimsFor(g.user, g.nonce)
	if f.claims != nil {
		f.claims(claims)
	}
	sign := f.sign
	if sign == nil {
		sign = func(m map[string]any) string { return fuSign(f.t, fuKeys()[0], m) }
	}
	scope := f.scope
	if scope == "" {
		scope = "openid email profile"
	}
	fuWriteJSON(w, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "id_token": sign(claims), "scope": scope})
}

// claimsFor is u's ID token for A, valid for five minutes.
func (f *fuFake) claimsFor(u fuUser, nonce string) map[string]any {
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
func (f *fuFake) bearer(r *http.Request) (fuUser, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return fuUser{}, false
	}
	u, ok := f.tokens[tok]
	return u, ok
}

func (f *fuFake) userinfo(w http.ResponseWriter, r *http.Request) {
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

func (f *fuFake) githubUser(w http.ResponseWriter, r *http.Request) {
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

func (f *fuFake) githubEmails(w http.ResponseWriter, r *http.Request) {
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
		emails = []fuGitHubEmail{}
	}
	fuWriteJSON(w, emails)
}

// fuBrowser is a browser with a cookie jar that never follows a redirect:
// the test walks each step.
type fuBrowser struct {
	t  testing.TB
	a  *fwApp
	hc *http.Client
}

func newFuBrowser(t testing.TB, a *fwApp) *fuBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fuBrowser{t: t, a: a, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request; a target starting with / is at A. A body is JSON;
// a POST carries A's Origin.
func (b *fuBrowser) do(method, target, body string, headers ...string) *response {
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
	res, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return &response{Status: res.StatusCode, Header: res.Header, Body: raw}
}

// cookie returns the value of A's cookie name in the jar, or "".
func (b *fuBrowser) cookie(name string) string {
	u, _ := url.Parse(b.a.URL)
	for _, c := range b.hc.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// signInWithPassword signs the browser in at A.
func (b *fuBrowser) signInWithPassword(email, password string) {
	b.t.Helper()
	mustOK(b.t, b.do(http.MethodPost, "/api/auth/sign-in/email", mustCredentials(b.t, email, password)))
}

// session returns the user of the browser's session at A, or nil.
func (b *fuBrowser) session() map[string]any {
	b.t.Helper()
	r := b.do(http.MethodGet, "/api/auth/get-session", "")
	mustStatus(b.t, r, http.StatusOK)
	if strings.TrimSpace(string(r.Body)) == "null" {
		return nil
	}
	return mustUser(b.t, r.JSON(b.t))
}

// mustNoSession fails unless get-session answers null.
func (b *fuBrowser) mustNoSession() {
	b.t.Helper()
	if u := b.session(); u != nil {
		b.t.Fatalf("get-session = %v, want null", u)
	}
}

// accounts returns list-accounts as provider:accountId strings, in order.
func (b *fuBrowser) accounts() ([]string, []map[string]any) {
	b.t.Helper()
	r := b.do(http.MethodGet, "/api/auth/list-accounts", "")
	mustStatus(b.t, r, http.StatusOK)
	var list []map[string]any
	mustUnmarshal(b.t, r.Body, &list)
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = fmt.Sprintf("%v:%v", a["providerId"], a["accountId"])
	}
	return out, list
}

// fuWorld is A with an administrator and a fake upstream.
type fuWorld struct {
	a     *fwApp
	admin *fwClient
	fake  *fuFake
}

const (
	fuSessionCookie = "gatehouse.session_token"
	fuStateCookie   = "gatehouse.state"
)

// mustFuWorld starts A on s with env (adminEnv when nil) and a fake
// upstream. The administrator is signed in whether or not sign-up does.
func mustFuWorld(t *testing.T, s store, env map[string]string) *fuWorld {
	t.Helper()
	if env == nil {
		env = adminEnv
	}
	w := &fuWorld{a: mustStartFramework(t, s, env)}
	mustVerifiedUser(t, w.a, "Root Admin", adminEmail, adminPassword)
	w.admin = w.a.client(t)
	mustSignIn(t, w.admin, adminEmail, adminPassword)
	w.fake = newFuFake(t, w.a)
	return w
}

// register registers a provider at A: body's fields over preset oidc at
// fake with A's credentials there.
func (w *fuWorld) register(t testing.TB, fake *fuFake, body map[string]any) map[string]any {
	t.Helper()
	full := map[string]any{"preset": "oidc", "issuer": fake.URL, "clientId": fuClientID, "clientSecret": fuClientSecret}
	for k, v := range body {
		if v == nil {
			delete(full, k)
		} else {
			full[k] = v
		}
	}
	r := w.admin.post("/api/admin/identity-providers", mustJSON(t, full))
	mustStatus(t, r, http.StatusCreated)
	if strings.Contains(string(r.Body), fuClientSecret) {
		t.Fatalf("the provider's answer shows its client secret: %s", r.Body)
	}
	p := r.JSON(t)
	if want := w.a.URL + "/api/auth/callback/" + body["id"].(string); p["callbackUrl"] != want {
		t.Fatalf("callbackUrl = %v, want %s", p["callbackUrl"], want)
	}
	return p
}

// start posts path (sign-in/social or link-social) and returns the
// authorization URL; the answer must set the state cookie.
func (w *fuWorld) start(t testing.TB, b *fuBrowser, path string, body map[string]any) string {
	t.Helper()
	r := b.do(http.MethodPost, path, mustJSON(t, body))
	mustStatus(t, r, http.StatusOK)
	var out struct {
		URL      string `json:"url"`
		Redirect bool   `json:"redirect"`
	}
	mustUnmarshal(t, r.Body, &out)
	if out.URL == "" || !out.Redirect || r.Header.Get("Location") != out.URL {
		t.Fatalf("%s answered %s (Location %q), want {url, redirect:true} and the url as Location", path, r.Body, r.Header.Get("Location"))
	}
	if rawSetCookie(r, fuStateCookie) == "" {
		t.Fatalf("%s set no state cookie: %q", path, r.Header.Values("Set-Cookie"))
	}
	return out.URL
}

// authorize visits the authorization URL and returns the callback at A it
// redirects to.
func (w *fuWorld) authorize(t testing.TB, b *fuBrowser, authURL string) string {
	t.Helper()
	r := b.do(http.MethodGet, authURL, "")
	loc := r.Header.Get("Location")
	if r.Status != http.StatusFound || !strings.HasPrefix(loc, w.a.URL+"/api/auth/callback/") {
		t.Fatalf("the upstream answered %d (Location %q) %s, want a redirect to A's callback", r.Status, loc, r.Body)
	}
	return loc
}

// signIn walks a whole sign-in at provider in b and returns the callback's
// answer (a redirect, not followed).
func (w *fuWorld) signIn(t testing.TB, b *fuBrowser, provider string, body map[string]any) *response {
	t.Helper()
	full := map[string]any{"provider": provider, "callbackURL": "/home", "newUserCallbackURL": "/welcome", "errorCallbackURL": "/signin-failed"}
	for k, v := range body {
		full[k] = v
	}
	return b.do(http.MethodGet, w.authorize(t, b, w.start(t, b, "/api/auth/sign-in/social", full)), "")
}

// mustRedirect fails unless r is a 302 to exactly want (a path at A).
func (w *fuWorld) mustRedirect(t testing.TB, r *response, want string) {
	t.Helper()
	if r.Status != http.StatusFound || r.Header.Get("Location") != w.a.URL+want {
		t.Fatalf("callback answered %d, Location %q; want 302 to %s%s; body %s", r.Status, r.Header.Get("Location"), w.a.URL, want, r.Body)
	}
}

// mustRefused fails unless r redirects to target?error=code and starts no
// session (no session cookie set), and b has no session at A.
func (w *fuWorld) mustRefused(t testing.TB, b *fuBrowser, r *response, target, code string) {
	t.Helper()
	w.mustRedirect(t, r, target+"?error="+code)
	if c := rawSetCookie(r, fuSessionCookie); c != "" {
		t.Fatalf("a refused callback sets the session cookie: %s", c)
	}
	b.mustNoSession()
}

// mustSignedIn fails unless r redirects to target with a session cookie,
// and returns the session's user.
func (w *fuWorld) mustSignedIn(t testing.TB, b *fuBrowser, r *response, target string) map[string]any {
	t.Helper()
	w.mustRedirect(t, r, target)
	if rawSetCookie(r, fuSessionCookie) == "" {
		t.Fatal("the callback set no session cookie")
	}
	if c := rawSetCookie(r, fuStateCookie); !strings.Contains(c, "Max-Age=0") {
		t.Fatalf("the callback does not clear the state cookie: %q", c)
	}
	u := b.session()
	if u == nil {
		t.Fatal("no session at A after the callback")
	}
	return u
}

// usersNamed returns the e-mails of A's users matching email.
func (w *fuWorld) usersNamed(t testing.TB, email string) []string {
	t.Helper()
	emails, _ := listUsers(t, w.admin, url.Values{"searchField": {"email"}, "searchValue": {email}})
	return emails
}

// Ensure a sign-in through preset google with every endpoint overridden
// (discovery names decoys that fail the test) creates a verified user,
// signs them in, reads the name from the overridden userinfo endpoint, and
// lists the account; a second sign-in finds the same user.
func TestFederationUpstream_google_preset_with_overridden_endpoints(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, fwEnv(adminEnv, map[string]string{"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "true"}))
			w.fake.set(func(f *fuFake) {
				f.decoy = true
				f.user = fuUser{Sub: "g-1001", Email: "gina@mail.example", EmailVerified: true, UserinfoName: "Gina Google"}
			})
			u := w.fake.URL
			w.register(t, w.fake, map[string]any{"id": "google", "preset": "google",
				"endpoints": map[string]any{"authorization": u + "/authorize", "token": u + "/token", "userinfo": u + "/userinfo", "jwks": u + "/jwks"}})

			b := newFuBrowser(t, w.a)
			user := w.mustSignedIn(t, b, w.signIn(t, b, "google", nil), "/welcome")
			if user["email"] != "gina@mail.example" || user["emailVerified"] != true || user["name"] != "Gina Google" {
				t.Fatalf("session user = %v, want Gina, verified, named by userinfo", user)
			}
			list, raw := b.accounts()
			if !slices.Equal(list, []string{"google:g-1001"}) || raw[0]["userId"] != user["id"] {
				t.Fatalf("list-accounts = %v %v, want the google account of %v", list, raw, user["id"])
			}
			for path, want := range map[string]int{"/authorize": 1, "/token": 1, "/userinfo": 1, "/jwks": 1} {
				if got := w.fake.hit(path); got != want {
					t.Fatalf("%s hit %d times, want %d", path, got, want)
				}
			}

			// A returning user: same user, callbackURL, no second account.
			b2 := newFuBrowser(t, w.a)
			again := w.mustSignedIn(t, b2, w.signIn(t, b2, "google", nil), "/home")
			if again["id"] != user["id"] {
				t.Fatalf("second sign-in is user %v, want %v", again["id"], user["id"])
			}
			if list, _ := b2.accounts(); len(list) != 1 {
				t.Fatalf("list-accounts after a second sign-in = %v", list)
			}
		})
	}
}

// Ensure preset github with its endpoints overridden signs a user in with
// their verified primary address; an address GitHub has not verified as
// primary is never taken as verified, and no user is made of it (the
// callback ends with email_not_verified); and no usable address is
// email_not_found.
func TestFederationUpstream_github_preset(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, fwEnv(adminEnv, map[string]string{"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "true"}))
			u := w.fake.URL
			w.register(t, w.fake, map[string]any{"id": "github", "preset": "github", "issuer": nil,
				"endpoints": map[string]any{"authorization": u + "/login/oauth/authorize", "token": u + "/login/oauth/access_token", "api": u + "/api"}})

			// The verified primary address.
			w.fake.set(func(f *fuFake) {
				f.user = fuUser{GitHubID: 583231, Login: "octocat", Name: "Octo Cat", Emails: []fuGitHubEmail{
					{Email: "old@octo.example", Primary: false, Verified: false},
					{Email: "octo@octo.example", Primary: true, Verified: true},
				}}
			})
			b := newFuBrowser(t, w.a)
			user := w.mustSignedIn(t, b, w.signIn(t, b, "github", nil), "/welcome")
			if user["email"] != "octo@octo.example" || user["emailVerified"] != true || user["name"] != "Octo Cat" {
				t.Fatalf("session user = %v, want Octo Cat, octo@octo.example verified", user)
			}
			if list, _ := b.accounts(); !slices.Equal(list, []string{"github:583231"}) {
				t.Fatalf("list-accounts = %v, want github:583231", list)
			}
			if w.fake.hit("/api/user") != 1 || w.fake.hit("/api/user/emails") != 1 || w.fake.hit("/.well-known/openid-configuration") != 0 {
				t.Fatalf("GitHub API hits: /user %d, /user/emails %d, discovery %d", w.fake.hit("/api/user"), w.fake.hit("/api/user/emails"),
					w.fake.hit("/.well-known/openid-configuration"))
			}

			// Only a non-primary address is verified: the public one is
			// taken, unverified, and no user is made of it (whoever verified
			// it later would share the account with this GitHub identity).
			w.fake.set(func(f *fuFake) {
				f.user = fuUser{GitHubID: 99, Login: "nina", PublicEmail: "nina@public.example", Emails: []fuGitHubEmail{
					{Email: "nina@public.example", Primary: true, Verified: false},
					{Email: "nina@work.example", Primary: false, Verified: true},
				}}
			})
			b = newFuBrowser(t, w.a)
			w.mustRefused(t, b, w.signIn(t, b, "github", nil), "/signin-failed", "email_not_verified")
			if got := w.usersNamed(t, "nina@"); len(got) != 0 {
				t.Fatalf("users = %v, want none made of an unverified address", got)
			}
			mustNoMail(t, w.a, "nina@public.example", "Verify your email address")

			// GitHub sends no iss: a callback with one is not GitHub's.
			w.fake.set(func(f *fuFake) { f.callbackIss = "https://evil.example" })
			tokens := w.fake.hit("/login/oauth/access_token")
			b = newFuBrowser(t, w.a)
			w.mustRefused(t, b, w.signIn(t, b, "github", nil), "/signin-failed", "issuer_mismatch")
			if n := w.fake.hit("/login/oauth/access_token"); n != tokens {
				t.Fatalf("the code was redeemed despite the iss (%d token requests, want %d)", n, tokens)
			}
			w.fake.set(func(f *fuFake) { f.callbackIss = "" })

			// No address at all.
			w.fake.set(func(f *fuFake) {
				f.user = fuUser{GitHubID: 7, Login: "ghost", Emails: []fuGitHubEmail{{Email: "ghost@ghost.example", Primary: false, Verified: true}}}
			})
			b = newFuBrowser(t, w.a)
			w.mustRefused(t, b, w.signIn(t, b, "github", nil), "/signin-failed", "email_not_found")
			if got := w.usersNamed(t, "ghost@"); len(got) != 0 {
				t.Fatalf("users = %v, want none", got)
			}
		})
	}
}

// Ensure an ID token that is not valid ends the sign-in with
// unable_to_get_user_info, no session and no user: a nonce that is not
// the one sent, a key not in the key set (same kid), alg none, expired.
func TestFederationUpstream_invalid_id_tokens(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "up"})
			cases := []struct {
				name   string
				claims func(m map[string]any)
				sign   func(m map[string]any) string
			}{
				{"nonce_mismatch", func(m map[string]any) { m["nonce"] = "not-the-nonce-that-was-sent" }, nil},
				{"nonce_missing", func(m map[string]any) { delete(m, "nonce") }, nil},
				{"key_not_in_jwks", nil, func(m map[string]any) string { return fuSign(t, fuKeys()[1], m) }},
				{"alg_none", nil, func(m map[string]any) string { return fuUnsigned(t, m) }},
				{"expired", func(m map[string]any) {
					m["iat"], m["exp"] = time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
				}, nil},
				{"wrong_audience", func(m map[string]any) { m["aud"] = "someone-else" }, nil},
				{"wrong_issuer", func(m map[string]any) { m["iss"] = "https://evil.example" }, nil},
			}
			for i, tc := range cases {
				email := fmt.Sprintf("victim%d@mail.example", i)
				w.fake.set(func(f *fuFake) {
					f.user = fuUser{Sub: "sub-" + tc.name, Email: email, EmailVerified: true, Name: "Victim"}
					f.claims, f.sign = tc.claims, tc.sign
				})
				b := newFuBrowser(t, w.a)
				r := w.signIn(t, b, "up", nil)
				t.Run(tc.name, func(t *testing.T) {
					w.mustRefused(t, b, r, "/signin-failed", "unable_to_get_user_info")
					if got := w.usersNamed(t, email); len(got) != 0 {
						t.Fatalf("users = %v, want none", got)
					}
				})
			}
			// The same provider still works with a valid token.
			w.fake.set(func(f *fuFake) {
				f.user = fuUser{Sub: "sub-ok", Email: "ok@mail.example", EmailVerified: true, Name: "Okay"}
				f.claims, f.sign = nil, nil
			})
			b := newFuBrowser(t, w.a)
			w.mustSignedIn(t, b, w.signIn(t, b, "up", nil), "/welcome")
		})
	}
}

// Ensure RFC 9207: a callback's iss that is not the provider's is
// issuer_mismatch and a missing one issuer_missing when discovery promises
// it, both before the code is redeemed; without the promise a missing iss
// is accepted, a wrong one still refused.
func TestFederationUpstream_issuer_in_callback(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			promising := w.fake
			silent := newFuFake(t, w.a)
			silent.set(func(f *fuFake) { f.issInResponse = false })
			w.register(t, promising, map[string]any{"id": "promising"})
			w.register(t, silent, map[string]any{"id": "silent"})

			for i, tc := range []struct {
				fake     *fuFake
				provider string
				iss      string
				code     string
			}{
				{promising, "promising", "https://evil.example", "issuer_mismatch"},
				{promising, "promising", "-", "issuer_missing"},
				{silent, "silent", "https://evil.example", "issuer_mismatch"},
				{silent, "silent", silent.URL + "/", "issuer_mismatch"},
			} {
				tc.fake.set(func(f *fuFake) {
					f.callbackIss = tc.iss
					f.user = fuUser{Sub: fmt.Sprintf("iss-%d", i), Email: fmt.Sprintf("iss%d@mail.example", i), EmailVerified: true}
				})
				b := newFuBrowser(t, w.a)
				w.mustRefused(t, b, w.signIn(t, b, tc.provider, nil), "/signin-failed", tc.code)
				if n := tc.fake.hit("/token"); n != 0 {
					t.Fatalf("case %d: the code was redeemed (%d token requests) despite the issuer", i, n)
				}
			}
			silent.set(func(f *fuFake) {
				f.callbackIss = "-"
				f.user = fuUser{Sub: "quiet", Email: "quiet@mail.example", EmailVerified: true}
			})
			b := newFuBrowser(t, w.a)
			w.mustSignedIn(t, b, w.signIn(t, b, "silent", nil), "/welcome")
			promising.set(func(f *fuFake) {
				f.callbackIss = ""
				f.user = fuUser{Sub: "loud", Email: "loud@mail.example", EmailVerified: true}
			})
			b = newFuBrowser(t, w.a)
			w.mustSignedIn(t, b, w.signIn(t, b, "promising", nil), "/welcome")
		})
	}
}

// Ensure the state binds the callback to the browser that started the
// sign-in: another browser (no state cookie) gets state_mismatch without
// using the state up, so the right browser still finishes; a state cookie
// of a later sign-in does not fit an earlier one; a finished callback
// cannot be replayed, not even with its state cookie.
func TestFederationUpstream_state(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "up"})
			w.fake.set(func(f *fuFake) {
				f.user = fuUser{Sub: "s-1", Email: "sam@mail.example", EmailVerified: true, Name: "Sam"}
			})

			b := newFuBrowser(t, w.a)
			callback := w.authorize(t, b, w.start(t, b, "/api/auth/sign-in/social",
				map[string]any{"provider": "up", "callbackURL": "/home", "errorCallbackURL": "/signin-failed"}))
			stateCookie := b.cookie(fuStateCookie)

			other := newFuBrowser(t, w.a)
			r := other.do(http.MethodGet, callback, "")
			w.mustRefused(t, other, r, "/api/auth/error", "state_mismatch")
			if c := rawSetCookie(r, fuStateCookie); c != "" {
				t.Fatalf("a mismatched callback touches the state cookie: %s", c)
			}

			// A second sign-in in b replaces its state cookie: the first
			// callback no longer fits.
			w.start(t, b, "/api/auth/sign-in/social", map[string]any{"provider": "up", "callbackURL": "/home"})
			w.mustRefused(t, b, b.do(http.MethodGet, callback, ""), "/api/auth/error", "state_mismatch")

			// The first sign-in is still in flight: with its cookie back, b
			// finishes it.
			u, _ := url.Parse(w.a.URL)
			b.hc.Jar.SetCookies(u, []*http.Cookie{{Name: fuStateCookie, Value: stateCookie, Path: "/"}})
			w.mustSignedIn(t, b, b.do(http.MethodGet, callback, ""), "/home")
			if n := w.fake.hit("/token"); n != 1 {
				t.Fatalf("token requests = %d, want 1", n)
			}

			// Replays: in b (its state cookie is cleared), and in a browser
			// holding the used state's cookie.
			w.mustRedirect(t, b.do(http.MethodGet, callback, ""), "/api/auth/error?error=state_mismatch")
			replay := newFuBrowser(t, w.a)
			replay.hc.Jar.SetCookies(u, []*http.Cookie{{Name: fuStateCookie, Value: stateCookie, Path: "/"}})
			w.mustRefused(t, replay, replay.do(http.MethodGet, callback, ""), "/api/auth/error", "state_mismatch")
			if n := w.fake.hit("/token"); n != 1 {
				t.Fatalf("token requests after the replays = %d, want 1", n)
			}

			// No state at all.
			w.mustRefused(t, other, other.do(http.MethodGet, "/api/auth/callback/up?code=abc", ""), "/api/auth/error", "state_not_found")

			// The same callback, with its cookie, many times at once: one
			// sign-in, one code redeemed.
			w.fake.set(func(f *fuFake) { f.user = fuUser{Sub: "s-2", Email: "sue@mail.example", EmailVerified: true} })
			racer := newFuBrowser(t, w.a)
			raced := w.authorize(t, racer, w.start(t, racer, "/api/auth/sign-in/social", map[string]any{"provider": "up", "callbackURL": "/home"}))
			cookie := fuStateCookie + "=" + racer.cookie(fuStateCookie)
			const n = 8
			locations := make(chan string, n)
			noJar := &http.Client{CheckRedirect: racer.hc.CheckRedirect}
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, raced, nil)
					if err != nil {
						t.Error(err)
						return
					}
					req.Header.Set("Cookie", cookie)
					res, err := noJar.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					_ = res.Body.Close()
					locations <- res.Header.Get("Location")
				})
			}
			wg.Wait()
			close(locations)
			won := 0
			for loc := range locations {
				switch loc {
				case w.a.URL + "/home":
					won++
				case w.a.URL + "/api/auth/error?error=state_mismatch":
				default:
					t.Fatalf("a concurrent callback went to %q", loc)
				}
			}
			if won != 1 || w.fake.hit("/token") != 2 {
				t.Fatalf("%d of %d concurrent callbacks signed in, %d codes redeemed in all; want 1 and 2", won, n, w.fake.hit("/token"))
			}
		})
	}
}

// Ensure an upstream error reaches errorCallbackURL: an RFC 6749 code as
// it is, anything else as upstream_error, the description never.
func TestFederationUpstream_upstream_error(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "up"})
			for _, tc := range []struct{ upstream, want string }{
				{"access_denied", "access_denied"},
				{"temporarily_unavailable", "temporarily_unavailable"},
				{"<script>alert(1)</script>", "upstream_error"},
				{"made_up_code", "upstream_error"},
			} {
				w.fake.set(func(f *fuFake) { f.callbackError = tc.upstream })
				b := newFuBrowser(t, w.a)
				r := w.signIn(t, b, "up", nil)
				w.mustRefused(t, b, r, "/signin-failed", tc.want)
				if strings.Contains(r.Header.Get("Location"), "upstream") && tc.want != "upstream_error" {
					t.Fatalf("the description leaks into %s", r.Header.Get("Location"))
				}
			}
			if n := w.fake.hit("/token"); n != 0 {
				t.Fatalf("token requests = %d, want none", n)
			}
		})
	}
}

// Ensure what an upstream says is kept out of the stores unless it is
// usable: a picture URL or a name with a NUL byte, scopes that are not
// RFC 6749 scope tokens, and at a returning sign-in an address with a NUL
// byte. PostgreSQL refused the NUL bytes (the sign-in ended with
// internal_server_error, and a returning user could no longer sign in);
// memory and SQLite stored them and served them back.
func TestFederationUpstream_hostile_profile_values(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "up"})
			w.fake.set(func(f *fuFake) {
				f.user = fuUser{Sub: "h-1", Email: "hana@mail.example", EmailVerified: true, Name: "Hana\x00Evil"}
				f.claims = func(m map[string]any) { m["picture"] = "https://img.example/a\x00b" }
				f.scope = "openid a\x00b c\"d e\\f email"
			})
			b := newFuBrowser(t, w.a)
			user := w.mustSignedIn(t, b, w.signIn(t, b, "up", nil), "/welcome")
			if user["image"] != nil || user["name"] != "hana" {
				t.Fatalf("user = %v, want no image and the address's local part as name", user)
			}
			if _, raw := b.accounts(); len(raw) != 1 || fmt.Sprint(raw[0]["scopes"]) != "[openid email]" {
				t.Fatalf("list-accounts = %v, want scopes [openid email]", raw)
			}
			// A returning sign-in whose address has a NUL byte: still Hana,
			// and her account keeps working.
			w.fake.set(func(f *fuFake) { f.scope = "" })
			for _, claims := range []func(m map[string]any){func(m map[string]any) { m["email"] = "hana\x00@mail.example" }, nil} {
				w.fake.set(func(f *fuFake) { f.claims = claims })
				b := newFuBrowser(t, w.a)
				if again := w.mustSignedIn(t, b, w.signIn(t, b, "up", nil), "/home"); again["id"] != user["id"] {
					t.Fatalf("returning sign-in is %v, want %v", again["id"], user["id"])
				}
			}
		})
	}
}

// Ensure a form_post answer (a cross-site POST, which carries no SameSite=Lax
// cookie) is turned into the GET callback with the same parameters, where
// the browser's cookies finish the sign-in; a POST that carries cookies
// must come from A's origin.
func TestFederationUpstream_form_post_callback(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "up"})
			w.fake.set(func(f *fuFake) { f.user = fuUser{Sub: "p-1", Email: "pia@mail.example", EmailVerified: true} })
			b := newFuBrowser(t, w.a)
			callback := w.authorize(t, b, w.start(t, b, "/api/auth/sign-in/social", map[string]any{"provider": "up", "callbackURL": "/home"}))
			cb, err := url.Parse(callback)
			if err != nil {
				t.Fatal(err)
			}
			post := func(hc *http.Client) *http.Response {
				t.Helper()
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, w.a.URL+cb.Path, strings.NewReader(cb.RawQuery))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", w.fake.URL) // the provider's page posts the form
				res, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = res.Body.Close()
				return res
			}
			// With the browser's cookies, from the provider's origin: refused.
			if res := post(b.hc); res.StatusCode != http.StatusForbidden {
				t.Fatalf("a cross-origin POST callback with cookies = %d, want 403", res.StatusCode)
			}
			// Without cookies, as a browser sends it: to the GET callback.
			res := post(&http.Client{CheckRedirect: b.hc.CheckRedirect})
			loc, err := url.Parse(res.Header.Get("Location"))
			if res.StatusCode != http.StatusFound || err != nil || w.a.URL+loc.Path != w.a.URL+cb.Path || loc.Query().Encode() != cb.Query().Encode() {
				t.Fatalf("form_post answered %d, Location %q; want the GET callback with %s", res.StatusCode, res.Header.Get("Location"), cb.RawQuery)
			}
			if res.Header.Get("Set-Cookie") != "" {
				t.Fatalf("form_post sets cookies: %v", res.Header.Values("Set-Cookie"))
			}
			w.mustSignedIn(t, b, b.do(http.MethodGet, res.Header.Get("Location"), ""), "/home")
		})
	}
}

// Ensure an upstream identity joins the local user of its address only
// when the provider is trusted for linking, says the address is verified,
// and the local address is verified (pre-account takeover); otherwise
// account_not_linked and nothing linked. A join is audited as account.link.
func TestFederationUpstream_linking_by_email(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "untrusted", "trustedForLinking": false})
			w.register(t, w.fake, map[string]any{"id": "trusted", "trustedForLinking": true})
			_, lenaID := mustVerifiedUser(t, w.a, "Lena Local", "lena@mail.example", userPassword)
			_, ullaID := mustPlainUser(t, w.a, "Ulla Unverified", "ulla@mail.example", userPassword)
			local := newFuBrowser(t, w.a)
			local.signInWithPassword("lena@mail.example", userPassword)
			localUlla := newFuBrowser(t, w.a)
			localUlla.signInWithPassword("ulla@mail.example", userPassword)

			try := func(provider string, u fuUser, code string) {
				t.Helper()
				w.fake.set(func(f *fuFake) { f.user = u })
				b := newFuBrowser(t, w.a)
				w.mustRefused(t, b, w.signIn(t, b, provider, nil), "/signin-failed", code)
			}
			mustOnlyPassword := func(b *fuBrowser, id string) {
				t.Helper()
				if list, _ := b.accounts(); !slices.Equal(list, []string{"credential:" + id}) {
					t.Fatalf("list-accounts = %v, want only the password", list)
				}
			}
			try("untrusted", fuUser{Sub: "lena-1", Email: "lena@mail.example", EmailVerified: true}, "account_not_linked")
			mustOnlyPassword(local, lenaID)
			try("trusted", fuUser{Sub: "lena-1", Email: "lena@mail.example", EmailVerified: false}, "account_not_linked")
			mustOnlyPassword(local, lenaID)
			// The address in another case is the same address.
			try("untrusted", fuUser{Sub: "lena-2", Email: "LENA@mail.example", EmailVerified: true}, "account_not_linked")
			mustOnlyPassword(local, lenaID)
			try("trusted", fuUser{Sub: "ulla-1", Email: "ulla@mail.example", EmailVerified: true}, "account_not_linked")
			mustOnlyPassword(localUlla, ullaID)
			if u := localUlla.session(); u["emailVerified"] != false {
				t.Fatalf("ulla = %v, want her address still unverified", u)
			}
			if got := w.usersNamed(t, "@mail.example"); len(got) != 2 {
				t.Fatalf("users = %v, want only lena and ulla", got)
			}

			// Trusted and verified: joins Lena.
			w.fake.set(func(f *fuFake) { f.user = fuUser{Sub: "lena-1", Email: "lena@mail.example", EmailVerified: true} })
			b := newFuBrowser(t, w.a)
			u := w.mustSignedIn(t, b, w.signIn(t, b, "trusted", nil), "/home")
			if u["id"] != lenaID {
				t.Fatalf("signed in as %v, want Lena %s", u["id"], lenaID)
			}
			if list, _ := local.accounts(); !slices.Equal(list, []string{"credential:" + lenaID, "trusted:lena-1"}) {
				t.Fatalf("list-accounts = %v, want the password and trusted:lena-1", list)
			}
			r := w.admin.get("/api/admin/audit-log?action=account.link&actorId=" + lenaID)
			mustStatus(t, r, http.StatusOK)
			var audit struct {
				Data []map[string]any `json:"data"`
			}
			mustUnmarshal(t, r.Body, &audit)
			if len(audit.Data) != 1 || audit.Data[0]["outcome"] != "success" || audit.Data[0]["targetId"] != "trusted" {
				t.Fatalf("audit of Lena's links = %s, want one successful account.link of trusted", r.Body)
			}
		})
	}
}

// Ensure link-social joins the signed-in user's account (no new session,
// callbackURL), refuses an identity linked to another user and another
// address, and that unlink-account removes it while a password remains.
func TestFederationUpstream_link_social(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "up"})
			_, lenaID := mustVerifiedUser(t, w.a, "Lena", "lena@mail.example", userPassword)
			_, markID := mustVerifiedUser(t, w.a, "Mark", "mark@mail.example", userPassword)
			lena, mark := newFuBrowser(t, w.a), newFuBrowser(t, w.a)
			lena.signInWithPassword("lena@mail.example", userPassword)
			mark.signInWithPassword("mark@mail.example", userPassword)
			lenaSession := lena.cookie(fuSessionCookie)

			link := func(b *fuBrowser, u fuUser) *response {
				t.Helper()
				w.fake.set(func(f *fuFake) { f.user = u })
				return b.do(http.MethodGet, w.authorize(t, b, w.start(t, b, "/api/auth/link-social",
					map[string]any{"provider": "up", "callbackURL": "/linked", "errorCallbackURL": "/link-failed"})), "")
			}
			mustNoNewSession := func(r *response, b *fuBrowser, id, session string) {
				t.Helper()
				if c := rawSetCookie(r, fuSessionCookie); c != "" {
					t.Fatalf("link-social's callback sets a session cookie: %s", c)
				}
				if u := b.session(); u == nil || u["id"] != id || b.cookie(fuSessionCookie) != session {
					t.Fatalf("after linking the session is %v, want %s's own", u, id)
				}
			}

			r := link(lena, fuUser{Sub: "lena-up", Email: "Lena@mail.example", EmailVerified: true})
			w.mustRedirect(t, r, "/linked")
			mustNoNewSession(r, lena, lenaID, lenaSession)
			list, raw := lena.accounts()
			if !slices.Equal(list, []string{"credential:" + lenaID, "up:lena-up"}) {
				t.Fatalf("Lena's accounts = %v", list)
			}
			accountID := raw[1]["id"].(string)

			markSession := mark.cookie(fuSessionCookie)
			for _, tc := range []struct {
				u    fuUser
				code string
			}{
				{fuUser{Sub: "lena-up", Email: "mark@mail.example", EmailVerified: true}, "account_already_linked_to_different_user"},
				{fuUser{Sub: "mark-up", Email: "someone@mail.example", EmailVerified: true}, "email_does_not_match"},
				{fuUser{Sub: "mark-up", Email: "mark@mail.example", EmailVerified: false}, "unable_to_link_account"},
			} {
				r := link(mark, tc.u)
				w.mustRedirect(t, r, "/link-failed?error="+tc.code)
				mustNoNewSession(r, mark, markID, markSession)
				if list, _ := mark.accounts(); !slices.Equal(list, []string{"credential:" + markID}) {
					t.Fatalf("Mark's accounts after %s = %v", tc.code, list)
				}
			}
			if list, _ := lena.accounts(); len(list) != 2 {
				t.Fatalf("Lena's accounts after Mark's attempts = %v", list)
			}

			// Unlinking: Mark cannot unlink Lena's; Lena can, keeping her
			// password.
			mustCode(t, mark.do(http.MethodPost, "/api/auth/unlink-account", mustJSON(t, map[string]any{"accountId": accountID})),
				http.StatusBadRequest, "ACCOUNT_NOT_FOUND")
			mustStatusTrue(t, lena.do(http.MethodPost, "/api/auth/unlink-account", mustJSON(t, map[string]any{"accountId": accountID})))
			if list, _ := lena.accounts(); !slices.Equal(list, []string{"credential:" + lenaID}) {
				t.Fatalf("Lena's accounts after unlinking = %v", list)
			}
			// The identity is free again: a sign-in with it is no longer Lena.
			w.fake.set(func(f *fuFake) { f.user = fuUser{Sub: "lena-up", Email: "lena@mail.example", EmailVerified: true} })
			b := newFuBrowser(t, w.a)
			w.mustRefused(t, b, w.signIn(t, b, "up", nil), "/signin-failed", "account_not_linked")

			// A link whose session ends before the callback links nothing.
			callback := w.authorize(t, lena, w.start(t, lena, "/api/auth/link-social",
				map[string]any{"provider": "up", "callbackURL": "/linked", "errorCallbackURL": "/link-failed"}))
			mustOK(t, lena.do(http.MethodPost, "/api/auth/sign-out", "{}"))
			w.mustRefused(t, lena, lena.do(http.MethodGet, callback, ""), "/link-failed", "unable_to_link_account")
			lena.signInWithPassword("lena@mail.example", userPassword)
			if list, _ := lena.accounts(); !slices.Equal(list, []string{"credential:" + lenaID}) {
				t.Fatalf("Lena's accounts after a link outliving its session = %v", list)
			}

			// link-social needs a session.
			r = newFuBrowser(t, w.a).do(http.MethodPost, "/api/auth/link-social", mustJSON(t, map[string]any{"provider": "up"}))
			mustStatus(t, r, http.StatusUnauthorized)
			if c := rawSetCookie(r, fuStateCookie); c != "" {
				t.Fatalf("an anonymous link-social sets the state cookie: %s", c)
			}
		})
	}
}

// Ensure unlink-account needs a fresh session: with a freshness of one
// second, a session older than that gets 403 SESSION_NOT_FRESH and the
// account stays.
func TestFederationUpstream_unlink_needs_a_fresh_session(t *testing.T) {
	t.Parallel()
	w := mustFuWorld(t, storeMemory, fwEnv(adminEnv, map[string]string{"GATEHOUSE_SESSION_FRESH_AGE": "1s"}))
	w.register(t, w.fake, map[string]any{"id": "up"})
	mustVerifiedUser(t, w.a, "Lena", "lena@mail.example", userPassword)
	lena := newFuBrowser(t, w.a)
	lena.signInWithPassword("lena@mail.example", userPassword)
	signedInAt := time.Now()
	w.fake.set(func(f *fuFake) { f.user = fuUser{Sub: "lena-up", Email: "lena@mail.example", EmailVerified: true} })
	w.mustRedirect(t, lena.do(http.MethodGet, w.authorize(t, lena, w.start(t, lena, "/api/auth/link-social",
		map[string]any{"provider": "up", "callbackURL": "/linked"})), ""), "/linked")
	list, raw := lena.accounts()
	if len(list) != 2 {
		t.Fatalf("accounts = %v", list)
	}
	time.Sleep(time.Until(signedInAt.Add(1100 * time.Millisecond)))
	mustCode(t, lena.do(http.MethodPost, "/api/auth/unlink-account", mustJSON(t, map[string]any{"accountId": raw[1]["id"]})),
		http.StatusForbidden, "SESSION_NOT_FRESH")
	if again, _ := lena.accounts(); !slices.Equal(again, list) {
		t.Fatalf("accounts after the refusal = %v, want %v", again, list)
	}
}

// Ensure callbackURL, errorCallbackURL and newUserCallbackURL at a foreign
// origin are refused with 403 and their codes before anything starts: no
// state cookie, no trip to the provider.
func TestFederationUpstream_callback_targets_at_foreign_origins(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "up"})
			_, _ = mustVerifiedUser(t, w.a, "Lena", "lena@mail.example", userPassword)
			lena := newFuBrowser(t, w.a)
			lena.signInWithPassword("lena@mail.example", userPassword)
			for _, foreign := range []string{"https://evil.example/x", "//evil.example/x", "/\\evil.example/x", "javascript:alert(1)"} {
				for _, tc := range []struct {
					path, field, code string
					b                 *fuBrowser
				}{
					{"/api/auth/sign-in/social", "callbackURL", "INVALID_CALLBACK_URL", newFuBrowser(t, w.a)},
					{"/api/auth/sign-in/social", "errorCallbackURL", "INVALID_ERROR_CALLBACK_URL", newFuBrowser(t, w.a)},
					{"/api/auth/sign-in/social", "newUserCallbackURL", "INVALID_NEW_USER_CALLBACK_URL", newFuBrowser(t, w.a)},
					{"/api/auth/link-social", "callbackURL", "INVALID_CALLBACK_URL", lena},
					{"/api/auth/link-social", "errorCallbackURL", "INVALID_ERROR_CALLBACK_URL", lena},
				} {
					r := tc.b.do(http.MethodPost, tc.path, mustJSON(t, map[string]any{"provider": "up", tc.field: foreign}))
					mustCode(t, r, http.StatusForbidden, tc.code)
					if c := rawSetCookie(r, fuStateCookie); c != "" || r.Header.Get("Location") != "" {
						t.Fatalf("%s with %s=%s set %q, Location %q", tc.path, tc.field, foreign, c, r.Header.Get("Location"))
					}
				}
			}
			if n := w.fake.hit("/authorize"); n != 0 {
				t.Fatalf("authorize hits = %d", n)
			}
		})
	}
}

// Ensure an unknown provider and a disabled one are 404 PROVIDER_NOT_FOUND
// (redirect and ID token alike), a sign-in in flight when its provider is
// disabled ends with oauth_provider_not_found, and enabling it again works.
func TestFederationUpstream_unknown_and_disabled_providers(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "up"})
			w.fake.set(func(f *fuFake) { f.user = fuUser{Sub: "d-1", Email: "dora@mail.example", EmailVerified: true} })
			b := newFuBrowser(t, w.a)
			idToken := fuSign(t, fuKeys()[0], w.fake.claimsFor(fuUser{Sub: "d-1", Email: "dora@mail.example", EmailVerified: true}, "n-1"))
			for _, p := range []string{"nope", "credential", "UP"} {
				mustCode(t, b.do(http.MethodPost, "/api/auth/sign-in/social", mustJSON(t, map[string]any{"provider": p})), http.StatusNotFound, "PROVIDER_NOT_FOUND")
			}
			callback := w.authorize(t, b, w.start(t, b, "/api/auth/sign-in/social", map[string]any{"provider": "up", "errorCallbackURL": "/signin-failed"}))

			mustStatus(t, w.admin.post("/api/admin/identity-providers/up/disable", ""), http.StatusOK)
			for _, body := range []map[string]any{{"provider": "up"}, {"provider": "up", "idToken": map[string]any{"token": idToken, "nonce": "n-1"}}} {
				r := b.do(http.MethodPost, "/api/auth/sign-in/social", mustJSON(t, body))
				mustCode(t, r, http.StatusNotFound, "PROVIDER_NOT_FOUND")
				if rawSetCookie(r, fuStateCookie) != "" || rawSetCookie(r, fuSessionCookie) != "" {
					t.Fatalf("a refused sign-in sets cookies: %v", r.Header.Values("Set-Cookie"))
				}
			}
			w.mustRefused(t, b, b.do(http.MethodGet, callback, ""), "/signin-failed", "oauth_provider_not_found")
			if n := w.fake.hit("/token"); n != 0 {
				t.Fatalf("token requests = %d, want none", n)
			}

			mustStatus(t, w.admin.post("/api/admin/identity-providers/up/enable", ""), http.StatusOK)
			w.mustSignedIn(t, b, w.signIn(t, b, "up", nil), "/welcome")
		})
	}
}

// Ensure a native sign-in with an ID token the provider signed for A
// answers the session, and a token for another audience, with another
// nonce, unsigned or from another key is 401 INVALID_TOKEN without one; a
// GitHub provider has no ID tokens.
func TestFederationUpstream_id_token_sign_in(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "up"})
			w.register(t, w.fake, map[string]any{"id": "gh", "preset": "github", "issuer": nil,
				"endpoints": map[string]any{"authorization": w.fake.URL + "/login/oauth/authorize", "token": w.fake.URL + "/login/oauth/access_token", "api": w.fake.URL + "/api"}})
			nate := fuUser{Sub: "n-1", Email: "nate@mail.example", EmailVerified: true, Name: "Nate Native"}
			signIn := func(b *fuBrowser, provider, token, nonce string) *response {
				return b.do(http.MethodPost, "/api/auth/sign-in/social", mustJSON(t, map[string]any{"provider": provider, "idToken": map[string]any{"token": token, "nonce": nonce}}))
			}
			for _, tc := range []struct {
				name  string
				token string
				nonce string
			}{
				{"wrong_audience", fuSign(t, fuKeys()[0], fuEdit(w.fake.claimsFor(nate, "n-1"), "aud", "another-client")), "n-1"},
				{"wrong_nonce", fuSign(t, fuKeys()[0], w.fake.claimsFor(nate, "n-1")), "n-2"},
				{"alg_none", fuUnsigned(t, w.fake.claimsFor(nate, "n-1")), "n-1"},
				{"foreign_key", fuSign(t, fuKeys()[1], w.fake.claimsFor(nate, "n-1")), "n-1"},
				{"expired", fuSign(t, fuKeys()[0], fuEdit(w.fake.claimsFor(nate, "n-1"), "exp", time.Now().Add(-time.Hour).Unix())), "n-1"},
				{"not_a_jwt", "not.a.jwt", "n-1"},
			} {
				b := newFuBrowser(t, w.a)
				r := signIn(b, "up", tc.token, tc.nonce)
				t.Run(tc.name, func(t *testing.T) {
					mustCode(t, r, http.StatusUnauthorized, "INVALID_TOKEN")
					if c := rawSetCookie(r, fuSessionCookie); c != "" {
						t.Fatalf("a refused ID token sets the session cookie: %s", c)
					}
					b.mustNoSession()
				})
			}
			if got := w.usersNamed(t, "nate@"); len(got) != 0 {
				t.Fatalf("users = %v, want none", got)
			}
			mustCode(t, signIn(newFuBrowser(t, w.a), "gh", fuSign(t, fuKeys()[0], w.fake.claimsFor(nate, "n-1")), "n-1"), http.StatusNotFound, "ID_TOKEN_NOT_SUPPORTED")

			b := newFuBrowser(t, w.a)
			r := signIn(b, "up", fuSign(t, fuKeys()[0], w.fake.claimsFor(nate, "n-1")), "n-1")
			body := mustOK(t, r)
			user := mustObject(t, body["user"])
			if tok, _ := body["token"].(string); len(tok) != 32 || body["redirect"] != false || user["email"] != "nate@mail.example" || user["emailVerified"] != true {
				t.Fatalf("ID token sign-in = %s", r.Body)
			}
			if _, ok := body["url"]; ok {
				t.Fatalf("ID token sign-in has a url: %s", r.Body)
			}
			if u := b.session(); u == nil || u["id"] != user["id"] {
				t.Fatalf("session after the ID token sign-in = %v", u)
			}
			if list, _ := b.accounts(); !slices.Equal(list, []string{"up:n-1"}) {
				t.Fatalf("list-accounts = %v", list)
			}
			if n := w.fake.hit("/authorize") + w.fake.hit("/token"); n != 0 {
				t.Fatalf("the native sign-in went through the authorization endpoints (%d requests)", n)
			}
		})
	}
}

// fuEdit returns m with k set to v.
func fuEdit(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}

// Ensure hostile input in the federation's routes is a 400 naming the part
// (never a 500, never echoed): NUL and invalid UTF-8 in the provider id, an
// over-long code in the callback (which leaves the sign-in in flight), a
// NUL provider id in the callback's path, a NUL code in a form_post; a
// 1 MB code is refused as an over-long request target (query) or body
// (form_post).
func TestFederationUpstream_hostile_input(t *testing.T) {
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFuWorld(t, s, nil)
			w.register(t, w.fake, map[string]any{"id": "up"})
			w.fake.set(func(f *fuFake) { f.user = fuUser{Sub: "h-1", Email: "hana@mail.example", EmailVerified: true} })
			b := newFuBrowser(t, w.a)
			callback := w.authorize(t, b, w.start(t, b, "/api/auth/sign-in/social", map[string]any{"provider": "up", "errorCallbackURL": "/signin-failed"}))
			cb, err := url.Parse(callback)
			if err != nil {
				t.Fatal(err)
			}
			withCode := func(code string) string {
				q := cb.Query()
				q.Set("code", code)
				u := *cb
				u.RawQuery = q.Encode()
				return u.String()
			}
			for _, tc := range []struct {
				name, method, target, body, location string
			}{
				{"provider_nul", http.MethodPost, "/api/auth/sign-in/social", `{"provider":"hostile\u0000"}`, "body.provider"},
				{"provider_invalid_utf8", http.MethodPost, "/api/auth/sign-in/social", "{\"provider\":\"hostile\xff\"}", "body.provider"},
				{"link_provider_nul", http.MethodPost, "/api/auth/link-social", `{"provider":"hostile\u0000"}`, "body.provider"},
				{"id_token_nul", http.MethodPost, "/api/auth/sign-in/social", `{"provider":"up","idToken":{"token":"hostile\u0000"}}`, "body.idToken.token"},
				{"callback_path_nul", http.MethodGet, "/api/auth/callback/hostile%00?state=x&code=y", "", "path.providerId"},
				{"callback_code_nul", http.MethodGet, withCode("hostile\x00"), "", "query.code"},
				{"callback_code_too_long", http.MethodGet, withCode(strings.Repeat("c", 5000)), "", "query.code"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					mustNameHostile(t, b.do(tc.method, tc.target, tc.body), hostileCase{shape: "framework", location: tc.location})
				})
			}
			// A 1 MB code: the request target is too long.
			mustCode(t, b.do(http.MethodGet, withCode(strings.Repeat("c", 1<<20)), ""), http.StatusRequestURITooLong, "URI_TOO_LONG")
			// The same in a form_post answer.
			form := []string{"Content-Type", "application/x-www-form-urlencoded"}
			mustNameHostile(t, b.do(http.MethodPost, "/api/auth/callback/up", "state="+cb.Query().Get("state")+"&code=hostile%00", form...),
				hostileCase{shape: "framework", location: "body.code"})
			mustCode(t, b.do(http.MethodPost, "/api/auth/callback/up", "state="+cb.Query().Get("state")+"&code="+strings.Repeat("c", 1<<20), form...),
				http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
			if n := w.fake.hit("/token"); n != 0 {
				t.Fatalf("token requests = %d, want none", n)
			}
			// None of it used the state up: the real callback still signs in.
			w.mustSignedIn(t, b, b.do(http.MethodGet, callback, ""), "/")
		})
	}
}
