package mfa

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// stepUpAction is a sensitive framework action of a signed-in user.
type stepUpAction struct {
	name, path string
	body       map[string]any
}

func stepUpActions(email string) []stepUpAction {
	return []stepUpAction{
		{"get-totp-uri", "/api/auth/two-factor/get-totp-uri", map[string]any{"password": harness.TfPassword}},
		{"generate-backup-codes", "/api/auth/two-factor/generate-backup-codes", map[string]any{"password": harness.TfPassword}},
		{"change-email", "/api/auth/change-email", map[string]any{"newEmail": "new-" + email}},
		{"change-password", "/api/auth/change-password", map[string]any{"currentPassword": harness.TfPassword, "newPassword": harness.TfPassword + " again"}},
		{"disable", "/api/auth/two-factor/disable", map[string]any{"password": harness.TfPassword}},
		{"delete-user", "/api/auth/delete-user", map[string]any{"password": harness.TfPassword}},
	}
}

// Ensure every sensitive action of a user with two-factor on is refused
// (403 SECOND_FACTOR_REQUIRED, nothing changed) in a session without a
// recent second factor, and allowed once a code is answered in the session;
// a user without a second factor is never asked.
func TestMFA_step_up(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		for _, a := range stepUpActions(harness.Email(t, "ada@example.com")) {
			t.Run(a.name, func(t *testing.T) {
				email := a.name + "@example.com"
				u := harness.MustTwoFactorUser(t, app, email)
				s := harness.MustStaleSession(t, app, u)
				body := a.body
				if a.name == "change-email" {
					body = map[string]any{"newEmail": "new-" + email}
				}
				harness.MustCode(t, s.Post(a.path, harness.MustJSON(t, body)), http.StatusForbidden, "SECOND_FACTOR_REQUIRED")
				// Refused before anything was tried or changed: the
				// password is unchanged and two-factor still on.
				if on := harness.MustUser(t, harness.MustSession(t, s))["twoFactorEnabled"]; on != true {
					t.Fatalf("after a refused %s, twoFactorEnabled = %v", a.name, on)
				}
				harness.MustOK(t, app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, email, harness.TfPassword)))

				// A code answered in the session steps it up.
				harness.MustOK(t, harness.VerifyTOTP(t, s, harness.TOTPAt(app.Clock, u.Secret, 1)))
				if _, at, _, _ := harness.SessionFactors(t, s); at == nil {
					t.Fatal("verify-totp in the session did not record a second factor")
				}
				harness.MustOK(t, s.Post(a.path, harness.MustJSON(t, body)))
			})
		}

		// A backup code answered in the session steps it up too.
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "bo@example.com"))
		s := harness.MustStaleSession(t, app, u)
		harness.MustCode(t, s.Post("/api/auth/two-factor/generate-backup-codes", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})), http.StatusForbidden, "SECOND_FACTOR_REQUIRED")
		harness.MustOK(t, s.Post("/api/auth/two-factor/verify-backup-code", harness.MustJSON(t, map[string]any{"code": u.Backups[0]})))
		harness.MustOK(t, s.Post("/api/auth/two-factor/generate-backup-codes", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))

		// A user without a second factor is never asked.
		plain := app.NewClient(t)
		harness.MustSignUp(t, plain, "Cy", harness.Email(t, "cy@example.com"), harness.TfPassword)
		for _, a := range stepUpActions(harness.Email(t, "cy@example.com")) {
			if strings.Contains(a.path, "two-factor") {
				continue // refused for another reason: two-factor is off
			}
			if a.name == "delete-user" {
				a.body["password"] = harness.TfPassword + " again" // changed just before
			}
			harness.MustOK(t, plain.Post(a.path, harness.MustJSON(t, a.body)))
		}
		harness.MustNoSession(t, plain)
	})
}

