package test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Multi-factor enforcement and step-up (docs/multi-factor.md,
// "Enforcement" and "Step-up"), from outside: sensitive actions ask a user
// with a second factor to have proven it recently, administrators without
// one are refused the administration routes while the configuration
// requires it, and an organization can require its members to have one.

const trustCookie = "gatehouse.trust_device"

// mustStaleSession returns a client signed in as u by password alone: the
// browser was trusted at a challenge answered with the code of the current
// step (so a later verify must use the next one), and its next sign-in
// skips the challenge, so the session holds no second factor.
func mustStaleSession(t *testing.T, app *fwApp, u *tfUser) *fwClient {
	t.Helper()
	c := mustChallenge(t, app, u)
	mustOK(t, c.post("/api/auth/two-factor/verify-totp", mustJSON(t, map[string]any{"code": totpAt(u.secret, 0), "trustDevice": true})))
	s := app.client(t)
	s.Cookies[trustCookie] = c.Cookies[trustCookie]
	mustSignIn(t, s, u.email, tfPassword)
	if m, at, _, _ := sessionFactors(t, s); fmt.Sprint(m) != "[pwd]" || at != nil {
		t.Fatalf("trusted-browser session: authMethods %v, secondFactorAt %v; want a password alone", m, at)
	}
	return s
}

// mustEnrolTOTP turns two-factor on for c's signed-in user (password pw)
// with the code of the previous step, and returns the TOTP secret. The
// session is stepped up by the answer.
func mustEnrolTOTP(t *testing.T, c *fwClient, pw string) []byte {
	t.Helper()
	en := mustOK(t, c.post("/api/auth/two-factor/enable", mustJSON(t, map[string]any{"password": pw})))
	uri, _ := en["totpURI"].(string)
	secret := totpSecretOf(t, uri)
	mustOK(t, c.post("/api/auth/two-factor/verify-totp", mustJSON(t, map[string]any{"code": totpAt(secret, -1)})))
	return secret
}

// stepUpAction is a sensitive framework action of a signed-in user.
type stepUpAction struct {
	name, path string
	body       map[string]any
}

func stepUpActions(email string) []stepUpAction {
	return []stepUpAction{
		{"get-totp-uri", "/api/auth/two-factor/get-totp-uri", map[string]any{"password": tfPassword}},
		{"generate-backup-codes", "/api/auth/two-factor/generate-backup-codes", map[string]any{"password": tfPassword}},
		{"change-email", "/api/auth/change-email", map[string]any{"newEmail": "new-" + email}},
		{"change-password", "/api/auth/change-password", map[string]any{"currentPassword": tfPassword, "newPassword": tfPassword + " again"}},
		{"disable", "/api/auth/two-factor/disable", map[string]any{"password": tfPassword}},
		{"delete-user", "/api/auth/delete-user", map[string]any{"password": tfPassword}},
	}
}

// Ensure every sensitive action of a user with two-factor on is refused
// (403 SECOND_FACTOR_REQUIRED, nothing changed) in a session without a
// recent second factor, and allowed once a code is answered in the session;
// a user without a second factor is never asked.
func TestMFA_step_up(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		for _, a := range stepUpActions("ada@example.com") {
			t.Run(a.name, func(t *testing.T) {
				email := a.name + "@example.com"
				u := mustTwoFactorUser(t, app, email)
				s := mustStaleSession(t, app, u)
				body := a.body
				if a.name == "change-email" {
					body = map[string]any{"newEmail": "new-" + email}
				}
				mustCode(t, s.post(a.path, mustJSON(t, body)), http.StatusForbidden, "SECOND_FACTOR_REQUIRED")
				// Refused before anything was tried or changed: the
				// password is unchanged and two-factor still on.
				if on := mustUser(t, mustSession(t, s))["twoFactorEnabled"]; on != true {
					t.Fatalf("after a refused %s, twoFactorEnabled = %v", a.name, on)
				}
				mustOK(t, app.client(t).post("/api/auth/sign-in/email", mustCredentials(t, email, tfPassword)))

				// A code answered in the session steps it up.
				mustOK(t, verifyTOTP(t, s, totpAt(u.secret, 1)))
				if _, at, _, _ := sessionFactors(t, s); at == nil {
					t.Fatal("verify-totp in the session did not record a second factor")
				}
				mustOK(t, s.post(a.path, mustJSON(t, body)))
			})
		}

		// A backup code answered in the session steps it up too.
		u := mustTwoFactorUser(t, app, "bo@example.com")
		s := mustStaleSession(t, app, u)
		mustCode(t, s.post("/api/auth/two-factor/generate-backup-codes", mustJSON(t, map[string]any{"password": tfPassword})), http.StatusForbidden, "SECOND_FACTOR_REQUIRED")
		mustOK(t, s.post("/api/auth/two-factor/verify-backup-code", mustJSON(t, map[string]any{"code": u.backups[0]})))
		mustOK(t, s.post("/api/auth/two-factor/generate-backup-codes", mustJSON(t, map[string]any{"password": tfPassword})))

		// A user without a second factor is never asked.
		plain := app.client(t)
		mustSignUp(t, plain, "Cy", "cy@example.com", tfPassword)
		for _, a := range stepUpActions("cy@example.com") {
			if strings.Contains(a.path, "two-factor") {
				continue // refused for another reason: two-factor is off
			}
			if a.name == "delete-user" {
				a.body["password"] = tfPassword + " again" // changed just before
			}
			mustOK(t, plain.post(a.path, mustJSON(t, a.body)))
		}
		mustNoSession(t, plain)
	})
}

