package federation

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

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

// Ensure a sign-in through preset google with every endpoint overridden
// (discovery names decoys that fail the test) creates a verified user,
// signs them in, reads the name from the overridden userinfo endpoint, and
// lists the account; a second sign-in finds the same user.
func TestFederationUpstream_google_preset_with_overridden_endpoints(t *testing.T) {
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "true"}))
			w.Fake.Set(func(f *harness.FuFake) {
				f.Decoy = true
				f.User = harness.FuUser{Sub: "g-1001", Email: "gina@mail.example", EmailVerified: true, UserinfoName: "Gina Google"}
			})
			u := w.Fake.URL
			w.Register(t, w.Fake, map[string]any{"id": "google", "preset": "google",
				"endpoints": map[string]any{"authorization": u + "/authorize", "token": u + "/token", "userinfo": u + "/userinfo", "jwks": u + "/jwks"}})

			b := harness.NewFuBrowser(t, w.A)
			user := w.MustSignedIn(t, b, w.SignIn(t, b, "google", nil), "/welcome")
			if user["email"] != "gina@mail.example" || user["emailVerified"] != true || user["name"] != "Gina Google" {
				t.Fatalf("session user = %v, want Gina, verified, named by userinfo", user)
			}
			list, raw := b.Accounts()
			if !slices.Equal(list, []string{"google:g-1001"}) || raw[0]["userId"] != user["id"] {
				t.Fatalf("list-accounts = %v %v, want the google account of %v", list, raw, user["id"])
			}
			for path, want := range map[string]int{"/authorize": 1, "/token": 1, "/userinfo": 1, "/jwks": 1} {
				if got := w.Fake.Hit(path); got != want {
					t.Fatalf("%s hit %d times, want %d", path, got, want)
				}
			}

			// A returning user: same user, callbackURL, no second account.
			b2 := harness.NewFuBrowser(t, w.A)
			again := w.MustSignedIn(t, b2, w.SignIn(t, b2, "google", nil), "/home")
			if again["id"] != user["id"] {
				t.Fatalf("second sign-in is user %v, want %v", again["id"], user["id"])
			}
			if list, _ := b2.Accounts(); len(list) != 1 {
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
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "true"}))
			u := w.Fake.URL
			w.Register(t, w.Fake, map[string]any{"id": "github", "preset": "github", "issuer": nil,
				"endpoints": map[string]any{"authorization": u + "/login/oauth/authorize", "token": u + "/login/oauth/access_token", "api": u + "/api"}})

			// The verified primary address.
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{GitHubID: 583231, Login: "octocat", Name: "Octo Cat", Emails: []harness.FuGitHubEmail{
					{Email: "old@octo.example", Primary: false, Verified: false},
					{Email: "octo@octo.example", Primary: true, Verified: true},
				}}
			})
			b := harness.NewFuBrowser(t, w.A)
			user := w.MustSignedIn(t, b, w.SignIn(t, b, "github", nil), "/welcome")
			if user["email"] != "octo@octo.example" || user["emailVerified"] != true || user["name"] != "Octo Cat" {
				t.Fatalf("session user = %v, want Octo Cat, octo@octo.example verified", user)
			}
			if list, _ := b.Accounts(); !slices.Equal(list, []string{"github:583231"}) {
				t.Fatalf("list-accounts = %v, want github:583231", list)
			}
			if w.Fake.Hit("/api/user") != 1 || w.Fake.Hit("/api/user/emails") != 1 || w.Fake.Hit("/.well-known/openid-configuration") != 0 {
				t.Fatalf("GitHub API hits: /user %d, /user/emails %d, discovery %d", w.Fake.Hit("/api/user"), w.Fake.Hit("/api/user/emails"),
					w.Fake.Hit("/.well-known/openid-configuration"))
			}

			// Only a non-primary address is verified: the public one is
			// taken, unverified, and no user is made of it (whoever verified
			// it later would share the account with this GitHub identity).
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{GitHubID: 99, Login: "nina", PublicEmail: "nina@public.example", Emails: []harness.FuGitHubEmail{
					{Email: "nina@public.example", Primary: true, Verified: false},
					{Email: "nina@work.example", Primary: false, Verified: true},
				}}
			})
			b = harness.NewFuBrowser(t, w.A)
			w.MustRefused(t, b, w.SignIn(t, b, "github", nil), "/signin-failed", "email_not_verified")
			if got := w.UsersNamed(t, "nina@"); len(got) != 0 {
				t.Fatalf("users = %v, want none made of an unverified address", got)
			}
			harness.MustNoMail(t, w.A, "nina@public.example", "Verify your email address")

			// GitHub sends no iss: a callback with one is not GitHub's.
			w.Fake.Set(func(f *harness.FuFake) { f.CallbackIss = "https://evil.example" })
			tokens := w.Fake.Hit("/login/oauth/access_token")
			b = harness.NewFuBrowser(t, w.A)
			w.MustRefused(t, b, w.SignIn(t, b, "github", nil), "/signin-failed", "issuer_mismatch")
			if n := w.Fake.Hit("/login/oauth/access_token"); n != tokens {
				t.Fatalf("the code was redeemed despite the iss (%d token requests, want %d)", n, tokens)
			}
			w.Fake.Set(func(f *harness.FuFake) { f.CallbackIss = "" })

			// No address at all.
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{GitHubID: 7, Login: "ghost", Emails: []harness.FuGitHubEmail{{Email: "ghost@ghost.example", Primary: false, Verified: true}}}
			})
			b = harness.NewFuBrowser(t, w.A)
			w.MustRefused(t, b, w.SignIn(t, b, "github", nil), "/signin-failed", "email_not_found")
			if got := w.UsersNamed(t, "ghost@"); len(got) != 0 {
				t.Fatalf("users = %v, want none", got)
			}
		})
	}
}

