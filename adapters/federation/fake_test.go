package federation_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/gatehouse/gatehouse/adapters/federation"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The test's client registration at the fake providers. The secret is long
// enough to be an HS256 key, for the test that signs with it.
const (
	clientID     = "client-1"
	clientSecret = "s3cret-s3cret-s3cret-s3cret-s3cret-s3cret"
	redirectURI  = "https://gatehouse.test/api/auth/callback/acme"
)

// fakeClock is a ports.Clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Now().UTC().Truncate(time.Second)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testKey is a signing key of a fake provider.
type testKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

// public is the key as the provider publishes it.
func (k testKey) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

// testKeys are made once: RSA key generation is slow.
var testKeys = sync.OnceValue(func() map[string]testKey {
	rsa1, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	rsa2, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return map[string]testKey{
		"rsa-1": {kid: "rsa-1", alg: jose.RS256, priv: rsa1},
		"rsa-2": {kid: "rsa-2", alg: jose.RS256, priv: rsa2},
		"ec-1":  {kid: "ec-1", alg: jose.ES256, priv: ec},
	}
})

// sign signs claims with k as a compact JWS.
func sign(t *testing.T, k testKey, claims map[string]any) string {
	t.Helper()
	return signWith(t, jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, claims)
}

func signWith(t *testing.T, key jose.SigningKey, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("JWT"))
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

// unsigned is claims as a JWT with alg none.
func unsigned(t *testing.T, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(payload) + "."
}

