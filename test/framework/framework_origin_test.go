package framework

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// fwTrusted is a trusted origin besides the base URL's.
const fwTrusted = "https://app.example.com"

// Ensure Better Auth's origin rules (better-auth-wire §3): with a cookie, a
// state-changing request needs a trusted Origin (or Referer); without one,
// sign-in and sign-up refuse untrusted origins and cross-site form
// navigations but let servers and curl through. A refused request changes
// nothing.
func TestFramework_origin_checks(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreMemory, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_TRUSTED_ORIGINS": fwTrusted}))
	email, pw := harness.Email(t, "ada@example.com"), "correct horse battery"
	user := app.NewClient(t)
	harness.MustSignUp(t, user, "Ada", email, pw)
	rename := harness.MustJSON(t, map[string]string{"name": "Mallory"})
	signIn := harness.MustCredentials(t, email, pw)
	form := url.Values{"email": {email}, "password": {pw}}.Encode()

	tests := []struct {
		name       string
		withCookie bool
		path, body string
		headers    []string
		status     int
		code       string
	}{
		{"cookie_foreign_origin", true, "/update-user", rename, []string{"Origin", "https://evil.com"}, 403, "INVALID_ORIGIN"},
		{"cookie_no_origin", true, "/update-user", rename, []string{"Origin", ""}, 403, "MISSING_OR_NULL_ORIGIN"},
		{"cookie_null_origin", true, "/update-user", rename, []string{"Origin", "null"}, 403, "MISSING_OR_NULL_ORIGIN"},
		{"cookie_foreign_referer", true, "/update-user", rename, []string{"Origin", "", "Referer", "https://evil.com/page"}, 403, "INVALID_ORIGIN"},
		{"cookie_lookalike_origin", true, "/update-user", rename, []string{"Origin", fwTrusted + ".evil.com"}, 403, "INVALID_ORIGIN"},
		{"cookie_foreign_origin_sign_out", true, "/sign-out", "{}", []string{"Origin", "https://evil.com"}, 403, "INVALID_ORIGIN"},
		{"cookie_foreign_origin_revoke", true, "/revoke-sessions", "{}", []string{"Origin", "https://evil.com"}, 403, "INVALID_ORIGIN"},
		{"no_cookie_no_origin", false, "/update-user", rename, []string{"Origin", ""}, 401, "UNAUTHORIZED"},
		{"sign_in_foreign_origin", false, "/sign-in/email", signIn, []string{"Origin", "https://evil.com"}, 403, "INVALID_ORIGIN"},
		{"sign_up_foreign_origin", false, "/sign-up/email", harness.MustJSON(t, map[string]string{"name": "M", "email": harness.Email(t, "m@example.com"), "password": pw}), []string{"Origin", "https://evil.com"}, 403, "INVALID_ORIGIN"},
		{"sign_in_cross_site_form_navigation", false, "/sign-in/email", form, []string{"Origin", "", "Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"}, 403, "CROSS_SITE_NAVIGATION_LOGIN_BLOCKED"},
		{"sign_in_fetch_without_origin", false, "/sign-in/email", signIn, []string{"Origin", "", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Site", "same-origin"}, 403, "MISSING_OR_NULL_ORIGIN"},
		{"sign_in_curl", false, "/sign-in/email", signIn, []string{"Origin", ""}, 200, ""},
		{"sign_in_trusted_origin", false, "/sign-in/email", signIn, []string{"Origin", fwTrusted}, 200, ""},
		{"sign_in_form_same_origin", false, "/sign-in/email", form, []string{"Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "navigate"}, 303, ""}, // a form post is answered with a redirect
		{"cookie_trusted_origin", true, "/update-user", harness.MustJSON(t, map[string]string{"name": "Ada Lovelace"}), []string{"Origin", fwTrusted}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := app.NewClient(t)
			if tt.withCookie {
				c = user.Clone()
			}
			r := c.Post("/api/auth"+tt.path, tt.body, tt.headers...)
			if tt.code == "" {
				harness.MustStatus(t, r, tt.status)
			} else {
				harness.MustCode(t, r, tt.status, tt.code)
			}
			if name := harness.MustUser(t, harness.MustSession(t, user))["name"]; name == "Mallory" {
				t.Fatal("a refused request renamed the user")
			}
		})
	}
	if name := harness.MustUser(t, harness.MustSession(t, user))["name"]; name != "Ada Lovelace" {
		t.Fatalf("name = %v, want Ada Lovelace (only the trusted update applies)", name)
	}
}

// Ensure callback and redirect targets are a safe path here or a URL on a
// trusted origin, on every route that takes one; anything else is refused
// with 403 before anything happens.
func TestFramework_callback_urls(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreMemory, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_TRUSTED_ORIGINS": fwTrusted}))
	email, pw := harness.Email(t, "ada@example.com"), "correct horse battery"
	harness.MustSignUp(t, app.NewClient(t), "Ada", email, pw)

	refused := []string{"https://evil.com/x", "javascript:alert(1)", "//evil.com", "/\\evil.com", "\\\\evil.com",
		"https://app.example.com@evil.com/", "http://app.example.com/x", "data:text/html,hi", "/%2F%2Fevil.com", "https:evil.com",
		"/\x09/evil.com", " https://evil.com"}
	for _, target := range refused {
		t.Run("refused_"+url.PathEscape(target), func(t *testing.T) {
			body := harness.MustJSON(t, map[string]any{"email": email, "password": pw, "callbackURL": target})
			harness.MustCode(t, app.NewClient(t).Post("/api/auth/sign-in/email", body), http.StatusForbidden, "INVALID_CALLBACK_URL")
			harness.MustCode(t, app.NewClient(t).Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]any{"email": email, "redirectTo": target})),
				http.StatusForbidden, "INVALID_REDIRECT_URL")
			harness.MustCode(t, app.NewClient(t).Get("/api/auth/verify-email?"+url.Values{"token": {"x"}, "callbackURL": {target}}.Encode()),
				http.StatusForbidden, "INVALID_CALLBACK_URL")
			harness.MustCode(t, app.NewClient(t).Get("/api/auth/reset-password/sometoken?"+url.Values{"callbackURL": {target}}.Encode()),
				http.StatusForbidden, "INVALID_CALLBACK_URL")
		})
	}
	harness.MustCode(t, app.NewClient(t).Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]any{"name": "M", "email": harness.Email(t, "m@example.com"), "password": pw, "callbackURL": "https://evil.com"})),
		http.StatusForbidden, "INVALID_CALLBACK_URL")
	harness.MustSignInFails(t, app, harness.Email(t, "m@example.com"), pw) // the refused sign-up created nobody

	accepted := map[string]string{"/dashboard": app.URL + "/dashboard", fwTrusted + "/after": fwTrusted + "/after", "/a?b=c": app.URL + "/a?b=c"}
	for target, location := range accepted {
		t.Run("accepted_"+url.PathEscape(target), func(t *testing.T) {
			r := app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustJSON(t, map[string]any{"email": email, "password": pw, "callbackURL": target}))
			body := harness.MustOK(t, r)
			if body["redirect"] != true || body["url"] != target {
				t.Fatalf("body = %s, want redirect:true url:%s", r.Body, target)
			}
			if got := r.Header.Get("Location"); got != location {
				t.Fatalf("Location = %q, want %q", got, location)
			}
		})
	}
	t.Run("html_form_with_callback", func(t *testing.T) {
		form := url.Values{"email": {email}, "password": {pw}, "callbackURL": {"/dashboard"}, "rememberMe": {"false"}}.Encode()
		c := app.NewClient(t)
		r := c.Post("/api/auth/sign-in/email", form, "Origin", "", "Content-Type", "application/x-www-form-urlencoded")
		// A form post lands the browser on the callback (303 See Other).
		if r.Status != http.StatusSeeOther || r.Header.Get("Location") != app.URL+"/dashboard" {
			t.Fatalf("form sign-in: %d %s, Location %q", r.Status, r.Body, r.Header.Get("Location"))
		}
		if harness.SetCookies(r)["gatehouse.dont_remember"] == nil || strings.Contains(harness.RawSetCookie(r, "gatehouse.session_token"), "Max-Age") {
			t.Fatalf("form rememberMe=false ignored: %q", r.Header.Values("Set-Cookie"))
		}
		harness.MustSession(t, c)
	})
	t.Run("plain_sign_in_has_no_redirect", func(t *testing.T) {
		r := app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, email, pw))
		body := harness.MustOK(t, r)
		if body["redirect"] != false || body["url"] != nil || r.Header.Get("Location") != "" {
			t.Fatalf("sign-in without callbackURL: %s, Location %q", r.Body, r.Header.Get("Location"))
		}
	})
}

