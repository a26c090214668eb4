package federation_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// githubID is larger than 2^53: it must not pass through a float.
const githubID = "12345678901234567"

// fakeGitHub is GitHub's OAuth and REST endpoints on loopback.
type fakeGitHub struct {
	t   *testing.T
	srv *httptest.Server

	mu sync.Mutex
	// emails is GET /user/emails's answer; emailsStatus, when set,
	// replaces it.
	emails       []map[string]any
	emailsStatus int
	challenges   map[string]string // code → PKCE challenge
	hits         map[string]int
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	gh := &fakeGitHub{t: t, challenges: map[string]string{}, hits: map[string]int{}, emails: []map[string]any{
		{"email": "octo@secondary.example", "primary": false, "verified": true},
		{"email": "octo@private.example", "primary": true, "verified": true, "visibility": "private"},
	}}
	gh.srv = httptest.NewServer(http.HandlerFunc(gh.serve))
	t.Cleanup(gh.srv.Close)
	return gh
}

// provider is the GitHub registration, its endpoints on the fake.
func (gh *fakeGitHub) provider(t *testing.T) ports.UpstreamProvider {
	t.Helper()
	u := gh.srv.URL
	p, err := domain.NewIdentityProvider(domain.IdentityProvider{
		ID: "github", Preset: domain.PresetGitHub, ClientID: clientID, SealedClientSecret: []byte("sealed"),
		Endpoints: domain.IdentityProviderEndpoints{Authorization: u + "/login/oauth/authorize", Token: u + "/login/oauth/access_token", API: u},
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return ports.UpstreamProvider{Provider: p, ClientSecret: clientSecret}
}

func (gh *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {
	gh.mu.Lock()
	defer gh.mu.Unlock()
	gh.hits[r.URL.Path]++
	switch r.URL.Path {
	case "/login/oauth/access_token":
		gh.serveToken(w, r)
		return
	}
	// The REST API: GitHub's headers and the token it issued.
	if r.Header.Get("Authorization") != "Bearer gho_1" || r.Header.Get("Accept") != "application/vnd.github+json" ||
		r.Header.Get("X-GitHub-Api-Version") != "2022-11-28" || r.Header.Get("User-Agent") != "gatehouse" {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
		return
	}
	switch r.URL.Path {
	case "/user":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":` + githubID + `,"login":"octocat","name":null,"avatar_url":"https://avatars.example/u/1","email":"octo@public.example"}`))
	case "/user/emails":
		if gh.emailsStatus != 0 {
			writeJSON(w, gh.emailsStatus, map[string]any{"message": "Resource not accessible by integration"})
			return
		}
		writeJSON(w, http.StatusOK, gh.emails)
	default:
		http.NotFound(w, r)
	}
}

// serveToken answers as GitHub does: JSON only when asked for it, the
// client's credentials in the form, and errors with a 200.
func (gh *fakeGitHub) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil || r.Header.Get("Accept") != "application/json" {
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
		_, _ = w.Write([]byte("error=not_json"))
		return
	}
	f := r.PostForm
	if f.Get("client_id") != clientID || f.Get("client_secret") != clientSecret {
		writeJSON(w, http.StatusOK, map[string]any{"error": "incorrect_client_credentials"})
		return
	}
	tokens := map[string]any{"access_token": "gho_1", "token_type": "bearer", "scope": "read:user,user:email",
		"expires_in": 28800, "refresh_token": "ghr_2", "refresh_token_expires_in": 15811200}
	switch f.Get("grant_type") {
	case "authorization_code":
		challenge, ok := gh.challenges[f.Get("code")]
		delete(gh.challenges, f.Get("code"))
		if !ok || s256(f.Get("code_verifier")) != challenge {
			writeJSON(w, http.StatusOK, map[string]any{"error": "bad_verification_code", "error_description": "The code passed is incorrect or expired."})
			return
		}
		writeJSON(w, http.StatusOK, tokens)
	case "refresh_token":
		if f.Get("refresh_token") != "ghr_1" {
			writeJSON(w, http.StatusOK, map[string]any{"error": "bad_refresh_token"})
			return
		}
		writeJSON(w, http.StatusOK, tokens)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"error": "unsupported_grant_type"})
	}
}

// authorize records the challenge of authURL and returns a code.
func (gh *fakeGitHub) authorize(t *testing.T, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	gh.mu.Lock()
	defer gh.mu.Unlock()
	gh.challenges["gh-code"] = u.Query().Get("code_challenge")
	return "gh-code"
}

