package test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// mustNthLink waits for the nth (1-based) mail to to whose subject contains
// subject and returns its only link.
func mustNthLink(t testing.TB, app *fwApp, to, subject string, n int) string {
	t.Helper()
	deadline := time.Now().Add(mailWait)
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

// mustLocation fails unless r is a 302 to path on the app, and returns the
// target's query.
func mustLocation(t testing.TB, app *fwApp, r *response, path string) url.Values {
	t.Helper()
	mustStatus(t, r, http.StatusFound)
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil || loc.Path != path || (loc.Host != "" && "http://"+loc.Host != app.URL) {
		t.Fatalf("Location = %q, want %s on %s", r.Header.Get("Location"), path, app.URL)
	}
	return loc.Query()
}

// Ensure the verification mail: sign-up mails a link; until it is followed
// sign-in is refused; following it verifies the address once; asking for a
// link for an unknown address answers alike and mails nobody.
func TestFramework_verification_mail(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, map[string]string{"GATEHOUSE_RATE_LIMIT": "off"}, func(t *testing.T, app *fwApp) {
		const email, pw = "ada@example.com", "correct horse battery"
		c := app.client(t)
		r := c.post("/api/auth/sign-up/email", mustJSON(t, map[string]string{"name": "Ada", "email": email, "password": pw}))
		if body := mustOK(t, r); body["token"] != nil || len(c.Cookies) != 0 {
			t.Fatalf("sign-up signed in before verification: %s, cookies %v", r.Body, c.Cookies)
		}
		link := mustLink(t, app, email, "Verify your email address")
		mustCode(t, c.post("/api/auth/sign-in/email", mustCredentials(t, email, pw)), http.StatusForbidden, "EMAIL_NOT_VERIFIED")
		mustNoSession(t, c)

		r = app.client(t).get(link)
		body := mustOK(t, r)
		if u, _ := body["user"].(map[string]any); body["status"] != true || u["emailVerified"] != true || u["email"] != email {
			t.Fatalf("verify-email = %s", r.Body)
		}
		mustSignIn(t, c, email, pw)
		if u := mustUser(t, mustSession(t, c)); u["emailVerified"] != true {
			t.Fatalf("user not verified: %v", u)
		}
		mustCode(t, app.client(t).get(link), http.StatusUnauthorized, "INVALID_TOKEN")

		// With a callbackURL the link ends on the application's page.
		c2 := app.client(t)
		mustOK(t, c2.post("/api/auth/sign-up/email", mustJSON(t, map[string]string{"name": "Bob", "email": "bob@example.com", "password": pw, "callbackURL": "/welcome"})))
		link = mustLink(t, app, "bob@example.com", "Verify your email address")
		mustLocation(t, app, app.client(t).get(link), "/welcome")
		mustSignIn(t, c2, "bob@example.com", pw)
		q := mustLocation(t, app, app.client(t).get(link), "/welcome")
		if q.Get("error") != "INVALID_TOKEN" {
			t.Fatalf("reused link redirects with error %q, want INVALID_TOKEN", q.Get("error"))
		}

		anon := app.client(t)
		mustStatusTrue(t, anon.post("/api/auth/send-verification-email", mustJSON(t, map[string]string{"email": "nobody@example.com"})))
		mustStatusTrue(t, anon.post("/api/auth/send-verification-email", mustJSON(t, map[string]string{"email": email})))
		mustNoMail(t, app, "nobody@example.com", "")
		if n := len(mailsTo(app, email, "Verify your email address")); n != 2 {
			t.Fatalf("%d verification mails to a verified address, want 2 (sign-up and refused sign-in)", n)
		}
	})
}

// mailsTo returns the subjects of mails received for to about subject.
func mailsTo(app *fwApp, to, subject string) []string {
	var out []string
	for _, m := range app.Mail.Messages() {
		if m.IsTo(to) && strings.Contains(m.Subject, subject) {
			out = append(out, m.Subject)
		}
	}
	return out
}

