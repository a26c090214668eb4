package mfa

import (
	"net/http"
	"net/url"
	"path"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// A trusted browser (the trust_device cookie, docs/multi-factor.md) skips
// the second factor only for what it was trusted for: a new password
// (changed or reset) or two-factor turned off forgets it.

// mustTrustedBrowser answers u's challenge with trustDevice and returns
// the signed-in client (its session stepped up) and a browser holding only
// its trust_device cookie.
func mustTrustedBrowser(t *testing.T, app *harness.App, u *harness.TfUser, step int64) (signedIn, trusted *harness.Client) {
	t.Helper()
	c := harness.MustChallenge(t, app, u)
	harness.MustOK(t, c.Post("/api/auth/two-factor/verify-totp", harness.MustJSON(t, map[string]any{"code": harness.TOTPAt(app.Clock, u.Secret, step), "trustDevice": true})))
	trusted = app.NewClient(t)
	trusted.Cookies[harness.TrustCookie] = c.Cookies[harness.TrustCookie]
	if trusted.Cookies[harness.TrustCookie] == "" {
		t.Fatal("no trust_device cookie")
	}
	return c, trusted
}

// mustAskedSecondFactor fails unless a password sign-in of email in
// browser b is asked for the second factor.
func mustAskedSecondFactor(t *testing.T, b *harness.Client, email, password string) {
	t.Helper()
	r := b.Post("/api/auth/sign-in/email", harness.MustCredentials(t, email, password))
	if body := harness.MustOK(t, r); body["twoFactorRedirect"] != true {
		t.Fatalf("sign-in in a browser trusted before = %s, want the challenge", r.Body)
	}
}

// Ensure a browser trusted before a password change, a password reset, a
// password an administrator set, or two-factor turned off and on again is
// asked for the second factor.
func TestTrustedBrowser_forgotten(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreSQLite, harness.AdminEnv)
	const newPassword = "a brand new passphrase"

	t.Run("change-password", func(t *testing.T) {
		t.Parallel()
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "change@example.com"))
		c, trusted := mustTrustedBrowser(t, app, u, 0)
		harness.MustOK(t, c.Post("/api/auth/change-password", harness.MustJSON(t, map[string]any{"currentPassword": harness.TfPassword, "newPassword": newPassword})))
		mustAskedSecondFactor(t, trusted, u.Email, newPassword)
	})

	t.Run("reset-password", func(t *testing.T) {
		t.Parallel()
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "reset@example.com"))
		_, trusted := mustTrustedBrowser(t, app, u, 0)
		harness.MustOK(t, app.NewClient(t).Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]string{"email": u.Email})))
		link, err := url.Parse(harness.MustLink(t, app, u.Email, "Reset your"))
		if err != nil {
			t.Fatal(err)
		}
		harness.MustStatusTrue(t, app.NewClient(t).Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": path.Base(link.Path), "newPassword": newPassword})))
		mustAskedSecondFactor(t, trusted, u.Email, newPassword)
	})

	t.Run("admin-set-user-password", func(t *testing.T) {
		t.Parallel()
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "admin-set@example.com"))
		_, trusted := mustTrustedBrowser(t, app, u, 0)
		admin, _ := harness.MustAdmin(t, app)
		id := harness.MustUser(t, harness.MustSession(t, u.C))["id"]
		harness.MustStatusTrue(t, admin.Post(harness.AdminPath("set-user-password"), harness.MustJSON(t, map[string]any{"userId": id, "newPassword": newPassword})))
		mustAskedSecondFactor(t, trusted, u.Email, newPassword)
	})

	// Today's code already holds here (disable forgets every trusted
	// browser): kept as a regression test.
	t.Run("two-factor-off-and-on", func(t *testing.T) {
		t.Parallel()
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "toggle@example.com"))
		c, trusted := mustTrustedBrowser(t, app, u, 0)
		harness.MustOK(t, c.Post("/api/auth/two-factor/disable", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))
		mustTwoFactorUserAgain(t, app, u)
		mustAskedSecondFactor(t, trusted, u.Email, harness.TfPassword)
	})

	// The cookie itself still works when nothing changed.
	t.Run("unchanged", func(t *testing.T) {
		t.Parallel()
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "same@example.com"))
		_, trusted := mustTrustedBrowser(t, app, u, 0)
		r := trusted.Post("/api/auth/sign-in/email", harness.MustCredentials(t, u.Email, harness.TfPassword))
		if body := harness.MustOK(t, r); body["twoFactorRedirect"] == true {
			t.Fatalf("sign-in in a trusted browser = %s, want a session", r.Body)
		}
		harness.MustStatus(t, r, http.StatusOK)
	})
}
