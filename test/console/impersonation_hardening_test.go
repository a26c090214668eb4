package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// An administrator impersonating a user may look, sign out and stop, not
// act as them (issue 28, item 1): every change is refused on every
// contract, and whatever is done through the impersonation names both the
// administrator and the user in the audit log and in the webhooks.

// mustImpersonate makes admin impersonate the user id and returns the
// impersonation session's id.
func mustImpersonate(t testing.TB, admin *harness.Client, id string) string {
	t.Helper()
	body := harness.MustOK(t, admin.Post(harness.AdminPath("impersonate-user"), harness.MustJSON(t, map[string]string{"userId": id})))
	s := harness.MustObject(t, body["session"])
	sid, _ := s["id"].(string)
	if sid == "" || s["userId"] != id {
		t.Fatalf("impersonate-user session = %v", s)
	}
	return sid
}

// mustImpersonationActor fails unless e was emitted through an
// impersonation of user by admin.
func mustImpersonationActor(t testing.TB, e harness.OutboxEvent, user, admin string) {
	t.Helper()
	if e.Actor == nil || e.Actor["userId"] != user || e.Actor["impersonatedBy"] != admin || len(e.Actor) != 2 {
		t.Fatalf("%s of %v has actor %v, want {userId: %s, impersonatedBy: %s}", e.Type, e.Data["id"], e.Actor, user, admin)
	}
}