// Ensure an ID token that is not valid ends the sign-in with
// unable_to_get_user_info, no session and no user: a nonce that is not
// the one sent, a key not in the key set (same kid), alg none, expired.
func TestFederationUpstream_invalid_id_tokens(t *testing.T) {
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "up"})
			cases := []struct {
				name   string
				claims func(m map[string]any)
				sign   func(m map[string]any) string
			}{
				{"nonce_mismatch", func(m map[string]any) { m["nonce"] = "not-the-nonce-that-was-sent" }, nil},
				{"nonce_missing", func(m map[string]any) { delete(m, "nonce") }, nil},
				{"key_not_in_jwks", nil, func(m map[string]any) string { return harness.FuSign(t, harness.FuKeys()[1], m) }},
				{"alg_none", nil, func(m map[string]any) string { return fuUnsigned(t, m) }},
				{"expired", func(m map[string]any) {
					m["iat"], m["exp"] = time.Now().Add(-2*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
				}, nil},
				{"wrong_audience", func(m map[string]any) { m["aud"] = "someone-else" }, nil},
				{"wrong_issuer", func(m map[string]any) { m["iss"] = "https://evil.example" }, nil},
			}
			for i, tc := range cases {
				email := fmt.Sprintf("victim%d@mail.example", i)
				w.Fake.Set(func(f *harness.FuFake) {
					f.User = harness.FuUser{Sub: "sub-" + tc.name, Email: email, EmailVerified: true, Name: "Victim"}
					f.Claims, f.Sign = tc.claims, tc.sign
				})
				b := harness.NewFuBrowser(t, w.A)
				r := w.SignIn(t, b, "up", nil)
				t.Run(tc.name, func(t *testing.T) {
					w.MustRefused(t, b, r, "/signin-failed", "unable_to_get_user_info")
					if got := w.UsersNamed(t, email); len(got) != 0 {
						t.Fatalf("users = %v, want none", got)
					}
				})
			}
			// The same provider still works with a valid token.
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "sub-ok", Email: "ok@mail.example", EmailVerified: true, Name: "Okay"}
				f.Claims, f.Sign = nil, nil
			})
			b := harness.NewFuBrowser(t, w.A)
			w.MustSignedIn(t, b, w.SignIn(t, b, "up", nil), "/welcome")
		})
	}
}

// Ensure RFC 9207: a callback's iss that is not the provider's is
// issuer_mismatch and a missing one issuer_missing when discovery promises
// it, both before the code is redeemed; without the promise a missing iss
// is accepted, a wrong one still refused.
func TestFederationUpstream_issuer_in_callback(t *testing.T) {
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			promising := w.Fake
			silent := harness.NewFuFake(t, w.A)
			silent.Set(func(f *harness.FuFake) { f.IssInResponse = false })
			w.Register(t, promising, map[string]any{"id": "promising"})
			w.Register(t, silent, map[string]any{"id": "silent"})

			for i, tc := range []struct {
				fake     *harness.FuFake
				provider string
				iss      string
				code     string
			}{
				{promising, "promising", "https://evil.example", "issuer_mismatch"},
				{promising, "promising", "-", "issuer_missing"},
				{silent, "silent", "https://evil.example", "issuer_mismatch"},
				{silent, "silent", silent.URL + "/", "issuer_mismatch"},
			} {
				tc.fake.Set(func(f *harness.FuFake) {
					f.CallbackIss = tc.iss
					f.User = harness.FuUser{Sub: fmt.Sprintf("iss-%d", i), Email: fmt.Sprintf("iss%d@mail.example", i), EmailVerified: true}
				})
				b := harness.NewFuBrowser(t, w.A)
				w.MustRefused(t, b, w.SignIn(t, b, tc.provider, nil), "/signin-failed", tc.code)
				if n := tc.fake.Hit("/token"); n != 0 {
					t.Fatalf("case %d: the code was redeemed (%d token requests) despite the issuer", i, n)
				}
			}
			silent.Set(func(f *harness.FuFake) {
				f.CallbackIss = "-"
				f.User = harness.FuUser{Sub: "quiet", Email: "quiet@mail.example", EmailVerified: true}
			})
			b := harness.NewFuBrowser(t, w.A)
			w.MustSignedIn(t, b, w.SignIn(t, b, "silent", nil), "/welcome")
			promising.Set(func(f *harness.FuFake) {
				f.CallbackIss = ""
				f.User = harness.FuUser{Sub: "loud", Email: "loud@mail.example", EmailVerified: true}
			})
			b = harness.NewFuBrowser(t, w.A)
			w.MustSignedIn(t, b, w.SignIn(t, b, "promising", nil), "/welcome")
		})
	}
}

