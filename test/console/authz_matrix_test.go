package console

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// The authorization matrix: every organization and administration route,
// called by each kind of caller. A cell fails on any 2xx, 401 or 403 it
// did not expect; other statuses (a 400 for a caller with no active
// organization, say) are the route's business, tested elsewhere.

type expect int

const (
	allow     expect = iota // 2xx
	deny401                 // 401: no credentials
	deny403                 // 403: a known caller without permission
	notAuthzd               // anything but 401 and 403 (the route may refuse for another reason)
)

func (e expect) String() string {
	return [...]string{"2xx", "401", "403", "neither 401 nor 403"}[e]
}

func (e expect) check(status int) bool {
	switch e {
	case allow:
		return status >= 200 && status < 300
	case deny401:
		return status == http.StatusUnauthorized
	case deny403:
		return status == http.StatusForbidden
	default:
		return status != http.StatusUnauthorized && status != http.StatusForbidden
	}
}

// The callers, in the order each route is tried: those expected to be
// refused first, so a caller who succeeds at a destructive route (delete,
// leave) does so last.
var callers = []string{"anonymous", "other-org-admin", "platform-admin", "member", "org-admin"}

// matrixWorld is the cast of the matrix, signed in once per store.
type matrixWorld struct {
	app     *harness.App
	clients map[string]*harness.Client // by caller, plus "owner" and "invitee"
	userIDs map[string]string
	seq     atomic.Int64
}

// orgFixture is a fresh organization A: owner, org-admin (role admin) and
// member (role member); an open invitation to the invitee; and the ids the
// routes need.
type orgFixture struct {
	org, memberID, invitationID string
}

func (w *matrixWorld) unique(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, w.seq.Add(1))
}

func (w *matrixWorld) newOrg(t *testing.T) orgFixture {
	t.Helper()
	owner := w.clients["owner"]
	org := harness.MustCreateOrg(t, owner, "Acme", w.unique("acme"))["id"].(string)
	harness.MustJoin(t, owner, org, w.clients["org-admin"], "org-admin@example.com", "admin")
	m := harness.MustJoin(t, owner, org, w.clients["member"], "member@example.com", "member")
	inv := harness.MustInvite(t, owner, org, "invitee@example.com", "member")
	return orgFixture{org: org, memberID: m["id"].(string), invitationID: inv["id"].(string)}
}

// call sends a request as caller on a copy of its client, so that cookies
// a route sets (impersonation, say) do not change the caller for later cells.
func (w *matrixWorld) call(t *testing.T, caller, method, path, body string) *harness.Response {
	t.Helper()
	var c *harness.Client
	if caller == "anonymous" {
		c = w.app.NewClient(t)
	} else {
		c = w.clients[caller].Clone()
	}
	if body == "" && method != http.MethodGet {
		body = "{}"
	}
	body = strings.ReplaceAll(body, "{unique}", w.unique("u"))
	return c.Do(method, path, body, "Origin", w.app.Cfg.HTTP.BaseURL)
}

type matrixRoute struct {
	name   string
	method string
	// request builds the path and body, setting up whatever it needs.
	request func(t *testing.T, w *matrixWorld) (path, body string)
	expect  map[string]expect
}

// The usual expectations.
var (
	anySignedIn = map[string]expect{"anonymous": deny401, "other-org-admin": allow, "platform-admin": allow, "member": allow, "org-admin": allow}
	membersOnly = map[string]expect{"anonymous": deny401, "other-org-admin": deny403, "platform-admin": deny403, "member": allow, "org-admin": allow}
	orgAdmins   = map[string]expect{"anonymous": deny401, "other-org-admin": deny403, "platform-admin": deny403, "member": deny403, "org-admin": allow}
	ownersOnly  = map[string]expect{"anonymous": deny401, "other-org-admin": deny403, "platform-admin": deny403, "member": deny403, "org-admin": deny403}
	recipient   = map[string]expect{"anonymous": deny401, "other-org-admin": deny403, "platform-admin": deny403, "member": deny403, "org-admin": deny403}
	signedInAny = map[string]expect{"anonymous": deny401, "other-org-admin": notAuthzd, "platform-admin": notAuthzd, "member": notAuthzd, "org-admin": notAuthzd}
	platform    = map[string]expect{"anonymous": deny401, "other-org-admin": deny403, "platform-admin": allow, "member": deny403, "org-admin": deny403}
)