// Ensure an administrator with two-factor on issues and rotates service
// keys only with a second factor proven recently in the session (403
// mfa.step_up_required), and that other administration is not asked.
func TestMFA_step_up_service_keys(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)
		secret := mustEnrolTOTP(t, admin, adminPassword)
		key := mustCreateKey(t, admin, map[string]any{"name": "fresh", "scopes": []string{"users:read"}})
		u := &tfUser{email: adminEmail, secret: secret}
		stale := app.client(t)
		{
			c := app.client(t)
			mustOK(t, c.post("/api/auth/sign-in/email", mustCredentials(t, adminEmail, adminPassword)))
			mustOK(t, c.post("/api/auth/two-factor/verify-totp", mustJSON(t, map[string]any{"code": totpAt(secret, 0), "trustDevice": true})))
			stale.Cookies[trustCookie] = c.Cookies[trustCookie]
			mustSignIn(t, stale, u.email, adminPassword)
		}
		mustProblem(t, stale.post(serviceKeysPath, mustJSON(t, map[string]any{"name": "ci", "scopes": []string{"users:read"}})), http.StatusForbidden, "mfa.step_up_required")
		mustProblem(t, stale.post(serviceKeysPath+"/"+mustID(t, key)+"/rotate", "{}"), http.StatusForbidden, "mfa.step_up_required")
		// Reading is not sensitive.
		mustStatus(t, stale.get(serviceKeysPath), http.StatusOK)
		mustOK(t, stale.get(adminPath("list-users")))

		mustOK(t, verifyTOTP(t, stale, totpAt(secret, 1)))
		mustCreateKey(t, stale, map[string]any{"name": "ci", "scopes": []string{"users:read"}})
		mustStatus(t, stale.post(serviceKeysPath+"/"+mustID(t, key)+"/rotate", "{}"), http.StatusOK)
	})
}

// adminMFAEnv is adminEnv with administrators required to use a second
// factor.
var adminMFAEnv = fwEnv(adminEnv, map[string]string{"GATEHOUSE_ADMIN_REQUIRE_MFA": "true"})

