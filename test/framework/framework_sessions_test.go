package framework

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure sign-up and sign-in set the session cookie with Better Auth's name
// and attributes: Max-Age for a remembered session, a browser-session cookie
// plus dont_remember otherwise, __Secure- and Secure on https, and the
// configured prefix; __Host- (host-only, Path=/, Secure) when asked for.
// It keeps a fresh application: it has cookie settings of its own.
func TestFramework_session_cookie_attributes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		env        map[string]string
		rememberMe any // nil leaves it out
		cookie     string
		secure     bool
	}{
		{"remembered", nil, nil, "gatehouse.session_token", false},
		{"remembered_explicitly", nil, true, "gatehouse.session_token", false},
		{"not_remembered", nil, false, "gatehouse.session_token", false},
		{"https_base_url", map[string]string{"GATEHOUSE_BASE_URL": "https://id.example.com"}, nil, "__Secure-gatehouse.session_token", true},
		{"https_not_remembered", map[string]string{"GATEHOUSE_BASE_URL": "https://id.example.com"}, false, "__Secure-gatehouse.session_token", true},
		{"better_auth_prefix", map[string]string{"GATEHOUSE_COOKIE_PREFIX": "better-auth"}, nil, "better-auth.session_token", false},
		{"https_host_prefix", map[string]string{"GATEHOUSE_BASE_URL": "https://id.example.com", "GATEHOUSE_COOKIE_HOST_PREFIX": "true"}, nil, "__Host-gatehouse.session_token", true},
		{"https_host_prefix_not_remembered", map[string]string{"GATEHOUSE_BASE_URL": "https://id.example.com", "GATEHOUSE_COOKIE_HOST_PREFIX": "true"}, false, "__Host-gatehouse.session_token", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.FwQuick, tt.env))
			dontRemember := strings.Replace(tt.cookie, "session_token", "dont_remember", 1)
			body := map[string]any{"name": "Ada", "email": "ada@example.com", "password": "correct horse battery"}
			if tt.rememberMe != nil {
				body["rememberMe"] = tt.rememberMe
			}
			signUp := app.NewClient(t).Post("/api/auth/sign-up/email", harness.MustJSON(t, body))
			delete(body, "name")
			signIn := app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustJSON(t, body))
			for _, r := range []*harness.Response{signUp, signIn} {
				harness.MustStatus(t, r, http.StatusOK)
				line := harness.RawSetCookie(r, tt.cookie)
				c := harness.SetCookies(r)[tt.cookie]
				if c == nil || c.Value == "" {
					t.Fatalf("no %s cookie in %q", tt.cookie, r.Header.Values("Set-Cookie"))
				}
				if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != tt.secure || c.Domain != "" {
					t.Fatalf("cookie attributes: %q", line)
				}
				dr := harness.SetCookies(r)[dontRemember]
				if tt.rememberMe == false {
					if strings.Contains(strings.ToLower(line), "max-age") || strings.Contains(strings.ToLower(line), "expires") {
						t.Fatalf("not-remembered cookie has a lifetime: %q", line)
					}
					if dr == nil || dr.Value == "" || dr.MaxAge != 0 || !dr.HttpOnly || dr.Secure != tt.secure {
						t.Fatalf("dont_remember cookie missing or wrong: %q", r.Header.Values("Set-Cookie"))
					}
				} else {
					if c.MaxAge < 604800-60 || c.MaxAge > 604800 {
						t.Fatalf("Max-Age = %d, want about 604800: %q", c.MaxAge, line)
					}
					if dr != nil && dr.Value != "" {
						t.Fatalf("remembered session sets %s", dontRemember)
					}
				}
				if r.Header.Get("set-auth-token") == "" {
					t.Fatal("no set-auth-token header")
				}
			}
		})
	}
}