func orgRoute(name, method string, expect map[string]expect, build func(w *matrixWorld, f orgFixture) (string, string)) matrixRoute {
	return matrixRoute{name: "organization/" + name, method: method, expect: expect,
		request: func(t *testing.T, w *matrixWorld) (string, string) {
			path, body := build(w, w.newOrg(t))
			return harness.OrgPath(name) + path, body
		}}
}

func adminRoute(name, method string, expect map[string]expect, build func(t *testing.T, w *matrixWorld, victim string) (string, string)) matrixRoute {
	return matrixRoute{name: "admin/" + name, method: method, expect: expect,
		request: func(t *testing.T, w *matrixWorld) (string, string) {
			victim := harness.MustOK(t, w.clients["platform-admin"].Post("/api/auth/admin/create-user", harness.MustJSON(t, map[string]any{
				"email": w.unique("victim") + "@example.com", "name": "Victim"})))["user"].(map[string]any)["id"].(string)
			path, body := build(t, w, victim)
			return "/api/auth/admin/" + name + path, body
		}}
}

func twoFactorRoute(name, body string) matrixRoute {
	return matrixRoute{name: "two-factor/" + name, method: http.MethodPost, expect: signedInAny,
		request: func(*testing.T, *matrixWorld) (string, string) { return "/api/auth/two-factor/" + name, body }}
}

// The expectations of routes open to anyone.
var (
	everyone      = map[string]expect{"anonymous": allow, "other-org-admin": allow, "platform-admin": allow, "member": allow, "org-admin": allow}
	anyoneRefused = map[string]expect{"anonymous": notAuthzd, "other-org-admin": notAuthzd, "platform-admin": notAuthzd, "member": notAuthzd, "org-admin": notAuthzd}
)

func passkeyRoute(name, method string, expect map[string]expect, body string) matrixRoute {
	return matrixRoute{name: "passkey/" + name, method: method, expect: expect,
		request: func(*testing.T, *matrixWorld) (string, string) { return "/api/auth/passkey/" + name, body }}
}

// socialRoute is a route of the user's linked accounts.
func socialRoute(name, method string, expect map[string]expect, body string) matrixRoute {
	return matrixRoute{name: "social/" + name, method: method, expect: expect,
		request: func(*testing.T, *matrixWorld) (string, string) { return "/api/auth/" + name, body }}
}

func jsonBody(kv ...any) string {
	var b strings.Builder
	b.WriteString("{")
	first := true
	for i := 0; i+1 < len(kv); i += 2 {
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:%s", kv[i], jsonValue(kv[i+1]))
	}
	b.WriteString("}")
	return b.String()
}

func jsonValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case raw:
		return string(x)
	default:
		return fmt.Sprint(x)
	}
}

// raw is JSON written as is.
type raw string

