package federation

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
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
	*harness.FuWorld
	t      testing.TB
	corp   *harness.FuFake
	key    string // a service key with users, organizations and domains
	org    string
	domain string
}

// ssoEnv is AdminEnv with passkeys on (localhost as the relying party).
var ssoEnv = harness.Env(harness.PkEnv, map[string]string{"GATEHOUSE_ADMIN_EMAILS": harness.AdminEmail})

// mustSSOWorld starts the world on SQLite; Acme's provider requires SSO
// when require is set. before runs first, while nothing is required yet
// (to make the users the requirement will find).
func mustSSOWorld(t *testing.T, require bool, before func(w *ssoWorld)) *ssoWorld {
	t.Helper()
	w := &ssoWorld{FuWorld: harness.MustFuWorld(t, harness.StoreSQLite, ssoEnv), t: t}
	w.corp = harness.NewFuFake(t, w.A)
	w.key = harness.MustCreateKey(t, w.Admin, map[string]any{"name": "acme backend",
		"scopes": []string{"users:read", "users:write", "organizations:read", "organizations:write", "domains:read", "domains:write"}})["secret"].(string)
	adminID := harness.MustUser(t, harness.MustSession(t, w.Admin))["id"].(string)
	r := w.trusted(http.MethodPost, harness.OrgsPath, harness.MustJSON(t, map[string]any{"name": "Acme", "slug": "acme", "ownerUserId": adminID}))
	harness.MustStatus(t, r, http.StatusCreated)
	w.org = harness.MustID(t, r.JSON(t))
	r = w.trusted(http.MethodPost, harness.DomainsPath, harness.MustJSON(t, map[string]any{"hostname": ssoHost, "organizationId": w.org}))
	harness.MustStatus(t, r, http.StatusCreated)
	w.domain = harness.MustID(t, r.JSON(t))
	r = w.Admin.Do(http.MethodPatch, "/api/admin/domains/"+w.domain, `{"verify":{"reason":"checked by hand in the test"}}`, "Origin", w.A.URL)
	if harness.MustStatus(t, r, http.StatusOK); r.JSON(t)["status"] != "verified" {
		t.Fatalf("the domain after a manual verification: %s", r.Body)
	}
	w.Register(t, w.Fake, map[string]any{"id": "google", "trustedForLinking": true})
	w.Register(t, w.Fake, map[string]any{"id": "untrusted", "trustedForLinking": false})
	if before != nil {
		before(w)
	}
	w.Register(t, w.corp, map[string]any{"id": "acme-sso", "organizationId": w.org, "domains": []string{w.domain},
		"defaultRole": "member", "requireSso": require})
	return w
}

// trusted calls the trusted API with the world's service key.
func (w *ssoWorld) trusted(method, path, body string) *harness.Response {
	return w.A.NewClient(w.t).Do(method, path, body, "Authorization", "Bearer "+w.key)
}

// requireSSO switches Acme's requirement on through the admin API.
func (w *ssoWorld) requireSSO(t testing.TB) {
	t.Helper()
	harness.MustStatus(t, w.Admin.Do(http.MethodPatch, "/api/admin/identity-providers/acme-sso", `{"requireSso":true}`, "Origin", w.A.URL), http.StatusOK)
}

// signInAt walks a sign-in at provider (whose fake signs in u) in a new
// browser and returns the browser and the callback's answer.
func (w *ssoWorld) signInAt(t testing.TB, fake *harness.FuFake, provider string, u harness.FuUser) (*harness.FuBrowser, *harness.Response) {
	t.Helper()
	fake.Set(func(f *harness.FuFake) { f.User = u })
	b := harness.NewFuBrowser(t, w.A)
	return b, w.SignIn(t, b, provider, nil)
}