// Ensure that while GATEHOUSE_ADMIN_REQUIRE_MFA is on an administrator
// without a second factor is refused every administration route (403
// ADMIN_MFA_REQUIRED under /api/auth/admin, admin.mfa_required under
// /api/admin), may still enrol one and sign out, and is let in once
// enrolled; other users keep their usual answers.
func TestMFA_admin_requires_second_factor(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminMFAEnv, func(t *testing.T, app *fwApp) {
		admin, adminID := mustAdmin(t, app)
		plain, _ := mustPlainUser(t, app, "Pat", "pat@example.com", userPassword)

		mustCode(t, admin.get(adminPath("list-users")), http.StatusForbidden, "ADMIN_MFA_REQUIRED")
		mustCode(t, admin.post(adminPath("ban-user"), mustJSON(t, map[string]any{"userId": adminID})), http.StatusForbidden, "ADMIN_MFA_REQUIRED")
		mustCode(t, admin.post(adminPath("has-permission"), mustJSON(t, map[string]any{"permissions": map[string]any{"user": []string{"list"}}})), http.StatusForbidden, "ADMIN_MFA_REQUIRED")
		mustProblem(t, admin.get(serviceKeysPath), http.StatusForbidden, "admin.mfa_required")
		mustProblem(t, admin.post(serviceKeysPath, mustJSON(t, map[string]any{"name": "ci", "scopes": []string{"users:read"}})), http.StatusForbidden, "admin.mfa_required")
		mustProblem(t, admin.get("/api/admin/audit-log"), http.StatusForbidden, "admin.mfa_required")
		mustProblem(t, admin.get("/api/admin/oauth-clients"), http.StatusForbidden, "admin.mfa_required")
		mustProblem(t, admin.get("/api/admin/signing-keys"), http.StatusForbidden, "admin.mfa_required")
		// Not an administrator: the usual refusals, not this one.
		mustCode(t, plain.get(adminPath("list-users")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS")
		mustProblem(t, plain.get(serviceKeysPath), http.StatusForbidden, "auth.not_platform_admin")
		// Anonymous: still 401.
		mustStatus(t, app.client(t).get(adminPath("list-users")), http.StatusUnauthorized)

		// The administrator's own session still works, and sign-out.
		mustSession(t, admin)
		other := app.client(t)
		mustSignIn(t, other, adminEmail, adminPassword)
		mustOK(t, other.post("/api/auth/sign-out", "{}"))
		mustNoSession(t, other)

		// Enrolment is open to them, and lets them in.
		mustEnrolTOTP(t, admin, adminPassword)
		emails, _ := listUsers(t, admin, nil)
		if len(emails) != 2 {
			t.Fatalf("list-users after enrolment = %v", emails)
		}
		mustStatus(t, admin.get(serviceKeysPath), http.StatusOK)
		mustStatus(t, admin.get("/api/admin/audit-log"), http.StatusOK)
	})
}

// Ensure the administrators' rule is off unless configured (the default in
// development): an administrator without a second factor administers.
func TestMFA_admin_rule_off(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeMemory, adminEnv)
	admin, _ := mustAdmin(t, app)
	mustOK(t, admin.get(adminPath("list-users")))
	mustStatus(t, admin.get(serviceKeysPath), http.StatusOK)
}

// Ensure "gatehouse admin create" tells the new administrator, while the
// configuration requires it, that they must set up a second factor, and
// says nothing of it otherwise.
func TestMFA_cli_admin_create_says_so(t *testing.T) {
	t.Parallel()
	base := []string{"GATEHOUSE_SECRET=" + testSecret, "GATEHOUSE_BASE_URL=" + cliBaseURL, "GATEHOUSE_DATA_DIR=" + t.TempDir()}
	out := mustRunCLI(t, append(base, "GATEHOUSE_ADMIN_REQUIRE_MFA=true"), adminPassword+"\n", "admin", "create", "--email", "root@example.com", "--name", "Root", "--password-stdin")
	if !strings.Contains(out, "ADMIN_MFA_REQUIRED") || !strings.Contains(out, "/api/auth/two-factor/enable") || !strings.Contains(out, "second factor") {
		t.Fatalf("admin create with the rule on printed %q", out)
	}
	out = mustRunCLI(t, append(base, "GATEHOUSE_ADMIN_REQUIRE_MFA=false"), "", "admin", "create", "--email", "helper@example.com", "--name", "Helper")
	if strings.Contains(out, "second factor") {
		t.Fatalf("admin create with the rule off printed %q", out)
	}
}