func matrixRoutes() []matrixRoute {
	orgID := func(w *matrixWorld, f orgFixture) (string, string) { return "", jsonBody("organizationId", f.org) }
	orgQuery := func(w *matrixWorld, f orgFixture) (string, string) { return "?organizationId=" + f.org, "" }
	invitation := func(w *matrixWorld, f orgFixture) (string, string) {
		return "", jsonBody("invitationId", f.invitationID)
	}
	victimBody := func(t *testing.T, w *matrixWorld, victim string) (string, string) {
		return "", jsonBody("userId", victim)
	}
	return []matrixRoute{
		{name: "organization/create", method: http.MethodPost, expect: anySignedIn, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return harness.OrgPath("create"), jsonBody("name", "New", "slug", "{unique}")
		}},
		orgRoute("check-slug", http.MethodPost, anySignedIn, func(w *matrixWorld, f orgFixture) (string, string) {
			return "", jsonBody("slug", w.unique("free"))
		}),
		orgRoute("update", http.MethodPost, orgAdmins, func(w *matrixWorld, f orgFixture) (string, string) {
			return "", jsonBody("organizationId", f.org, "data", raw(`{"name":"Renamed"}`))
		}),
		orgRoute("delete", http.MethodPost, ownersOnly, orgID),
		orgRoute("list", http.MethodGet, anySignedIn, func(*matrixWorld, orgFixture) (string, string) { return "", "" }),
		orgRoute("get-full-organization", http.MethodGet, membersOnly, orgQuery),
		orgRoute("get-organization", http.MethodGet, membersOnly, orgQuery),
		orgRoute("set-active", http.MethodPost, membersOnly, orgID),
		orgRoute("list-members", http.MethodGet, membersOnly, orgQuery),
		orgRoute("get-active-member", http.MethodGet, signedInAny, func(*matrixWorld, orgFixture) (string, string) { return "", "" }),
		orgRoute("get-active-member-role", http.MethodGet, membersOnly, orgQuery),
		orgRoute("remove-member", http.MethodPost, orgAdmins, func(w *matrixWorld, f orgFixture) (string, string) {
			return "", jsonBody("organizationId", f.org, "memberIdOrEmail", f.memberID)
		}),
		orgRoute("update-member-role", http.MethodPost, orgAdmins, func(w *matrixWorld, f orgFixture) (string, string) {
			return "", jsonBody("organizationId", f.org, "memberId", f.memberID, "role", "admin")
		}),
		orgRoute("leave", http.MethodPost, membersOnly, orgID),
		orgRoute("invite-member", http.MethodPost, orgAdmins, func(w *matrixWorld, f orgFixture) (string, string) {
			return "", jsonBody("organizationId", f.org, "email", w.unique("new")+"@example.com", "role", "member")
		}),
		orgRoute("get-invitation", http.MethodGet, recipient, func(w *matrixWorld, f orgFixture) (string, string) { return "?id=" + f.invitationID, "" }),
		orgRoute("accept-invitation", http.MethodPost, recipient, invitation),
		orgRoute("reject-invitation", http.MethodPost, recipient, invitation),
		orgRoute("cancel-invitation", http.MethodPost, orgAdmins, invitation),
		orgRoute("list-invitations", http.MethodGet, orgAdmins, orgQuery),
		orgRoute("list-user-invitations", http.MethodGet, anySignedIn, func(*matrixWorld, orgFixture) (string, string) { return "", "" }),
		orgRoute("has-permission", http.MethodPost, membersOnly, func(w *matrixWorld, f orgFixture) (string, string) {
			return "", jsonBody("organizationId", f.org, "permissions", raw(`{"member":["delete"]}`))
		}),

		adminRoute("create-user", http.MethodPost, platform, func(t *testing.T, w *matrixWorld, _ string) (string, string) {
			return "", jsonBody("email", w.unique("created")+"@example.com", "name", "Created")
		}),
		adminRoute("list-users", http.MethodGet, platform, func(*testing.T, *matrixWorld, string) (string, string) { return "?limit=5", "" }),
		adminRoute("get-user", http.MethodGet, platform, func(t *testing.T, w *matrixWorld, v string) (string, string) { return "?id=" + v, "" }),
		adminRoute("update-user", http.MethodPost, platform, func(t *testing.T, w *matrixWorld, v string) (string, string) {
			return "", jsonBody("userId", v, "data", raw(`{"name":"Renamed"}`))
		}),
		adminRoute("set-role", http.MethodPost, platform, func(t *testing.T, w *matrixWorld, v string) (string, string) {
			return "", jsonBody("userId", v, "role", "user")
		}),
		adminRoute("ban-user", http.MethodPost, platform, victimBody),
		adminRoute("unban-user", http.MethodPost, platform, victimBody),
		adminRoute("list-user-sessions", http.MethodPost, platform, victimBody),
		adminRoute("revoke-user-session", http.MethodPost, platform, func(t *testing.T, w *matrixWorld, _ string) (string, string) {
			c := w.app.NewClient(t)
			harness.MustSignIn(t, c, "invitee@example.com", harness.OrgPassword)
			s, _ := harness.MustSession(t, c)["session"].(map[string]any)
			return "", jsonBody("sessionToken", s["token"].(string))
		}),
		adminRoute("revoke-user-sessions", http.MethodPost, platform, victimBody),
		adminRoute("remove-user", http.MethodPost, platform, victimBody),
		adminRoute("set-user-password", http.MethodPost, platform, func(t *testing.T, w *matrixWorld, v string) (string, string) {
			return "", jsonBody("userId", v, "newPassword", "a long new passphrase")
		}),
		adminRoute("impersonate-user", http.MethodPost, platform, victimBody),
		adminRoute("stop-impersonating", http.MethodPost, signedInAny, func(*testing.T, *matrixWorld, string) (string, string) { return "", "" }),
		adminRoute("has-permission", http.MethodPost, anySignedIn, func(*testing.T, *matrixWorld, string) (string, string) {
			return "", jsonBody("permissions", raw(`{"user":["ban"]}`))
		}),

		// The two-factor plugin: signed-in only (a caller without two-factor
		// gets 400, never 401 or 403); the verify routes answer 401 without
		// a session or a two_factor cookie.
		twoFactorRoute("enable", jsonBody("password", "not the password")),
		twoFactorRoute("disable", jsonBody("password", "not the password")),
		twoFactorRoute("get-totp-uri", jsonBody("password", "not the password")),
		twoFactorRoute("generate-backup-codes", jsonBody("password", "not the password")),
		twoFactorRoute("verify-totp", jsonBody("code", "000000")),
		twoFactorRoute("verify-backup-code", jsonBody("code", "00000-00000")),
		// The e-mailed code answers a sign-in's challenge or, in a
		// session, steps it up. verify-otp goes first: with no code sent
		// it answers 400 OTP_HAS_EXPIRED, where a wrong code would be
		// Better Auth's 401 INVALID_CODE.
		twoFactorRoute("verify-otp", jsonBody("code", "000000")),
		twoFactorRoute("send-otp", "{}"),

		// The passkey plugin: registration, the list and the changes need a
		// session (another user's passkey answers 404); the sign-in
		// ceremony is open to anyone (without a valid answer, 400).
		passkeyRoute("generate-register-options", http.MethodGet, anySignedIn, ""),
		passkeyRoute("verify-registration", http.MethodPost, signedInAny, jsonBody("response", raw(`{}`))),
		passkeyRoute("generate-authenticate-options", http.MethodGet, everyone, ""),
		passkeyRoute("verify-authentication", http.MethodPost, anyoneRefused, jsonBody("response", raw(`{}`))),
		passkeyRoute("list-user-passkeys", http.MethodGet, anySignedIn, ""),
		passkeyRoute("update-passkey", http.MethodPost, signedInAny, jsonBody("id", "AAAA", "name", "mine")),
		passkeyRoute("delete-passkey", http.MethodPost, signedInAny, jsonBody("id", "AAAA")),

		{name: "service-keys/create", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/service-keys", jsonBody("name", "matrix", "scopes", raw(`["users:read"]`))
		}},
		{name: "service-keys/list", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/service-keys", ""
		}},
		{name: "service-keys/rotate", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/service-keys/" + w.newKey(t) + "/rotate", ""
		}},
		{name: "service-keys/revoke", method: http.MethodDelete, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/service-keys/" + w.newKey(t), ""
		}},
		{name: "audit-log", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/audit-log?limit=5", ""
		}},
		{name: "overview", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/overview", ""
		}},

		{name: "oauth-clients/create", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/oauth-clients", matrixOAuthClient
		}},
		{name: "oauth-clients/list", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/oauth-clients", ""
		}},
		{name: "oauth-clients/get", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/oauth-clients/" + w.newOAuthClient(t), ""
		}},
		{name: "oauth-clients/update", method: http.MethodPatch, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/oauth-clients/" + w.newOAuthClient(t), jsonBody("name", "renamed")
		}},
		{name: "oauth-clients/rotate-secret", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/oauth-clients/" + w.newOAuthClient(t) + "/rotate-secret", ""
		}},
		{name: "oauth-clients/delete", method: http.MethodDelete, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/oauth-clients/" + w.newOAuthClient(t), ""
		}},
		{name: "signing-keys/list", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/signing-keys", ""
		}},
		{name: "signing-keys/rotate", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/signing-keys/rotate", jsonBody("alg", "EdDSA")
		}},
		socialRoute("list-accounts", http.MethodGet, anySignedIn, ""),
		socialRoute("unlink-account", http.MethodPost, signedInAny, jsonBody("accountId", "nope")),
		socialRoute("get-access-token", http.MethodPost, signedInAny, jsonBody("accountId", "nope")),
		socialRoute("refresh-token", http.MethodPost, signedInAny, jsonBody("accountId", "nope")),
		socialRoute("account-info?accountId=nope", http.MethodGet, signedInAny, ""),
		socialRoute("link-social", http.MethodPost, signedInAny, jsonBody("provider", "nope")),
		{name: "identity-providers/create", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/identity-providers", matrixProvider("{unique}")
		}},
		{name: "identity-providers/list", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/identity-providers", ""
		}},
		{name: "identity-providers/get", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/identity-providers/" + w.newProvider(t), ""
		}},
		{name: "identity-providers/update", method: http.MethodPatch, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/identity-providers/" + w.newProvider(t), jsonBody("name", "Renamed")
		}},
		{name: "identity-providers/disable", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/identity-providers/" + w.newProvider(t) + "/disable", ""
		}},
		{name: "identity-providers/enable", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/identity-providers/" + w.newProvider(t) + "/enable", ""
		}},
		{name: "identity-providers/delete", method: http.MethodDelete, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/identity-providers/" + w.newProvider(t), ""
		}},
		{name: "users/linked-accounts/delete", method: http.MethodDelete,
			// The platform administrator passes the check and finds no such account.
			expect: map[string]expect{"anonymous": deny401, "other-org-admin": deny403, "platform-admin": notAuthzd, "member": deny403, "org-admin": deny403},
			request: func(t *testing.T, w *matrixWorld) (string, string) {
				return "/api/admin/users/" + w.userIDs["member"] + "/linked-accounts/nope", ""
			}},
		{name: "webhooks/create", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/webhooks", jsonBody("url", "https://"+w.unique("hooks")+".example.com/in")
		}},
		{name: "webhooks/list", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/webhooks", ""
		}},
		{name: "webhooks/get", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/webhooks/" + w.newWebhook(t), ""
		}},
		{name: "webhooks/update", method: http.MethodPatch, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/webhooks/" + w.newWebhook(t), jsonBody("description", "renamed")
		}},
		{name: "webhooks/rotate-secret", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/webhooks/" + w.newWebhook(t) + "/rotate-secret", ""
		}},
		{name: "webhooks/messages", method: http.MethodGet, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/webhooks/" + w.newWebhook(t) + "/messages", ""
		}},
		{name: "webhooks/replay-since", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/webhooks/" + w.newWebhook(t) + "/replay", jsonBody("since", "2020-01-01T00:00:00Z")
		}},
		// The platform administrator passes the check and finds no such message.
		{name: "webhooks/attempts", method: http.MethodGet, expect: platformThen404, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/webhooks/" + w.newWebhook(t) + "/messages/msg_nope/attempts", ""
		}},
		{name: "webhooks/replay", method: http.MethodPost, expect: platformThen404, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/webhooks/" + w.newWebhook(t) + "/messages/msg_nope/replay", ""
		}},
		{name: "webhooks/delete", method: http.MethodDelete, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/webhooks/" + w.newWebhook(t), ""
		}},
		{name: "users/factors/reset", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			victim := harness.MustOK(t, w.clients["platform-admin"].Post("/api/auth/admin/create-user", harness.MustJSON(t, map[string]any{
				"email": w.unique("victim") + "@example.com", "name": "Victim"})))["user"].(map[string]any)["id"].(string)
			return "/api/admin/users/" + victim + "/factors/reset", ""
		}},
		{name: "users/password-reset", method: http.MethodPost, expect: platform, request: func(t *testing.T, w *matrixWorld) (string, string) {
			return "/api/admin/users/" + w.userIDs["member"] + "/password-reset", ""
		}},
	}
}

