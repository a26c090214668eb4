package test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The self-service account pages (/account): every signed-in user's own
// profile, sessions and organizations, on the console's shell and guards.

// accountPages are the account pages this file covers.
var accountPages = []string{"/account", "/account/sessions", "/account/organizations"}

// accountForms are the account forms by the page that carries them.
var accountForms = map[string]string{
	"/account/profile":                "/account",
	"/account/email":                  "/account",
	"/account/password":               "/account",
	"/account/delete":                 "/account",
	"/account/sessions/revoke":        "/account/sessions",
	"/account/sessions/revoke-others": "/account/sessions",
	"/account/invitations/accept":     "/account/organizations",
	"/account/invitations/decline":    "/account/organizations",
}

// mustAccountDone fails unless r is the 303 of a form that did what,
// back to path.
func mustAccountDone(t testing.TB, r *response, path, what string) {
	t.Helper()
	mustStatus(t, r, http.StatusSeeOther)
	if got, want := r.Header.Get("Location"), path+"?done="+what; got != want {
		t.Fatalf("Location = %q, want %q; body %s", got, want, r.Body)
	}
}

// mustFormRefused fails unless r is the refusal of a form's token.
func mustFormRefused(t testing.TB, r *response, what string) {
	t.Helper()
	if body := mustConsolePage(t, r, http.StatusForbidden); !strings.Contains(body, "Form refused") {
		t.Fatalf("%s: %s", what, body)
	}
}

// accountTestInvite has the owner invite email to a new organization and
// returns the invitation's id.
func accountTestInvite(t testing.TB, owner *fwClient, name, slug, email, role string) string {
	t.Helper()
	org := mustCreateOrg(t, owner, name, slug)
	id, _ := mustInvite(t, owner, org["id"].(string), email, role)["id"].(string)
	return id
}

// Ensure every account page sends a signed-out browser to sign in and
// back, serves any signed-in user (not only administrators) under the
// console's headers, and that every account form sends a signed-out
// browser to sign in and back to the account, and refuses a missing token,
// a cross-origin post, another form's token, another session's and a
// reused one, changing nothing. A sign-in without callbackURL lands on
// /account.
func TestAccountPages_authorization_matrix(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesThatMatter, adminEnv, func(t *testing.T, app *fwApp) {
		user, _ := mustVerifiedUser(t, app, "Pat Plain", "pat@example.com", userPassword)
		admin, _ := mustAdmin(t, app)
		anon := app.client(t)
		for _, path := range append(accountPages, "/account?done=profile") {
			mustSignInRedirect(t, anon.get(path), path)
			for _, c := range []*fwClient{user, admin} {
				body := mustConsolePage(t, c.get(path), http.StatusOK)
				if !strings.Contains(body, `aria-label="Account"`) {
					t.Fatalf("GET %s is not on the account shell: %s", path, body)
				}
			}
		}
		for action := range accountForms {
			mustSignInRedirect(t, consolePost(anon, action, nil), "/account")
			mustFormRefused(t, consolePost(user, action, nil), "POST "+action+" without a token")
			mustFormRefused(t, consolePost(user, action, url.Values{"_token": {"forged"}}), "POST "+action+" with a forged token")
		}

		// A form's token: cross-origin, another form's, another session's,
		// then used once and refused again.
		tokens := mustConsoleTokens(t, user, "/account")
		profile := url.Values{"_token": {tokens["/account/profile"]}, "name": {"Changed"}}
		evil := user.clone()
		evil.Origin = "https://evil.example"
		mustConsolePage(t, consolePost(evil, "/account/profile", profile), http.StatusForbidden)
		noOrigin := user.clone()
		noOrigin.Origin = ""
		mustStatus(t, consolePost(noOrigin, "/account/profile", profile), http.StatusForbidden)
		mustFormRefused(t, consolePost(user, "/account/password", url.Values{"_token": {tokens["/account/profile"]},
			"currentPassword": {userPassword}, "newPassword": {"another fine passphrase"}, "confirmPassword": {"another fine passphrase"}}), "another form's token")
		other := app.client(t)
		mustSignIn(t, other, "pat@example.com", userPassword)
		otherTokens := mustConsoleTokens(t, other, "/account")
		mustFormRefused(t, consolePost(user, "/account/profile", url.Values{"_token": {otherTokens["/account/profile"]}, "name": {"Changed"}}), "another session's token")
		if name := mustUser(t, mustSession(t, user))["name"]; name != "Pat Plain" {
			t.Fatalf("a refused form changed the name to %v", name)
		}
		mustSignIn(t, app.client(t), "pat@example.com", userPassword) // the password is unchanged
		mustAccountDone(t, consolePost(user, "/account/profile", profile), "/account", "profile")
		mustFormRefused(t, consolePost(user, "/account/profile", url.Values{"_token": {tokens["/account/profile"]}, "name": {"Again"}}), "a reused token")
		if name := mustUser(t, mustSession(t, user))["name"]; name != "Changed" {
			t.Fatalf("name = %v, want Changed", name)
		}

		// The hosted sign-in without callbackURL lands here; with one it
		// goes there.
		b := newFormBrowser(t, app)
		mustSeeOther(t, app, b.submit("/api/auth/sign-in/email", url.Values{"email": {"pat@example.com"}, "password": {userPassword}}), "/account")
		b = newFormBrowser(t, app)
		mustSeeOther(t, app, b.submit("/api/auth/sign-in/email", url.Values{"email": {"pat@example.com"}, "password": {userPassword},
			"callbackURL": {"/account/sessions"}}), "/account/sessions")
	})
}

