package framework

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure malformed requests are refused in Better Auth's error shape, name
// the bad field, and change nothing: no mass assignment, no address change
// through update-user, no partial writes.
// It keeps a fresh application: it has a body limit of its own.
func TestFramework_bad_input(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_MAX_BODY_BYTES": "2048"}))
	const email, pw = "ada@example.com", "correct horse battery"
	user := app.NewClient(t)
	harness.MustSignUp(t, user, "Ada", email, pw)
	big := strings.Repeat("a", 4096)

	tests := []struct {
		name, path, body string
		headers          []string
		status           int
		code             string
		field            string // the message must name it
	}{
		{"malformed_json", "/sign-in/email", `{"email":`, nil, 400, "BAD_REQUEST", ""},
		{"not_an_object", "/sign-in/email", `[1,2]`, nil, 400, "VALIDATION_ERROR", ""},
		{"missing_email", "/sign-in/email", `{"password":"correct horse battery"}`, nil, 400, "VALIDATION_ERROR", "body.email"},
		{"mistyped_email", "/sign-in/email", `{"email":5,"password":"correct horse battery"}`, nil, 400, "VALIDATION_ERROR", "body.email"},
		{"mistyped_remember_me", "/sign-in/email", `{"email":"ada@example.com","password":"correct horse battery","rememberMe":"yes"}`, nil, 400, "VALIDATION_ERROR", "body.rememberMe"},
		{"invalid_email", "/sign-up/email", `{"name":"M","email":"not-an-address","password":"correct horse battery"}`, nil, 400, "INVALID_EMAIL", ""},
		{"mass_assignment", "/update-user", `{"name":"Mallory","role":"admin"}`, nil, 400, "VALIDATION_ERROR", "role"},
		{"mass_assignment_verified", "/update-user", `{"name":"Mallory","emailVerified":true}`, nil, 400, "VALIDATION_ERROR", "emailVerified"},
		{"email_in_update_user", "/update-user", `{"email":"mallory@example.com"}`, nil, 400, "EMAIL_CAN_NOT_BE_UPDATED", ""},
		{"email_and_name_in_update_user", "/update-user", `{"name":"Mallory","email":"mallory@example.com"}`, nil, 400, "EMAIL_CAN_NOT_BE_UPDATED", ""},
		{"empty_name", "/update-user", `{"name":""}`, nil, 400, "VALIDATION_ERROR", "body.name"},
		{"text_plain", "/update-user", `{"name":"Mallory"}`, []string{"Content-Type", "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"no_content_type", "/update-user", `{"name":"Mallory"}`, []string{"Content-Type", ""}, 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"form_where_json_only", "/update-user", `name=Mallory`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"oversize", "/update-user", `{"name":"` + big + `"}`, nil, 413, "PAYLOAD_TOO_LARGE", ""},
		{"oversize_sign_up", "/sign-up/email", `{"name":"` + big + `","email":"big@example.com","password":"correct horse battery"}`, nil, 413, "PAYLOAD_TOO_LARGE", ""},
		{"short_new_password", "/change-password", `{"currentPassword":"correct horse battery","newPassword":"short"}`, nil, 400, "PASSWORD_TOO_SHORT", ""},
		{"wrong_current_password", "/change-password", `{"currentPassword":"wrong password","newPassword":"a different passphrase"}`, nil, 400, "INVALID_PASSWORD", ""},
		{"garbage_reset_token", "/reset-password", `{"token":"garbage","newPassword":"a different passphrase"}`, nil, 400, "INVALID_TOKEN", ""},
		{"missing_reset_token", "/reset-password", `{"newPassword":"a different passphrase"}`, nil, 400, "INVALID_TOKEN", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Cleanup(func() { mustRestoreName(t, user, "Ada") }) // keep one failure from failing the rest
			r := user.Clone().Post("/api/auth"+tt.path, tt.body, tt.headers...)
			msg := harness.MustCode(t, r, tt.status, tt.code)
			if tt.field != "" && !strings.Contains(msg, tt.field) {
				t.Fatalf("message %q does not name %s", msg, tt.field)
			}
			if tt.code == "BAD_REQUEST" && msg != "Invalid JSON in request body" {
				t.Fatalf("message = %q", msg)
			}
			if strings.Contains(msg, big[:64]) || strings.Contains(msg, "mallory@") {
				t.Fatalf("message echoes the input: %q", msg)
			}
			u := harness.MustUser(t, harness.MustSession(t, user))
			if u["name"] != "Ada" || u["email"] != email || u["emailVerified"] != false {
				t.Fatalf("a refused request changed the user: %v", u)
			}
		})
	}
	t.Run("oversize_without_length", func(t *testing.T) {
		// A chunked body has no Content-Length to refuse up front.
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, app.URL+"/api/auth/update-user",
			io.MultiReader(strings.NewReader(`{"name":"`), strings.NewReader(big), strings.NewReader(`"}`)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", app.URL)
		req.Header.Set("Cookie", "gatehouse.session_token="+user.Cookies["gatehouse.session_token"])
		res, err := app.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		harness.MustCode(t, &harness.Response{Status: res.StatusCode, Header: res.Header, Body: b}, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
		if name := harness.MustUser(t, harness.MustSession(t, user))["name"]; name != "Ada" {
			t.Fatalf("name = %v", name)
		}
	})
	t.Run("verify_email_garbage_token", func(t *testing.T) {
		harness.MustCode(t, app.NewClient(t).Get("/api/auth/verify-email?token=garbage"), http.StatusUnauthorized, "INVALID_TOKEN")
		harness.MustCode(t, app.NewClient(t).Get("/api/auth/verify-email"), http.StatusUnauthorized, "INVALID_TOKEN")
		r := app.NewClient(t).Get("/api/auth/verify-email?token=garbage&callbackURL=/done")
		harness.MustStatus(t, r, http.StatusFound)
		loc, err := url.Parse(r.Header.Get("Location"))
		if err != nil || loc.Path != "/done" || loc.Query().Get("error") != "INVALID_TOKEN" || (loc.Host != "" && app.URL != "http://"+loc.Host) {
			t.Fatalf("Location = %q, want /done?error=INVALID_TOKEN", r.Header.Get("Location"))
		}
	})
	// Nothing above changed the password or locked the account.
	harness.MustSignIn(t, app.NewClient(t), email, pw)
	harness.MustSignInFails(t, app, "big@example.com", "correct horse battery")
}

// mustRestoreName renames c's user back to name if a request changed it.
func mustRestoreName(t testing.TB, c *harness.Client, name string) {
	t.Helper()
	if harness.MustUser(t, harness.MustSession(t, c))["name"] != name {
		harness.MustStatusTrue(t, c.Post("/api/auth/update-user", harness.MustJSON(t, map[string]string{"name": name})))
	}
}

// Ensure the error page shows a code it knows, and never reflects markup
// (TestHardening_error_page_shows_only_gatehouse_words: nor any other text).
func TestFramework_error_page(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreMemory, harness.FwQuick)
	tests := []struct {
		name, query string
		want        string
		never       []string
	}{
		{"code", "error=state_mismatch", "state_mismatch", nil},
		{"script_code", "error=" + url.QueryEscape("<script>alert(1)</script>"), "", []string{"<script", "alert(1)"}},
		{"quote_code", "error=" + url.QueryEscape(`A"onmouseover="x`), "", []string{`"onmouseover`}},
		{"script_description", "error=state_mismatch&error_description=" + url.QueryEscape("<img src=x onerror=alert(1)>"), "state_mismatch", []string{"<img", "&lt;img"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := app.NewClient(t).Get("/api/auth/error?" + tt.query)
			harness.MustStatus(t, r, http.StatusOK)
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Fatalf("Content-Type = %q", ct)
			}
			page := string(r.Body)
			if !strings.Contains(page, tt.want) {
				t.Fatalf("page lacks %q:\n%s", tt.want, page)
			}
			for _, n := range tt.never {
				if strings.Contains(page, n) {
					t.Fatalf("page reflects %q:\n%s", n, page)
				}
			}
		})
	}
}

// Ensure coded errors carry Better Auth's message for their code
// (better-auth-wire appendix A), which apps show to people as is.
func TestFramework_error_messages_match_better_auth(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreMemory, harness.FwQuick)
	user := app.NewClient(t)
	harness.MustSignUp(t, user, "Ada", harness.Email(t, "ada@example.com"), "correct horse battery")
	signUp := func(email, pw string) string {
		return harness.MustJSON(t, map[string]string{"name": "M", "email": email, "password": pw})
	}
	tests := []struct {
		name          string
		c             *harness.Client
		path, body    string
		headers       []string
		status        int
		code, message string
	}{
		{"too_short", app.NewClient(t), "/sign-up/email", signUp(harness.Email(t, "m@example.com"), "short"), nil, 400, "PASSWORD_TOO_SHORT", "Password too short"},
		{"too_long", app.NewClient(t), "/sign-up/email", signUp(harness.Email(t, "m@example.com"), strings.Repeat("a", 129)), nil, 400, "PASSWORD_TOO_LONG", "Password too long"},
		{"invalid_email", app.NewClient(t), "/sign-up/email", signUp("not-an-address", "correct horse battery"), nil, 400, "INVALID_EMAIL", "Invalid email"},
		{"wrong_credentials", app.NewClient(t), "/sign-in/email", harness.MustCredentials(t, harness.Email(t, "ada@example.com"), "wrong password"), nil, 401, "INVALID_EMAIL_OR_PASSWORD", "Invalid email or password"},
		{"unauthorized", app.NewClient(t), "/update-user", `{"name":"M"}`, nil, 401, "UNAUTHORIZED", "Unauthorized"},
		{"email_in_update_user", user, "/update-user", `{"email":"m@example.com"}`, nil, 400, "EMAIL_CAN_NOT_BE_UPDATED", "Email can not be updated"},
		{"wrong_current_password", user, "/change-password", `{"currentPassword":"wrong password","newPassword":"another good passphrase"}`, nil, 400, "INVALID_PASSWORD", "Invalid password"},
		{"reset_token", app.NewClient(t), "/reset-password", `{"token":"garbage","newPassword":"another good passphrase"}`, nil, 400, "INVALID_TOKEN", "Invalid token"},
		{"origin", user, "/update-user", `{"name":"M"}`, []string{"Origin", "https://evil.com"}, 403, "INVALID_ORIGIN", "Invalid origin"},
		{"missing_origin", user, "/update-user", `{"name":"M"}`, []string{"Origin", ""}, 403, "MISSING_OR_NULL_ORIGIN", "Missing or null Origin"},
		{"callback", app.NewClient(t), "/sign-in/email", harness.MustJSON(t, map[string]string{"email": harness.Email(t, "ada@example.com"), "password": "x", "callbackURL": "https://evil.com"}), nil, 403, "INVALID_CALLBACK_URL", "Invalid callbackURL"},
		{"redirect", app.NewClient(t), "/request-password-reset", harness.MustJSON(t, map[string]string{"email": harness.Email(t, "ada@example.com"), "redirectTo": "https://evil.com"}), nil, 403, "INVALID_REDIRECT_URL", "Invalid redirectURL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := harness.MustCode(t, tt.c.Clone().Post("/api/auth"+tt.path, tt.body, tt.headers...), tt.status, tt.code); got != tt.message {
				t.Fatalf("message = %q, want %q", got, tt.message)
			}
		})
	}
	if got := harness.MustCode(t, app.NewClient(t).Get("/api/auth/verify-email?token=garbage"), 401, "INVALID_TOKEN"); got != "Invalid token" {
		t.Fatalf("verify-email message = %q", got)
	}
}