// matrixProvider registers a GitHub provider with id (no network at
// registration).
func matrixProvider(id string) string {
	return `{"id":"` + id + `","preset":"github","clientId":"matrix","clientSecret":"matrix-secret"}`
}

func (w *matrixWorld) newProvider(t *testing.T) string {
	t.Helper()
	id := w.unique("idp")
	r := w.clients["platform-admin"].Post("/api/admin/identity-providers", matrixProvider(id))
	harness.MustStatus(t, r, http.StatusCreated)
	return id
}

// matrixOAuthClient registers a confidential client.
const matrixOAuthClient = `{"name":"matrix","type":"confidential","redirectUris":["https://rp.example.com/callback"]}`

func (w *matrixWorld) newOAuthClient(t *testing.T) string {
	t.Helper()
	r := w.clients["platform-admin"].Post("/api/admin/oauth-clients", matrixOAuthClient)
	harness.MustStatus(t, r, http.StatusCreated)
	return r.JSON(t)["clientId"].(string)
}

// platformThen404 is a platform route whose target the administrator does
// not find.
var platformThen404 = map[string]expect{"anonymous": deny401, "other-org-admin": deny403, "platform-admin": notAuthzd, "member": deny403, "org-admin": deny403}

func (w *matrixWorld) newWebhook(t *testing.T) string {
	t.Helper()
	r := w.clients["platform-admin"].Post("/api/admin/webhooks", jsonBody("url", "https://"+w.unique("hooks")+".example.com/in"))
	harness.MustStatus(t, r, http.StatusCreated)
	return r.JSON(t)["id"].(string)
}