// Ensure the profile, e-mail and password forms change what they should,
// read back through /api/auth/*, and keep the input and name the field
// when refused.
func TestAccountPages_profile_email_password(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		const email, newEmail = "ada@example.com", "ada.new@example.com"
		ada, _ := mustVerifiedUser(t, app, "Ada", email, userPassword)
		if page := mustConsolePage(t, ada.get("/account"), http.StatusOK); !strings.Contains(page, email) || !strings.Contains(page, "<dd>Yes</dd>") {
			t.Fatalf("the profile page: %s", page)
		}

		// Name and image.
		r := consoleFormPost(t, ada, "/account", "/account/profile", url.Values{"name": {"Ada <Lovelace>"}, "image": {"https://img.example.com/ada.png"}})
		mustAccountDone(t, r, "/account", "profile")
		u := mustUser(t, mustSession(t, ada))
		if u["name"] != "Ada <Lovelace>" || u["image"] != "https://img.example.com/ada.png" {
			t.Fatalf("after the profile form: %v", u)
		}
		page := mustConsolePage(t, ada.get("/account?done=profile"), http.StatusOK)
		if !strings.Contains(page, "Ada &lt;Lovelace&gt;") || !strings.Contains(page, "Your profile is saved.") {
			t.Fatalf("the profile page after saving: %s", page)
		}
		// Refused: the input stays, the field is named, nothing changes.
		for _, tt := range []struct {
			name, image, field, kept string
		}{
			{"   ", "", `id="name"`, ""},
			{strings.Repeat("n", 257), "", `id="name"`, strings.Repeat("n", 257)},
			{"Ada", "javascript:alert(1)", `id="image"`, `value="javascript:alert(1)"`},
			{"Ada", "not a url", `id="image"`, `value="not a url"`},
		} {
			r := consoleFormPost(t, ada, "/account", "/account/profile", url.Values{"name": {tt.name}, "image": {tt.image}})
			page := mustConsolePage(t, r, http.StatusBadRequest)
			if !strings.Contains(page, `aria-invalid="true"`) || !strings.Contains(page, tt.field) || !strings.Contains(page, tt.kept) || !strings.Contains(page, "profile-error") {
				t.Fatalf("profile %q %q: %s", tt.name, tt.image, page)
			}
		}
		if u := mustUser(t, mustSession(t, ada)); u["name"] != "Ada <Lovelace>" {
			t.Fatalf("a refused profile form changed the name: %v", u)
		}

		// E-mail: invalid, then the same, then a new one with its mailed link.
		r = consoleFormPost(t, ada, "/account", "/account/email", url.Values{"newEmail": {"not-an-address"}})
		if page := mustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `value="not-an-address"`) || !strings.Contains(page, "email-error") {
			t.Fatalf("invalid new address: %s", page)
		}
		r = consoleFormPost(t, ada, "/account", "/account/email", url.Values{"newEmail": {email}})
		mustConsolePage(t, r, http.StatusBadRequest)
		mustAccountDone(t, consoleFormPost(t, ada, "/account", "/account/email", url.Values{"newEmail": {newEmail}}), "/account", "email-sent")
		link := mustLink(t, app, newEmail, "Confirm the change")
		if u := mustUser(t, mustSession(t, ada)); u["email"] != email {
			t.Fatalf("the address changed before the link was opened: %v", u)
		}
		follow := ada.get(link)
		mustStatus(t, follow, http.StatusFound)
		if loc := follow.Header.Get("Location"); !strings.HasSuffix(loc, "/account?done=email-verified") {
			t.Fatalf("the link leads to %q", loc)
		}
		if u := mustUser(t, mustSession(t, ada)); u["email"] != newEmail || u["emailVerified"] != true {
			t.Fatalf("after the link: %v", u)
		}

		// Password: wrong current one, too short, confirmation differs; then
		// changed, signing out every other session.
		other := app.client(t)
		mustSignIn(t, other, newEmail, userPassword)
		const next = "a brand new passphrase"
		for _, tt := range []struct {
			current, next, confirm, field string
			status                        int
		}{
			{"", next, next, `id="currentPassword"`, http.StatusBadRequest},
			{"wrong password here", next, next, "is not the account", http.StatusBadRequest},
			{userPassword, "short", "short", "at least 8 characters", http.StatusBadRequest},
			{userPassword, next, next + "!", `id="confirmPassword"`, http.StatusBadRequest},
		} {
			r := consoleFormPost(t, ada, "/account", "/account/password", url.Values{"currentPassword": {tt.current}, "newPassword": {tt.next},
				"confirmPassword": {tt.confirm}, "revokeOtherSessions": {"true"}})
			page := mustConsolePage(t, r, tt.status)
			if !strings.Contains(page, tt.field) || !strings.Contains(page, "password-error") || !strings.Contains(page, `name="revokeOtherSessions" value="true" checked`) {
				t.Fatalf("password %q→%q: %s", tt.current, tt.next, page)
			}
			if strings.Contains(page, tt.next) && tt.next != "short" {
				t.Fatalf("the page shows a password again: %s", page)
			}
		}
		mustSession(t, other)
		r = consoleFormPost(t, ada, "/account", "/account/password", url.Values{"currentPassword": {userPassword}, "newPassword": {next},
			"confirmPassword": {next}, "revokeOtherSessions": {"true"}})
		mustAccountDone(t, r, "/account", "password-all")
		mustNoSession(t, other)
		mustSession(t, ada) // this browser got a new session
		mustSignIn(t, app.client(t), newEmail, next)
		mustSignInFails(t, app, newEmail, userPassword)
		// Without signing the others out.
		mustSignIn(t, other, newEmail, next)
		r = consoleFormPost(t, ada, "/account", "/account/password", url.Values{"currentPassword": {next}, "newPassword": {userPassword}, "confirmPassword": {userPassword}})
		mustAccountDone(t, r, "/account", "password")
		mustSession(t, other)
	})
}