// Ensure an administrator with two-factor on issues and rotates service
// keys only with a second factor proven recently in the session (403
// mfa.step_up_required), and that other administration is not asked.
func TestMFA_step_up_service_keys(t *testing.T) {
	t.Parallel()
	// A fresh application: the administrator enrols a second factor.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		secret := harness.MustEnrolTOTP(t, admin, harness.AdminPassword)
		key := harness.MustCreateKey(t, admin, map[string]any{"name": "fresh", "scopes": []string{"users:read"}})
		u := &harness.TfUser{Email: harness.AdminEmail, Secret: secret}
		stale := app.NewClient(t)
		{
			c := app.NewClient(t)
			harness.MustOK(t, c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, harness.AdminEmail, harness.AdminPassword)))
			harness.MustOK(t, c.Post("/api/auth/two-factor/verify-totp", harness.MustJSON(t, map[string]any{"code": harness.TOTPAt(app.Clock, secret, 0), "trustDevice": true})))
			stale.Cookies[harness.TrustCookie] = c.Cookies[harness.TrustCookie]
			harness.MustSignIn(t, stale, u.Email, harness.AdminPassword)
		}
		harness.MustProblem(t, stale.Post(harness.ServiceKeysPath, harness.MustJSON(t, map[string]any{"name": "ci", "scopes": []string{"users:read"}})), http.StatusForbidden, "mfa.step_up_required")
		harness.MustProblem(t, stale.Post(harness.ServiceKeysPath+"/"+harness.MustID(t, key)+"/rotate", "{}"), http.StatusForbidden, "mfa.step_up_required")
		// Reading is not sensitive.
		harness.MustStatus(t, stale.Get(harness.ServiceKeysPath), http.StatusOK)
		harness.MustOK(t, stale.Get(harness.AdminPath("list-users")))

		harness.MustOK(t, harness.VerifyTOTP(t, stale, harness.TOTPAt(app.Clock, secret, 1)))
		harness.MustCreateKey(t, stale, map[string]any{"name": "ci", "scopes": []string{"users:read"}})
		harness.MustStatus(t, stale.Post(harness.ServiceKeysPath+"/"+harness.MustID(t, key)+"/rotate", "{}"), http.StatusOK)
	})
}

// adminMFAEnv is AdminEnv with administrators required to use a second
// factor.
var adminMFAEnv = harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_ADMIN_REQUIRE_MFA": "true"})

