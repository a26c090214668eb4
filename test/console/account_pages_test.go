package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
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
func mustAccountDone(t testing.TB, r *harness.Response, path, what string) {
	t.Helper()
	harness.MustStatus(t, r, http.StatusSeeOther)
	if got, want := r.Header.Get("Location"), path+"?done="+what; got != want {
		t.Fatalf("Location = %q, want %q; body %s", got, want, r.Body)
	}
}

// mustFormRefused fails unless r is the refusal of a form's token.
func mustFormRefused(t testing.TB, r *harness.Response, what string) {
	t.Helper()
	if body := harness.MustConsolePage(t, r, http.StatusForbidden); !strings.Contains(body, "Form refused") {
		t.Fatalf("%s: %s", what, body)
	}
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
	harness.SharedForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		pat := harness.Email(t, "pat@example.com")
		user, _ := harness.MustVerifiedUser(t, app, "Pat Plain", pat, harness.UserPassword)
		admin, _ := harness.MustAdmin(t, app)
		anon := app.NewClient(t)
		for _, path := range append(accountPages, "/account?done=profile") {
			harness.MustSignInRedirect(t, anon.Get(path), path)
			for _, c := range []*harness.Client{user, admin} {
				body := harness.MustConsolePage(t, c.Get(path), http.StatusOK)
				if !strings.Contains(body, `aria-label="Account"`) {
					t.Fatalf("GET %s is not on the account shell: %s", path, body)
				}
			}
		}
		for action := range accountForms {
			harness.MustSignInRedirect(t, consolePost(anon, action, nil), "/account")
			mustFormRefused(t, consolePost(user, action, nil), "POST "+action+" without a token")
			mustFormRefused(t, consolePost(user, action, url.Values{"_token": {"forged"}}), "POST "+action+" with a forged token")
		}

		// A form's token: cross-origin, another form's, another session's,
		// then used once and refused again.
		tokens := mustConsoleTokens(t, user, "/account")
		profile := url.Values{"_token": {tokens["/account/profile"]}, "name": {"Changed"}}
		evil := user.Clone()
		evil.Origin = "https://evil.example"
		harness.MustConsolePage(t, consolePost(evil, "/account/profile", profile), http.StatusForbidden)
		noOrigin := user.Clone()
		noOrigin.Origin = ""
		harness.MustStatus(t, consolePost(noOrigin, "/account/profile", profile), http.StatusForbidden)
		mustFormRefused(t, consolePost(user, "/account/password", url.Values{"_token": {tokens["/account/profile"]},
			"currentPassword": {harness.UserPassword}, "newPassword": {"another fine passphrase"}, "confirmPassword": {"another fine passphrase"}}), "another form's token")
		other := app.NewClient(t)
		harness.MustSignIn(t, other, pat, harness.UserPassword)
		otherTokens := mustConsoleTokens(t, other, "/account")
		mustFormRefused(t, consolePost(user, "/account/profile", url.Values{"_token": {otherTokens["/account/profile"]}, "name": {"Changed"}}), "another session's token")
		if name := harness.MustUser(t, harness.MustSession(t, user))["name"]; name != "Pat Plain" {
			t.Fatalf("a refused form changed the name to %v", name)
		}
		harness.MustSignIn(t, app.NewClient(t), pat, harness.UserPassword) // the password is unchanged
		mustAccountDone(t, consolePost(user, "/account/profile", profile), "/account", "profile")
		mustFormRefused(t, consolePost(user, "/account/profile", url.Values{"_token": {tokens["/account/profile"]}, "name": {"Again"}}), "a reused token")
		if name := harness.MustUser(t, harness.MustSession(t, user))["name"]; name != "Changed" {
			t.Fatalf("name = %v, want Changed", name)
		}

		// The hosted sign-in without callbackURL lands here; with one it
		// goes there.
		b := harness.NewFormBrowser(t, app)
		harness.MustSeeOther(t, app, b.Submit("/api/auth/sign-in/email", url.Values{"email": {pat}, "password": {harness.UserPassword}}), "/account")
		b = harness.NewFormBrowser(t, app)
		harness.MustSeeOther(t, app, b.Submit("/api/auth/sign-in/email", url.Values{"email": {pat}, "password": {harness.UserPassword},
			"callbackURL": {"/account/sessions"}}), "/account/sessions")
	})
}