// Ensure the state binds the callback to the browser that started the
// sign-in: another browser (no state cookie) gets state_mismatch without
// using the state up, so the right browser still finishes; a state cookie
// of a later sign-in does not fit an earlier one; a finished callback
// cannot be replayed, not even with its state cookie.
func TestFederationUpstream_state(t *testing.T) {
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "up"})
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "s-1", Email: "sam@mail.example", EmailVerified: true, Name: "Sam"}
			})

			b := harness.NewFuBrowser(t, w.A)
			callback := w.Authorize(t, b, w.Start(t, b, "/api/auth/sign-in/social",
				map[string]any{"provider": "up", "callbackURL": "/home", "errorCallbackURL": "/signin-failed"}))
			stateCookie := b.Cookie(harness.FuStateCookie)

			other := harness.NewFuBrowser(t, w.A)
			r := other.Do(http.MethodGet, callback, "")
			w.MustRefused(t, other, r, "/api/auth/error", "state_mismatch")
			if c := harness.RawSetCookie(r, harness.FuStateCookie); c != "" {
				t.Fatalf("a mismatched callback touches the state cookie: %s", c)
			}

			// A second sign-in in b replaces its state cookie: the first
			// callback no longer fits.
			w.Start(t, b, "/api/auth/sign-in/social", map[string]any{"provider": "up", "callbackURL": "/home"})
			w.MustRefused(t, b, b.Do(http.MethodGet, callback, ""), "/api/auth/error", "state_mismatch")

			// The first sign-in is still in flight: with its cookie back, b
			// finishes it.
			u, _ := url.Parse(w.A.URL)
			b.Hc.Jar.SetCookies(u, []*http.Cookie{{Name: harness.FuStateCookie, Value: stateCookie, Path: "/"}})
			w.MustSignedIn(t, b, b.Do(http.MethodGet, callback, ""), "/home")
			if n := w.Fake.Hit("/token"); n != 1 {
				t.Fatalf("token requests = %d, want 1", n)
			}

			// Replays: in b (its state cookie is cleared), and in a browser
			// holding the used state's cookie.
			w.MustRedirect(t, b.Do(http.MethodGet, callback, ""), "/api/auth/error?error=state_mismatch")
			replay := harness.NewFuBrowser(t, w.A)
			replay.Hc.Jar.SetCookies(u, []*http.Cookie{{Name: harness.FuStateCookie, Value: stateCookie, Path: "/"}})
			w.MustRefused(t, replay, replay.Do(http.MethodGet, callback, ""), "/api/auth/error", "state_mismatch")
			if n := w.Fake.Hit("/token"); n != 1 {
				t.Fatalf("token requests after the replays = %d, want 1", n)
			}

			// No state at all.
			w.MustRefused(t, other, other.Do(http.MethodGet, "/api/auth/callback/up?code=abc", ""), "/api/auth/error", "state_not_found")

			// The same callback, with its cookie, many times at once: one
			// sign-in, one code redeemed.
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "s-2", Email: "sue@mail.example", EmailVerified: true}
			})
			racer := harness.NewFuBrowser(t, w.A)
			raced := w.Authorize(t, racer, w.Start(t, racer, "/api/auth/sign-in/social", map[string]any{"provider": "up", "callbackURL": "/home"}))
			cookie := harness.FuStateCookie + "=" + racer.Cookie(harness.FuStateCookie)
			const n = 8
			locations := make(chan string, n)
			noJar := &http.Client{CheckRedirect: racer.Hc.CheckRedirect}
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
				case w.A.URL + "/home":
					won++
				case w.A.URL + "/api/auth/error?error=state_mismatch":
				default:
					t.Fatalf("a concurrent callback went to %q", loc)
				}
			}
			if won != 1 || w.Fake.Hit("/token") != 2 {
				t.Fatalf("%d of %d concurrent callbacks signed in, %d codes redeemed in all; want 1 and 2", won, n, w.Fake.Hit("/token"))
			}
		})
	}
}