// s256 is the PKCE challenge of verifier, computed here independently of
// the package.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// atHash is the at_hash of an RS256 or ES256 token's access token.
func atHash(accessToken string) string {
	sum := sha256.Sum256([]byte(accessToken))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// grant is an authorization code the fake provider issued.
type grant struct {
	challenge, method, nonce, redirectURI string
}

// fakeOP is an OpenID provider on loopback: discovery, JWKS, token and
// userinfo endpoints. Its fields change what it answers; set them before
// the client reads what they change.
type fakeOP struct {
	t     *testing.T
	srv   *httptest.Server
	clock *fakeClock

	mu sync.Mutex
	// discovery is the document, served as it is, with discoveryStatus
	// (200 when 0).
	discovery       map[string]any
	discoveryStatus int
	// published are the keys of the JWKS, served with jwksStatus (200
	// when 0); signer signs ID tokens.
	published  []testKey
	jwksStatus int
	signer     testKey
	// authMethod is the client authentication the token endpoint
	// requires: "basic" or "post".
	authMethod string
	// claims edits the ID token's claims; idToken replaces the signed
	// token (given the claims); noIDToken leaves it out.
	claims    func(m map[string]any)
	idToken   func(m map[string]any) string
	noIDToken bool
	// userinfo edits the userinfo answer (given the default).
	userinfo func(m map[string]any)
	// token replaces the token endpoint's handler.
	token http.HandlerFunc

	codes  map[string]grant
	issued []string // access tokens
	hits   map[string]int
	n      int
}

// newFakeOP starts a fake provider signing with rsa-1 and publishing it.
func newFakeOP(t *testing.T, clock *fakeClock) *fakeOP {
	t.Helper()
	op := &fakeOP{t: t, clock: clock, authMethod: "basic", codes: map[string]grant{}, hits: map[string]int{}}
	op.signer = testKeys()["rsa-1"]
	op.published = []testKey{op.signer}
	mux := http.NewServeMux()
	mux.HandleFunc("/", op.serve)
	op.srv = httptest.NewServer(mux)
	t.Cleanup(op.srv.Close)
	u := op.srv.URL
	op.discovery = map[string]any{
		"issuer":                                u,
		"authorization_endpoint":                u + "/authorize",
		"token_endpoint":                        u + "/token",
		"userinfo_endpoint":                     u + "/userinfo",
		"jwks_uri":                              u + "/jwks",
		"id_token_signing_alg_values_supported": []string{"RS256", "ES256", "HS256", "none"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"authorization_response_iss_parameter_supported": true,
	}
	return op
}

// provider is the registration of op, preset oidc unless one is given.
func (op *fakeOP) provider(t *testing.T, preset ...domain.IdentityProviderPreset) ports.UpstreamProvider {
	t.Helper()
	pr := domain.PresetOIDC
	if len(preset) > 0 {
		pr = preset[0]
	}
	p, err := domain.NewIdentityProvider(domain.IdentityProvider{
		ID: "acme", Preset: pr, Issuer: op.srv.URL, ClientID: clientID,
		SealedClientSecret: []byte("sealed"), Enabled: true,
	}, op.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return ports.UpstreamProvider{Provider: p, ClientSecret: clientSecret}
}

// hit returns how many requests path had.
func (op *fakeOP) hit(path string) int {
	op.mu.Lock()
	defer op.mu.Unlock()
	return op.hits[path]
}

// firstAccessToken returns the first access token the provider issued.
func (op *fakeOP) firstAccessToken() string {
	op.mu.Lock()
	defer op.mu.Unlock()
	if len(op.issued) == 0 {
		return ""
	}
	return op.issued[0]
}

// set changes the provider under its lock.
func (op *fakeOP) set(fn func(op *fakeOP)) {
	op.mu.Lock()
	defer op.mu.Unlock()
	fn(op)
}

// authorize plays the browser's trip to the authorization endpoint: it
// records the request's challenge and nonce and returns a code.
func (op *fakeOP) authorize(t *testing.T, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	op.mu.Lock()
	defer op.mu.Unlock()
	op.n++
	code := fmt.Sprintf("code-%d", op.n)
	op.codes[code] = grant{challenge: q.Get("code_challenge"), method: q.Get("code_challenge_method"), nonce: q.Get("nonce"), redirectURI: q.Get("redirect_uri")}
	return code
}

// baseClaims are a valid ID token's claims.
func (op *fakeOP) baseClaims(nonce, accessToken string) map[string]any {
	now := op.clock.Now()
	m := map[string]any{
		"iss": op.srv.URL, "sub": "user-1", "aud": clientID,
		"exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix(),
		"email": "ada@example.com", "email_verified": true, "name": "Ada Lovelace",
		"picture": "https://img.example/ada.png", "amr": []string{"pwd", "mfa"},
	}
	if nonce != "" {
		m["nonce"] = nonce
	}
	if accessToken != "" {
		m["at_hash"] = atHash(accessToken)
	}
	return m
}

func (op *fakeOP) serve(w http.ResponseWriter, r *http.Request) {
	op.mu.Lock()
	op.hits[r.URL.Path]++
	op.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		op.mu.Lock()
		doc, _ := json.Marshal(op.discovery)
		status := op.discoveryStatus
		op.mu.Unlock()
		if status == 0 {
			status = http.StatusOK
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(doc)
	case "/jwks":
		op.mu.Lock()
		set := jose.JSONWebKeySet{}
		for _, k := range op.published {
			set.Keys = append(set.Keys, k.public())
		}
		status := op.jwksStatus
		op.mu.Unlock()
		if status == 0 {
			status = http.StatusOK
		}
		writeJSON(w, status, set)
	case "/token":
		op.mu.Lock()
		h := op.token
		op.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		op.serveToken(w, r)
	case "/userinfo":
		op.serveUserInfo(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveToken is the token endpoint: it checks the client's
// authentication, the code, the redirect URI and the PKCE verifier against
// the challenge the authorization request carried.
func (op *fakeOP) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	var id, secret string
	if op.authMethod == "post" {
		if _, _, basic := r.BasicAuth(); !basic {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
	} else if u, s, basic := r.BasicAuth(); basic && !r.PostForm.Has("client_secret") {
		id, secret = u, s
	}
	if id != clientID || secret != clientSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_client"})
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		g, ok := op.codes[r.PostForm.Get("code")]
		delete(op.codes, r.PostForm.Get("code"))
		if !ok || g.redirectURI != r.PostForm.Get("redirect_uri") || g.method != "S256" || s256(r.PostForm.Get("code_verifier")) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		op.n++
		at := fmt.Sprintf("at-%d", op.n)
		op.issued = append(op.issued, at)
		resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-1", "scope": "openid email"}
		if !op.noIDToken {
			claims := op.baseClaims(g.nonce, at)
			if op.claims != nil {
				op.claims(claims)
			}
			if op.idToken != nil {
				resp["id_token"] = op.idToken(claims)
			} else {
				resp["id_token"] = sign(op.t, op.signer, claims)
			}
		}
		writeJSON(w, http.StatusOK, resp)
	case "refresh_token":
		if r.PostForm.Get("refresh_token") != "rt-1" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
			return
		}
		op.issued = append(op.issued, "at-refreshed")
		writeJSON(w, http.StatusOK, map[string]any{"access_token": "at-refreshed", "token_type": "Bearer", "expires_in": "1800"})
	default:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
	}
}

// serveUserInfo answers an access token the provider issued.
func (op *fakeOP) serveUserInfo(w http.ResponseWriter, r *http.Request) {
	op.mu.Lock()
	defer op.mu.Unlock()
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	known := false
	for _, at := range op.issued {
		known = known || (ok && at == token)
	}
	if !known {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	m := map[string]any{"sub": "user-1", "email": "ada@userinfo.example", "email_verified": "true", "name": "Ada (userinfo)", "picture": "https://img.example/ui.png"}
	if op.userinfo != nil {
		op.userinfo(m)
	}
	writeJSON(w, http.StatusOK, m)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// newClient returns a client on loopback with clock.
func newClient(clock ports.Clock) *federation.Client {
	return federation.NewClient(&http.Client{}, clock)
}

// mustSignIn runs the authorization code flow against op up to the code:
// the authorization URL (with verifier and nonce) through the fake
// authorization endpoint.
func mustSignIn(t *testing.T, c *federation.Client, p ports.UpstreamProvider, op *fakeOP, verifier, nonce string) string {
	t.Helper()
	u, err := c.AuthorizationURL(t.Context(), p, ports.UpstreamAuthorization{State: "state-1", Verifier: verifier, Nonce: nonce, RedirectURI: redirectURI})
	if err != nil {
		t.Fatalf("AuthorizationURL: %v", err)
	}
	return op.authorize(t, u)
}

// mustBe fails unless err is want, and holds neither the client secret
// nor anything of leaks (codes, tokens).
func mustBe(t *testing.T, err, want error, leaks ...string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
	for _, s := range append(leaks, clientSecret) {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Fatalf("error %q holds a secret %q", err, s)
		}
	}
}
