package test

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// "SSO required" on every way in (docs/federation.md, Requiring SSO): with
// requireSso on for acme.test, an address there signs in through Acme's
// own provider only. Another provider (trusted for linking or not), a
// passkey, a reset link and a password set by an operator are refused; the
// organization's provider still signs people in and provisions them; and
// switching the requirement on ends the sessions its addresses already
// had. SQLite is enough: the rule lives in the use cases, not the store.

// ssoHost is Acme's domain, verified by hand.
const ssoHost = "acme.test"

// ssoWorld is A with its administrator, a platform-wide provider trusted
// for linking ("google") and an untrusted one ("untrusted") at one fake
// upstream, and the organization Acme whose own provider ("acme-sso", at a
// second fake) is bound to acme.test.
type ssoWorld struct {
	*fuWorld
	t      testing.TB
	corp   *fuFake
	key    string // a service key with users, organizations and domains
	org    string
	domain string
}

// ssoEnv is adminEnv with passkeys on (localhost as the relying party).
var ssoEnv = fwEnv(pkEnv, map[string]string{"GATEHOUSE_ADMIN_EMAILS": adminEmail})

// mustSSOWorld starts the world on SQLite; Acme's provider requires SSO
// when require is set. before runs first, while nothing is required yet
// (to make the users the requirement will find).
func mustSSOWorld(t *testing.T, require bool, before func(w *ssoWorld)) *ssoWorld {
	t.Helper()
	w := &ssoWorld{fuWorld: mustFuWorld(t, storeSQLite, ssoEnv), t: t}
	w.corp = newFuFake(t, w.a)
	w.key = mustCreateKey(t, w.admin, map[string]any{"name": "acme backend",
		"scopes": []string{"users:read", "users:write", "organizations:read", "organizations:write", "domains:read", "domains:write"}})["secret"].(string)
	adminID := mustUser(t, mustSession(t, w.admin))["id"].(string)
	r := w.trusted(http.MethodPost, orgsPath, mustJSON(t, map[string]any{"name": "Acme", "slug": "acme", "ownerUserId": adminID}))
	mustStatus(t, r, http.StatusCreated)
	w.org = mustID(t, r.JSON(t))
	r = w.trusted(http.MethodPost, domainsPath, mustJSON(t, map[string]any{"hostname": ssoHost, "organizationId": w.org}))
	mustStatus(t, r, http.StatusCreated)
	w.domain = mustID(t, r.JSON(t))
	r = w.admin.do(http.MethodPatch, "/api/admin/domains/"+w.domain, `{"verify":{"reason":"checked by hand in the test"}}`, "Origin", w.a.URL)
	if mustStatus(t, r, http.StatusOK); r.JSON(t)["status"] != "verified" {
		t.Fatalf("the domain after a manual verification: %s", r.Body)
	}
	w.register(t, w.fake, map[string]any{"id": "google", "trustedForLinking": true})
	w.register(t, w.fake, map[string]any{"id": "untrusted", "trustedForLinking": false})
	if before != nil {
		before(w)
	}
	w.register(t, w.corp, map[string]any{"id": "acme-sso", "organizationId": w.org, "domains": []string{w.domain},
		"defaultRole": "member", "requireSso": require})
	return w
}

// trusted calls the trusted API with the world's service key.
func (w *ssoWorld) trusted(method, path, body string) *response {
	return w.a.client(w.t).do(method, path, body, "Authorization", "Bearer "+w.key)
}

// requireSSO switches Acme's requirement on through the admin API.
func (w *ssoWorld) requireSSO(t testing.TB) {
	t.Helper()
	mustStatus(t, w.admin.do(http.MethodPatch, "/api/admin/identity-providers/acme-sso", `{"requireSso":true}`, "Origin", w.a.URL), http.StatusOK)
}