// Ensure an upstream error reaches errorCallbackURL: an RFC 6749 code as
// it is, anything else as upstream_error, the description never.
func TestFederationUpstream_upstream_error(t *testing.T) {
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "up"})
			for _, tc := range []struct{ upstream, want string }{
				{"access_denied", "access_denied"},
				{"temporarily_unavailable", "temporarily_unavailable"},
				{"<script>alert(1)</script>", "upstream_error"},
				{"made_up_code", "upstream_error"},
			} {
				w.Fake.Set(func(f *harness.FuFake) { f.CallbackError = tc.upstream })
				b := harness.NewFuBrowser(t, w.A)
				r := w.SignIn(t, b, "up", nil)
				w.MustRefused(t, b, r, "/signin-failed", tc.want)
				if strings.Contains(r.Header.Get("Location"), "upstream") && tc.want != "upstream_error" {
					t.Fatalf("the description leaks into %s", r.Header.Get("Location"))
				}
			}
			if n := w.Fake.Hit("/token"); n != 0 {
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
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "up"})
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "h-1", Email: "hana@mail.example", EmailVerified: true, Name: "Hana\x00Evil"}
				f.Claims = func(m map[string]any) { m["picture"] = "https://img.example/a\x00b" }
				f.Scope = "openid a\x00b c\"d e\\f email"
			})
			b := harness.NewFuBrowser(t, w.A)
			user := w.MustSignedIn(t, b, w.SignIn(t, b, "up", nil), "/welcome")
			if user["image"] != nil || user["name"] != "hana" {
				t.Fatalf("user = %v, want no image and the address's local part as name", user)
			}
			if _, raw := b.Accounts(); len(raw) != 1 || fmt.Sprint(raw[0]["scopes"]) != "[openid email]" {
				t.Fatalf("list-accounts = %v, want scopes [openid email]", raw)
			}
			// A returning sign-in whose address has a NUL byte: still Hana,
			// and her account keeps working.
			w.Fake.Set(func(f *harness.FuFake) { f.Scope = "" })
			for _, claims := range []func(m map[string]any){func(m map[string]any) { m["email"] = "hana\x00@mail.example" }, nil} {
				w.Fake.Set(func(f *harness.FuFake) { f.Claims = claims })
				b := harness.NewFuBrowser(t, w.A)
				if again := w.MustSignedIn(t, b, w.SignIn(t, b, "up", nil), "/home"); again["id"] != user["id"] {
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
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "up"})
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "p-1", Email: "pia@mail.example", EmailVerified: true}
			})
			b := harness.NewFuBrowser(t, w.A)
			callback := w.Authorize(t, b, w.Start(t, b, "/api/auth/sign-in/social", map[string]any{"provider": "up", "callbackURL": "/home"}))
			cb, err := url.Parse(callback)
			if err != nil {
				t.Fatal(err)
			}
			post := func(hc *http.Client) *http.Response {
				t.Helper()
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, w.A.URL+cb.Path, strings.NewReader(cb.RawQuery))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", w.Fake.URL) // the provider's page posts the form
				res, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = res.Body.Close()
				return res
			}
			// With the browser's cookies, from the provider's origin: refused.
			if res := post(b.Hc); res.StatusCode != http.StatusForbidden {
				t.Fatalf("a cross-origin POST callback with cookies = %d, want 403", res.StatusCode)
			}
			// Without cookies, as a browser sends it: to the GET callback.
			res := post(&http.Client{CheckRedirect: b.Hc.CheckRedirect})
			loc, err := url.Parse(res.Header.Get("Location"))
			if res.StatusCode != http.StatusFound || err != nil || w.A.URL+loc.Path != w.A.URL+cb.Path || loc.Query().Encode() != cb.Query().Encode() {
				t.Fatalf("form_post answered %d, Location %q; want the GET callback with %s", res.StatusCode, res.Header.Get("Location"), cb.RawQuery)
			}
			if res.Header.Get("Set-Cookie") != "" {
				t.Fatalf("form_post sets cookies: %v", res.Header.Values("Set-Cookie"))
			}
			w.MustSignedIn(t, b, b.Do(http.MethodGet, res.Header.Get("Location"), ""), "/home")
		})
	}
}