// Ensure the session cookie is exactly Better Auth's signed value, so that a
// cookie signed with the same secret and prefix by a Better Auth deployment
// keeps its user signed in; bearer tokens work raw and signed; a tampered
// signature signs nobody in and clears the cookie.
// It keeps a fresh application: it has a cookie prefix of its own.
func TestFramework_session_cookie_is_better_auth_compatible(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_COOKIE_PREFIX": "better-auth"}))
	const cookie = "better-auth.session_token"
	harness.MustSignUp(t, app.NewClient(t), "Ada", "ada@example.com", "correct horse battery")
	r := app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, "ada@example.com", "correct horse battery"))
	token, _ := harness.MustOK(t, r)["token"].(string)
	raw, encoded := harness.SignCookie(token, harness.TestSecret)

	if got := harness.SetCookies(r)[cookie]; got == nil || got.Value != encoded {
		t.Fatalf("Set-Cookie %s = %q, want %q", cookie, harness.RawSetCookie(r, cookie), encoded)
	}
	if got := r.Header.Get("set-auth-token"); got != raw {
		t.Fatalf("set-auth-token = %q, want %q", got, raw)
	}

	t.Run("cookie_signed_by_the_test", func(t *testing.T) {
		c := app.NewClient(t)
		c.Cookies[cookie] = encoded
		if got := harness.MustUser(t, harness.MustSession(t, c))["email"]; got != "ada@example.com" {
			t.Fatalf("user email = %v", got)
		}
	})
	for name, bearer := range map[string]string{"raw_token": token, "signed_token": raw, "signed_url_encoded": encoded} {
		t.Run("bearer_"+name, func(t *testing.T) {
			r := app.NewClient(t).Get("/api/auth/get-session", "Authorization", "Bearer "+bearer)
			if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "ada@example.com") {
				t.Fatalf("get-session with Bearer %s: %d %s", name, r.Status, r.Body)
			}
		})
	}
	t.Run("tampered_signature", func(t *testing.T) {
		sig := []byte(raw[len(token)+1:])
		if sig[0] == 'A' {
			sig[0] = 'B'
		} else {
			sig[0] = 'A'
		}
		forgedEnc := url.QueryEscape(token + "." + string(sig))
		if forgedEnc == encoded {
			t.Fatal("forgery did not change the cookie")
		}
		c := app.NewClient(t)
		c.Cookies[cookie] = forgedEnc
		r := c.Get("/api/auth/get-session")
		harness.MustNull(t, r)
		line := harness.RawSetCookie(r, cookie)
		if !strings.Contains(line, "Max-Age=0") {
			t.Fatalf("forged cookie not cleared: %q", r.Header.Values("Set-Cookie"))
		}
		r = app.NewClient(t).Get("/api/auth/get-session", "Authorization", "Bearer "+token+"."+string(sig))
		harness.MustNull(t, r)
	})
	t.Run("other_secret", func(t *testing.T) {
		_, enc := harness.SignCookie(token, harness.TestSecret+"-other")
		c := app.NewClient(t)
		c.Cookies[cookie] = enc
		harness.MustNoSession(t, c)
	})
}

// Ensure get-session answers null, uncached, without a session, and
// protected routes answer 401 UNAUTHORIZED.
func TestFramework_signed_out(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreMemory, harness.FwQuick)
	c := app.NewClient(t)
	r := c.Get("/api/auth/get-session")
	harness.MustNull(t, r)
	if got := r.Header.Get("Cache-Control"); got != "no-store" {
		t.Fatalf("Cache-Control = %q, want no-store", got)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type = %q", ct)
	}
	if len(r.Header.Values("Set-Cookie")) != 0 {
		t.Fatalf("signed-out get-session sets cookies: %q", r.Header.Values("Set-Cookie"))
	}
	harness.MustCode(t, c.Get("/api/auth/list-sessions"), http.StatusUnauthorized, "UNAUTHORIZED")
	harness.MustCode(t, c.Post("/api/auth/revoke-sessions", "{}"), http.StatusUnauthorized, "UNAUTHORIZED")
	harness.MustNull(t, c.Get("/api/auth/get-session", "Authorization", "Bearer "+strings.Repeat("a", 32)))
}