// Ensure the sessions page shows each live session with its device,
// address and times, marks this browser's, ends another one and every
// other, and refuses someone else's session.
func TestAccountPages_sessions(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		ada, _ := mustPlainUser(t, app, "Ada", "ada@example.com", userPassword)
		_, _ = mustPlainUser(t, app, "Bob", "bob@example.com", userPassword)
		bob := app.client(t)
		mustSignIn(t, bob, "bob@example.com", userPassword)
		bobSession, _ := mustObject(t, mustSession(t, bob)["session"])["id"].(string)

		phone := app.client(t)
		ua := "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
		mustOK(t, phone.post("/api/auth/sign-in/email", mustCredentials(t, "ada@example.com", userPassword), "User-Agent", ua))
		phoneSession, _ := mustObject(t, mustSession(t, phone)["session"])["id"].(string)
		laptop := app.client(t)
		mustSignIn(t, laptop, "ada@example.com", userPassword)

		page := mustConsolePage(t, ada.get("/account/sessions"), http.StatusOK)
		rows := consoleRows(page)
		if n := strings.Count(rows, "<tr"); n != 3 {
			t.Fatalf("%d sessions listed, want 3: %s", n, rows)
		}
		if strings.Count(rows, "this device") != 1 || !strings.Contains(rows, "Safari on iPhone") || !strings.Contains(rows, "<time datetime=") {
			t.Fatalf("the sessions: %s", rows)
		}
		if strings.Contains(rows, bobSession) {
			t.Fatal("someone else's session is listed")
		}

		// Someone else's session: 404, nothing ends.
		r := consoleFormPost(t, ada, "/account/sessions", "/account/sessions/revoke", url.Values{"session": {bobSession}})
		mustConsolePage(t, r, http.StatusNotFound)
		mustSession(t, bob)

		// One, then every other.
		mustAccountDone(t, consoleFormPost(t, ada, "/account/sessions", "/account/sessions/revoke", url.Values{"session": {phoneSession}}), "/account/sessions", "revoked")
		mustNoSession(t, phone)
		mustSession(t, laptop)
		if page := mustConsolePage(t, ada.get("/account/sessions?done=revoked"), http.StatusOK); !strings.Contains(page, "The session has ended") || strings.Contains(page, phoneSession) {
			t.Fatalf("after ending one: %s", page)
		}
		mustAccountDone(t, consoleFormPost(t, ada, "/account/sessions", "/account/sessions/revoke-others", nil), "/account/sessions", "others")
		mustNoSession(t, laptop)
		mustSession(t, ada)
		mustSession(t, bob)
		if rows := consoleRows(mustConsolePage(t, ada.get("/account/sessions"), http.StatusOK)); strings.Count(rows, "<tr") != 1 {
			t.Fatalf("after ending the others: %s", rows)
		}
		for _, m := range listSessions(t, ada) {
			if m["id"] == phoneSession {
				t.Fatal("list-sessions still has the ended session")
			}
		}
	})
}