// Ensure an upstream identity joins the local user of its address only
// when the provider is trusted for linking, says the address is verified,
// and the local address is verified (pre-account takeover); otherwise
// account_not_linked and nothing linked. A join is audited as account.link.
func TestFederationUpstream_linking_by_email(t *testing.T) {
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "untrusted", "trustedForLinking": false})
			w.Register(t, w.Fake, map[string]any{"id": "trusted", "trustedForLinking": true})
			_, lenaID := harness.MustVerifiedUser(t, w.A, "Lena Local", "lena@mail.example", harness.UserPassword)
			_, ullaID := harness.MustPlainUser(t, w.A, "Ulla Unverified", "ulla@mail.example", harness.UserPassword)
			local := harness.NewFuBrowser(t, w.A)
			local.SignInWithPassword("lena@mail.example", harness.UserPassword)
			localUlla := harness.NewFuBrowser(t, w.A)
			localUlla.SignInWithPassword("ulla@mail.example", harness.UserPassword)

			try := func(provider string, u harness.FuUser, code string) {
				t.Helper()
				w.Fake.Set(func(f *harness.FuFake) { f.User = u })
				b := harness.NewFuBrowser(t, w.A)
				w.MustRefused(t, b, w.SignIn(t, b, provider, nil), "/signin-failed", code)
			}
			mustOnlyPassword := func(b *harness.FuBrowser, id string) {
				t.Helper()
				if list, _ := b.Accounts(); !slices.Equal(list, []string{"credential:" + id}) {
					t.Fatalf("list-accounts = %v, want only the password", list)
				}
			}
			try("untrusted", harness.FuUser{Sub: "lena-1", Email: "lena@mail.example", EmailVerified: true}, "account_not_linked")
			mustOnlyPassword(local, lenaID)
			try("trusted", harness.FuUser{Sub: "lena-1", Email: "lena@mail.example", EmailVerified: false}, "account_not_linked")
			mustOnlyPassword(local, lenaID)
			// The address in another case is the same address.
			try("untrusted", harness.FuUser{Sub: "lena-2", Email: "LENA@mail.example", EmailVerified: true}, "account_not_linked")
			mustOnlyPassword(local, lenaID)
			try("trusted", harness.FuUser{Sub: "ulla-1", Email: "ulla@mail.example", EmailVerified: true}, "account_not_linked")
			mustOnlyPassword(localUlla, ullaID)
			if u := localUlla.Session(); u["emailVerified"] != false {
				t.Fatalf("ulla = %v, want her address still unverified", u)
			}
			if got := w.UsersNamed(t, "@mail.example"); len(got) != 2 {
				t.Fatalf("users = %v, want only lena and ulla", got)
			}

			// Trusted and verified: joins Lena.
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "lena-1", Email: "lena@mail.example", EmailVerified: true}
			})
			b := harness.NewFuBrowser(t, w.A)
			u := w.MustSignedIn(t, b, w.SignIn(t, b, "trusted", nil), "/home")
			if u["id"] != lenaID {
				t.Fatalf("signed in as %v, want Lena %s", u["id"], lenaID)
			}
			if list, _ := local.Accounts(); !slices.Equal(list, []string{"credential:" + lenaID, "trusted:lena-1"}) {
				t.Fatalf("list-accounts = %v, want the password and trusted:lena-1", list)
			}
			r := w.Admin.Get("/api/admin/audit-log?action=account.link&actorId=" + lenaID)
			harness.MustStatus(t, r, http.StatusOK)
			var audit struct {
				Data []map[string]any `json:"data"`
			}
			harness.MustUnmarshal(t, r.Body, &audit)
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
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "up"})
			_, lenaID := harness.MustVerifiedUser(t, w.A, "Lena", "lena@mail.example", harness.UserPassword)
			_, markID := harness.MustVerifiedUser(t, w.A, "Mark", "mark@mail.example", harness.UserPassword)
			lena, mark := harness.NewFuBrowser(t, w.A), harness.NewFuBrowser(t, w.A)
			lena.SignInWithPassword("lena@mail.example", harness.UserPassword)
			mark.SignInWithPassword("mark@mail.example", harness.UserPassword)
			lenaSession := lena.Cookie(harness.FuSessionCookie)

			link := func(b *harness.FuBrowser, u harness.FuUser) *harness.Response {
				t.Helper()
				w.Fake.Set(func(f *harness.FuFake) { f.User = u })
				return b.Do(http.MethodGet, w.Authorize(t, b, w.Start(t, b, "/api/auth/link-social",
					map[string]any{"provider": "up", "callbackURL": "/linked", "errorCallbackURL": "/link-failed"})), "")
			}
			mustNoNewSession := func(r *harness.Response, b *harness.FuBrowser, id, session string) {
				t.Helper()
				if c := harness.RawSetCookie(r, harness.FuSessionCookie); c != "" {
					t.Fatalf("link-social's callback sets a session cookie: %s", c)
				}
				if u := b.Session(); u == nil || u["id"] != id || b.Cookie(harness.FuSessionCookie) != session {
					t.Fatalf("after linking the session is %v, want %s's own", u, id)
				}
			}

			r := link(lena, harness.FuUser{Sub: "lena-up", Email: "Lena@mail.example", EmailVerified: true})
			w.MustRedirect(t, r, "/linked")
			mustNoNewSession(r, lena, lenaID, lenaSession)
			list, raw := lena.Accounts()
			if !slices.Equal(list, []string{"credential:" + lenaID, "up:lena-up"}) {
				t.Fatalf("Lena's accounts = %v", list)
			}
			accountID := raw[1]["id"].(string)

			markSession := mark.Cookie(harness.FuSessionCookie)
			for _, tc := range []struct {
				u    harness.FuUser
				code string
			}{
				{harness.FuUser{Sub: "lena-up", Email: "mark@mail.example", EmailVerified: true}, "account_already_linked_to_different_user"},
				{harness.FuUser{Sub: "mark-up", Email: "someone@mail.example", EmailVerified: true}, "email_does_not_match"},
				{harness.FuUser{Sub: "mark-up", Email: "mark@mail.example", EmailVerified: false}, "unable_to_link_account"},
			} {
				r := link(mark, tc.u)
				w.MustRedirect(t, r, "/link-failed?error="+tc.code)
				mustNoNewSession(r, mark, markID, markSession)
				if list, _ := mark.Accounts(); !slices.Equal(list, []string{"credential:" + markID}) {
					t.Fatalf("Mark's accounts after %s = %v", tc.code, list)
				}
			}
			if list, _ := lena.Accounts(); len(list) != 2 {
				t.Fatalf("Lena's accounts after Mark's attempts = %v", list)
			}

			// Unlinking: Mark cannot unlink Lena's; Lena can, keeping her
			// password.
			harness.MustCode(t, mark.Do(http.MethodPost, "/api/auth/unlink-account", harness.MustJSON(t, map[string]any{"accountId": accountID})),
				http.StatusBadRequest, "ACCOUNT_NOT_FOUND")
			harness.MustStatusTrue(t, lena.Do(http.MethodPost, "/api/auth/unlink-account", harness.MustJSON(t, map[string]any{"accountId": accountID})))
			if list, _ := lena.Accounts(); !slices.Equal(list, []string{"credential:" + lenaID}) {
				t.Fatalf("Lena's accounts after unlinking = %v", list)
			}
			// The identity is free again: a sign-in with it is no longer Lena.
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "lena-up", Email: "lena@mail.example", EmailVerified: true}
			})
			b := harness.NewFuBrowser(t, w.A)
			w.MustRefused(t, b, w.SignIn(t, b, "up", nil), "/signin-failed", "account_not_linked")

			// A link whose session ends before the callback links nothing.
			callback := w.Authorize(t, lena, w.Start(t, lena, "/api/auth/link-social",
				map[string]any{"provider": "up", "callbackURL": "/linked", "errorCallbackURL": "/link-failed"}))
			harness.MustOK(t, lena.Do(http.MethodPost, "/api/auth/sign-out", "{}"))
			w.MustRefused(t, lena, lena.Do(http.MethodGet, callback, ""), "/link-failed", "unable_to_link_account")
			lena.SignInWithPassword("lena@mail.example", harness.UserPassword)
			if list, _ := lena.Accounts(); !slices.Equal(list, []string{"credential:" + lenaID}) {
				t.Fatalf("Lena's accounts after a link outliving its session = %v", list)
			}

			// link-social needs a session.
			r = harness.NewFuBrowser(t, w.A).Do(http.MethodPost, "/api/auth/link-social", harness.MustJSON(t, map[string]any{"provider": "up"}))
			harness.MustStatus(t, r, http.StatusUnauthorized)
			if c := harness.RawSetCookie(r, harness.FuStateCookie); c != "" {
				t.Fatalf("an anonymous link-social sets the state cookie: %s", c)
			}
		})
	}
}