// Ensure the session lifecycle on every store: two sign-ins list two
// sessions whose handles are not their tokens; revoking by handle ends
// exactly that session and never another user's; revoke-other-sessions and
// revoke-sessions end what they say; sign-out invalidates the token on the
// server, so a replayed cookie signs nobody in.
func TestFramework_session_lifecycle(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		email, pw := harness.Email(t, "ada@example.com"), "correct horse battery"
		first := app.NewClient(t)
		up := harness.MustSignUp(t, first, "Ada", email, pw)
		harness.MustJSDates(t, up["user"].(map[string]any), "createdAt", "updatedAt")
		harness.MustOK(t, first.Post("/api/auth/sign-out", "{}"))
		harness.MustNoSession(t, first)

		a, b := app.NewClient(t), app.NewClient(t)
		ta, tb := harness.MustSignIn(t, a, email, pw), harness.MustSignIn(t, b, email, pw)
		s := harness.MustSession(t, a)
		harness.MustJSDates(t, s["session"].(map[string]any), "expiresAt", "createdAt", "updatedAt")
		harness.MustJSDates(t, harness.MustUser(t, s), "createdAt", "updatedAt")
		handleA := s["session"].(map[string]any)["token"].(string)

		r := a.Get("/api/auth/list-sessions")
		harness.MustStatus(t, r, http.StatusOK)
		var list []map[string]any
		harness.MustUnmarshal(t, r.Body, &list)
		if len(list) != 2 {
			t.Fatalf("list-sessions has %d entries, want 2: %s", len(list), r.Body)
		}
		var handleB string
		for _, e := range list {
			harness.MustJSDates(t, e, "expiresAt", "createdAt", "updatedAt")
			tok, _ := e["token"].(string)
			if tok == ta || tok == tb || strings.Contains(string(r.Body), ta) || strings.Contains(string(r.Body), tb) {
				t.Fatalf("list-sessions reveals a bearer token: %s", r.Body)
			}
			if tok != handleA {
				handleB = tok
			}
		}
		if handleB == "" {
			t.Fatalf("list-sessions lacks the second session: %s", r.Body)
		}

		// Another user's session is not ours to end.
		bob := app.NewClient(t)
		harness.MustSignUp(t, bob, "Bob", harness.Email(t, "bob@example.com"), "another good passphrase")
		bobHandle := harness.MustSession(t, bob)["session"].(map[string]any)["token"].(string)
		harness.MustStatusTrue(t, a.Post("/api/auth/revoke-session", harness.MustJSON(t, map[string]string{"token": bobHandle})))
		harness.MustSession(t, bob)
		harness.MustStatusTrue(t, a.Post("/api/auth/revoke-session", harness.MustJSON(t, map[string]string{"token": "no-such-session"})))
		harness.MustSession(t, b)

		harness.MustStatusTrue(t, a.Post("/api/auth/revoke-session", harness.MustJSON(t, map[string]string{"token": handleB})))
		harness.MustNoSession(t, b)
		harness.MustSession(t, a)

		c := app.NewClient(t)
		harness.MustSignIn(t, c, email, pw)
		harness.MustStatusTrue(t, a.Post("/api/auth/revoke-other-sessions", "{}"))
		harness.MustSession(t, a)
		harness.MustNoSession(t, c)
		harness.MustSession(t, bob)

		d := app.NewClient(t)
		harness.MustSignIn(t, d, email, pw)
		aBefore := a.Clone()
		harness.MustStatusTrue(t, a.Post("/api/auth/revoke-sessions", "{}"))
		harness.MustNoSession(t, a)
		harness.MustNoSession(t, aBefore)
		harness.MustNoSession(t, d)
		harness.MustSession(t, bob)

		e := app.NewClient(t)
		harness.MustSignIn(t, e, email, pw)
		old := e.Clone()
		out := e.Post("/api/auth/sign-out", "{}")
		if body := harness.MustOK(t, out); body["success"] != true {
			t.Fatalf("sign-out = %s", out.Body)
		}
		if !strings.Contains(harness.RawSetCookie(out, "gatehouse.session_token"), "Max-Age=0") {
			t.Fatalf("sign-out does not expire the cookie: %q", out.Header.Values("Set-Cookie"))
		}
		harness.MustNoSession(t, e)
		harness.MustNoSession(t, old) // the server forgot the token, not just the browser
	})
}