// Ensure the password reset: the mailed link sends the browser to the
// application with a token; a refused new password leaves the token usable;
// the reset ends every session, swaps the password and works once; a newer
// link replaces older ones.
func TestFramework_password_reset_mail(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		const email, pw, newPw = "ada@example.com", "correct horse battery", "a brand new passphrase"
		a, b := app.client(t), app.client(t)
		mustSignUp(t, a, "Ada", email, pw)
		mustSignIn(t, b, email, pw)
		anon := app.client(t)
		ask := mustJSON(t, map[string]string{"email": email, "redirectTo": "/reset"})

		mustStatusTrue(t, anon.post("/api/auth/request-password-reset", ask))
		first := mustLocation(t, app, anon.get(mustNthLink(t, app, email, "Reset your", 1)), "/reset").Get("token")
		mustStatusTrue(t, anon.post("/api/auth/request-password-reset", ask))
		token := mustLocation(t, app, anon.get(mustNthLink(t, app, email, "Reset your", 2)), "/reset").Get("token")
		if first == "" || token == "" || first == token {
			t.Fatalf("reset tokens %q and %q", first, token)
		}
		mustCode(t, anon.post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": first, "newPassword": newPw})), http.StatusBadRequest, "INVALID_TOKEN")

		mustCode(t, anon.post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": token, "newPassword": "short"})), http.StatusBadRequest, "PASSWORD_TOO_SHORT")
		mustSession(t, a)
		mustStatusTrue(t, anon.post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": token, "newPassword": newPw})))
		mustNoSession(t, a)
		mustNoSession(t, b)
		mustSignIn(t, app.client(t), email, newPw)
		mustSignInFails(t, app, email, pw)
		mustCode(t, anon.post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": token, "newPassword": "yet another passphrase"})), http.StatusBadRequest, "INVALID_TOKEN")
		mustSignIn(t, app.client(t), email, newPw)
	})
}

// Ensure a reset cannot set the user's own address as their password, as
// sign-up and change-password refuse it.
func TestFramework_password_reset_refuses_own_address(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeMemory, fwQuick)
	const email, pw = "ada@example.com", "correct horse battery"
	anon := app.client(t)
	mustSignUp(t, anon, "Ada", email, pw)
	mustStatusTrue(t, anon.post("/api/auth/request-password-reset", mustJSON(t, map[string]string{"email": email, "redirectTo": "/reset"})))
	token := mustLocation(t, app, anon.get(mustLink(t, app, email, "Reset your")), "/reset").Get("token")
	mustCode(t, anon.post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": token, "newPassword": email})), http.StatusBadRequest, "PASSWORD_TOO_COMMON")
	mustSignIn(t, app.client(t), email, pw)
}

// Ensure changing the address: the link goes to the new address and moves
// the account only when followed; an address that has an account gets no
// mail and the answer does not say so.
func TestFramework_change_email_mail(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		const email, newEmail, pw = "ada@example.com", "ada.new@example.com", "correct horse battery"
		a, bob := app.client(t), app.client(t)
		mustSignUp(t, a, "Ada", email, pw)
		mustSignUp(t, bob, "Bob", "bob@example.com", "another good passphrase")

		mustStatusTrue(t, a.post("/api/auth/change-email", mustJSON(t, map[string]string{"newEmail": newEmail})))
		link := mustLink(t, app, newEmail, "Confirm the change")
		if u := mustUser(t, mustSession(t, a)); u["email"] != email {
			t.Fatalf("address changed before the link was followed: %v", u)
		}
		mustOK(t, app.client(t).get(link))
		u := mustUser(t, mustSession(t, a))
		if u["email"] != newEmail || u["emailVerified"] != true {
			t.Fatalf("after the link: %v, want %s verified", u, newEmail)
		}
		mustSignIn(t, app.client(t), newEmail, pw)
		mustSignInFails(t, app, email, pw)
		mustCode(t, app.client(t).get(link), http.StatusUnauthorized, "INVALID_TOKEN")

		mustStatusTrue(t, a.post("/api/auth/change-email", mustJSON(t, map[string]string{"newEmail": "bob@example.com"})))
		mustNoMail(t, app, "bob@example.com", "Confirm the change")
		if u := mustUser(t, mustSession(t, a)); u["email"] != newEmail {
			t.Fatalf("email = %v", u["email"])
		}
		if u := mustUser(t, mustSession(t, bob)); u["email"] != "bob@example.com" {
			t.Fatalf("bob's email = %v", u["email"])
		}
		mustCode(t, app.client(t).post("/api/auth/change-email", mustJSON(t, map[string]string{"newEmail": "x@example.com"})), http.StatusUnauthorized, "UNAUTHORIZED")
	})
}