// Ensure unlink-account needs a fresh session: with a freshness of one
// minute, a session older than that gets 403 SESSION_NOT_FRESH and the
// account stays.
func TestFederationUpstream_unlink_needs_a_fresh_session(t *testing.T) {
	t.Parallel()
	w := harness.MustFuWorld(t, harness.StoreMemory, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_SESSION_FRESH_AGE": "1m"}))
	w.Register(t, w.Fake, map[string]any{"id": "up"})
	harness.MustVerifiedUser(t, w.A, "Lena", "lena@mail.example", harness.UserPassword)
	lena := harness.NewFuBrowser(t, w.A)
	lena.SignInWithPassword("lena@mail.example", harness.UserPassword)
	w.Fake.Set(func(f *harness.FuFake) {
		f.User = harness.FuUser{Sub: "lena-up", Email: "lena@mail.example", EmailVerified: true}
	})
	w.MustRedirect(t, lena.Do(http.MethodGet, w.Authorize(t, lena, w.Start(t, lena, "/api/auth/link-social",
		map[string]any{"provider": "up", "callbackURL": "/linked"})), ""), "/linked")
	list, raw := lena.Accounts()
	if len(list) != 2 {
		t.Fatalf("accounts = %v", list)
	}
	// Only the app's clock moves: the provider's ID token is used already.
	w.A.Clock.Advance(time.Minute + time.Second)
	harness.MustCode(t, lena.Do(http.MethodPost, "/api/auth/unlink-account", harness.MustJSON(t, map[string]any{"accountId": raw[1]["id"]})),
		http.StatusForbidden, "SESSION_NOT_FRESH")
	if again, _ := lena.Accounts(); !slices.Equal(again, list) {
		t.Fatalf("accounts after the refusal = %v, want %v", again, list)
	}
}

// Ensure callbackURL, errorCallbackURL and newUserCallbackURL at a foreign
// origin are refused with 403 and their codes before anything starts: no
// state cookie, no trip to the provider.
func TestFederationUpstream_callback_targets_at_foreign_origins(t *testing.T) {
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "up"})
			_, _ = harness.MustVerifiedUser(t, w.A, "Lena", "lena@mail.example", harness.UserPassword)
			lena := harness.NewFuBrowser(t, w.A)
			lena.SignInWithPassword("lena@mail.example", harness.UserPassword)
			for _, foreign := range []string{"https://evil.example/x", "//evil.example/x", "/\\evil.example/x", "javascript:alert(1)"} {
				for _, tc := range []struct {
					path, field, code string
					b                 *harness.FuBrowser
				}{
					{"/api/auth/sign-in/social", "callbackURL", "INVALID_CALLBACK_URL", harness.NewFuBrowser(t, w.A)},
					{"/api/auth/sign-in/social", "errorCallbackURL", "INVALID_ERROR_CALLBACK_URL", harness.NewFuBrowser(t, w.A)},
					{"/api/auth/sign-in/social", "newUserCallbackURL", "INVALID_NEW_USER_CALLBACK_URL", harness.NewFuBrowser(t, w.A)},
					{"/api/auth/link-social", "callbackURL", "INVALID_CALLBACK_URL", lena},
					{"/api/auth/link-social", "errorCallbackURL", "INVALID_ERROR_CALLBACK_URL", lena},
				} {
					r := tc.b.Do(http.MethodPost, tc.path, harness.MustJSON(t, map[string]any{"provider": "up", tc.field: foreign}))
					harness.MustCode(t, r, http.StatusForbidden, tc.code)
					if c := harness.RawSetCookie(r, harness.FuStateCookie); c != "" || r.Header.Get("Location") != "" {
						t.Fatalf("%s with %s=%s set %q, Location %q", tc.path, tc.field, foreign, c, r.Header.Get("Location"))
					}
				}
			}
			if n := w.Fake.Hit("/authorize"); n != 0 {
				t.Fatalf("authorize hits = %d", n)
			}
		})
	}
}

