package framework

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// mustNthLink waits for the nth (1-based) mail to to whose subject contains
// subject and returns its only link.
func mustNthLink(t testing.TB, app *harness.App, to, subject string, n int) string {
	t.Helper()
	deadline := time.Now().Add(harness.MailWait)
	for {
		var found []string
		for _, m := range app.Mail.Messages() {
			if m.IsTo(to) && strings.Contains(m.Subject, subject) {
				links := m.Links()
				if len(links) != 1 {
					t.Fatalf("mail %q has links %v, want one", m.Subject, links)
				}
				found = append(found, links[0])
			}
		}
		if len(found) >= n {
			return found[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("mail %d to %s about %q never came (%d did)", n, to, subject, len(found))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Ensure the verification mail: sign-up mails a link; until it is followed
// sign-in is refused; following it verifies the address once; asking for a
// link for an unknown address answers alike and mails nobody.
func TestFramework_verification_mail(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.OrgEnv, func(t *testing.T, app *harness.App) {
		email, pw := harness.Email(t, "ada@example.com"), "correct horse battery"
		c := app.NewClient(t)
		r := c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Ada", "email": email, "password": pw}))
		if body := harness.MustOK(t, r); body["token"] != nil || len(c.Cookies) != 0 {
			t.Fatalf("sign-up signed in before verification: %s, cookies %v", r.Body, c.Cookies)
		}
		link := harness.MustLink(t, app, email, "Verify your email address")
		harness.MustCode(t, c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, email, pw)), http.StatusForbidden, "EMAIL_NOT_VERIFIED")
		harness.MustNoSession(t, c)

		r = app.NewClient(t).Get(link)
		body := harness.MustOK(t, r)
		if u, _ := body["user"].(map[string]any); body["status"] != true || u["emailVerified"] != true || u["email"] != email {
			t.Fatalf("verify-email = %s", r.Body)
		}
		harness.MustSignIn(t, c, email, pw)
		if u := harness.MustUser(t, harness.MustSession(t, c)); u["emailVerified"] != true {
			t.Fatalf("user not verified: %v", u)
		}
		harness.MustCode(t, app.NewClient(t).Get(link), http.StatusUnauthorized, "INVALID_TOKEN")

		// With a callbackURL the link ends on the application's page.
		c2 := app.NewClient(t)
		harness.MustOK(t, c2.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Bob", "email": harness.Email(t, "bob@example.com"), "password": pw, "callbackURL": "/welcome"})))
		link = harness.MustLink(t, app, harness.Email(t, "bob@example.com"), "Verify your email address")
		harness.MustLocation(t, app, app.NewClient(t).Get(link), "/welcome")
		harness.MustSignIn(t, c2, harness.Email(t, "bob@example.com"), pw)
		q := harness.MustLocation(t, app, app.NewClient(t).Get(link), "/welcome")
		if q.Get("error") != "INVALID_TOKEN" {
			t.Fatalf("reused link redirects with error %q, want INVALID_TOKEN", q.Get("error"))
		}

		anon := app.NewClient(t)
		harness.MustStatusTrue(t, anon.Post("/api/auth/send-verification-email", harness.MustJSON(t, map[string]string{"email": harness.Email(t, "nobody@example.com")})))
		harness.MustStatusTrue(t, anon.Post("/api/auth/send-verification-email", harness.MustJSON(t, map[string]string{"email": email})))
		harness.MustNoMail(t, app, harness.Email(t, "nobody@example.com"), "")
		if n := len(harness.MailsTo(app, email, "Verify your email address")); n != 2 {
			t.Fatalf("%d verification mails to a verified address, want 2 (sign-up and refused sign-in)", n)
		}
	})
}

// Ensure the password reset: the mailed link sends the browser to the
// application with a token; a refused new password leaves the token usable;
// the reset ends every session, swaps the password and works once; a newer
// link replaces older ones.
func TestFramework_password_reset_mail(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		email, pw, newPw := harness.Email(t, "ada@example.com"), "correct horse battery", "a brand new passphrase"
		a, b := app.NewClient(t), app.NewClient(t)
		harness.MustSignUp(t, a, "Ada", email, pw)
		harness.MustSignIn(t, b, email, pw)
		anon := app.NewClient(t)
		ask := harness.MustJSON(t, map[string]string{"email": email, "redirectTo": "/reset"})

		harness.MustStatusTrue(t, anon.Post("/api/auth/request-password-reset", ask))
		first := harness.MustLocation(t, app, anon.Get(mustNthLink(t, app, email, "Reset your", 1)), "/reset").Get("token")
		harness.MustStatusTrue(t, anon.Post("/api/auth/request-password-reset", ask))
		token := harness.MustLocation(t, app, anon.Get(mustNthLink(t, app, email, "Reset your", 2)), "/reset").Get("token")
		if first == "" || token == "" || first == token {
			t.Fatalf("reset tokens %q and %q", first, token)
		}
		harness.MustCode(t, anon.Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": first, "newPassword": newPw})), http.StatusBadRequest, "INVALID_TOKEN")

		harness.MustCode(t, anon.Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": token, "newPassword": "short"})), http.StatusBadRequest, "PASSWORD_TOO_SHORT")
		harness.MustSession(t, a)
		harness.MustStatusTrue(t, anon.Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": token, "newPassword": newPw})))
		harness.MustNoSession(t, a)
		harness.MustNoSession(t, b)
		harness.MustSignIn(t, app.NewClient(t), email, newPw)
		harness.MustSignInFails(t, app, email, pw)
		harness.MustCode(t, anon.Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": token, "newPassword": "yet another passphrase"})), http.StatusBadRequest, "INVALID_TOKEN")
		harness.MustSignIn(t, app.NewClient(t), email, newPw)
	})
}

// Ensure a reset cannot set the user's own address as their password, as
// sign-up and change-password refuse it.
func TestFramework_password_reset_refuses_own_address(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreMemory, harness.FwQuick)
	email, pw := harness.Email(t, "ada@example.com"), "correct horse battery"
	anon := app.NewClient(t)
	harness.MustSignUp(t, anon, "Ada", email, pw)
	harness.MustStatusTrue(t, anon.Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]string{"email": email, "redirectTo": "/reset"})))
	token := harness.MustLocation(t, app, anon.Get(harness.MustLink(t, app, email, "Reset your")), "/reset").Get("token")
	harness.MustCode(t, anon.Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": token, "newPassword": email})), http.StatusBadRequest, "PASSWORD_TOO_COMMON")
	harness.MustSignIn(t, app.NewClient(t), email, pw)
}

// Ensure changing the address: the link goes to the new address and moves
// the account only when followed; an address that has an account gets no
// mail and the answer does not say so.
func TestFramework_change_email_mail(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		email, newEmail, pw := harness.Email(t, "ada@example.com"), harness.Email(t, "ada.new@example.com"), "correct horse battery"
		a, bob := app.NewClient(t), app.NewClient(t)
		harness.MustSignUp(t, a, "Ada", email, pw)
		harness.MustSignUp(t, bob, "Bob", harness.Email(t, "bob@example.com"), "another good passphrase")

		harness.MustStatusTrue(t, a.Post("/api/auth/change-email", harness.MustJSON(t, map[string]string{"newEmail": newEmail})))
		link := harness.MustLink(t, app, newEmail, "Confirm the change")
		if u := harness.MustUser(t, harness.MustSession(t, a)); u["email"] != email {
			t.Fatalf("address changed before the link was followed: %v", u)
		}
		harness.MustOK(t, app.NewClient(t).Get(link))
		u := harness.MustUser(t, harness.MustSession(t, a))
		if u["email"] != newEmail || u["emailVerified"] != true {
			t.Fatalf("after the link: %v, want %s verified", u, newEmail)
		}
		harness.MustSignIn(t, app.NewClient(t), newEmail, pw)
		harness.MustSignInFails(t, app, email, pw)
		harness.MustCode(t, app.NewClient(t).Get(link), http.StatusUnauthorized, "INVALID_TOKEN")

		harness.MustStatusTrue(t, a.Post("/api/auth/change-email", harness.MustJSON(t, map[string]string{"newEmail": harness.Email(t, "bob@example.com")})))
		harness.MustNoMail(t, app, harness.Email(t, "bob@example.com"), "Confirm the change")
		if u := harness.MustUser(t, harness.MustSession(t, a)); u["email"] != newEmail {
			t.Fatalf("email = %v", u["email"])
		}
		if u := harness.MustUser(t, harness.MustSession(t, bob)); u["email"] != harness.Email(t, "bob@example.com") {
			t.Fatalf("bob's email = %v", u["email"])
		}
		harness.MustCode(t, app.NewClient(t).Post("/api/auth/change-email", harness.MustJSON(t, map[string]string{"newEmail": harness.Email(t, "x@example.com")})), http.StatusUnauthorized, "UNAUTHORIZED")
	})
}