// Ensure deleting the account: without a password a confirmation link is
// mailed, which deletes the account only when followed by its signed-in
// owner; with the password it is deleted at once; a wrong password deletes
// nothing.
func TestFramework_delete_user(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		const pw = "correct horse battery"
		a, b := app.client(t), app.client(t)
		mustSignUp(t, a, "Ada", "ada@example.com", pw)
		mustSignUp(t, b, "Bob", "bob@example.com", pw)

		r := a.post("/api/auth/delete-user", "{}")
		if body := mustOK(t, r); body["success"] != true || body["message"] != "Verification email sent" {
			t.Fatalf("delete-user without password = %s", r.Body)
		}
		link := mustNthLink(t, app, "ada@example.com", "Confirm deleting", 1)
		if !strings.Contains(link, "/api/auth/delete-user/callback?") {
			t.Fatalf("link %q is not the delete-user callback", link)
		}
		mustCode(t, app.client(t).get(link), http.StatusUnauthorized, "UNAUTHORIZED")
		mustCode(t, b.get(link), http.StatusNotFound, "INVALID_TOKEN") // not Bob's account to delete
		mustSession(t, a)
		mustSession(t, b)

		mustOK(t, a.post("/api/auth/delete-user", "{}"))
		link = mustNthLink(t, app, "ada@example.com", "Confirm deleting", 2)
		old := a.clone()
		r = a.get(link)
		if body := mustOK(t, r); body["success"] != true || body["message"] != "User deleted" {
			t.Fatalf("delete-user callback = %s", r.Body)
		}
		mustNoSession(t, a)
		mustNoSession(t, old)
		mustSignInFails(t, app, "ada@example.com", pw)

		mustCode(t, b.post("/api/auth/delete-user", mustJSON(t, map[string]string{"password": "wrong password"})), http.StatusBadRequest, "INVALID_PASSWORD")
		mustSession(t, b)
		old = b.clone()
		r = b.post("/api/auth/delete-user", mustJSON(t, map[string]string{"password": pw}))
		if body := mustOK(t, r); body["success"] != true || body["message"] != "User deleted" {
			t.Fatalf("delete-user with password = %s", r.Body)
		}
		mustNoSession(t, b)
		mustNoSession(t, old)
		mustSignInFails(t, app, "bob@example.com", pw)
		// The address is free again.
		mustSignUp(t, app.client(t), "Bob", "bob@example.com", "another good passphrase")
	})
}

// Ensure change-password needs the current password, keeps other sessions
// unless asked, and with revokeOtherSessions ends them all and gives this
// device a new session.
func TestFramework_change_password(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		const email, pw, pw2, pw3 = "ada@example.com", "correct horse battery", "second good passphrase", "third good passphrase"
		a, b := app.client(t), app.client(t)
		mustSignUp(t, a, "Ada", email, pw)
		mustSignIn(t, b, email, pw)

		mustCode(t, a.post("/api/auth/change-password", mustJSON(t, map[string]any{"currentPassword": "wrong password", "newPassword": pw2, "revokeOtherSessions": true})),
			http.StatusBadRequest, "INVALID_PASSWORD")
		mustSession(t, b)

		r := a.post("/api/auth/change-password", mustJSON(t, map[string]any{"currentPassword": pw, "newPassword": pw2}))
		if body := mustOK(t, r); body["token"] != nil || body["user"].(map[string]any)["email"] != email {
			t.Fatalf("change-password = %s", r.Body)
		}
		mustSession(t, a)
		mustSession(t, b)

		old := a.clone()
		r = a.post("/api/auth/change-password", mustJSON(t, map[string]any{"currentPassword": pw2, "newPassword": pw3, "revokeOtherSessions": true}))
		token, _ := mustOK(t, r)["token"].(string)
		if len(token) != 32 || setCookies(r)["gatehouse.session_token"] == nil {
			t.Fatalf("change-password with revokeOtherSessions = %s, cookies %q", r.Body, r.Header.Values("Set-Cookie"))
		}
		mustSession(t, a)
		mustNoSession(t, b)
		mustNoSession(t, old)
		mustOK(t, app.client(t).get("/api/auth/get-session", "Authorization", "Bearer "+token))
		mustSignIn(t, app.client(t), email, pw3)
		mustSignInFails(t, app, email, pw)
		mustSignInFails(t, app, email, pw2)
	})
}