func (w *matrixWorld) newKey(t *testing.T) string {
	t.Helper()
	r := w.clients["platform-admin"].Post("/api/admin/service-keys", jsonBody("name", "matrix", "scopes", raw(`["users:read"]`)))
	harness.MustStatus(t, r, http.StatusCreated)
	return r.JSON(t)["id"].(string)
}

func newMatrixWorld(t *testing.T, app *harness.App) *matrixWorld {
	t.Helper()
	w := &matrixWorld{app: app, clients: map[string]*harness.Client{}, userIDs: map[string]string{}}
	for _, who := range []string{"owner", "org-admin", "member", "other-org-admin", "platform-admin", "invitee"} {
		c := harness.MustVerifiedClient(t, app, who, who+"@example.com")
		w.clients[who] = c
		w.userIDs[who] = harness.MustUser(t, harness.MustSession(t, c))["id"].(string)
	}
	harness.MustCreateOrg(t, w.clients["other-org-admin"], "Other", "other-org")
	return w
}

func TestAuthorizationMatrix(t *testing.T) {
	// A fresh application: settings of its own.
	env := harness.Env(harness.OrgEnv, map[string]string{"GATEHOUSE_ADMIN_EMAILS": "platform-admin@example.com",
		"GATEHOUSE_PASSKEY_RP_ID": "localhost", "GATEHOUSE_PASSKEY_ORIGINS": harness.PkOrigin})
	harness.ForStores(t, harness.StoresThatMatter, env, func(t *testing.T, app *harness.App) {
		w := newMatrixWorld(t, app)
		for _, route := range matrixRoutes() {
			t.Run(route.name, func(t *testing.T) {
				path, body := route.request(t, w)
				for _, caller := range callers {
					want, ok := route.expect[caller]
					if !ok {
						t.Fatalf("no expectation for %s", caller)
					}
					r := w.call(t, caller, route.method, path, body)
					if !want.check(r.Status) {
						t.Errorf("%s %s as %s = %d %s, want %s", route.method, path, caller, r.Status, r.Body, want)
					}
				}
			})
		}
		// The owner, whom no cell above plays, may delete; the recipient may accept.
		t.Run("owner_deletes_and_invitee_accepts", func(t *testing.T) {
			f := w.newOrg(t)
			harness.MustOK(t, w.clients["invitee"].Clone().Post(harness.OrgPath("accept-invitation"), jsonBody("invitationId", f.invitationID)))
			harness.MustOK(t, w.clients["owner"].Clone().Post(harness.OrgPath("delete"), jsonBody("organizationId", f.org)))
		})
	})
}