// Ensure deleting the account: without a password a confirmation link is
// mailed, which deletes the account only when followed by its signed-in
// owner; with the password it is deleted at once; a wrong password deletes
// nothing.
func TestFramework_delete_user(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		pw := "correct horse battery"
		a, b := app.NewClient(t), app.NewClient(t)
		harness.MustSignUp(t, a, "Ada", harness.Email(t, "ada@example.com"), pw)
		harness.MustSignUp(t, b, "Bob", harness.Email(t, "bob@example.com"), pw)

		r := a.Post("/api/auth/delete-user", "{}")
		if body := harness.MustOK(t, r); body["success"] != true || body["message"] != "Verification email sent" {
			t.Fatalf("delete-user without password = %s", r.Body)
		}
		link := mustNthLink(t, app, harness.Email(t, "ada@example.com"), "Confirm deleting", 1)
		if !strings.Contains(link, "/api/auth/delete-user/callback?") {
			t.Fatalf("link %q is not the delete-user callback", link)
		}
		harness.MustCode(t, app.NewClient(t).Get(link), http.StatusUnauthorized, "UNAUTHORIZED")
		harness.MustCode(t, b.Get(link), http.StatusNotFound, "INVALID_TOKEN") // not Bob's account to delete
		harness.MustSession(t, a)
		harness.MustSession(t, b)

		harness.MustOK(t, a.Post("/api/auth/delete-user", "{}"))
		link = mustNthLink(t, app, harness.Email(t, "ada@example.com"), "Confirm deleting", 2)
		old := a.Clone()
		r = a.Get(link)
		if body := harness.MustOK(t, r); body["success"] != true || body["message"] != "User deleted" {
			t.Fatalf("delete-user callback = %s", r.Body)
		}
		harness.MustNoSession(t, a)
		harness.MustNoSession(t, old)
		harness.MustSignInFails(t, app, harness.Email(t, "ada@example.com"), pw)

		harness.MustCode(t, b.Post("/api/auth/delete-user", harness.MustJSON(t, map[string]string{"password": "wrong password"})), http.StatusBadRequest, "INVALID_PASSWORD")
		harness.MustSession(t, b)
		old = b.Clone()
		r = b.Post("/api/auth/delete-user", harness.MustJSON(t, map[string]string{"password": pw}))
		if body := harness.MustOK(t, r); body["success"] != true || body["message"] != "User deleted" {
			t.Fatalf("delete-user with password = %s", r.Body)
		}
		harness.MustNoSession(t, b)
		harness.MustNoSession(t, old)
		harness.MustSignInFails(t, app, harness.Email(t, "bob@example.com"), pw)
		// The address is free again.
		harness.MustSignUp(t, app.NewClient(t), "Bob", harness.Email(t, "bob@example.com"), "another good passphrase")
	})
}