// listSessions is list-sessions' answer for c.
func listSessions(t testing.TB, c *fwClient) []map[string]any {
	t.Helper()
	return mustList(t, c.get("/api/auth/list-sessions"))
}

// Ensure the organizations page lists the user's organizations with their
// role and the invitations to their address, and that accepting and
// declining go through the organization plugin (read back through it).
func TestAccountPages_organizations(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		owner := mustVerifiedClient(t, app, "Olive", "olive@example.com")
		ada := mustVerifiedClient(t, app, "Ada", "ada@example.com")
		mustCreateOrg(t, ada, "Ada Labs", "ada-labs")
		join := accountTestInvite(t, owner, "Join Corp", "join-corp", "ada@example.com", "admin")
		skip := accountTestInvite(t, owner, "Skip Corp", "skip-corp", "ada@example.com", "member")

		page := mustConsolePage(t, ada.get("/account/organizations"), http.StatusOK)
		for _, want := range []string{"Ada Labs", "owner", "Join Corp", "Skip Corp", "olive@example.com", join, skip} {
			if !strings.Contains(page, want) {
				t.Fatalf("the organizations page lacks %q: %s", want, page)
			}
		}
		// Someone else's invitation is refused.
		bob := mustVerifiedClient(t, app, "Bob", "bob@example.com")
		accountTestInvite(t, owner, "Bob Corp", "bob-corp", "bob@example.com", "member") // so that his page has the form
		r := consoleFormPost(t, bob, "/account/organizations", "/account/invitations/accept", url.Values{"invitation": {join}})
		if r.Status < 400 || r.Status >= 500 {
			t.Fatalf("accepting someone else's invitation: %d %s", r.Status, r.Body)
		}
		mustConsolePage(t, r, r.Status)

		stale := mustConsoleTokens(t, ada, "/account/organizations")["/account/invitations/decline"]
		mustAccountDone(t, consoleFormPost(t, ada, "/account/organizations", "/account/invitations/decline", url.Values{"invitation": {skip}}), "/account/organizations", "declined")
		mustAccountDone(t, consoleFormPost(t, ada, "/account/organizations", "/account/invitations/accept", url.Values{"invitation": {join}}), "/account/organizations", "accepted")
		orgs := mustList(t, ada.get(orgPath("list")))
		var slugs []string
		for _, o := range orgs {
			slugs = append(slugs, o["slug"].(string))
		}
		if strings.Join(slugs, ",") != "ada-labs,join-corp" && strings.Join(slugs, ",") != "join-corp,ada-labs" {
			t.Fatalf("organization/list = %v", slugs)
		}
		if invs := mustList(t, ada.get(orgPath("list-user-invitations"))); len(invs) != 0 {
			t.Fatalf("open invitations after answering both: %v", invs)
		}
		page = mustConsolePage(t, ada.get("/account/organizations?done=accepted"), http.StatusOK)
		if !strings.Contains(page, "You joined the organization.") || !strings.Contains(consoleRows(page), "Join Corp") || !strings.Contains(page, "admin") || strings.Contains(page, "Skip Corp") {
			t.Fatalf("after answering: %s", page)
		}
		// Answered already: refused, no 500.
		r = consolePost(ada, "/account/invitations/decline", url.Values{"_token": {stale}, "invitation": {join}})
		if r.Status < 400 || r.Status >= 500 {
			t.Fatalf("declining an accepted invitation: %d", r.Status)
		}

		// An unverified user is told to confirm their address first.
		unverified, _ := mustPlainUser(t, app, "Una", "una@example.com", userPassword)
		if page := mustConsolePage(t, unverified.get("/account/organizations"), http.StatusOK); !strings.Contains(page, "Confirm your e-mail address") {
			t.Fatalf("an unverified user's organizations page: %s", page)
		}
	})
}