// Ensure an unknown provider and a disabled one are 404 PROVIDER_NOT_FOUND
// (redirect and ID token alike), a sign-in in flight when its provider is
// disabled ends with oauth_provider_not_found, and enabling it again works.
func TestFederationUpstream_unknown_and_disabled_providers(t *testing.T) {
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "up"})
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "d-1", Email: "dora@mail.example", EmailVerified: true}
			})
			b := harness.NewFuBrowser(t, w.A)
			idToken := harness.FuSign(t, harness.FuKeys()[0], w.Fake.ClaimsFor(harness.FuUser{Sub: "d-1", Email: "dora@mail.example", EmailVerified: true}, "n-1"))
			for _, p := range []string{"nope", "credential", "UP"} {
				harness.MustCode(t, b.Do(http.MethodPost, "/api/auth/sign-in/social", harness.MustJSON(t, map[string]any{"provider": p})), http.StatusNotFound, "PROVIDER_NOT_FOUND")
			}
			callback := w.Authorize(t, b, w.Start(t, b, "/api/auth/sign-in/social", map[string]any{"provider": "up", "errorCallbackURL": "/signin-failed"}))

			harness.MustStatus(t, w.Admin.Post("/api/admin/identity-providers/up/disable", ""), http.StatusOK)
			for _, body := range []map[string]any{{"provider": "up"}, {"provider": "up", "idToken": map[string]any{"token": idToken, "nonce": "n-1"}}} {
				r := b.Do(http.MethodPost, "/api/auth/sign-in/social", harness.MustJSON(t, body))
				harness.MustCode(t, r, http.StatusNotFound, "PROVIDER_NOT_FOUND")
				if harness.RawSetCookie(r, harness.FuStateCookie) != "" || harness.RawSetCookie(r, harness.FuSessionCookie) != "" {
					t.Fatalf("a refused sign-in sets cookies: %v", r.Header.Values("Set-Cookie"))
				}
			}
			w.MustRefused(t, b, b.Do(http.MethodGet, callback, ""), "/signin-failed", "oauth_provider_not_found")
			if n := w.Fake.Hit("/token"); n != 0 {
				t.Fatalf("token requests = %d, want none", n)
			}

			harness.MustStatus(t, w.Admin.Post("/api/admin/identity-providers/up/enable", ""), http.StatusOK)
			w.MustSignedIn(t, b, w.SignIn(t, b, "up", nil), "/welcome")
		})
	}
}