// signInAt walks a sign-in at provider (whose fake signs in u) in a new
// browser and returns the browser and the callback's answer.
func (w *ssoWorld) signInAt(t testing.TB, fake *fuFake, provider string, u fuUser) (*fuBrowser, *response) {
	t.Helper()
	fake.set(func(f *fuFake) { f.user = u })
	b := newFuBrowser(t, w.a)
	return b, w.signIn(t, b, provider, nil)
}

// members returns the user ids of Acme's members.
func (w *ssoWorld) members(t testing.TB) []string {
	t.Helper()
	r := w.trusted(http.MethodGet, orgsPath+"/"+w.org+"/members", "")
	mustStatus(t, r, http.StatusOK)
	var page struct {
		Data []struct {
			UserID string `json:"userId"`
		} `json:"data"`
	}
	mustUnmarshal(t, r.Body, &page)
	var ids []string
	for _, m := range page.Data {
		ids = append(ids, m.UserID)
	}
	return ids
}

// Ensure the reproduction: with requireSso on for acme.test, the
// existing alice@acme.test cannot sign in through a platform-wide provider
// trusted for linking (which would join her account by address), and a new
// carol@acme.test is not created through an untrusted one. Both are sent
// back with sso_required, audited, and nothing is linked or created;
// Acme's own provider still signs alice in and creates carol, provisioning
// both into the organization.
func TestSSORequired_other_providers_refused(t *testing.T) {
	t.Parallel()
	var aliceID string
	w := mustSSOWorld(t, true, func(w *ssoWorld) {
		_, aliceID = mustVerifiedUser(t, w.a, "Alice Acme", "alice@"+ssoHost, userPassword)
	})

	b, r := w.signInAt(t, w.fake, "google", fuUser{Sub: "alice-g", Email: "alice@" + ssoHost, EmailVerified: true})
	w.mustRefused(t, b, r, "/signin-failed", "sso_required")
	b, r = w.signInAt(t, w.fake, "untrusted", fuUser{Sub: "carol-u", Email: "carol@" + ssoHost, EmailVerified: true})
	w.mustRefused(t, b, r, "/signin-failed", "sso_required")
	if got := w.usersNamed(t, "@"+ssoHost); !slices.Equal(got, []string{"alice@" + ssoHost}) {
		t.Fatalf("users at %s = %v, want only alice", ssoHost, got)
	}
	if r := w.admin.get("/api/admin/audit-log?action=sign-in.sso-required"); strings.Count(string(r.Body), `"targetId":"acme-sso"`) != 2 {
		t.Fatalf("audit of the two refusals: %s", r.Body)
	}
	// A refusal links nothing: alice's only way in is still her password.
	if u := w.trusted(http.MethodGet, usersPath+"/"+aliceID, ""); strings.Contains(string(u.Body), `"google"`) {
		t.Fatalf("alice after the refused sign-in: %s", u.Body)
	}

	// An address elsewhere still signs in through the same providers.
	b, r = w.signInAt(t, w.fake, "untrusted", fuUser{Sub: "dan-u", Email: "dan@elsewhere.test", EmailVerified: true})
	w.mustSignedIn(t, b, r, "/welcome")

	// Acme's own provider: alice joins her account, carol is created, both
	// become members.
	b, r = w.signInAt(t, w.corp, "acme-sso", fuUser{Sub: "alice-corp", Email: "alice@" + ssoHost, EmailVerified: true})
	if u := w.mustSignedIn(t, b, r, "/home"); u["id"] != aliceID {
		t.Fatalf("Acme's provider signed in %v, want alice %s", u["id"], aliceID)
	}
	b, r = w.signInAt(t, w.corp, "acme-sso", fuUser{Sub: "carol-corp", Email: "carol@" + ssoHost, EmailVerified: true})
	carol := w.mustSignedIn(t, b, r, "/welcome")
	if got := w.members(t); !slices.Contains(got, aliceID) || !slices.Contains(got, carol["id"].(string)) {
		t.Fatalf("Acme's members = %v, want alice and carol", got)
	}
}