// Ensure an organization's owner may require its members to have a second
// factor only with one of their own; that while the rule is on a member
// without one gets 403 TWO_FACTOR_REQUIRED_BY_ORGANIZATION on the
// organization's routes (and may still leave, and use routes that act in
// no organization) until they enrol; and that a trusted backend sets the
// rule too, and sees it.
func TestMFA_organization_requires_second_factor(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		owner := mustVerifiedClient(t, app, "Olga", "olga@example.com")
		org := mustCreateOrg(t, owner, "Acme", "acme")
		id := mustID(t, org)
		if org["requireTwoFactor"] != false {
			t.Fatalf("a new organization = %v, want requireTwoFactor false", org)
		}
		member := mustVerifiedClient(t, app, "Max", "max@example.com")
		mustJoin(t, owner, id, member, "max@example.com", "member")
		leaver := mustVerifiedClient(t, app, "Lea", "lea@example.com")
		mustJoin(t, owner, id, leaver, "lea@example.com", "admin")
		require := func(on bool) string {
			return mustJSON(t, map[string]any{"organizationId": id, "data": map[string]any{"requireTwoFactor": on}})
		}

		// The owner without a second factor cannot turn it on.
		mustCode(t, owner.post(orgPath("update"), require(true)), http.StatusForbidden, "SET_UP_A_SECOND_FACTOR_BEFORE_REQUIRING_ONE")
		if got := mustOK(t, owner.get(orgPath("get-organization?organizationId="+id))); got["requireTwoFactor"] != false {
			t.Fatalf("after a refused update: %v", got)
		}
		mustEnrolTOTP(t, owner, orgPassword)
		if got := mustOK(t, owner.post(orgPath("update"), require(true))); got["requireTwoFactor"] != true {
			t.Fatalf("update = %v, want requireTwoFactor true", got)
		}

		q := "?organizationId=" + id
		refused := []struct{ method, op, body string }{
			{http.MethodPost, "set-active", mustJSON(t, map[string]any{"organizationId": id})},
			{http.MethodGet, "get-full-organization" + q, ""},
			{http.MethodGet, "get-organization" + q, ""},
			{http.MethodGet, "list-members" + q, ""},
			{http.MethodGet, "list-invitations" + q, ""},
			{http.MethodGet, "get-active-member-role" + q, ""},
			{http.MethodPost, "has-permission", mustJSON(t, map[string]any{"organizationId": id, "permissions": map[string]any{"member": []string{"create"}}})},
			{http.MethodPost, "invite-member", mustJSON(t, map[string]any{"organizationId": id, "email": "zed@example.com", "role": "member"})},
			{http.MethodPost, "update", require(false)},
		}
		for _, r := range refused {
			mustCode(t, member.do(r.method, orgPath(r.op), r.body), http.StatusForbidden, "TWO_FACTOR_REQUIRED_BY_ORGANIZATION")
		}
		// Routes that act in no organization, and the member's session.
		if orgs := mustList(t, member.get(orgPath("list"))); len(orgs) != 1 || orgs[0]["requireTwoFactor"] != true {
			t.Fatalf("list = %v", orgs)
		}
		mustSession(t, member)
		// The owner, who has a factor, acts as before.
		mustOK(t, owner.get(orgPath("get-full-organization"+q)))
		// Leaving is never refused for it.
		mustCode(t, leaver.get(orgPath("get-organization"+q)), http.StatusForbidden, "TWO_FACTOR_REQUIRED_BY_ORGANIZATION")
		mustOK(t, leaver.post(orgPath("leave"), mustJSON(t, map[string]any{"organizationId": id})))

		// Enrolling lifts it.
		mustEnrolTOTP(t, member, orgPassword)
		for _, r := range refused[:6] {
			if strings.HasPrefix(r.op, "list-invitations") {
				// Back to the member's own refusal: members may not list them.
				mustCode(t, member.do(r.method, orgPath(r.op), r.body), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS")
				continue
			}
			mustStatus(t, member.do(r.method, orgPath(r.op), r.body), http.StatusOK)
		}

		// A trusted backend sees the rule and turns it off (and on) for anyone.
		k, _, _ := mustOrgKey(t, app)
		got := mustTrustedOrg(t, k.do(http.MethodPatch, orgsPath+"/"+id, map[string]any{"requireTwoFactor": false}), http.StatusOK, "Acme")
		if got["requireTwoFactor"] != false {
			t.Fatalf("trusted update = %v", got)
		}
		if got := mustTrustedOrg(t, k.do(http.MethodGet, orgsPath+"/"+id, nil), http.StatusOK, "Acme"); got["requireTwoFactor"] != false {
			t.Fatalf("trusted get = %v", got)
		}
		late := mustVerifiedClient(t, app, "Ned", "ned@example.com")
		mustJoin(t, owner, id, late, "ned@example.com", "member")
		mustOK(t, late.get(orgPath("get-organization"+q)))
		mustTrustedOrg(t, k.do(http.MethodPatch, orgsPath+"/"+id, map[string]any{"requireTwoFactor": true}), http.StatusOK, "Acme")
		mustCode(t, late.get(orgPath("get-organization"+q)), http.StatusForbidden, "TWO_FACTOR_REQUIRED_BY_ORGANIZATION")
	})
}