// members returns the user ids of Acme's members.
func (w *ssoWorld) members(t testing.TB) []string {
	t.Helper()
	r := w.trusted(http.MethodGet, harness.OrgsPath+"/"+w.org+"/members", "")
	harness.MustStatus(t, r, http.StatusOK)
	var page struct {
		Data []struct {
			UserID string `json:"userId"`
		} `json:"data"`
	}
	harness.MustUnmarshal(t, r.Body, &page)
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
		_, aliceID = harness.MustVerifiedUser(t, w.A, "Alice Acme", "alice@"+ssoHost, harness.UserPassword)
	})

	b, r := w.signInAt(t, w.Fake, "google", harness.FuUser{Sub: "alice-g", Email: "alice@" + ssoHost, EmailVerified: true})
	w.MustRefused(t, b, r, "/signin-failed", "sso_required")
	b, r = w.signInAt(t, w.Fake, "untrusted", harness.FuUser{Sub: "carol-u", Email: "carol@" + ssoHost, EmailVerified: true})
	w.MustRefused(t, b, r, "/signin-failed", "sso_required")
	if got := w.UsersNamed(t, "@"+ssoHost); !slices.Equal(got, []string{"alice@" + ssoHost}) {
		t.Fatalf("users at %s = %v, want only alice", ssoHost, got)
	}
	if r := w.Admin.Get("/api/admin/audit-log?action=sign-in.sso-required"); strings.Count(string(r.Body), `"targetId":"acme-sso"`) != 2 {
		t.Fatalf("audit of the two refusals: %s", r.Body)
	}
	// A refusal links nothing: alice's only way in is still her password.
	if u := w.trusted(http.MethodGet, harness.UsersPath+"/"+aliceID, ""); strings.Contains(string(u.Body), `"google"`) {
		t.Fatalf("alice after the refused sign-in: %s", u.Body)
	}

	// An address elsewhere still signs in through the same providers.
	b, r = w.signInAt(t, w.Fake, "untrusted", harness.FuUser{Sub: "dan-u", Email: "dan@elsewhere.test", EmailVerified: true})
	w.MustSignedIn(t, b, r, "/welcome")

	// Acme's own provider: alice joins her account, carol is created, both
	// become members.
	b, r = w.signInAt(t, w.corp, "acme-sso", harness.FuUser{Sub: "alice-corp", Email: "alice@" + ssoHost, EmailVerified: true})
	if u := w.MustSignedIn(t, b, r, "/home"); u["id"] != aliceID {
		t.Fatalf("Acme's provider signed in %v, want alice %s", u["id"], aliceID)
	}
	b, r = w.signInAt(t, w.corp, "acme-sso", harness.FuUser{Sub: "carol-corp", Email: "carol@" + ssoHost, EmailVerified: true})
	carol := w.MustSignedIn(t, b, r, "/welcome")
	if got := w.members(t); !slices.Contains(got, aliceID) || !slices.Contains(got, carol["id"].(string)) {
		t.Fatalf("Acme's members = %v, want alice and carol", got)
	}
}

// Ensure a passkey does not sign in an address under requireSso (and only
// its holder learns why), while it still signs in an address elsewhere.
func TestSSORequired_passkey_sign_in_refused(t *testing.T) {
	t.Parallel()
	var alice, other *harness.PkDevice
	w := mustSSOWorld(t, false, func(w *ssoWorld) {
		_, alice = harness.MustPasskeyUser(t, w.A, "alice@"+ssoHost)
		_, other = harness.MustPasskeyUser(t, w.A, "olga@elsewhere.test")
	})
	w.requireSSO(t)
	c := w.A.NewClient(t)
	harness.MustCode(t, harness.PasskeySignIn(t, c, alice), http.StatusForbidden, "SSO_REQUIRED")
	harness.MustNoSession(t, c)
	harness.MustOK(t, harness.PasskeySignIn(t, w.A.NewClient(t), other))
}