// Ensure the profile, e-mail and password forms change what they should,
// read back through /api/auth/*, and keep the input and name the field
// when refused.
func TestAccountPages_profile_email_password(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		email, newEmail := harness.Email(t, "ada@example.com"), harness.Email(t, "ada.new@example.com")
		ada, _ := harness.MustVerifiedUser(t, app, "Ada", email, harness.UserPassword)
		if page := harness.MustConsolePage(t, ada.Get("/account"), http.StatusOK); !strings.Contains(page, email) || !strings.Contains(page, "<dd>Yes</dd>") {
			t.Fatalf("the profile page: %s", page)
		}

		// Name and image.
		r := consoleFormPost(t, ada, "/account", "/account/profile", url.Values{"name": {"Ada <Lovelace>"}, "image": {"https://img.example.com/ada.png"}})
		mustAccountDone(t, r, "/account", "profile")
		u := harness.MustUser(t, harness.MustSession(t, ada))
		if u["name"] != "Ada <Lovelace>" || u["image"] != "https://img.example.com/ada.png" {
			t.Fatalf("after the profile form: %v", u)
		}
		page := harness.MustConsolePage(t, ada.Get("/account?done=profile"), http.StatusOK)
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
			page := harness.MustConsolePage(t, r, http.StatusBadRequest)
			if !strings.Contains(page, `aria-invalid="true"`) || !strings.Contains(page, tt.field) || !strings.Contains(page, tt.kept) || !strings.Contains(page, "profile-error") {
				t.Fatalf("profile %q %q: %s", tt.name, tt.image, page)
			}
		}
		if u := harness.MustUser(t, harness.MustSession(t, ada)); u["name"] != "Ada <Lovelace>" {
			t.Fatalf("a refused profile form changed the name: %v", u)
		}

		// E-mail: invalid, then the same, then a new one with its mailed link.
		r = consoleFormPost(t, ada, "/account", "/account/email", url.Values{"newEmail": {"not-an-address"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `value="not-an-address"`) || !strings.Contains(page, "email-error") {
			t.Fatalf("invalid new address: %s", page)
		}
		r = consoleFormPost(t, ada, "/account", "/account/email", url.Values{"newEmail": {email}})
		harness.MustConsolePage(t, r, http.StatusBadRequest)
		mustAccountDone(t, consoleFormPost(t, ada, "/account", "/account/email", url.Values{"newEmail": {newEmail}}), "/account", "email-sent")
		link := harness.MustLink(t, app, newEmail, "Confirm the change")
		if u := harness.MustUser(t, harness.MustSession(t, ada)); u["email"] != email {
			t.Fatalf("the address changed before the link was opened: %v", u)
		}
		follow := ada.Get(link)
		harness.MustStatus(t, follow, http.StatusFound)
		if loc := follow.Header.Get("Location"); !strings.HasSuffix(loc, "/account?done=email-verified") {
			t.Fatalf("the link leads to %q", loc)
		}
		if u := harness.MustUser(t, harness.MustSession(t, ada)); u["email"] != newEmail || u["emailVerified"] != true {
			t.Fatalf("after the link: %v", u)
		}

		// Password: wrong current one, too short, confirmation differs; then
		// changed, signing out every other session.
		other := app.NewClient(t)
		harness.MustSignIn(t, other, newEmail, harness.UserPassword)
		const next = "a brand new passphrase"
		for _, tt := range []struct {
			current, next, confirm, field string
			status                        int
		}{
			{"", next, next, `id="currentPassword"`, http.StatusBadRequest},
			{"wrong password here", next, next, "is not the account", http.StatusBadRequest},
			{harness.UserPassword, "short", "short", "at least 8 characters", http.StatusBadRequest},
			{harness.UserPassword, next, next + "!", `id="confirmPassword"`, http.StatusBadRequest},
		} {
			r := consoleFormPost(t, ada, "/account", "/account/password", url.Values{"currentPassword": {tt.current}, "newPassword": {tt.next},
				"confirmPassword": {tt.confirm}, "revokeOtherSessions": {"true"}})
			page := harness.MustConsolePage(t, r, tt.status)
			if !strings.Contains(page, tt.field) || !strings.Contains(page, "password-error") || !strings.Contains(page, `name="revokeOtherSessions" value="true" checked`) {
				t.Fatalf("password %q→%q: %s", tt.current, tt.next, page)
			}
			if strings.Contains(page, tt.next) && tt.next != "short" {
				t.Fatalf("the page shows a password again: %s", page)
			}
		}
		harness.MustSession(t, other)
		r = consoleFormPost(t, ada, "/account", "/account/password", url.Values{"currentPassword": {harness.UserPassword}, "newPassword": {next},
			"confirmPassword": {next}, "revokeOtherSessions": {"true"}})
		mustAccountDone(t, r, "/account", "password-all")
		harness.MustNoSession(t, other)
		harness.MustSession(t, ada) // this browser got a new session
		harness.MustSignIn(t, app.NewClient(t), newEmail, next)
		harness.MustSignInFails(t, app, newEmail, harness.UserPassword)
		// Without signing the others out.
		harness.MustSignIn(t, other, newEmail, next)
		r = consoleFormPost(t, ada, "/account", "/account/password", url.Values{"currentPassword": {next}, "newPassword": {harness.UserPassword}, "confirmPassword": {harness.UserPassword}})
		mustAccountDone(t, r, "/account", "password")
		harness.MustSession(t, other)
	})
}