// Ensure a passkey does not sign in an address under requireSso (and only
// its holder learns why), while it still signs in an address elsewhere.
func TestSSORequired_passkey_sign_in_refused(t *testing.T) {
	t.Parallel()
	var alice, other *pkDevice
	w := mustSSOWorld(t, false, func(w *ssoWorld) {
		_, alice = mustPasskeyUser(t, w.a, "alice@"+ssoHost)
		_, other = mustPasskeyUser(t, w.a, "olga@elsewhere.test")
	})
	w.requireSSO(t)
	c := w.a.client(t)
	mustCode(t, passkeySignIn(t, c, alice), http.StatusForbidden, "SSO_REQUIRED")
	mustNoSession(t, c)
	mustOK(t, passkeySignIn(t, w.a.client(t), other))
}

// resetMails counts the reset mails sent to to so far, after the short
// wait mustNoMail allows the queue.
func resetMails(app *fwApp, to string) int {
	time.Sleep(300 * time.Millisecond)
	n := 0
	for _, m := range app.Mail.Messages() {
		if m.IsTo(to) && strings.Contains(m.Subject, "Reset your") {
			n++
		}
	}
	return n
}

// Ensure a password cannot be recovered for an address under requireSso:
// request-password-reset answers exactly as for an unknown address and
// mails nothing, and a link mailed before the requirement sets no
// password.
func TestSSORequired_password_reset_refused(t *testing.T) {
	t.Parallel()
	var token string
	alice := "alice@" + ssoHost
	w := mustSSOWorld(t, false, func(w *ssoWorld) {
		mustVerifiedUser(t, w.a, "Alice Acme", alice, userPassword)
		mustStatusTrue(t, w.a.client(t).post("/api/auth/request-password-reset", mustJSON(t, map[string]string{"email": alice, "redirectTo": "/reset"})))
		token = mustLocation(t, w.a, w.a.client(t).get(mustLink(t, w.a, alice, "Reset your")), "/reset").Get("token")
	})
	w.requireSSO(t)

	anon := w.a.client(t)
	known := anon.post("/api/auth/request-password-reset", mustJSON(t, map[string]string{"email": alice, "redirectTo": "/reset"}))
	unknown := anon.post("/api/auth/request-password-reset", mustJSON(t, map[string]string{"email": "nobody@" + ssoHost, "redirectTo": "/reset"}))
	if known.Status != unknown.Status || string(known.Body) != string(unknown.Body) {
		t.Fatalf("reset request answers %d %s for alice and %d %s for nobody", known.Status, known.Body, unknown.Status, unknown.Body)
	}
	if n := resetMails(w.a, alice); n != 1 {
		t.Fatalf("alice has %d reset mails, want only the one from before the requirement", n)
	}
	mustCode(t, anon.post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": token, "newPassword": "a brand new passphrase"})),
		http.StatusForbidden, "SSO_REQUIRED")
	// The link is used up, and the old password is not replaced.
	mustCode(t, anon.post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": token, "newPassword": "a brand new passphrase"})),
		http.StatusBadRequest, "INVALID_TOKEN")
}