// Ensure the reproduction holds no more: with the impersonation
// cookie every framework route that changes the user's credentials,
// address, profile, factors, sessions, links, organizations or account is
// refused with 403 IMPERSONATION_READ_ONLY and changes nothing; reading,
// the active organization, signing out and stopping still work; each
// refusal, and the stop, are audited with both the user and the
// administrator, and the events of the impersonation's end carry both.
func TestImpersonationHardening_framework_writes_refused(t *testing.T) {
	t.Parallel()
	// A fresh application: it drains every event and counts the audit log.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		dave, daveID := harness.MustPlainUser(t, app, "Dave", "dave@example.com", harness.UserPassword)
		daveOther := app.NewClient(t)
		harness.MustSignIn(t, daveOther, "dave@example.com", harness.UserPassword)
		daveSession, _ := harness.MustObject(t, harness.MustSession(t, dave)["session"])["id"].(string)
		harness.DrainEvents(t, app)

		impID := mustImpersonate(t, admin, daveID)
		imp := admin
		// The session-ending writes come last, so that on a server that let
		// them through the others still meet a live session.
		writes := []struct{ path, body string }{
			{"/api/auth/update-user", `{"name":"Hijacked"}`},
			{"/api/auth/update-user", `{"image":"https://evil.example/me.png"}`},
			{"/api/auth/change-email", `{"newEmail":"evil@example.com"}`},
			{"/api/auth/two-factor/enable", `{"password":"` + harness.UserPassword + `"}`},
			{"/api/auth/two-factor/get-totp-uri", `{"password":"` + harness.UserPassword + `"}`},
			{"/api/auth/two-factor/generate-backup-codes", `{"password":"` + harness.UserPassword + `"}`},
			{"/api/auth/two-factor/disable", `{"password":"` + harness.UserPassword + `"}`},
			{"/api/auth/passkey/update-passkey", `{"id":"cred-1","name":"mine"}`},
			{"/api/auth/passkey/delete-passkey", `{"id":"cred-1"}`},
			{"/api/auth/link-social", `{"provider":"github"}`},
			{"/api/auth/unlink-account", `{"accountId":"acc-1"}`},
			{"/api/auth/organization/create", `{"name":"Evil Corp","slug":"evil-corp"}`},
			{"/api/auth/organization/accept-invitation", `{"invitationId":"inv-1"}`},
			{"/api/auth/oauth2/delete-consent", `{"clientId":"client-1"}`},
			{"/api/auth/delete-user", `{}`},
			{"/api/auth/two-factor/enable", `{"password":"` + harness.UserPassword + `","method":"otp"}`},
			{"/api/auth/change-password", `{"currentPassword":"` + harness.UserPassword + `","newPassword":"a hijacked passphrase","revokeOtherSessions":true}`},
			{"/api/auth/revoke-session", `{"token":"` + daveSession + `"}`},
			{"/api/auth/revoke-other-sessions", `{}`},
			{"/api/auth/delete-user", `{"password":"` + harness.UserPassword + `"}`},
			{"/api/auth/revoke-sessions", `{}`},
		}

		for _, w := range writes {
			harness.MustCode(t, imp.Post(w.path, w.body), http.StatusForbidden, "IMPERSONATION_READ_ONLY")
		}
		// Starting a passkey registration is refused too, though a GET.
		harness.MustCode(t, imp.Get("/api/auth/passkey/generate-register-options"), http.StatusForbidden, "IMPERSONATION_READ_ONLY")

		// Reading and the session's own choices stay open.
		if s := harness.MustSession(t, imp); harness.MustUser(t, s)["id"] != daveID || harness.MustObject(t, s["session"])["impersonatedBy"] != adminID {
			t.Fatalf("get-session while impersonating = %v", s)
		}
		harness.MustStatus(t, imp.Get("/api/auth/list-sessions"), http.StatusOK)
		harness.MustStatus(t, imp.Get("/api/auth/organization/list"), http.StatusOK)
		harness.MustOK(t, imp.Post("/api/auth/organization/check-slug", `{"slug":"free-slug"}`))
		harness.MustStatus(t, imp.Post("/api/auth/organization/set-active", `{"organizationId":null}`), http.StatusOK)
		harness.MustOK(t, imp.Post(harness.AdminPath("stop-impersonating"), "{}"))

		// Nothing changed.
		u := harness.MustUser(t, harness.MustSession(t, dave))
		if u["name"] != "Dave" || u["email"] != "dave@example.com" || u["image"] != nil || u["twoFactorEnabled"] == true {
			t.Fatalf("the impersonation changed the user: %v", u)
		}
		harness.MustSession(t, daveOther)
		harness.MustSignIn(t, app.NewClient(t), "dave@example.com", harness.UserPassword)
		orgs := dave.Get("/api/auth/organization/list")
		if harness.MustStatus(t, orgs, http.StatusOK); strings.TrimSpace(string(orgs.Body)) != "[]" {
			t.Fatalf("the impersonation created an organization: %s", orgs.Body)
		}
		harness.MustNoMail(t, app, "evil@example.com", "")

		// Every refusal is in the audit log with both ids.
		refused := harness.AuditAll(t, admin, url.Values{"action": {"impersonation.refused"}})
		if len(refused) != len(writes)+1 {
			t.Fatalf("%d impersonation.refused entries, want %d: %v", len(refused), len(writes)+1, refused)
		}
		for _, e := range refused {
			if e["actorType"] != "user" || e["actorId"] != daveID || e["impersonatorId"] != adminID || e["outcome"] != "denied" ||
				e["targetType"] != "route" || !strings.HasPrefix(e["targetId"].(string), "POST /api/auth/") && e["targetId"] != "GET /api/auth/passkey/generate-register-options" {
				t.Fatalf("refusal entry = %v", e)
			}
		}
		stops := harness.AuditAll(t, admin, url.Values{"action": {"admin.stop-impersonating"}})
		if len(stops) != 1 || stops[0]["actorId"] != adminID || stops[0]["targetId"] != daveID || stops[0]["impersonatorId"] != adminID {
			t.Fatalf("stop-impersonating entries = %v", stops)
		}
		// An entry made outside an impersonation names no impersonator.
		for _, e := range harness.AuditAll(t, admin, url.Values{"action": {"admin.impersonate-user"}}) {
			if _, ok := e["impersonatorId"]; ok {
				t.Fatalf("impersonate-user entry names an impersonator: %v", e)
			}
		}

		// A second impersonation ends by signing out.
		imp2ID := mustImpersonate(t, admin, daveID)
		harness.MustOK(t, admin.Post("/api/auth/sign-out", "{}"))
		harness.MustNoSession(t, admin)

		// The events of the impersonations' ends carry both ids; nothing
		// else was emitted for Dave.
		ended := map[string]bool{}
		for _, e := range harness.DrainEvents(t, app) {
			switch {
			case e.Type == "session.revoked" && (e.Data["id"] == impID || e.Data["id"] == imp2ID):
				mustImpersonationActor(t, e, daveID, adminID)
				ended[e.Data["id"].(string)] = true
			case e.Type == "session.created":
				if e.Actor != nil {
					t.Fatalf("session.created carries actor %v", e.Actor)
				}
			default:
				t.Fatalf("unexpected event %s: %v", e.Type, e.Data)
			}
		}
		if !ended[impID] || !ended[imp2ID] {
			t.Fatalf("session.revoked for the impersonations: %v", ended)
		}
	})
}