// Ensure the sessions page shows each live session with its device,
// address and times, marks this browser's, ends another one and every
// other, and refuses someone else's session.
func TestAccountPages_sessions(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		adaEmail, bobEmail := harness.Email(t, "ada@example.com"), harness.Email(t, "bob@example.com")
		ada, _ := harness.MustPlainUser(t, app, "Ada", adaEmail, harness.UserPassword)
		_, _ = harness.MustPlainUser(t, app, "Bob", bobEmail, harness.UserPassword)
		bob := app.NewClient(t)
		harness.MustSignIn(t, bob, bobEmail, harness.UserPassword)
		bobSession, _ := harness.MustObject(t, harness.MustSession(t, bob)["session"])["id"].(string)

		phone := app.NewClient(t)
		ua := "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
		harness.MustOK(t, phone.Post("/api/auth/sign-in/email", harness.MustCredentials(t, adaEmail, harness.UserPassword), "User-Agent", ua))
		phoneSession, _ := harness.MustObject(t, harness.MustSession(t, phone)["session"])["id"].(string)
		laptop := app.NewClient(t)
		harness.MustSignIn(t, laptop, adaEmail, harness.UserPassword)

		page := harness.MustConsolePage(t, ada.Get("/account/sessions"), http.StatusOK)
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
		harness.MustConsolePage(t, r, http.StatusNotFound)
		harness.MustSession(t, bob)

		// One, then every other.
		mustAccountDone(t, consoleFormPost(t, ada, "/account/sessions", "/account/sessions/revoke", url.Values{"session": {phoneSession}}), "/account/sessions", "revoked")
		harness.MustNoSession(t, phone)
		harness.MustSession(t, laptop)
		if page := harness.MustConsolePage(t, ada.Get("/account/sessions?done=revoked"), http.StatusOK); !strings.Contains(page, "The session has ended") || strings.Contains(page, phoneSession) {
			t.Fatalf("after ending one: %s", page)
		}
		mustAccountDone(t, consoleFormPost(t, ada, "/account/sessions", "/account/sessions/revoke-others", nil), "/account/sessions", "others")
		harness.MustNoSession(t, laptop)
		harness.MustSession(t, ada)
		harness.MustSession(t, bob)
		if rows := consoleRows(harness.MustConsolePage(t, ada.Get("/account/sessions"), http.StatusOK)); strings.Count(rows, "<tr") != 1 {
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
func listSessions(t testing.TB, c *harness.Client) []map[string]any {
	t.Helper()
	return harness.MustList(t, c.Get("/api/auth/list-sessions"))
}

// Ensure the organizations page lists the user's organizations with their
// role and the invitations to their address, and that accepting and
// declining go through the organization plugin (read back through it).
func TestAccountPages_organizations(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		oliveEmail, adaEmail, bobEmail := harness.Email(t, "olive@example.com"), harness.Email(t, "ada@example.com"), harness.Email(t, "bob@example.com")
		owner := harness.MustVerifiedClient(t, app, "Olive", oliveEmail)
		ada := harness.MustVerifiedClient(t, app, "Ada", adaEmail)
		harness.MustCreateOrg(t, ada, "Ada Labs", harness.Own(t, "ada-labs"))
		join := harness.AccountTestInvite(t, owner, "Join Corp", harness.Own(t, "join-corp"), adaEmail, "admin")
		skip := harness.AccountTestInvite(t, owner, "Skip Corp", harness.Own(t, "skip-corp"), adaEmail, "member")

		page := harness.MustConsolePage(t, ada.Get("/account/organizations"), http.StatusOK)
		for _, want := range []string{"Ada Labs", "owner", "Join Corp", "Skip Corp", oliveEmail, join, skip} {
			if !strings.Contains(page, want) {
				t.Fatalf("the organizations page lacks %q: %s", want, page)
			}
		}
		// Someone else's invitation is refused.
		bob := harness.MustVerifiedClient(t, app, "Bob", bobEmail)
		harness.AccountTestInvite(t, owner, "Bob Corp", harness.Own(t, "bob-corp"), bobEmail, "member") // so that his page has the form
		r := consoleFormPost(t, bob, "/account/organizations", "/account/invitations/accept", url.Values{"invitation": {join}})
		if r.Status < 400 || r.Status >= 500 {
			t.Fatalf("accepting someone else's invitation: %d %s", r.Status, r.Body)
		}
		harness.MustConsolePage(t, r, r.Status)

		stale := mustConsoleTokens(t, ada, "/account/organizations")["/account/invitations/decline"]
		mustAccountDone(t, consoleFormPost(t, ada, "/account/organizations", "/account/invitations/decline", url.Values{"invitation": {skip}}), "/account/organizations", "declined")
		mustAccountDone(t, consoleFormPost(t, ada, "/account/organizations", "/account/invitations/accept", url.Values{"invitation": {join}}), "/account/organizations", "accepted")
		orgs := harness.MustList(t, ada.Get(harness.OrgPath("list")))
		var slugs []string
		for _, o := range orgs {
			slugs = append(slugs, o["slug"].(string))
		}
		if got := strings.Join(slugs, ","); got != harness.Own(t, "ada-labs")+","+harness.Own(t, "join-corp") && got != harness.Own(t, "join-corp")+","+harness.Own(t, "ada-labs") {
			t.Fatalf("organization/list = %v", slugs)
		}
		if invs := harness.MustList(t, ada.Get(harness.OrgPath("list-user-invitations"))); len(invs) != 0 {
			t.Fatalf("open invitations after answering both: %v", invs)
		}
		page = harness.MustConsolePage(t, ada.Get("/account/organizations?done=accepted"), http.StatusOK)
		if !strings.Contains(page, "You joined the organization.") || !strings.Contains(consoleRows(page), "Join Corp") || !strings.Contains(page, "admin") || strings.Contains(page, "Skip Corp") {
			t.Fatalf("after answering: %s", page)
		}
		// Answered already: refused, no 500.
		r = consolePost(ada, "/account/invitations/decline", url.Values{"_token": {stale}, "invitation": {join}})
		if r.Status < 400 || r.Status >= 500 {
			t.Fatalf("declining an accepted invitation: %d", r.Status)
		}

		// An unverified user is told to confirm their address first.
		unverified, _ := harness.MustPlainUser(t, app, "Una", harness.Email(t, "una@example.com"), harness.UserPassword)
		if page := harness.MustConsolePage(t, unverified.Get("/account/organizations"), http.StatusOK); !strings.Contains(page, "Confirm your e-mail address") {
			t.Fatalf("an unverified user's organizations page: %s", page)
		}
	})
}