// Ensure operators may create an account at an address under requireSso
// (the organization's provider then joins it) but never give it a
// password: the trusted API and the admin plugin both refuse one, naming
// the field.
func TestSSORequired_operators_set_no_password(t *testing.T) {
	t.Parallel()
	var aliceID string
	w := mustSSOWorld(t, true, func(w *ssoWorld) {
		_, aliceID = mustVerifiedUser(t, w.a, "Alice Acme", "alice@"+ssoHost, userPassword)
	})
	r := w.trusted(http.MethodPost, usersPath, mustJSON(t, map[string]any{"email": "dora@" + ssoHost, "name": "Dora", "password": "a good long passphrase"}))
	if p := mustProblem(t, r, http.StatusBadRequest, "federation.sso_password"); !strings.Contains(string(r.Body), `"location":"body.password"`) {
		t.Fatalf("problem = %v, want body.password named", p)
	}
	r = w.trusted(http.MethodPut, usersPath+"/"+aliceID+"/password", mustJSON(t, map[string]any{"password": "a good long passphrase"}))
	mustStatus(t, r, http.StatusBadRequest)
	mustCode(t, w.admin.post("/api/auth/admin/create-user", mustJSON(t, map[string]any{"email": "erin@" + ssoHost, "name": "Erin", "password": "a good long passphrase"})),
		http.StatusBadRequest, "SSO_REQUIRED")
	mustCode(t, w.admin.post("/api/auth/admin/set-user-password", mustJSON(t, map[string]any{"userId": aliceID, "newPassword": "a good long passphrase"})),
		http.StatusBadRequest, "SSO_REQUIRED")

	// Without a password the backend provisions dora; Acme's provider joins her.
	r = w.trusted(http.MethodPost, usersPath, mustJSON(t, map[string]any{"email": "dora@" + ssoHost, "name": "Dora", "emailVerified": true}))
	mustStatus(t, r, http.StatusCreated)
	doraID := mustID(t, r.JSON(t))
	b, cb := w.signInAt(t, w.corp, "acme-sso", fuUser{Sub: "dora-corp", Email: "dora@" + ssoHost, EmailVerified: true})
	if u := w.mustSignedIn(t, b, cb, "/home"); u["id"] != doraID {
		t.Fatalf("Acme's provider signed in %v, want dora %s", u["id"], doraID)
	}
}

// Ensure switching requireSso on ends every session of the addresses it
// now covers, each with its session.revoked event, and nobody else's: a
// password session, a session through a linked platform provider (which
// then no longer signs in), and with them the invitation a session could
// have accepted; a replica refuses them within the session cache's bound.
// No account elsewhere may move its address there, and Acme's provider
// signs the same user in again.
func TestSSORequired_switched_on_ends_sessions(t *testing.T) {
	t.Parallel()
	var bob, erin *fwClient
	var bobID, erinID, invitation string
	var googleBrowser *fuBrowser
	w := mustSSOWorld(t, false, func(w *ssoWorld) {
		bob, bobID = mustVerifiedUser(t, w.a, "Bob Acme", "bob@"+ssoHost, userPassword)
		erin, erinID = mustVerifiedUser(t, w.a, "Erin Else", "erin@not"+ssoHost, userPassword) // not at acme.test, though it ends like it
		// bob's address joins his Google identity (trusted, verified).
		var r *response
		googleBrowser, r = w.signInAt(t, w.fake, "google", fuUser{Sub: "bob-g", Email: "bob@" + ssoHost, EmailVerified: true})
		if u := w.mustSignedIn(t, googleBrowser, r, "/home"); u["id"] != bobID {
			t.Fatalf("google signed in %v, want bob", u["id"])
		}
		inv := mustOK(t, w.admin.post(orgPath("invite-member"), mustJSON(t, map[string]any{"organizationId": w.org, "email": "bob@" + ssoHost, "role": "member"})))
		invitation = mustID(t, inv)
	})
	// A second instance on the same database (a replica) has just checked
	// bob's session.
	replica := mustStartFramework(t, storeSQLite, fwEnv(ssoEnv, map[string]string{"GATEHOUSE_DATABASE_URL": w.a.DatabaseURL}))
	bobThere := replica.client(t)
	bobThere.Cookies = maps.Clone(bob.Cookies)
	mustSession(t, bobThere)
	drainEvents(t, w.a)
	w.requireSSO(t)

	var revoked []string
	for _, e := range drainEvents(t, w.a) {
		if e.Type == "session.revoked" {
			revoked = append(revoked, e.Data["userId"].(string))
		}
	}
	if len(revoked) != 2 || revoked[0] != bobID || revoked[1] != bobID {
		t.Fatalf("session.revoked for %v, want bob's two sessions (bob %s, erin %s)", revoked, bobID, erinID)
	}
	mustNoSession(t, bob)
	googleBrowser.mustNoSession()
	eventually(t, replicaLag, "bob's session ended on the replica", func() bool {
		r := bobThere.get("/api/auth/get-session")
		return r.Status == http.StatusOK && strings.TrimSpace(string(r.Body)) == "null"
	})
	mustCode(t, bob.post(orgPath("accept-invitation"), mustJSON(t, map[string]any{"invitationId": invitation})), http.StatusUnauthorized, "UNAUTHORIZED")
	if u := mustUser(t, mustSession(t, erin)); u["id"] != erinID {
		t.Fatalf("erin's session = %v", u)
	}
	// Nor can an account elsewhere move to an address the requirement covers.
	mustCode(t, erin.post("/api/auth/change-email", mustJSON(t, map[string]any{"newEmail": "erin@" + ssoHost})), http.StatusForbidden, "SSO_REQUIRED")
	// Switching it on again (no change) ends nothing more.
	w.requireSSO(t)
	for _, e := range drainEvents(t, w.a) {
		if e.Type == "session.revoked" {
			t.Fatalf("a second switch revoked %v", e.Data)
		}
	}

	// The linked provider no longer signs bob in; Acme's does.
	b, r := w.signInAt(t, w.fake, "google", fuUser{Sub: "bob-g", Email: "bob@" + ssoHost, EmailVerified: true})
	w.mustRefused(t, b, r, "/signin-failed", "sso_required")
	b, r = w.signInAt(t, w.corp, "acme-sso", fuUser{Sub: "bob-corp", Email: "bob@" + ssoHost, EmailVerified: true})
	if u := w.mustSignedIn(t, b, r, "/home"); u["id"] != bobID {
		t.Fatalf("Acme's provider signed in %v, want bob", u["id"])
	}
}

