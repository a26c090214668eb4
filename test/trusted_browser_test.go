package test

import (
	"net/http"
	"net/url"
	"path"
	"testing"
)

// A trusted browser (the trust_device cookie, docs/multi-factor.md) skips
// the second factor only for what it was trusted for: a new password
// (changed or reset) or two-factor turned off forgets it.

// mustTrustedBrowser answers u's challenge with trustDevice and returns
// the signed-in client (its session stepped up) and a browser holding only
// its trust_device cookie.
func mustTrustedBrowser(t *testing.T, app *fwApp, u *tfUser, step int64) (signedIn, trusted *fwClient) {
	t.Helper()
	c := mustChallenge(t, app, u)
	mustOK(t, c.post("/api/auth/two-factor/verify-totp", mustJSON(t, map[string]any{"code": totpAt(u.secret, step), "trustDevice": true})))
	trusted = app.client(t)
	trusted.Cookies[trustCookie] = c.Cookies[trustCookie]
	if trusted.Cookies[trustCookie] == "" {
		t.Fatal("no trust_device cookie")
	}
	return c, trusted
}

// mustAskedSecondFactor fails unless a password sign-in of email in
// browser b is asked for the second factor.
func mustAskedSecondFactor(t *testing.T, b *fwClient, email, password string) {
	t.Helper()
	r := b.post("/api/auth/sign-in/email", mustCredentials(t, email, password))
	if body := mustOK(t, r); body["twoFactorRedirect"] != true {
		t.Fatalf("sign-in in a browser trusted before = %s, want the challenge", r.Body)
	}
}

// Ensure a browser trusted before a password change, a password reset, a
// password an administrator set, or two-factor turned off and on again is
// asked for the second factor.
func TestTrustedBrowser_forgotten(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeSQLite, adminEnv)
	const newPassword = "a brand new passphrase"

	t.Run("change-password", func(t *testing.T) {
		t.Parallel()
		u := mustTwoFactorUser(t, app, "change@example.com")
		c, trusted := mustTrustedBrowser(t, app, u, 0)
		mustOK(t, c.post("/api/auth/change-password", mustJSON(t, map[string]any{"currentPassword": tfPassword, "newPassword": newPassword})))
		mustAskedSecondFactor(t, trusted, u.email, newPassword)
	})

	t.Run("reset-password", func(t *testing.T) {
		t.Parallel()
		u := mustTwoFactorUser(t, app, "reset@example.com")
		_, trusted := mustTrustedBrowser(t, app, u, 0)
		mustOK(t, app.client(t).post("/api/auth/request-password-reset", mustJSON(t, map[string]string{"email": u.email})))
		link, err := url.Parse(mustLink(t, app, u.email, "Reset your"))
		if err != nil {
			t.Fatal(err)
		}
		mustStatusTrue(t, app.client(t).post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": path.Base(link.Path), "newPassword": newPassword})))
		mustAskedSecondFactor(t, trusted, u.email, newPassword)
	})

	t.Run("admin-set-user-password", func(t *testing.T) {
		t.Parallel()
		u := mustTwoFactorUser(t, app, "admin-set@example.com")
		_, trusted := mustTrustedBrowser(t, app, u, 0)
		admin, _ := mustAdmin(t, app)
		id := mustUser(t, mustSession(t, u.c))["id"]
		mustStatusTrue(t, admin.post(adminPath("set-user-password"), mustJSON(t, map[string]any{"userId": id, "newPassword": newPassword})))
		mustAskedSecondFactor(t, trusted, u.email, newPassword)
	})

	// Today's code already holds here (disable forgets every trusted
	// browser): kept as a regression test.
	t.Run("two-factor-off-and-on", func(t *testing.T) {
		t.Parallel()
		u := mustTwoFactorUser(t, app, "toggle@example.com")
		c, trusted := mustTrustedBrowser(t, app, u, 0)
		mustOK(t, c.post("/api/auth/two-factor/disable", mustJSON(t, map[string]any{"password": tfPassword})))
		mustTwoFactorUserAgain(t, app, u)
		mustAskedSecondFactor(t, trusted, u.email, tfPassword)
	})

	// The cookie itself still works when nothing changed.
	t.Run("unchanged", func(t *testing.T) {
		t.Parallel()
		u := mustTwoFactorUser(t, app, "same@example.com")
		_, trusted := mustTrustedBrowser(t, app, u, 0)
		r := trusted.post("/api/auth/sign-in/email", mustCredentials(t, u.email, tfPassword))
		if body := mustOK(t, r); body["twoFactorRedirect"] == true {
			t.Fatalf("sign-in in a trusted browser = %s, want a session", r.Body)
		}
		mustStatus(t, r, http.StatusOK)
	})
}