// Ensure an account form posted while impersonating is refused by the same
// rule as the JSON routes, and audited with the user and the
// administrator.
func TestImpersonationHardening_account_form_refusal_audited(t *testing.T) {
	t.Parallel()
	// A fresh application: it counts the audit log's refusals, and its page.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		harness.MustStatus(t, consolePost(w.admin, w.userPath()+"/impersonate", url.Values{"_token": {mustConsoleTokens(t, w.admin, w.userPath())[w.userPath()+"/impersonate"]}}), http.StatusSeeOther)
		r := consoleFormPost(t, w.admin, "/account", "/account/profile", url.Values{"name": {"Hijacked"}})
		if body := harness.MustConsolePage(t, r, http.StatusForbidden); !strings.Contains(body, "Impersonating") {
			t.Fatalf("account profile form while impersonating: %s", body)
		}
		if u := harness.MustUser(t, harness.MustSession(t, w.victimC)); u["name"] != "Vic" {
			t.Fatalf("the impersonation changed the user: %v", u)
		}
		harness.MustOK(t, w.admin.Post(harness.AdminPath("stop-impersonating"), "{}"))
		refused := harness.AuditAll(t, w.admin, url.Values{"action": {"impersonation.refused"}})
		if len(refused) != 1 || refused[0]["actorId"] != w.victim || refused[0]["impersonatorId"] != w.adminID ||
			refused[0]["targetId"] != "POST /account/profile" || refused[0]["outcome"] != "denied" {
			t.Fatalf("impersonation.refused entries = %v", refused)
		}
		// The console's audit page names the administrator too.
		page := harness.MustConsolePage(t, w.admin.Get("/console/audit?action=impersonation.refused"), http.StatusOK)
		if !strings.Contains(page, "impersonated by") || !strings.Contains(page, `href="/console/users/`+w.adminID+`"`) {
			t.Fatalf("the audit page does not name the impersonator:\n%s", page)
		}
	})
}