// Ensure storage keeps only token hashes, and a session that has expired in
// storage signs nobody in and has its cookie cleared. The test writes the
// expiry into the database behind the service's back, as another replica
// would, so the session cache is off: with it, the change would be seen
// within its lifetime instead of at once (TestGetSession_another_instance_*).
// It keeps a fresh application: it has no session cache, and reads every stored session.
func TestFramework_session_storage(t *testing.T) {
	t.Parallel()
	env := harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_SESSION_CACHE_TTL": "0"})
	harness.ForStores(t, harness.SQLOnly(harness.StoresThatMatter), env, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		harness.MustSignUp(t, c, "Ada", "ada@example.com", "correct horse battery")
		token := harness.MustSignIn(t, c, "ada@example.com", "correct horse battery")
		db := harness.MustDB(t, app)

		var hashes []string
		if err := db.Raw("SELECT token_hash FROM sessions").Scan(&hashes).Error; err != nil {
			t.Fatal(err)
		}
		if len(hashes) != 2 {
			t.Fatalf("%d sessions stored, want 2", len(hashes))
		}
		for _, h := range hashes {
			if h == "" || strings.Contains(h, token) {
				t.Fatalf("token_hash %q holds the raw token", h)
			}
		}

		harness.MustSession(t, c)
		if err := db.Exec("UPDATE sessions SET expires_at = ?", time.Now().Add(-time.Minute).UTC()).Error; err != nil {
			t.Fatal(err)
		}
		r := c.Get("/api/auth/get-session")
		harness.MustNull(t, r)
		if !strings.Contains(harness.RawSetCookie(r, "gatehouse.session_token"), "Max-Age=0") {
			t.Fatalf("expired session's cookie not cleared: %q", r.Header.Values("Set-Cookie"))
		}
		harness.MustNull(t, app.NewClient(t).Get("/api/auth/get-session", "Authorization", "Bearer "+token))
	})
}

// Ensure secrets rotate without signing anyone out: the first secret signs,
// and cookies signed with an older one still verify.
// It keeps a fresh application: it has secrets of its own.
func TestFramework_secret_rotation(t *testing.T) {
	t.Parallel()
	const rotated = "rotated-secret-0123456789-abcdefghijklmnopqrstuvwxyz"
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_SECRET": "", "GATEHOUSE_SECRETS": rotated + "," + harness.TestSecret}))
	c := app.NewClient(t)
	harness.MustSignUp(t, c, "Ada", "ada@example.com", "correct horse battery")
	token := harness.MustSignIn(t, c, "ada@example.com", "correct horse battery")
	if _, want := harness.SignCookie(token, rotated); c.Cookies["gatehouse.session_token"] != want {
		t.Fatalf("cookie %q is not signed with the first secret", c.Cookies["gatehouse.session_token"])
	}
	old := app.NewClient(t)
	_, old.Cookies["gatehouse.session_token"] = harness.SignCookie(token, harness.TestSecret)
	harness.MustSession(t, old)
}

// Ensure a session records the client address a trusted proxy appended to
// X-Forwarded-For, and never the one X-Real-IP claims, even from that proxy.
// It keeps a fresh application: it has a trusted proxy of its own.
func TestFramework_session_ip_address_behind_proxy(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_TRUSTED_PROXIES": "127.0.0.1/32"}))
	tests := []struct {
		name    string
		headers []string
		want    string
	}{
		{"real_ip_alone", []string{"X-Real-IP", "203.0.113.7"}, "127.0.0.1"},
		{"real_ip_beside_forwarded_for", []string{"X-Forwarded-For", "192.0.2.1, 198.51.100.7", "X-Real-IP", "203.0.113.7"}, "198.51.100.7"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := app.NewClient(t)
			email := "ada" + string(rune('a'+i)) + "@example.com"
			harness.MustOK(t, c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]any{"name": "Ada", "email": email, "password": "correct horse battery"}), tt.headers...))
			s, _ := harness.MustSession(t, c)["session"].(map[string]any)
			if got, want := s["ipAddress"], tt.want; got != want {
				t.Fatalf("session ipAddress = %v, want %v", got, want)
			}
		})
	}
}