// Ensure deleting the account asks for the typed address and the
// password (a wrong one deletes nothing, keeping the input), and then
// deletes it and signs the browser out.
func TestAccountPages_delete_account(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		adaEmail, bobEmail := harness.Email(t, "ada@example.com"), harness.Email(t, "bob@example.com")
		ada, _ := harness.MustPlainUser(t, app, "Ada", adaEmail, harness.UserPassword)
		r := consoleFormPost(t, ada, "/account", "/account/delete", url.Values{"confirm": {harness.Email(t, "someone@example.com")}, "password": {harness.UserPassword}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="delete-error"`) || !strings.Contains(page, `value="`+harness.Email(t, "someone@example.com")+`"`) {
			t.Fatalf("wrong confirmation: %s", page)
		}
		r = consoleFormPost(t, ada, "/account", "/account/delete", url.Values{"confirm": {adaEmail}, "password": {"not my password"}})
		if page := harness.MustConsolePage(t, r, http.StatusBadRequest); !strings.Contains(page, `id="deletePassword"`) || !strings.Contains(page, "Nothing was deleted") ||
			!strings.Contains(page, `value="`+adaEmail+`"`) {
			t.Fatalf("wrong password: %s", page)
		}
		harness.MustSession(t, ada)
		r = consoleFormPost(t, ada, "/account", "/account/delete", url.Values{"confirm": {strings.ToUpper(adaEmail)}, "password": {harness.UserPassword}})
		harness.MustStatus(t, r, http.StatusSeeOther)
		harness.MustNoSession(t, ada)
		harness.MustSignInFails(t, app, adaEmail, harness.UserPassword)
		harness.MustSignInRedirect(t, ada.Get("/account"), "/account")

		// Without a password: the framework mails a confirming link.
		bob, _ := harness.MustPlainUser(t, app, "Bob", bobEmail, harness.UserPassword)
		mustAccountDone(t, consoleFormPost(t, bob, "/account", "/account/delete", url.Values{"confirm": {bobEmail}}), "/account", "delete-sent")
		harness.MustSession(t, bob)
		harness.MustStatus(t, bob.Get(harness.MustLink(t, app, bobEmail, "Confirm")), http.StatusFound)
		harness.MustSignInFails(t, app, bobEmail, harness.UserPassword)
	})
}

// Ensure the multi-factor step-up rules apply: a user with two-factor on
// whose session has no recent second factor is sent to the hosted
// second-factor page and back, and nothing changes; once stepped up the
// change goes through.
func TestAccountPages_step_up(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		tess, tessNew := harness.Email(t, "tess@example.com"), harness.Email(t, "tess.new@example.com")
		u := harness.MustTwoFactorUser(t, app, tess)
		s := harness.MustStaleSession(t, app, u)
		for _, tt := range []struct {
			action string
			fields url.Values
		}{
			{"/account/password", url.Values{"currentPassword": {harness.TfPassword}, "newPassword": {"a brand new passphrase"}, "confirmPassword": {"a brand new passphrase"}}},
			{"/account/email", url.Values{"newEmail": {tessNew}}},
			{"/account/delete", url.Values{"confirm": {tess}, "password": {harness.TfPassword}}},
		} {
			r := consoleFormPost(t, s, "/account", tt.action, tt.fields)
			harness.MustStatus(t, r, http.StatusSeeOther)
			if got, want := r.Header.Get("Location"), "/two-factor?callbackURL=%2Faccount"; got != want {
				t.Fatalf("%s: Location = %q, want %q", tt.action, got, want)
			}
		}
		harness.MustNoMail(t, app, tessNew, "Confirm the change")
		harness.MustSession(t, s)
		harness.MustOK(t, s.Post("/api/auth/two-factor/verify-totp", harness.MustJSON(t, map[string]any{"code": harness.TOTPAt(app.Clock, u.Secret, 1)})))
		r := consoleFormPost(t, s, "/account", "/account/password", url.Values{"currentPassword": {harness.TfPassword}, "newPassword": {"a brand new passphrase"},
			"confirmPassword": {"a brand new passphrase"}})
		mustAccountDone(t, r, "/account", "password")
	})
}

// Ensure an administrator impersonating a user sees their account pages
// under the banner but changes nothing: every form is refused.
func TestAccountPages_impersonation_changes_nothing(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		// The victim has an invitation and a second session, so that every
		// form shows.
		harness.MustOK(t, app.NewClient(t).Get(harness.MustLink(t, app, w.victimEmail, "Verify your email address")))
		harness.AccountTestInvite(t, w.admin, "Admin Corp", harness.Own(t, "admin-corp"), w.victimEmail, "member")
		harness.MustSignIn(t, app.NewClient(t), w.victimEmail, harness.UserPassword)
		harness.MustStatus(t, consolePost(w.admin, w.userPath()+"/impersonate", url.Values{"_token": {mustConsoleTokens(t, w.admin, w.userPath())[w.userPath()+"/impersonate"]}}), http.StatusSeeOther)
		for _, path := range accountPages {
			if page := harness.MustConsolePage(t, w.admin.Get(path), http.StatusOK); !strings.Contains(page, "You are impersonating") {
				t.Fatalf("%s while impersonating: %s", path, page)
			}
		}
		victimSession, _ := harness.MustObject(t, harness.MustSession(t, w.victimC)["session"])["id"].(string)
		fields := url.Values{"name": {"Hijacked"}, "newEmail": {harness.Email(t, "evil@example.com")}, "currentPassword": {harness.UserPassword}, "newPassword": {"hijacked passphrase"},
			"confirmPassword": {"hijacked passphrase"}, "confirm": {w.victimEmail}, "password": {harness.UserPassword}, "session": {victimSession}}
		for action, page := range accountForms {
			r := consoleFormPost(t, w.admin, page, action, fields)
			if body := harness.MustConsolePage(t, r, http.StatusForbidden); !strings.Contains(body, "Impersonating") {
				t.Fatalf("%s while impersonating: %s", action, body)
			}
		}
		u := harness.MustUser(t, harness.MustSession(t, w.victimC))
		if u["name"] != "Vic" || u["email"] != w.victimEmail {
			t.Fatalf("the impersonation changed the user: %v", u)
		}
		harness.MustSignIn(t, app.NewClient(t), w.victimEmail, harness.UserPassword)
		harness.MustNoMail(t, app, harness.Email(t, "evil@example.com"), "Confirm the change")
	})
}

// Ensure hostile input in the account forms is a 400 page naming the
// field (or 413 for a huge body), never a 500, and changes nothing.
func TestAccountPages_hostile_input(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresThatMatter, harness.FwQuick, func(t *testing.T, app *harness.App) {
		adaEmail := harness.Email(t, "ada@example.com")
		ada, _ := harness.MustVerifiedUser(t, app, "Ada", adaEmail, harness.UserPassword)
		// A second session and an invitation: their forms show.
		harness.MustSignIn(t, app.NewClient(t), adaEmail, harness.UserPassword)
		harness.AccountTestInvite(t, harness.MustVerifiedClient(t, app, "Olive", harness.Email(t, "olive@example.com")), "Olive Corp", harness.Own(t, "olive-corp"), adaEmail, "member")
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
			if page := harness.MustConsolePage(t, r, tt.status); !strings.Contains(page, tt.want) {
				t.Fatalf("%s with %.80v: the page does not name %s: %.2000s", tt.action, tt.fields, tt.want, page)
			}
		}
		if u := harness.MustUser(t, harness.MustSession(t, ada)); u["name"] != "Ada" || u["email"] != adaEmail {
			t.Fatalf("hostile input changed the user: %v", u)
		}
		harness.MustSignIn(t, app.NewClient(t), adaEmail, harness.UserPassword)
	})
}

// Ensure an e-mail change from a session older than the fresh age is
// refused on the page, saying to sign in again and keeping the input, and
// mails nothing; after a new sign-in it goes through.
func TestAccountPages_email_change_needs_a_fresh_sign_in(t *testing.T) {
	t.Parallel()
	// A fresh application: a setting of its own, and the clock moves by a minute.
	env := harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_SESSION_FRESH_AGE": "1m"})
	harness.ForStores(t, harness.StoresOnce, env, func(t *testing.T, app *harness.App) {
		ada, _ := harness.MustPlainUser(t, app, "Ada", "ada@example.com", harness.UserPassword)
		app.Clock.Advance(time.Minute + time.Second)
		r := consoleFormPost(t, ada, "/account", "/account/email", url.Values{"newEmail": {"ada.new@example.com"}})
		if page := harness.MustConsolePage(t, r, http.StatusForbidden); !strings.Contains(page, "recent sign-in") || !strings.Contains(page, `value="ada.new@example.com"`) {
			t.Fatalf("a stale session's e-mail change: %s", page)
		}
		harness.MustNoMail(t, app, "ada.new@example.com", "Confirm the change")
		harness.MustSignIn(t, ada, "ada@example.com", harness.UserPassword)
		mustAccountDone(t, consoleFormPost(t, ada, "/account", "/account/email", url.Values{"newEmail": {"ada.new@example.com"}}), "/account", "email-sent")
		harness.MustLink(t, app, "ada.new@example.com", "Confirm the change")
	})
}