// Ensure that while GATEHOUSE_ADMIN_REQUIRE_MFA is on an administrator
// without a second factor is refused every administration route (403
// ADMIN_MFA_REQUIRED under /api/auth/admin, admin.mfa_required under
// /api/admin), may still enrol one and sign out, and is let in once
// enrolled; other users keep their usual answers.
func TestMFA_admin_requires_second_factor(t *testing.T) {
	t.Parallel()
	// A fresh application: the administrator enrols a second factor.
	harness.ForStores(t, harness.StoresOnce, adminMFAEnv, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		plain, _ := harness.MustPlainUser(t, app, "Pat", harness.Email(t, "pat@example.com"), harness.UserPassword)

		harness.MustCode(t, admin.Get(harness.AdminPath("list-users")), http.StatusForbidden, "ADMIN_MFA_REQUIRED")
		harness.MustCode(t, admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": adminID})), http.StatusForbidden, "ADMIN_MFA_REQUIRED")
		harness.MustCode(t, admin.Post(harness.AdminPath("has-permission"), harness.MustJSON(t, map[string]any{"permissions": map[string]any{"user": []string{"list"}}})), http.StatusForbidden, "ADMIN_MFA_REQUIRED")
		harness.MustProblem(t, admin.Get(harness.ServiceKeysPath), http.StatusForbidden, "admin.mfa_required")
		harness.MustProblem(t, admin.Post(harness.ServiceKeysPath, harness.MustJSON(t, map[string]any{"name": "ci", "scopes": []string{"users:read"}})), http.StatusForbidden, "admin.mfa_required")
		harness.MustProblem(t, admin.Get("/api/admin/audit-log"), http.StatusForbidden, "admin.mfa_required")
		harness.MustProblem(t, admin.Get("/api/admin/oauth-clients"), http.StatusForbidden, "admin.mfa_required")
		harness.MustProblem(t, admin.Get("/api/admin/signing-keys"), http.StatusForbidden, "admin.mfa_required")
		// Not an administrator: the usual refusals, not this one.
		harness.MustCode(t, plain.Get(harness.AdminPath("list-users")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS")
		harness.MustProblem(t, plain.Get(harness.ServiceKeysPath), http.StatusForbidden, "auth.not_platform_admin")
		// Anonymous: still 401.
		harness.MustStatus(t, app.NewClient(t).Get(harness.AdminPath("list-users")), http.StatusUnauthorized)

		// The administrator's own session still works, and sign-out.
		harness.MustSession(t, admin)
		other := app.NewClient(t)
		harness.MustSignIn(t, other, harness.AdminEmail, harness.AdminPassword)
		harness.MustOK(t, other.Post("/api/auth/sign-out", "{}"))
		harness.MustNoSession(t, other)

		// Enrolment is open to them, and lets them in.
		harness.MustEnrolTOTP(t, admin, harness.AdminPassword)
		emails, _ := harness.ListUsers(t, admin, nil)
		if len(emails) != 2 {
			t.Fatalf("list-users after enrolment = %v", emails)
		}
		harness.MustStatus(t, admin.Get(harness.ServiceKeysPath), http.StatusOK)
		harness.MustStatus(t, admin.Get("/api/admin/audit-log"), http.StatusOK)
	})
}

// Ensure the administrators' rule is off unless configured (the default in
// development): an administrator without a second factor administers.
func TestMFA_admin_rule_off(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, harness.AdminEnv)
	admin, _ := harness.MustAdmin(t, app)
	harness.MustOK(t, admin.Get(harness.AdminPath("list-users")))
	harness.MustStatus(t, admin.Get(harness.ServiceKeysPath), http.StatusOK)
}

// Ensure "gatehouse admin create" tells the new administrator, while the
// configuration requires it, that they must set up a second factor, and
// says nothing of it otherwise.
func TestMFA_cli_admin_create_says_so(t *testing.T) {
	t.Parallel()
	base := []string{"GATEHOUSE_SECRET=" + harness.TestSecret, "GATEHOUSE_BASE_URL=" + harness.CLIBaseURL, "GATEHOUSE_DATA_DIR=" + t.TempDir()}
	out := harness.MustRunCLI(t, append(base, "GATEHOUSE_ADMIN_REQUIRE_MFA=true"), harness.AdminPassword+"\n", "admin", "create", "--email", harness.Email(t, "root@example.com"), "--name", "Root", "--password-stdin")
	if !strings.Contains(out, "ADMIN_MFA_REQUIRED") || !strings.Contains(out, harness.CLIBaseURL+"/account/security") || !strings.Contains(out, "second factor") {
		t.Fatalf("admin create with the rule on printed %q", out)
	}
	out = harness.MustRunCLI(t, append(base, "GATEHOUSE_ADMIN_REQUIRE_MFA=false"), "", "admin", "create", "--email", harness.Email(t, "helper@example.com"), "--name", "Helper")
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
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		owner := harness.MustVerifiedClient(t, app, "Olga", harness.Email(t, "olga@example.com"))
		org := harness.MustCreateOrg(t, owner, "Acme", "acme")
		id := harness.MustID(t, org)
		if org["requireTwoFactor"] != false {
			t.Fatalf("a new organization = %v, want requireTwoFactor false", org)
		}
		member := harness.MustVerifiedClient(t, app, "Max", harness.Email(t, "max@example.com"))
		harness.MustJoin(t, owner, id, member, harness.Email(t, "max@example.com"), "member")
		leaver := harness.MustVerifiedClient(t, app, "Lea", harness.Email(t, "lea@example.com"))
		harness.MustJoin(t, owner, id, leaver, harness.Email(t, "lea@example.com"), "admin")
		require := func(on bool) string {
			return harness.MustJSON(t, map[string]any{"organizationId": id, "data": map[string]any{"requireTwoFactor": on}})
		}

		// The owner without a second factor cannot turn it on.
		harness.MustCode(t, owner.Post(harness.OrgPath("update"), require(true)), http.StatusForbidden, "SET_UP_A_SECOND_FACTOR_BEFORE_REQUIRING_ONE")
		if got := harness.MustOK(t, owner.Get(harness.OrgPath("get-organization?organizationId="+id))); got["requireTwoFactor"] != false {
			t.Fatalf("after a refused update: %v", got)
		}
		harness.MustEnrolTOTP(t, owner, harness.OrgPassword)
		if got := harness.MustOK(t, owner.Post(harness.OrgPath("update"), require(true))); got["requireTwoFactor"] != true {
			t.Fatalf("update = %v, want requireTwoFactor true", got)
		}

		q := "?organizationId=" + id
		refused := []struct{ method, op, body string }{
			{http.MethodPost, "set-active", harness.MustJSON(t, map[string]any{"organizationId": id})},
			{http.MethodGet, "get-full-organization" + q, ""},
			{http.MethodGet, "get-organization" + q, ""},
			{http.MethodGet, "list-members" + q, ""},
			{http.MethodGet, "list-invitations" + q, ""},
			{http.MethodGet, "get-active-member-role" + q, ""},
			{http.MethodPost, "has-permission", harness.MustJSON(t, map[string]any{"organizationId": id, "permissions": map[string]any{"member": []string{"create"}}})},
			{http.MethodPost, "invite-member", harness.MustJSON(t, map[string]any{"organizationId": id, "email": harness.Email(t, "zed@example.com"), "role": "member"})},
			{http.MethodPost, "update", require(false)},
		}
		for _, r := range refused {
			harness.MustCode(t, member.Do(r.method, harness.OrgPath(r.op), r.body), http.StatusForbidden, "TWO_FACTOR_REQUIRED_BY_ORGANIZATION")
		}
		// Routes that act in no organization, and the member's session.
		if orgs := harness.MustList(t, member.Get(harness.OrgPath("list"))); len(orgs) != 1 || orgs[0]["requireTwoFactor"] != true {
			t.Fatalf("list = %v", orgs)
		}
		harness.MustSession(t, member)
		// The owner, who has a factor, acts as before.
		harness.MustOK(t, owner.Get(harness.OrgPath("get-full-organization"+q)))
		// Leaving is never refused for it.
		harness.MustCode(t, leaver.Get(harness.OrgPath("get-organization"+q)), http.StatusForbidden, "TWO_FACTOR_REQUIRED_BY_ORGANIZATION")
		harness.MustOK(t, leaver.Post(harness.OrgPath("leave"), harness.MustJSON(t, map[string]any{"organizationId": id})))

		// Enrolling lifts it.
		harness.MustEnrolTOTP(t, member, harness.OrgPassword)
		for _, r := range refused[:6] {
			if strings.HasPrefix(r.op, "list-invitations") {
				// Back to the member's own refusal: members may not list them.
				harness.MustCode(t, member.Do(r.method, harness.OrgPath(r.op), r.body), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS")
				continue
			}
			harness.MustStatus(t, member.Do(r.method, harness.OrgPath(r.op), r.body), http.StatusOK)
		}

		// A trusted backend sees the rule and turns it off (and on) for anyone.
		k, _, _ := harness.MustOrgKey(t, app)
		got := harness.MustTrustedOrg(t, k.Do(http.MethodPatch, harness.OrgsPath+"/"+id, map[string]any{"requireTwoFactor": false}), http.StatusOK, "Acme")
		if got["requireTwoFactor"] != false {
			t.Fatalf("trusted update = %v", got)
		}
		if got := harness.MustTrustedOrg(t, k.Do(http.MethodGet, harness.OrgsPath+"/"+id, nil), http.StatusOK, "Acme"); got["requireTwoFactor"] != false {
			t.Fatalf("trusted get = %v", got)
		}
		late := harness.MustVerifiedClient(t, app, "Ned", harness.Email(t, "ned@example.com"))
		harness.MustJoin(t, owner, id, late, harness.Email(t, "ned@example.com"), "member")
		harness.MustOK(t, late.Get(harness.OrgPath("get-organization"+q)))
		harness.MustTrustedOrg(t, k.Do(http.MethodPatch, harness.OrgsPath+"/"+id, map[string]any{"requireTwoFactor": true}), http.StatusOK, "Acme")
		harness.MustCode(t, late.Get(harness.OrgPath("get-organization"+q)), http.StatusForbidden, "TWO_FACTOR_REQUIRED_BY_ORGANIZATION")
	})
}