// Ensure the requirement also ends sessions when it comes to cover an
// address through its domain: Acme binds beta.test to its provider before
// DNS proves it, so it routes nowhere yet and a password signs carol up
// there; once beta.test is verified, her session ends (session.revoked)
// and her password is refused.
func TestSSORequired_domain_verified_ends_sessions(t *testing.T) {
	t.Parallel()
	w := mustSSOWorld(t, true, nil)
	r := w.trusted(http.MethodPost, domainsPath, mustJSON(t, map[string]any{"hostname": "beta.test", "organizationId": w.org}))
	mustStatus(t, r, http.StatusCreated)
	beta := mustID(t, r.JSON(t))
	mustStatus(t, w.admin.do(http.MethodPatch, "/api/admin/identity-providers/acme-sso", mustJSON(t, map[string]any{"domains": []string{w.domain, beta}}),
		"Origin", w.a.URL), http.StatusOK)
	carol, carolID := mustPlainUser(t, w.a, "Carol Beta", "carol@beta.test", userPassword)
	mustSession(t, carol)
	drainEvents(t, w.a)

	mustStatus(t, w.admin.do(http.MethodPatch, "/api/admin/domains/"+beta, `{"verify":{"reason":"checked by hand"}}`, "Origin", w.a.URL), http.StatusOK)
	var revoked []string
	for _, e := range drainEvents(t, w.a) {
		if e.Type == "session.revoked" {
			revoked = append(revoked, e.Data["userId"].(string))
		}
	}
	if !slices.Equal(revoked, []string{carolID}) {
		t.Fatalf("session.revoked for %v, want carol %s", revoked, carolID)
	}
	mustNoSession(t, carol)
	mustCode(t, w.a.client(t).post("/api/auth/sign-in/email", mustCredentials(t, "carol@beta.test", userPassword)), http.StatusForbidden, "SSO_REQUIRED")
}