// Ensure that with GATEHOUSE_ADMIN_REQUIRE_MFA on every administration
// route of the matrix refuses a platform administrator without a second
// factor (403 ADMIN_MFA_REQUIRED under /api/auth/admin, admin.mfa_required
// under /api/admin) and admits one with (the matrix's platform-admin, once
// enrolled). stop-impersonating is left out: its caller is the impersonated
// user, never an administrator.
func TestAuthorizationMatrix_admin_second_factor(t *testing.T) {
	// A fresh application: settings of its own.
	env := harness.Env(harness.OrgEnv, map[string]string{"GATEHOUSE_ADMIN_EMAILS": "platform-admin@example.com,bare-admin@example.com", "GATEHOUSE_ADMIN_REQUIRE_MFA": "true"})
	harness.ForStores(t, harness.StoresThatMatter, env, func(t *testing.T, app *harness.App) {
		w := newMatrixWorld(t, app)
		harness.MustEnrolTOTP(t, w.clients["platform-admin"], harness.OrgPassword)
		w.clients["bare-admin"] = harness.MustVerifiedClient(t, app, "Bare", "bare-admin@example.com")
		n := 0
		for _, route := range matrixRoutes() {
			if strings.HasPrefix(route.name, "organization/") || strings.HasPrefix(route.name, "two-factor/") || strings.HasPrefix(route.name, "passkey/") || strings.HasPrefix(route.name, "social/") || route.name == "admin/stop-impersonating" {
				continue
			}
			n++
			t.Run(route.name, func(t *testing.T) {
				path, body := route.request(t, w)
				r := w.call(t, "bare-admin", route.method, path, body)
				if strings.HasPrefix(path, "/api/auth/") {
					harness.MustCode(t, r, http.StatusForbidden, "ADMIN_MFA_REQUIRED")
				} else {
					harness.MustProblem(t, r, http.StatusForbidden, "admin.mfa_required")
				}
				if r := w.call(t, "platform-admin", route.method, path, body); !route.expect["platform-admin"].check(r.Status) {
					t.Errorf("%s %s as the enrolled administrator = %d %s", route.method, path, r.Status, r.Body)
				}
			})
		}
		if n < 25 {
			t.Fatalf("only %d administration routes checked", n)
		}
	})
}