// Ensure deleting the account asks for the typed address and the
// password (a wrong one deletes nothing, keeping the input), and then
// deletes it and signs the browser out.
func TestAccountPages_delete_account(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		ada, _ := mustPlainUser(t, app, "Ada", "ada@example.com", userPassword)
		r := consoleFormPost(t, ada, "/account", "/account/delete", url.Values{"confirm": {"someone@example.com"}, "password": {userPassword}})
		if page := mustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="delete-error"`) || !strings.Contains(page, `value="someone@example.com"`) {
			t.Fatalf("wrong confirmation: %s", page)
		}
		r = consoleFormPost(t, ada, "/account", "/account/delete", url.Values{"confirm": {"ada@example.com"}, "password": {"not my password"}})
		if page := mustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="deletePassword"`) || !strings.Contains(page, "Nothing was deleted") ||
			!strings.Contains(page, `value="ada@example.com"`) {
			t.Fatalf("wrong password: %s", page)
		}
		mustSession(t, ada)
		r = consoleFormPost(t, ada, "/account", "/account/delete", url.Values{"confirm": {"ADA@example.com"}, "password": {userPassword}})
		mustStatus(t, r, http.StatusSeeOther)
		mustNoSession(t, ada)
		mustSignInFails(t, app, "ada@example.com", userPassword)
		mustSignInRedirect(t, ada.get("/account"), "/account")

		// Without a password: the framework mails a confirming link.
		bob, _ := mustPlainUser(t, app, "Bob", "bob@example.com", userPassword)
		mustAccountDone(t, consoleFormPost(t, bob, "/account", "/account/delete", url.Values{"confirm": {"bob@example.com"}}), "/account", "delete-sent")
		mustSession(t, bob)
		mustStatus(t, bob.get(mustLink(t, app, "bob@example.com", "Confirm")), http.StatusFound)
		mustSignInFails(t, app, "bob@example.com", userPassword)
	})
}