// Ensure an impersonation signs in to no relying party: authorize refuses
// it, and the consent page's form, posted anyway, records no consent and
// issues no code, coming back to the page with the refusal.
func TestImpersonationHardening_relying_parties_refused(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		const rp = "https://rp.example.net"
		admin, adminID := harness.MustAdmin(t, app)
		r := admin.Post("/api/admin/oauth-clients", harness.MustJSON(t, map[string]any{"name": harness.Own(t, "Example app"), "type": "public", "redirectUris": []string{rp + "/cb"}}))
		harness.MustStatus(t, r, http.StatusCreated)
		clientID, _ := r.JSON(t)["clientId"].(string)
		dave, daveID := harness.MustPlainUser(t, app, "Dave", harness.Email(t, "dave@example.com"), harness.UserPassword)
		query := url.Values{"client_id": {clientID}, "redirect_uri": {rp + "/cb"}, "response_type": {"code"},
			"scope": {"openid profile email"}, "state": {"st-1"}, "code_challenge": {harness.PKCEChallenge("a-verifier-of-forty-three-characters-at-least")},
			"code_challenge_method": {"S256"}}.Encode()
		// Dave himself is sent to the consent page.
		r = dave.Get("/api/auth/oauth2/authorize?" + query)
		if loc, _ := url.Parse(r.Header.Get("Location")); r.Status != http.StatusFound || loc == nil || loc.Path != "/consent" {
			t.Fatalf("authorize as Dave: %d %q", r.Status, r.Header.Get("Location"))
		}

		mustImpersonate(t, admin, daveID)
		harness.MustCode(t, admin.Get("/api/auth/oauth2/authorize?"+query), http.StatusForbidden, "IMPERSONATION_READ_ONLY")
		harness.MustCode(t, admin.Post("/api/auth/oauth2/authorize", query, "Content-Type", "application/x-www-form-urlencoded"), http.StatusForbidden, "IMPERSONATION_READ_ONLY")
		form := url.Values{"oauth_query": {query}, "accept": {"true"}}
		r = admin.Post("/api/auth/oauth2/consent", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
		harness.MustStatus(t, r, http.StatusSeeOther)
		back, err := url.Parse(r.Header.Get("Location"))
		if err != nil || back.Path != "/consent" || back.Query().Get("error") != "IMPERSONATION_READ_ONLY" {
			t.Fatalf("consent while impersonating: Location %q", r.Header.Get("Location"))
		}
		harness.MustOK(t, admin.Post(harness.AdminPath("stop-impersonating"), "{}"))

		// Nothing was granted: Dave is still asked.
		r = dave.Get("/api/auth/oauth2/authorize?" + query)
		if loc, _ := url.Parse(r.Header.Get("Location")); r.Status != http.StatusFound || loc == nil || loc.Path != "/consent" {
			t.Fatalf("authorize as Dave after the refused consent: %d %q", r.Status, r.Header.Get("Location"))
		}
		// Dave's refusals: the other tests on the application have their own.
		refused := harness.AuditAll(t, admin, url.Values{"action": {"impersonation.refused"}, "actorId": {daveID}})
		if len(refused) != 3 {
			t.Fatalf("impersonation.refused entries = %v, want 3", refused)
		}
		for _, e := range refused {
			if e["actorId"] != daveID || e["impersonatorId"] != adminID {
				t.Fatalf("refusal entry = %v", e)
			}
		}
	})
}

// Ensure a JWT handed out through an impersonation says so: /api/auth/token
// and get-session's set-auth-jwt carry RFC 8693's actor claim naming the
// administrator (act.sub), so a consumer API can tell the token from one the
// user asked for and refuse it; the user's own tokens carry none.
func TestImpersonationHardening_jwt_names_the_administrator(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		dave, daveID := harness.MustPlainUser(t, app, "Dave", harness.Email(t, "dave@example.com"), harness.UserPassword)
		_, own := harness.SessionJWT(t, dave)
		if _, ok := own["act"]; ok {
			t.Fatalf("Dave's own token has act: %v", own)
		}

		mustImpersonate(t, admin, daveID)
		_, viaSession := harness.SessionJWT(t, admin)
		_, viaToken := harness.MustVerifyJWT(t, admin, harness.MustOK(t, admin.Get("/api/auth/token"))["token"].(string))
		for name, claims := range map[string]map[string]any{"set-auth-jwt": viaSession, "/api/auth/token": viaToken} {
			act, _ := claims["act"].(map[string]any)
			if claims["sub"] != daveID || act == nil || act["sub"] != adminID || len(act) != 1 {
				t.Fatalf("%s while impersonating: sub %v act %v, want sub %s act {sub: %s}", name, claims["sub"], claims["act"], daveID, adminID)
			}
		}
	})
}