// resetMails counts the reset mails sent to to so far, after the short
// wait MustNoMail allows the queue.
func resetMails(app *harness.App, to string) int {
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
		harness.MustVerifiedUser(t, w.A, "Alice Acme", alice, harness.UserPassword)
		harness.MustStatusTrue(t, w.A.NewClient(t).Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]string{"email": alice, "redirectTo": "/reset"})))
		token = harness.MustLocation(t, w.A, w.A.NewClient(t).Get(harness.MustLink(t, w.A, alice, "Reset your")), "/reset").Get("token")
	})
	w.requireSSO(t)

	anon := w.A.NewClient(t)
	known := anon.Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]string{"email": alice, "redirectTo": "/reset"}))
	unknown := anon.Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]string{"email": "nobody@" + ssoHost, "redirectTo": "/reset"}))
	if known.Status != unknown.Status || string(known.Body) != string(unknown.Body) {
		t.Fatalf("reset request answers %d %s for alice and %d %s for nobody", known.Status, known.Body, unknown.Status, unknown.Body)
	}
	if n := resetMails(w.A, alice); n != 1 {
		t.Fatalf("alice has %d reset mails, want only the one from before the requirement", n)
	}
	harness.MustCode(t, anon.Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": token, "newPassword": "a brand new passphrase"})),
		http.StatusForbidden, "SSO_REQUIRED")
	// The link is used up, and the old password is not replaced.
	harness.MustCode(t, anon.Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": token, "newPassword": "a brand new passphrase"})),
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
		_, aliceID = harness.MustVerifiedUser(t, w.A, "Alice Acme", "alice@"+ssoHost, harness.UserPassword)
	})
	r := w.trusted(http.MethodPost, harness.UsersPath, harness.MustJSON(t, map[string]any{"email": "dora@" + ssoHost, "name": "Dora", "password": "a good long passphrase"}))
	if p := harness.MustProblem(t, r, http.StatusBadRequest, "federation.sso_password"); !strings.Contains(string(r.Body), `"location":"body.password"`) {
		t.Fatalf("problem = %v, want body.password named", p)
	}
	r = w.trusted(http.MethodPut, harness.UsersPath+"/"+aliceID+"/password", harness.MustJSON(t, map[string]any{"password": "a good long passphrase"}))
	harness.MustStatus(t, r, http.StatusBadRequest)
	harness.MustCode(t, w.Admin.Post("/api/auth/admin/create-user", harness.MustJSON(t, map[string]any{"email": "erin@" + ssoHost, "name": "Erin", "password": "a good long passphrase"})),
		http.StatusBadRequest, "SSO_REQUIRED")
	harness.MustCode(t, w.Admin.Post("/api/auth/admin/set-user-password", harness.MustJSON(t, map[string]any{"userId": aliceID, "newPassword": "a good long passphrase"})),
		http.StatusBadRequest, "SSO_REQUIRED")

	// Without a password the backend provisions dora; Acme's provider joins her.
	r = w.trusted(http.MethodPost, harness.UsersPath, harness.MustJSON(t, map[string]any{"email": "dora@" + ssoHost, "name": "Dora", "emailVerified": true}))
	harness.MustStatus(t, r, http.StatusCreated)
	doraID := harness.MustID(t, r.JSON(t))
	b, cb := w.signInAt(t, w.corp, "acme-sso", harness.FuUser{Sub: "dora-corp", Email: "dora@" + ssoHost, EmailVerified: true})
	if u := w.MustSignedIn(t, b, cb, "/home"); u["id"] != doraID {
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
	var bob, erin *harness.Client
	var bobID, erinID, invitation string
	var googleBrowser *harness.FuBrowser
	w := mustSSOWorld(t, false, func(w *ssoWorld) {
		bob, bobID = harness.MustVerifiedUser(t, w.A, "Bob Acme", "bob@"+ssoHost, harness.UserPassword)
		erin, erinID = harness.MustVerifiedUser(t, w.A, "Erin Else", "erin@not"+ssoHost, harness.UserPassword) // not at acme.test, though it ends like it
		// bob's address joins his Google identity (trusted, verified).
		var r *harness.Response
		googleBrowser, r = w.signInAt(t, w.Fake, "google", harness.FuUser{Sub: "bob-g", Email: "bob@" + ssoHost, EmailVerified: true})
		if u := w.MustSignedIn(t, googleBrowser, r, "/home"); u["id"] != bobID {
			t.Fatalf("google signed in %v, want bob", u["id"])
		}
		inv := harness.MustOK(t, w.Admin.Post(harness.OrgPath("invite-member"), harness.MustJSON(t, map[string]any{"organizationId": w.org, "email": "bob@" + ssoHost, "role": "member"})))
		invitation = harness.MustID(t, inv)
	})
	// A second instance on the same database (a replica) has just checked
	// bob's session.
	replica := harness.MustStart(t, harness.StoreSQLite, harness.Env(ssoEnv, map[string]string{"GATEHOUSE_DATABASE_URL": w.A.DatabaseURL}))
	bobThere := replica.NewClient(t)
	bobThere.Cookies = maps.Clone(bob.Cookies)
	harness.MustSession(t, bobThere)
	harness.DrainEvents(t, w.A)
	w.requireSSO(t)

	var revoked []string
	for _, e := range harness.DrainEvents(t, w.A) {
		if e.Type == "session.revoked" {
			revoked = append(revoked, e.Data["userId"].(string))
		}
	}
	if len(revoked) != 2 || revoked[0] != bobID || revoked[1] != bobID {
		t.Fatalf("session.revoked for %v, want bob's two sessions (bob %s, erin %s)", revoked, bobID, erinID)
	}
	harness.MustNoSession(t, bob)
	googleBrowser.MustNoSession()
	// The replica's session cache expires on the wall clock, not on the
	// app's (harness.ReplicaLag): this wait is real.
	harness.Eventually(t, harness.ReplicaLag, "bob's session ended on the replica", func() bool {
		r := bobThere.Get("/api/auth/get-session")
		return r.Status == http.StatusOK && strings.TrimSpace(string(r.Body)) == "null"
	})
	harness.MustCode(t, bob.Post(harness.OrgPath("accept-invitation"), harness.MustJSON(t, map[string]any{"invitationId": invitation})), http.StatusUnauthorized, "UNAUTHORIZED")
	if u := harness.MustUser(t, harness.MustSession(t, erin)); u["id"] != erinID {
		t.Fatalf("erin's session = %v", u)
	}
	// Nor can an account elsewhere move to an address the requirement covers.
	harness.MustCode(t, erin.Post("/api/auth/change-email", harness.MustJSON(t, map[string]any{"newEmail": "erin@" + ssoHost})), http.StatusForbidden, "SSO_REQUIRED")
	// Switching it on again (no change) ends nothing more.
	w.requireSSO(t)
	for _, e := range harness.DrainEvents(t, w.A) {
		if e.Type == "session.revoked" {
			t.Fatalf("a second switch revoked %v", e.Data)
		}
	}

	// The linked provider no longer signs bob in; Acme's does.
	b, r := w.signInAt(t, w.Fake, "google", harness.FuUser{Sub: "bob-g", Email: "bob@" + ssoHost, EmailVerified: true})
	w.MustRefused(t, b, r, "/signin-failed", "sso_required")
	b, r = w.signInAt(t, w.corp, "acme-sso", harness.FuUser{Sub: "bob-corp", Email: "bob@" + ssoHost, EmailVerified: true})
	if u := w.MustSignedIn(t, b, r, "/home"); u["id"] != bobID {
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
	r := w.trusted(http.MethodPost, harness.DomainsPath, harness.MustJSON(t, map[string]any{"hostname": "beta.test", "organizationId": w.org}))
	harness.MustStatus(t, r, http.StatusCreated)
	beta := harness.MustID(t, r.JSON(t))
	harness.MustStatus(t, w.Admin.Do(http.MethodPatch, "/api/admin/identity-providers/acme-sso", harness.MustJSON(t, map[string]any{"domains": []string{w.domain, beta}}),
		"Origin", w.A.URL), http.StatusOK)
	carol, carolID := harness.MustPlainUser(t, w.A, "Carol Beta", "carol@beta.test", harness.UserPassword)
	harness.MustSession(t, carol)
	harness.DrainEvents(t, w.A)

	harness.MustStatus(t, w.Admin.Do(http.MethodPatch, "/api/admin/domains/"+beta, `{"verify":{"reason":"checked by hand"}}`, "Origin", w.A.URL), http.StatusOK)
	var revoked []string
	for _, e := range harness.DrainEvents(t, w.A) {
		if e.Type == "session.revoked" {
			revoked = append(revoked, e.Data["userId"].(string))
		}
	}
	if !slices.Equal(revoked, []string{carolID}) {
		t.Fatalf("session.revoked for %v, want carol %s", revoked, carolID)
	}
	harness.MustNoSession(t, carol)
	harness.MustCode(t, w.A.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, "carol@beta.test", harness.UserPassword)), http.StatusForbidden, "SSO_REQUIRED")
}