// Ensure the multi-factor step-up rules apply: a user with two-factor on
// whose session has no recent second factor is sent to the hosted
// second-factor page and back, and nothing changes; once stepped up the
// change goes through.
func TestAccountPages_step_up(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		u := mustTwoFactorUser(t, app, "tess@example.com")
		s := mustStaleSession(t, app, u)
		for _, tt := range []struct {
			action string
			fields url.Values
		}{
			{"/account/password", url.Values{"currentPassword": {tfPassword}, "newPassword": {"a brand new passphrase"}, "confirmPassword": {"a brand new passphrase"}}},
			{"/account/email", url.Values{"newEmail": {"tess.new@example.com"}}},
			{"/account/delete", url.Values{"confirm": {"tess@example.com"}, "password": {tfPassword}}},
		} {
			r := consoleFormPost(t, s, "/account", tt.action, tt.fields)
			mustStatus(t, r, http.StatusSeeOther)
			if got, want := r.Header.Get("Location"), "/two-factor?callbackURL=%2Faccount"; got != want {
				t.Fatalf("%s: Location = %q, want %q", tt.action, got, want)
			}
		}
		mustNoMail(t, app, "tess.new@example.com", "Confirm the change")
		mustSession(t, s)
		mustOK(t, s.post("/api/auth/two-factor/verify-totp", mustJSON(t, map[string]any{"code": totpAt(u.secret, 1)})))
		r := consoleFormPost(t, s, "/account", "/account/password", url.Values{"currentPassword": {tfPassword}, "newPassword": {"a brand new passphrase"},
			"confirmPassword": {"a brand new passphrase"}})
		mustAccountDone(t, r, "/account", "password")
	})
}

// Ensure an administrator impersonating a user sees their account pages
// under the banner but changes nothing: every form is refused.
func TestAccountPages_impersonation_changes_nothing(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		w := newConsoleWorld(t, app)
		// The victim has an invitation and a second session, so that every
		// form shows.
		mustOK(t, app.client(t).get(mustLink(t, app, w.victimEmail, "Verify your email address")))
		accountTestInvite(t, w.admin, "Admin Corp", "admin-corp", w.victimEmail, "member")
		mustSignIn(t, app.client(t), w.victimEmail, userPassword)
		mustStatus(t, consolePost(w.admin, w.userPath()+"/impersonate", url.Values{"_token": {mustConsoleTokens(t, w.admin, w.userPath())[w.userPath()+"/impersonate"]}}), http.StatusSeeOther)
		for _, path := range accountPages {
			if page := mustConsolePage(t, w.admin.get(path), http.StatusOK); !strings.Contains(page, "You are impersonating") {
				t.Fatalf("%s while impersonating: %s", path, page)
			}
		}
		victimSession, _ := mustObject(t, mustSession(t, w.victimC)["session"])["id"].(string)
		fields := url.Values{"name": {"Hijacked"}, "newEmail": {"evil@example.com"}, "currentPassword": {userPassword}, "newPassword": {"hijacked passphrase"},
			"confirmPassword": {"hijacked passphrase"}, "confirm": {w.victimEmail}, "password": {userPassword}, "session": {victimSession}}
		for action, page := range accountForms {
			r := consoleFormPost(t, w.admin, page, action, fields)
			if body := mustConsolePage(t, r, http.StatusForbidden); !strings.Contains(body, "Impersonating") {
				t.Fatalf("%s while impersonating: %s", action, body)
			}
		}
		u := mustUser(t, mustSession(t, w.victimC))
		if u["name"] != "Vic" || u["email"] != w.victimEmail {
			t.Fatalf("the impersonation changed the user: %v", u)
		}
		mustSignIn(t, app.client(t), w.victimEmail, userPassword)
		mustNoMail(t, app, "evil@example.com", "Confirm the change")
	})
}