// Ensure GitHub's flow: PKCE without a nonce, the numeric id as subject,
// login for a missing name, and the verified primary e-mail.
func TestGitHub_exchange(t *testing.T) {
	gh := newFakeGitHub(t)
	clock := newFakeClock()
	c := newClient(clock)
	p := gh.provider(t)
	authURL, err := c.AuthorizationURL(t.Context(), p, ports.UpstreamAuthorization{State: "state-1", Verifier: verifier, Nonce: nonce, RedirectURI: redirectURI, LoginHint: "octocat"})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	want := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI}, "scope": {"read:user user:email"},
		"state": {"state-1"}, "code_challenge": {s256(verifier)}, "code_challenge_method": {"S256"}, "login": {"octocat"}}
	if u.Path != "/login/oauth/authorize" || !reflect.DeepEqual(u.Query(), want) {
		t.Errorf("authorization URL %s", authURL)
	}
	id, tok, err := c.Exchange(t.Context(), p, gh.authorize(t, authURL), verifier, redirectURI, "")
	if err != nil {
		t.Fatal(err)
	}
	if id.Subject != githubID || id.Name != "octocat" || id.Image != "https://avatars.example/u/1" ||
		id.Email != "octo@private.example" || !id.EmailVerified || id.Profile["login"] != "octocat" {
		t.Errorf("identity %+v", id)
	}
	now := clock.Now()
	wantTok := ports.UpstreamTokens{AccessToken: "gho_1", RefreshToken: "ghr_2", AccessTokenExpiresAt: now.Add(8 * time.Hour),
		RefreshTokenExpiresAt: now.Add(15811200 * time.Second), Scopes: []string{"read:user", "user:email"}}
	if !reflect.DeepEqual(tok, wantTok) {
		t.Errorf("tokens %+v\nwant %+v", tok, wantTok)
	}
	if md, err := c.Metadata(t.Context(), p); err != nil || md != (ports.UpstreamMetadata{AuthorizationEndpoint: p.Provider.Endpoints.Authorization}) || md.AuthorizationEndpoint == "" {
		t.Errorf("metadata %+v, %v", md, err)
	}
	_, err = c.VerifyIDToken(t.Context(), p, "a.b.c", "")
	mustBe(t, err, domain.ErrUpstreamIDToken)
}

// Ensure an address GitHub has not verified as the primary one is never
// given as verified.
func TestGitHub_email(t *testing.T) {
	cases := []struct {
		name         string
		emails       []map[string]any
		status       int
		wantEmail    string
		wantVerified bool
	}{
		{"primary_verified", nil, 0, "octo@private.example", true},
		{"no_verified_primary", []map[string]any{
			{"email": "octo@private.example", "primary": true, "verified": false},
			{"email": "octo@secondary.example", "primary": false, "verified": true},
		}, 0, "octo@public.example", false},
		{"emails_forbidden", nil, http.StatusForbidden, "octo@public.example", false},
		{"emails_not_found", nil, http.StatusNotFound, "octo@public.example", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gh := newFakeGitHub(t)
			gh.mu.Lock()
			if tc.emails != nil {
				gh.emails = tc.emails
			}
			gh.emailsStatus = tc.status
			gh.mu.Unlock()
			c := newClient(newFakeClock())
			id, err := c.UserInfo(t.Context(), gh.provider(t), "gho_1")
			if err != nil {
				t.Fatal(err)
			}
			if id.Subject != githubID || id.Email != tc.wantEmail || id.EmailVerified != tc.wantVerified {
				t.Errorf("identity %q %q %v, want %q %v", id.Subject, id.Email, id.EmailVerified, tc.wantEmail, tc.wantVerified)
			}
		})
	}
	t.Run("bad_token", func(t *testing.T) {
		gh := newFakeGitHub(t)
		_, err := newClient(newFakeClock()).UserInfo(t.Context(), gh.provider(t), "gho_bad")
		mustBe(t, err, domain.ErrUpstreamUserInfo, "gho_bad")
	})
}

// Ensure GitHub's errors answered with a 200 are refusals.
func TestGitHub_errorsWithA200(t *testing.T) {
	gh := newFakeGitHub(t)
	c := newClient(newFakeClock())
	p := gh.provider(t)
	_, _, err := c.Exchange(t.Context(), p, "gh-wrong-code", verifier, redirectURI, "")
	mustBe(t, err, domain.ErrUpstreamCode, "gh-wrong-code", verifier)

	tok, err := c.Refresh(t.Context(), p, "ghr_1")
	if err != nil || tok.AccessToken != "gho_1" || tok.RefreshToken != "ghr_2" || tok.RefreshTokenExpiresAt.IsZero() {
		t.Fatalf("refresh %+v, %v", tok, err)
	}
	_, err = c.Refresh(t.Context(), p, "ghr_old")
	mustBe(t, err, domain.ErrUpstreamRefresh, "ghr_old")
	gh.mu.Lock()
	defer gh.mu.Unlock()
	if gh.hits["/user"] != 0 {
		t.Errorf("the API was read after a refused code")
	}
}