// Ensure change-password needs the current password, keeps other sessions
// unless asked, and with revokeOtherSessions ends them all and gives this
// device a new session.
func TestFramework_change_password(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		email, pw, pw2, pw3 := harness.Email(t, "ada@example.com"), "correct horse battery", "second good passphrase", "third good passphrase"
		a, b := app.NewClient(t), app.NewClient(t)
		harness.MustSignUp(t, a, "Ada", email, pw)
		harness.MustSignIn(t, b, email, pw)

		harness.MustCode(t, a.Post("/api/auth/change-password", harness.MustJSON(t, map[string]any{"currentPassword": "wrong password", "newPassword": pw2, "revokeOtherSessions": true})),
			http.StatusBadRequest, "INVALID_PASSWORD")
		harness.MustSession(t, b)

		r := a.Post("/api/auth/change-password", harness.MustJSON(t, map[string]any{"currentPassword": pw, "newPassword": pw2}))
		if body := harness.MustOK(t, r); body["token"] != nil || body["user"].(map[string]any)["email"] != email {
			t.Fatalf("change-password = %s", r.Body)
		}
		harness.MustSession(t, a)
		harness.MustSession(t, b)

		old := a.Clone()
		r = a.Post("/api/auth/change-password", harness.MustJSON(t, map[string]any{"currentPassword": pw2, "newPassword": pw3, "revokeOtherSessions": true}))
		token, _ := harness.MustOK(t, r)["token"].(string)
		if len(token) != 32 || harness.SetCookies(r)["gatehouse.session_token"] == nil {
			t.Fatalf("change-password with revokeOtherSessions = %s, cookies %q", r.Body, r.Header.Values("Set-Cookie"))
		}
		harness.MustSession(t, a)
		harness.MustNoSession(t, b)
		harness.MustNoSession(t, old)
		harness.MustOK(t, app.NewClient(t).Get("/api/auth/get-session", "Authorization", "Bearer "+token))
		harness.MustSignIn(t, app.NewClient(t), email, pw3)
		harness.MustSignInFails(t, app, email, pw)
		harness.MustSignInFails(t, app, email, pw2)
	})
}