// Ensure hostile input in the account forms is a 400 page naming the
// field (or 413 for a huge body), never a 500, and changes nothing.
func TestAccountPages_hostile_input(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesThatMatter, fwQuick, func(t *testing.T, app *fwApp) {
		ada, _ := mustVerifiedUser(t, app, "Ada", "ada@example.com", userPassword)
		// A second session and an invitation: their forms show.
		mustSignIn(t, app.client(t), "ada@example.com", userPassword)
		accountTestInvite(t, mustVerifiedClient(t, app, "Olive", "olive@example.com"), "Olive Corp", "olive-corp", "ada@example.com", "member")
		for _, tt := range []struct {
			page, action string
			fields       url.Values
			status       int
			want         string
		}{
			{"/account", "/account/profile", url.Values{"name": {"a\x00b"}}, http.StatusBadRequest, "body.name"},
			{"/account", "/account/profile", url.Values{"name": {"\xff\xfe"}}, http.StatusBadRequest, "body.name"},
			{"/account", "/account/profile", url.Values{"name": {"Ada"}, "image": {strings.Repeat("i", 3000)}}, http.StatusBadRequest, `id="image"`},
			{"/account", "/account/profile", url.Values{"name": {strings.Repeat("n", 2<<20)}}, http.StatusRequestEntityTooLarge, "larger than"},
			{"/account", "/account/email", url.Values{"newEmail": {strings.Repeat("e", 400) + "@example.com"}}, http.StatusBadRequest, `id="newEmail"`},
			{"/account", "/account/email", url.Values{"newEmail": {"a\x00@example.com"}}, http.StatusBadRequest, "body.newEmail"},
			{"/account", "/account/password", url.Values{"currentPassword": {strings.Repeat("p", 5000)}}, http.StatusBadRequest, `id="currentPassword"`},
			{"/account", "/account/delete", url.Values{"confirm": {strings.Repeat("c", 1000)}}, http.StatusBadRequest, `id="confirm"`},
			{"/account/sessions", "/account/sessions/revoke", url.Values{"session": {strings.Repeat("s", 300)}}, http.StatusBadRequest, "body.session"},
			{"/account/sessions", "/account/sessions/revoke", url.Values{"session": {"no-such-session"}}, http.StatusNotFound, "body.session"},
			{"/account/organizations", "/account/invitations/accept", url.Values{"invitation": {strings.Repeat("i", 300)}}, http.StatusBadRequest, "body.invitation"},
			{"/account/organizations", "/account/invitations/decline", url.Values{}, http.StatusBadRequest, "body.invitation"},
		} {
			r := consoleFormPost(t, ada, tt.page, tt.action, tt.fields)
			if page := mustConsolePage(t, r, tt.status); !strings.Contains(page, tt.want) {
				t.Fatalf("%s with %.80v: the page does not name %s: %.2000s", tt.action, tt.fields, tt.want, page)
			}
		}
		if u := mustUser(t, mustSession(t, ada)); u["name"] != "Ada" || u["email"] != "ada@example.com" {
			t.Fatalf("hostile input changed the user: %v", u)
		}
		mustSignIn(t, app.client(t), "ada@example.com", userPassword)
	})
}

// Ensure an e-mail change from a session older than the fresh age is
// refused on the page, saying to sign in again and keeping the input, and
// mails nothing; after a new sign-in it goes through.
func TestAccountPages_email_change_needs_a_fresh_sign_in(t *testing.T) {
	t.Parallel()
	env := fwEnv(fwQuick, map[string]string{"GATEHOUSE_SESSION_FRESH_AGE": "1s"})
	fwForStores(t, storesOnce, env, func(t *testing.T, app *fwApp) {
		ada, _ := mustPlainUser(t, app, "Ada", "ada@example.com", userPassword)
		time.Sleep(1100 * time.Millisecond)
		r := consoleFormPost(t, ada, "/account", "/account/email", url.Values{"newEmail": {"ada.new@example.com"}})
		if page := mustConsolePage(t, r, http.StatusForbidden); !strings.Contains(page, "recent sign-in") || !strings.Contains(page, `value="ada.new@example.com"`) {
			t.Fatalf("a stale session's e-mail change: %s", page)
		}
		mustNoMail(t, app, "ada.new@example.com", "Confirm the change")
		mustSignIn(t, ada, "ada@example.com", userPassword)
		mustAccountDone(t, consoleFormPost(t, ada, "/account", "/account/email", url.Values{"newEmail": {"ada.new@example.com"}}), "/account", "email-sent")
		mustLink(t, app, "ada.new@example.com", "Confirm the change")
	})
}