// Ensure a native sign-in with an ID token the provider signed for A
// answers the session, and a token for another audience, with another
// nonce, unsigned or from another key is 401 INVALID_TOKEN without one; a
// GitHub provider has no ID tokens.
func TestFederationUpstream_id_token_sign_in(t *testing.T) {
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "up"})
			w.Register(t, w.Fake, map[string]any{"id": "gh", "preset": "github", "issuer": nil,
				"endpoints": map[string]any{"authorization": w.Fake.URL + "/login/oauth/authorize", "token": w.Fake.URL + "/login/oauth/access_token", "api": w.Fake.URL + "/api"}})
			nate := harness.FuUser{Sub: "n-1", Email: "nate@mail.example", EmailVerified: true, Name: "Nate Native"}
			signIn := func(b *harness.FuBrowser, provider, token, nonce string) *harness.Response {
				return b.Do(http.MethodPost, "/api/auth/sign-in/social", harness.MustJSON(t, map[string]any{"provider": provider, "idToken": map[string]any{"token": token, "nonce": nonce}}))
			}
			for _, tc := range []struct {
				name  string
				token string
				nonce string
			}{
				{"wrong_audience", harness.FuSign(t, harness.FuKeys()[0], fuEdit(w.Fake.ClaimsFor(nate, "n-1"), "aud", "another-client")), "n-1"},
				{"wrong_nonce", harness.FuSign(t, harness.FuKeys()[0], w.Fake.ClaimsFor(nate, "n-1")), "n-2"},
				{"alg_none", fuUnsigned(t, w.Fake.ClaimsFor(nate, "n-1")), "n-1"},
				{"foreign_key", harness.FuSign(t, harness.FuKeys()[1], w.Fake.ClaimsFor(nate, "n-1")), "n-1"},
				{"expired", harness.FuSign(t, harness.FuKeys()[0], fuEdit(w.Fake.ClaimsFor(nate, "n-1"), "exp", time.Now().Add(-time.Hour).Unix())), "n-1"},
				{"not_a_jwt", "not.a.jwt", "n-1"},
			} {
				b := harness.NewFuBrowser(t, w.A)
				r := signIn(b, "up", tc.token, tc.nonce)
				t.Run(tc.name, func(t *testing.T) {
					harness.MustCode(t, r, http.StatusUnauthorized, "INVALID_TOKEN")
					if c := harness.RawSetCookie(r, harness.FuSessionCookie); c != "" {
						t.Fatalf("a refused ID token sets the session cookie: %s", c)
					}
					b.MustNoSession()
				})
			}
			if got := w.UsersNamed(t, "nate@"); len(got) != 0 {
				t.Fatalf("users = %v, want none", got)
			}
			harness.MustCode(t, signIn(harness.NewFuBrowser(t, w.A), "gh", harness.FuSign(t, harness.FuKeys()[0], w.Fake.ClaimsFor(nate, "n-1")), "n-1"), http.StatusNotFound, "ID_TOKEN_NOT_SUPPORTED")

			b := harness.NewFuBrowser(t, w.A)
			r := signIn(b, "up", harness.FuSign(t, harness.FuKeys()[0], w.Fake.ClaimsFor(nate, "n-1")), "n-1")
			body := harness.MustOK(t, r)
			user := harness.MustObject(t, body["user"])
			if tok, _ := body["token"].(string); len(tok) != 32 || body["redirect"] != false || user["email"] != "nate@mail.example" || user["emailVerified"] != true {
				t.Fatalf("ID token sign-in = %s", r.Body)
			}
			if _, ok := body["url"]; ok {
				t.Fatalf("ID token sign-in has a url: %s", r.Body)
			}
			if u := b.Session(); u == nil || u["id"] != user["id"] {
				t.Fatalf("session after the ID token sign-in = %v", u)
			}
			if list, _ := b.Accounts(); !slices.Equal(list, []string{"up:n-1"}) {
				t.Fatalf("list-accounts = %v", list)
			}
			if n := w.Fake.Hit("/authorize") + w.Fake.Hit("/token"); n != 0 {
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
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := harness.MustFuWorld(t, s, nil)
			w.Register(t, w.Fake, map[string]any{"id": "up"})
			w.Fake.Set(func(f *harness.FuFake) {
				f.User = harness.FuUser{Sub: "h-1", Email: "hana@mail.example", EmailVerified: true}
			})
			b := harness.NewFuBrowser(t, w.A)
			callback := w.Authorize(t, b, w.Start(t, b, "/api/auth/sign-in/social", map[string]any{"provider": "up", "errorCallbackURL": "/signin-failed"}))
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
					harness.MustNameHostile(t, b.Do(tc.method, tc.target, tc.body), harness.HostileCase{Shape: "framework", Location: tc.location})
				})
			}
			// A 1 MB code: the request target is too long.
			harness.MustCode(t, b.Do(http.MethodGet, withCode(strings.Repeat("c", 1<<20)), ""), http.StatusRequestURITooLong, "URI_TOO_LONG")
			// The same in a form_post answer.
			form := []string{"Content-Type", "application/x-www-form-urlencoded"}
			harness.MustNameHostile(t, b.Do(http.MethodPost, "/api/auth/callback/up", "state="+cb.Query().Get("state")+"&code=hostile%00", form...),
				harness.HostileCase{Shape: "framework", Location: "body.code"})
			harness.MustCode(t, b.Do(http.MethodPost, "/api/auth/callback/up", "state="+cb.Query().Get("state")+"&code="+strings.Repeat("c", 1<<20), form...),
				http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
			if n := w.Fake.Hit("/token"); n != 0 {
				t.Fatalf("token requests = %d, want none", n)
			}
			// None of it used the state up: the real callback still signs in.
			w.MustSignedIn(t, b, b.Do(http.MethodGet, callback, ""), "/")
		})
	}
}