// Ensure browsers on trusted origins get CORS with credentials for exactly
// their origin, and others get none (never "*").
// It keeps a fresh application: it has settings of its own.
func TestFramework_cors_only_for_trusted_origins(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_TRUSTED_ORIGINS": "https://app.example.com"})
	pre := app.Do(t, http.MethodOptions, "/api/auth/get-session", "", "Origin", "https://app.example.com", "Access-Control-Request-Method", "GET")
	harness.MustStatus(t, pre, http.StatusNoContent)
	if got := pre.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example.com" || pre.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("preflight from a trusted origin: allow-origin %q, credentials %q", got, pre.Header.Get("Access-Control-Allow-Credentials"))
	}
	r := app.Do(t, http.MethodGet, "/api/auth/get-session", "", "Origin", "https://app.example.com")
	if r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "set-auth-token") {
		t.Fatalf("headers = %v", r.Header)
	}
	evil := app.Do(t, http.MethodGet, "/api/auth/get-session", "", "Origin", "https://evil.example")
	if v := evil.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Fatalf("untrusted origin got Access-Control-Allow-Origin %q", v)
	}
	harness.MustStatus(t, app.Do(t, http.MethodOptions, "/api/auth/get-session", "", "Origin", "https://evil.example"), http.StatusNotFound)
}
