package framework

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// activeOrg returns the session's activeOrganizationId (nil when none).
func activeOrg(t testing.TB, c *harness.Client) any {
	t.Helper()
	s, _ := harness.MustSession(t, c)["session"].(map[string]any)
	return s["activeOrganizationId"]
}

var (
	orgKeys        = []string{"id", "name", "slug", "logo", "metadata", "createdAt", "requireTwoFactor"}
	memberKeys     = []string{"id", "organizationId", "userId", "role", "createdAt"}
	invitationKeys = []string{"id", "organizationId", "email", "role", "status", "expiresAt", "createdAt", "inviterId"}
)

// mustOrg fails unless obj is an organization with id (when not empty).
func mustOrg(t testing.TB, obj map[string]any, id string, extra ...string) {
	t.Helper()
	harness.MustKeys(t, obj, append(append([]string(nil), orgKeys...), extra...)...)
	harness.MustJSDates(t, obj, "createdAt")
	if id != "" && obj["id"] != id {
		t.Fatalf("organization id = %v, want %s", obj["id"], id)
	}
}

// mustMemberWithUser fails unless obj is a membership with a user of email.
func mustMemberWithUser(t testing.TB, obj map[string]any, email, role string) {
	t.Helper()
	harness.MustKeys(t, obj, append(append([]string(nil), memberKeys...), "user")...)
	harness.MustJSDates(t, obj, "createdAt")
	u, _ := obj["user"].(map[string]any)
	harness.MustKeys(t, u, "id", "name", "email", "image")
	if u["email"] != email || obj["role"] != role || u["id"] != obj["userId"] {
		t.Fatalf("member = %v, want %s as %s", obj, email, role)
	}
}

// Ensure create: Better Auth's organization with its owner, the session's
// active organization switched to it (unless kept), a taken slug refused
// with ORGANIZATION_ALREADY_EXISTS, a malformed one with a validation error
// naming body.slug; check-slug and list agree.
func TestOrganization_create_check_slug_list(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.OrgEnv, func(t *testing.T, app *harness.App) {
		ada := harness.MustVerifiedClient(t, app, "Ada", harness.Email(t, "ada@example.com"))
		body := harness.MustOK(t, ada.Post(harness.OrgPath("create"), harness.MustJSON(t, map[string]any{
			"name": "Acme", "slug": harness.Own(t, "acme"), "logo": "https://example.com/acme.png", "metadata": map[string]any{"plan": "pro", "seats": 12345678901234567},
		})))
		mustOrg(t, body, "", "members")
		id, _ := body["id"].(string)
		if body["name"] != "Acme" || body["slug"] != harness.Own(t, "acme") || body["logo"] != "https://example.com/acme.png" {
			t.Fatalf("create = %s", harness.MustJSON(t, body))
		}
		// metadata is an object, numbers kept exactly.
		if !strings.Contains(string(ada.Clone().Get(harness.OrgPath("get-organization")+"?organizationId="+id).Body), `"metadata":{"plan":"pro","seats":12345678901234567}`) {
			t.Fatalf("metadata not kept as an object")
		}
		members, _ := body["members"].([]any)
		if len(members) != 1 {
			t.Fatalf("members = %v", body["members"])
		}
		owner, _ := members[0].(map[string]any)
		harness.MustKeys(t, owner, memberKeys...)
		if owner["role"] != "owner" || owner["organizationId"] != id || owner["userId"] != harness.MustUser(t, harness.MustSession(t, ada))["id"] {
			t.Fatalf("owner = %v", owner)
		}
		if got := activeOrg(t, ada); got != id {
			t.Fatalf("activeOrganizationId = %v, want %s", got, id)
		}

		harness.MustCode(t, ada.Post(harness.OrgPath("create"), harness.MustJSON(t, map[string]any{"name": "Other", "slug": harness.Own(t, "acme")})), http.StatusBadRequest, "ORGANIZATION_ALREADY_EXISTS")
		for _, slug := range []string{"Bad Slug", "-acme", "acme--x", "ACME", strings.Repeat("a", 65), ""} {
			msg := harness.MustCode(t, ada.Post(harness.OrgPath("create"), harness.MustJSON(t, map[string]any{"name": "Other", "slug": slug})), http.StatusBadRequest, "VALIDATION_ERROR")
			if !strings.Contains(msg, "body.slug") {
				t.Fatalf("slug %q: message %q does not name body.slug", slug, msg)
			}
		}
		msg := harness.MustCode(t, ada.Post(harness.OrgPath("create"), `{"name":"Other","slug":"other","metadata":"{\"a\":1}"}`), http.StatusBadRequest, "VALIDATION_ERROR")
		if !strings.Contains(msg, "body.metadata") {
			t.Fatalf("message %q does not name body.metadata", msg)
		}
		harness.MustCode(t, ada.Post(harness.OrgPath("create"), `{"name":"Other","slug":"other","userId":"someone-else"}`), http.StatusBadRequest, "VALIDATION_ERROR")

		harness.MustCode(t, ada.Post(harness.OrgPath("check-slug"), harness.MustJSON(t, map[string]string{"slug": harness.Own(t, "acme")})), http.StatusBadRequest, "ORGANIZATION_SLUG_ALREADY_TAKEN")
		harness.MustStatusTrue(t, ada.Post(harness.OrgPath("check-slug"), harness.MustJSON(t, map[string]string{"slug": harness.Own(t, "free-slug")})))
		if msg := harness.MustCode(t, ada.Post(harness.OrgPath("check-slug"), `{"slug":"Not OK"}`), http.StatusBadRequest, "VALIDATION_ERROR"); !strings.Contains(msg, "body.slug") {
			t.Fatalf("message %q does not name body.slug", msg)
		}

		// keepCurrentActiveOrganization leaves the active organization alone.
		second := harness.MustOK(t, ada.Post(harness.OrgPath("create"), harness.MustJSON(t, map[string]any{"name": "Beta", "slug": harness.Own(t, "beta"), "keepCurrentActiveOrganization": true})))
		if got := activeOrg(t, ada); got != id {
			t.Fatalf("activeOrganizationId = %v after keepCurrentActiveOrganization, want %s", got, id)
		}
		if second["logo"] != nil || second["metadata"] != nil {
			t.Fatalf("logo/metadata = %v/%v, want null", second["logo"], second["metadata"])
		}

		list := harness.MustList(t, ada.Get(harness.OrgPath("list")))
		if len(list) != 2 || list[0]["id"] != id || list[1]["id"] != second["id"] {
			t.Fatalf("list = %v", list)
		}
		for _, o := range list {
			mustOrg(t, o, "")
		}
		if m, _ := list[0]["metadata"].(map[string]any); m["plan"] != "pro" {
			t.Fatalf("list metadata = %v, want an object", list[0]["metadata"])
		}
		// Another user sees none of them.
		bob := harness.MustVerifiedClient(t, app, "Bob", harness.Email(t, "bob@example.com"))
		if list := harness.MustList(t, bob.Get(harness.OrgPath("list"))); len(list) != 0 {
			t.Fatalf("bob's list = %v", list)
		}
	})
}

// Ensure update and delete: owners and admins update, members are refused;
// only owners delete; a deleted organization is gone for everyone and stops
// being the active organization.
func TestOrganization_update_delete(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.OrgEnv, func(t *testing.T, app *harness.App) {
		ada, bob, cat, id := mustAcmeTeam(t, app)

		// The active organization is the default.
		body := harness.MustOK(t, ada.Post(harness.OrgPath("update"), harness.MustJSON(t, map[string]any{"data": map[string]any{"name": "Acme Inc", "slug": harness.Own(t, "acme-inc"), "logo": "https://example.com/l.png", "metadata": map[string]any{"tier": 1}}})))
		mustOrg(t, body, id)
		if body["name"] != "Acme Inc" || body["slug"] != harness.Own(t, "acme-inc") || body["logo"] != "https://example.com/l.png" {
			t.Fatalf("update = %v", body)
		}
		if m, _ := body["metadata"].(map[string]any); m["tier"] != float64(1) {
			t.Fatalf("metadata = %v", body["metadata"])
		}
		// An admin updates too; null clears logo and metadata; absent fields stay.
		body = harness.MustOK(t, bob.Post(harness.OrgPath("update"), harness.MustJSON(t, map[string]any{"organizationId": id, "data": map[string]any{"logo": nil, "metadata": nil}})))
		if body["logo"] != nil || body["metadata"] != nil || body["name"] != "Acme Inc" {
			t.Fatalf("update with nulls = %v", body)
		}
		harness.MustCode(t, cat.Post(harness.OrgPath("update"), harness.MustJSON(t, map[string]any{"organizationId": id, "data": map[string]any{"name": "Mine"}})),
			http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION")
		harness.MustCreateOrg(t, cat, "Cat Co", harness.Own(t, "cat-co"))
		harness.MustCode(t, ada.Post(harness.OrgPath("update"), harness.MustJSON(t, map[string]any{"organizationId": id, "data": map[string]any{"slug": harness.Own(t, "cat-co")}})),
			http.StatusBadRequest, "ORGANIZATION_SLUG_ALREADY_TAKEN")
		if msg := harness.MustCode(t, ada.Post(harness.OrgPath("update"), `{"data":{"slug":"No Good"}}`), http.StatusBadRequest, "VALIDATION_ERROR"); !strings.Contains(msg, "body.data.slug") {
			t.Fatalf("message %q does not name body.data.slug", msg)
		}

		del := harness.MustJSON(t, map[string]any{"organizationId": id})
		harness.MustCode(t, bob.Post(harness.OrgPath("delete"), del), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION")
		harness.MustCode(t, cat.Post(harness.OrgPath("delete"), del), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION")
		body = harness.MustOK(t, ada.Post(harness.OrgPath("delete"), del))
		mustOrg(t, body, id)
		if activeOrg(t, ada) != nil || activeOrg(t, bob) != nil {
			t.Fatal("a deleted organization is still active")
		}
		for _, c := range []*harness.Client{ada, bob} {
			harness.MustCode(t, c.Get(harness.OrgPath("get-organization")+"?organizationId="+id), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")
			if list := harness.MustList(t, c.Get(harness.OrgPath("list"))); len(list) != 0 {
				t.Fatalf("list after delete = %v", list)
			}
		}
		harness.MustCode(t, ada.Post(harness.OrgPath("delete"), del), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")
	})
}

// Ensure set-active and get-full-organization: by id or slug, null clears
// (and answers null), a non-member is refused; the full organization lists
// members with their users and shows invitations only to those who may invite.
func TestOrganization_set_active_full(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.OrgEnv, func(t *testing.T, app *harness.App) {
		ada := harness.MustVerifiedClient(t, app, "Ada", harness.Email(t, "ada@example.com"))
		bob := harness.MustVerifiedClient(t, app, "Bob", harness.Email(t, "bob@example.com"))
		one, _ := harness.MustCreateOrg(t, ada, "One", harness.Own(t, "one"))["id"].(string)
		two, _ := harness.MustCreateOrg(t, ada, "Two", harness.Own(t, "two"))["id"].(string)
		mine, _ := harness.MustCreateOrg(t, bob, "Bob's", harness.Own(t, "bobs"))["id"].(string)
		harness.MustJoin(t, ada, one, bob, harness.Email(t, "bob@example.com"), "member")
		harness.MustInvite(t, ada, one, harness.Email(t, "carol@example.com"), "admin")
		harness.MustInvite(t, ada, one, harness.Email(t, "olga@example.com"), "owner")

		mustOrg(t, harness.MustOK(t, ada.Post(harness.OrgPath("set-active"), harness.MustJSON(t, map[string]any{"organizationId": one}))), one)
		if activeOrg(t, ada) != one {
			t.Fatal("set-active by id did not switch")
		}
		mustOrg(t, harness.MustOK(t, ada.Post(harness.OrgPath("set-active"), harness.MustJSON(t, map[string]string{"organizationSlug": harness.Own(t, "two")}))), two)
		if activeOrg(t, ada) != two {
			t.Fatal("set-active by slug did not switch")
		}
		// Neither: the current active organization.
		mustOrg(t, harness.MustOK(t, ada.Post(harness.OrgPath("set-active"), `{}`)), two)
		harness.MustNull(t, ada.Post(harness.OrgPath("set-active"), `{"organizationId":null}`))
		if activeOrg(t, ada) != nil {
			t.Fatal("set-active null did not clear")
		}
		harness.MustNull(t, ada.Post(harness.OrgPath("set-active"), `{}`))
		harness.MustNull(t, ada.Get(harness.OrgPath("get-full-organization")))
		harness.MustCode(t, ada.Get(harness.OrgPath("get-organization")), http.StatusBadRequest, "NO_ACTIVE_ORGANIZATION")

		harness.MustOK(t, ada.Post(harness.OrgPath("set-active"), harness.MustJSON(t, map[string]any{"organizationId": one})))
		harness.MustCode(t, ada.Post(harness.OrgPath("set-active"), harness.MustJSON(t, map[string]any{"organizationId": mine})), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")
		if activeOrg(t, ada) != nil {
			t.Fatal("a refused set-active left the active organization")
		}
		harness.MustCode(t, ada.Post(harness.OrgPath("set-active"), harness.MustJSON(t, map[string]string{"organizationSlug": harness.Own(t, "no-such-org")})), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")
		harness.MustOK(t, ada.Post(harness.OrgPath("set-active"), harness.MustJSON(t, map[string]any{"organizationId": one})))

		full := harness.MustOK(t, ada.Get(harness.OrgPath("get-full-organization")))
		mustOrg(t, full, one, "members", "invitations")
		members, _ := full["members"].([]any)
		if len(members) != 2 {
			t.Fatalf("members = %v", full["members"])
		}
		first, _ := members[0].(map[string]any)
		second, _ := members[1].(map[string]any)
		mustMemberWithUser(t, first, harness.Email(t, "ada@example.com"), "owner")
		mustMemberWithUser(t, second, harness.Email(t, "bob@example.com"), "member")
		invs, _ := full["invitations"].([]any)
		if len(invs) != 3 { // every invitation, bob's accepted one too, as Better Auth lists them
			t.Fatalf("owner sees invitations %v, want 3", invs)
		}
		inv, _ := invs[0].(map[string]any)
		harness.MustKeys(t, inv, invitationKeys...)
		harness.MustJSDates(t, inv, "createdAt", "expiresAt")
		// By slug, with a members limit.
		full = harness.MustOK(t, ada.Get(harness.OrgPath("get-full-organization")+"?organizationSlug="+harness.Own(t, "one")+"&membersLimit=1"))
		if members, _ := full["members"].([]any); len(members) != 1 {
			t.Fatalf("membersLimit=1 gave %d members", len(members))
		}
		// A plain member sees members but no invitations.
		full = harness.MustOK(t, bob.Get(harness.OrgPath("get-full-organization")+"?organizationId="+one))
		if invs, _ := full["invitations"].([]any); len(invs) != 0 || len(full["members"].([]any)) != 2 {
			t.Fatalf("member's full organization = %v", full)
		}
		harness.MustCode(t, ada.Get(harness.OrgPath("get-full-organization")+"?organizationId="+mine), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")

		mustOrg(t, harness.MustOK(t, bob.Get(harness.OrgPath("get-organization")+"?organizationSlug="+harness.Own(t, "one"))), one)
	})
}

// Ensure the invitation lifecycle: the invitation is mailed with a link
// naming it; only its recipient reads, accepts or rejects it; accepting makes
// a member and switches the active organization; repeated invitations,
// owner-role invitations by admins and cancellations follow Better Auth.
func TestOrganization_invitations(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.OrgEnv, func(t *testing.T, app *harness.App) {
		ada := harness.MustVerifiedClient(t, app, "Ada", harness.Email(t, "ada@example.com"))
		bob := harness.MustVerifiedClient(t, app, "Bob", harness.Email(t, "bob@example.com"))
		cat := harness.MustVerifiedClient(t, app, "Cat", harness.Email(t, "cat@example.com"))
		dan := harness.MustVerifiedClient(t, app, "Dan", harness.Email(t, "dan@example.com"))
		org, _ := harness.MustCreateOrg(t, ada, "Acme", harness.Own(t, "acme"))["id"].(string)

		inv := harness.MustInvite(t, ada, org, strings.Replace(harness.Email(t, "bob@example.com"), "bob@e", "Bob@E", 1), "member")
		harness.MustKeys(t, inv, invitationKeys...)
		harness.MustJSDates(t, inv, "createdAt", "expiresAt")
		invID, _ := inv["id"].(string)
		if inv["email"] != harness.Email(t, "bob@example.com") || inv["status"] != "pending" || inv["role"] != "member" || inv["organizationId"] != org ||
			inv["inviterId"] != harness.MustUser(t, harness.MustSession(t, ada))["id"] {
			t.Fatalf("invitation = %v", inv)
		}
		exp, _ := time.Parse(time.RFC3339, inv["expiresAt"].(string))
		if d := time.Until(exp); d < 47*time.Hour || d > 49*time.Hour {
			t.Fatalf("invitation expires in %v, want 48h", d)
		}
		mustInvitationMail(t, app, harness.Email(t, "bob@example.com"), invID)

		// Only the recipient reads it.
		got := harness.MustOK(t, bob.Get(harness.OrgPath("get-invitation")+"?id="+url.QueryEscape(invID)))
		harness.MustKeys(t, got, append(append([]string(nil), invitationKeys...), "organizationName", "organizationSlug", "inviterEmail")...)
		if got["organizationName"] != "Acme" || got["organizationSlug"] != harness.Own(t, "acme") || got["inviterEmail"] != harness.Email(t, "ada@example.com") {
			t.Fatalf("get-invitation = %v", got)
		}
		harness.MustCode(t, cat.Get(harness.OrgPath("get-invitation")+"?id="+invID), http.StatusForbidden, "YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION")
		harness.MustCode(t, bob.Get(harness.OrgPath("get-invitation")+"?id=no-such-invitation"), http.StatusBadRequest, "INVITATION_NOT_FOUND")
		harness.MustCode(t, bob.Get(harness.OrgPath("get-invitation")), http.StatusBadRequest, "VALIDATION_ERROR")
		mine := harness.MustList(t, bob.Get(harness.OrgPath("list-user-invitations")))
		if len(mine) != 1 || mine[0]["id"] != invID || mine[0]["organizationName"] != "Acme" {
			t.Fatalf("list-user-invitations = %v", mine)
		}
		if l := harness.MustList(t, ada.Get(harness.OrgPath("list-invitations"))); len(l) != 1 || l[0]["id"] != invID {
			t.Fatalf("list-invitations = %v", l)
		}
		harness.MustCode(t, cat.Post(harness.OrgPath("accept-invitation"), harness.MustJSON(t, map[string]any{"invitationId": invID})), http.StatusForbidden, "YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION")

		// Accepting makes a member and switches the active organization.
		body := harness.MustOK(t, bob.Post(harness.OrgPath("accept-invitation"), harness.MustJSON(t, map[string]any{"invitationId": invID})))
		harness.MustKeys(t, body, "invitation", "member")
		accepted, _ := body["invitation"].(map[string]any)
		member, _ := body["member"].(map[string]any)
		harness.MustKeys(t, member, memberKeys...)
		if accepted["status"] != "accepted" || member["role"] != "member" || member["userId"] != harness.MustUser(t, harness.MustSession(t, bob))["id"] {
			t.Fatalf("accept-invitation = %v", body)
		}
		if activeOrg(t, bob) != org {
			t.Fatal("accepting did not make the organization active")
		}
		mustMemberWithUser(t, harness.MustOK(t, bob.Get(harness.OrgPath("get-active-member"))), harness.Email(t, "bob@example.com"), "member")
		harness.MustKeys(t, harness.MustOK(t, bob.Get(harness.OrgPath("get-active-member-role"))), "role")
		if r := harness.MustOK(t, bob.Get(harness.OrgPath("get-active-member-role")+"?organizationId="+org)); r["role"] != "member" {
			t.Fatalf("get-active-member-role = %v", r)
		}
		if r := harness.MustOK(t, ada.Get(harness.OrgPath("get-active-member-role")+"?organizationSlug="+harness.Own(t, "acme"))); r["role"] != "owner" {
			t.Fatalf("owner's role = %v", r)
		}
		harness.MustCode(t, bob.Post(harness.OrgPath("accept-invitation"), harness.MustJSON(t, map[string]any{"invitationId": invID})), http.StatusBadRequest, "INVITATION_NOT_FOUND")
		if l := harness.MustList(t, bob.Get(harness.OrgPath("list-user-invitations"))); len(l) != 0 {
			t.Fatalf("list-user-invitations after accepting = %v", l)
		}

		// Already a member; already invited (unless resent).
		harness.MustCode(t, ada.Post(harness.OrgPath("invite-member"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "bob@example.com"), "role": "admin"})), http.StatusBadRequest, "USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION")
		catInv := harness.MustInvite(t, ada, org, harness.Email(t, "cat@example.com"), []string{"admin", "member"})
		if catInv["role"] != "admin,member" {
			t.Fatalf("role from an array = %v", catInv["role"])
		}
		harness.MustCode(t, ada.Post(harness.OrgPath("invite-member"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "cat@example.com"), "role": "member"})), http.StatusBadRequest, "USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION")
		resent := harness.MustOK(t, ada.Post(harness.OrgPath("invite-member"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "cat@example.com"), "role": "admin", "resend": true})))
		if resent["id"] != catInv["id"] || resent["role"] != "admin" {
			t.Fatalf("resend = %v, want the same invitation renewed", resent)
		}

		// Roles: unknown, malformed.
		harness.MustCode(t, ada.Post(harness.OrgPath("invite-member"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "x@example.com"), "role": "superuser"})), http.StatusBadRequest, "ROLE_NOT_FOUND")
		for _, role := range []string{`5`, `{"a":1}`, `[]`, `[1]`, `null`} {
			msg := harness.MustCode(t, ada.Post(harness.OrgPath("invite-member"), `{"email":"x@example.com","role":`+role+`}`), http.StatusBadRequest, "VALIDATION_ERROR")
			if !strings.Contains(msg, "body.role") {
				t.Fatalf("role %s: message %q does not name body.role", role, msg)
			}
		}
		harness.MustCode(t, ada.Post(harness.OrgPath("invite-member"), `{"email":"x@example.com"}`), http.StatusBadRequest, "VALIDATION_ERROR")

		// Cat rejects; the rejected invitation cannot be accepted.
		body = harness.MustOK(t, cat.Post(harness.OrgPath("reject-invitation"), harness.MustJSON(t, map[string]any{"invitationId": catInv["id"]})))
		if inv, _ := body["invitation"].(map[string]any); inv["status"] != "rejected" || body["member"] != nil {
			t.Fatalf("reject-invitation = %v", body)
		}
		harness.MustKeys(t, body, "invitation", "member")
		harness.MustCode(t, cat.Post(harness.OrgPath("accept-invitation"), harness.MustJSON(t, map[string]any{"invitationId": catInv["id"]})), http.StatusBadRequest, "INVITATION_NOT_FOUND")
		harness.MustCode(t, cat.Get(harness.OrgPath("get-active-member-role")+"?organizationId="+org), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")

		// Cancel: members may not, owners may; a cancelled invitation is closed.
		danInv := harness.MustInvite(t, ada, org, harness.Email(t, "dan@example.com"), "member")
		cancel := harness.MustJSON(t, map[string]any{"invitationId": danInv["id"]})
		harness.MustCode(t, bob.Post(harness.OrgPath("cancel-invitation"), cancel), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION")
		harness.MustCode(t, bob.Get(harness.OrgPath("list-invitations")+"?organizationId="+org), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS")
		harness.MustCode(t, bob.Post(harness.OrgPath("invite-member"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "eve@example.com"), "role": "member"})), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION")
		body = harness.MustOK(t, ada.Post(harness.OrgPath("cancel-invitation"), cancel))
		harness.MustKeys(t, body, invitationKeys...)
		if body["status"] != "canceled" {
			t.Fatalf("cancel-invitation = %v", body)
		}
		harness.MustCode(t, dan.Post(harness.OrgPath("accept-invitation"), cancel), http.StatusBadRequest, "INVITATION_NOT_FOUND")

		// An admin invites, but not owners, and cannot cancel an owner's invitation.
		harness.MustOK(t, ada.Post(harness.OrgPath("update-member-role"), harness.MustJSON(t, map[string]any{"memberId": member["id"], "role": "admin"})))
		harness.MustCode(t, bob.Post(harness.OrgPath("invite-member"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "eve@example.com"), "role": "owner"})), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE")
		harness.MustCode(t, bob.Post(harness.OrgPath("invite-member"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "eve@example.com"), "role": []string{"member", "owner"}})), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE")
		harness.MustInvite(t, bob, org, harness.Email(t, "eve@example.com"), "member")
		ownerInv := harness.MustInvite(t, ada, org, harness.Email(t, "olga@example.com"), "owner")
		harness.MustCode(t, bob.Post(harness.OrgPath("cancel-invitation"), harness.MustJSON(t, map[string]any{"invitationId": ownerInv["id"]})), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION")
	})
}

// mustInvitationMail waits for the invitation mail to to and fails unless a
// link in it names the invitation.
func mustInvitationMail(t testing.TB, app *harness.App, to, invitationID string) {
	t.Helper()
	deadline := time.Now().Add(harness.MailWait)
	for {
		for _, m := range app.Mail.Messages() {
			if !m.IsTo(to) {
				continue
			}
			for _, l := range m.Links() {
				if strings.Contains(l, invitationID) {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mail to %s with a link containing invitation %s", to, invitationID)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Ensure the member routes: list-members pages with a total, in either
// order, by offset or by cursor (nextCursor null on the last page; a
// malformed cursor, or one with an offset, is 400); roles change only within the rules (only owners touch owners, an
// organization keeps an owner); members are removed by id or address; a
// member leaves, the only owner cannot.
func TestOrganization_members(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.OrgEnv, func(t *testing.T, app *harness.App) {
		ada := harness.MustVerifiedClient(t, app, "Ada", harness.Email(t, "ada@example.com"))
		bob := harness.MustVerifiedClient(t, app, "Bob", harness.Email(t, "bob@example.com"))
		cat := harness.MustVerifiedClient(t, app, "Cat", harness.Email(t, "cat@example.com"))
		dan := harness.MustVerifiedClient(t, app, "Dan", harness.Email(t, "dan@example.com"))
		org, _ := harness.MustCreateOrg(t, ada, "Acme", harness.Own(t, "acme"))["id"].(string)
		bobM := harness.MustJoin(t, ada, org, bob, harness.Email(t, "bob@example.com"), "admin")
		catM := harness.MustJoin(t, ada, org, cat, harness.Email(t, "cat@example.com"), "member")
		harness.MustJoin(t, ada, org, dan, harness.Email(t, "dan@example.com"), "member")
		emails := []string{harness.Email(t, "ada@example.com"), harness.Email(t, "bob@example.com"), harness.Email(t, "cat@example.com"), harness.Email(t, "dan@example.com")}

		// Paging: disjoint pages in joining order, the total on each.
		var seen []string
		for offset := 0; offset < 4; offset += 2 {
			page := harness.MustOK(t, cat.Get(fmt.Sprintf("%s?organizationId=%s&limit=2&offset=%d", harness.OrgPath("list-members"), org, offset)))
			harness.MustKeys(t, page, "members", "total", "nextCursor")
			if page["total"] != float64(4) {
				t.Fatalf("total = %v, want 4", page["total"])
			}
			for _, m := range page["members"].([]any) {
				mm := m.(map[string]any)
				harness.MustKeys(t, mm, append(append([]string(nil), memberKeys...), "user")...)
				seen = append(seen, mm["user"].(map[string]any)["email"].(string))
			}
		}
		if strings.Join(seen, ",") != strings.Join(emails, ",") {
			t.Fatalf("pages gave %v, want %v", seen, emails)
		}
		page := harness.MustOK(t, cat.Get(harness.OrgPath("list-members")+"?sortDirection=desc&limit=1"))
		if ms := page["members"].([]any); len(ms) != 1 || ms[0].(map[string]any)["user"].(map[string]any)["email"] != harness.Email(t, "dan@example.com") {
			t.Fatalf("newest first = %v", page)
		}
		if ms := harness.MustOK(t, cat.Get(harness.OrgPath("list-members")+"?organizationSlug="+harness.Own(t, "acme")))["members"].([]any); len(ms) != 4 {
			t.Fatalf("default page has %d members, want 4", len(ms))
		}
		if ms := harness.MustOK(t, cat.Get(harness.OrgPath("list-members")+"?offset=10"))["members"].([]any); len(ms) != 0 {
			t.Fatalf("page past the end = %v", ms)
		}
		for _, q := range []string{"limit=0", "limit=1001", "offset=-1", "sortDirection=up", "sortBy=email", "filterField=role&filterValue=owner"} {
			msg := harness.MustCode(t, cat.Get(harness.OrgPath("list-members")+"?"+q), http.StatusBadRequest, "VALIDATION_ERROR")
			if name, _, _ := strings.Cut(q, "="); !strings.Contains(msg, "query."+name) {
				t.Fatalf("%s: message %q does not name query.%s", q, msg, name)
			}
		}

		// Cursor paging: each page's nextCursor continues the listing in
		// the same order, the total is on every page, and the last page,
		// full or not, has a null nextCursor.
		walk := func(q string) ([]string, int) {
			t.Helper()
			var got []string
			cursor := ""
			for pages := 1; pages <= 5; pages++ {
				path := harness.OrgPath("list-members") + "?organizationId=" + org + "&" + q
				if cursor != "" {
					path += "&cursor=" + url.QueryEscape(cursor)
				}
				page := harness.MustOK(t, cat.Get(path))
				harness.MustKeys(t, page, "members", "total", "nextCursor")
				if page["total"] != float64(4) {
					t.Fatalf("%s, page %d: total = %v, want 4", q, pages, page["total"])
				}
				for _, m := range page["members"].([]any) {
					got = append(got, m.(map[string]any)["user"].(map[string]any)["email"].(string))
				}
				if page["nextCursor"] == nil {
					return got, pages
				}
				next, _ := page["nextCursor"].(string)
				if next == "" || next == cursor {
					t.Fatalf("%s, page %d: nextCursor = %#v", q, pages, page["nextCursor"])
				}
				cursor = next
			}
			t.Fatalf("%s: more pages than members", q)
			return nil, 0
		}
		newestFirst := []string{harness.Email(t, "dan@example.com"), harness.Email(t, "cat@example.com"), harness.Email(t, "bob@example.com"), harness.Email(t, "ada@example.com")}
		for _, c := range []struct {
			q     string
			want  []string
			pages int
		}{
			{"limit=1", emails, 4},
			{"limit=2", emails, 2},
			{"limit=3", emails, 2},
			{"limit=4", emails, 1},
			{"limit=3&sortDirection=desc", newestFirst, 2},
			{"limit=1&sortDirection=desc", newestFirst, 4},
		} {
			if got, pages := walk(c.q); strings.Join(got, ",") != strings.Join(c.want, ",") || pages != c.pages {
				t.Fatalf("%s: %d pages gave %v, want %d giving %v", c.q, pages, got, c.pages, c.want)
			}
		}
		// An offset page's nextCursor continues it too.
		page = harness.MustOK(t, cat.Get(harness.OrgPath("list-members")+"?limit=2&offset=1"))
		next, _ := page["nextCursor"].(string)
		if ms := page["members"].([]any); len(ms) != 2 || next == "" {
			t.Fatalf("offset page = %v", page)
		}
		page = harness.MustOK(t, cat.Get(harness.OrgPath("list-members")+"?limit=2&cursor="+url.QueryEscape(next)))
		if ms := page["members"].([]any); len(ms) != 1 || ms[0].(map[string]any)["user"].(map[string]any)["email"] != harness.Email(t, "dan@example.com") || page["nextCursor"] != nil {
			t.Fatalf("page after the offset page = %v", page)
		}
		// A malformed cursor is refused naming query.cursor; a cursor
		// with an offset, naming query.offset.
		b64 := base64.RawURLEncoding.EncodeToString
		for _, c := range []string{
			"!!!", "bm9wZQ==", b64([]byte("nope")), b64([]byte("1700000000000000~")), b64([]byte("1700000000000000")),
			b64([]byte("17e14~m1")), b64([]byte("253402300800000000~m1")), b64([]byte("1700000000000000~a\x00b")),
			b64([]byte("1700000000000000~\xff")), strings.Repeat("A", 257),
		} {
			msg := harness.MustCode(t, cat.Get(harness.OrgPath("list-members")+"?cursor="+url.QueryEscape(c)), http.StatusBadRequest, "VALIDATION_ERROR")
			if !strings.Contains(msg, "query.cursor") {
				t.Fatalf("cursor %q: message %q does not name query.cursor", c, msg)
			}
		}
		msg := harness.MustCode(t, cat.Get(harness.OrgPath("list-members")+"?offset=1&cursor="+url.QueryEscape(next)), http.StatusBadRequest, "VALIDATION_ERROR")
		if !strings.Contains(msg, "query.offset") {
			t.Fatalf("cursor with an offset: message %q does not name query.offset", msg)
		}

		// Roles: members may not change them; admins not for owners; owners may.
		owner := harness.MustOK(t, ada.Get(harness.OrgPath("get-active-member")))
		role := func(c *harness.Client, memberID any, role any) *harness.Response {
			return c.Post(harness.OrgPath("update-member-role"), harness.MustJSON(t, map[string]any{"memberId": memberID, "role": role, "organizationId": org}))
		}
		harness.MustCode(t, role(cat, bobM["id"], "member"), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER")
		harness.MustCode(t, role(bob, owner["id"], "member"), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER")
		harness.MustCode(t, role(bob, catM["id"], "owner"), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER")
		updated := harness.MustOK(t, role(bob, catM["id"], []string{"admin"}))
		harness.MustKeys(t, updated, memberKeys...)
		if updated["role"] != "admin" || updated["id"] != catM["id"] {
			t.Fatalf("update-member-role = %v", updated)
		}
		harness.MustCode(t, role(ada, "no-such-member", "admin"), http.StatusBadRequest, "MEMBER_NOT_FOUND")
		harness.MustCode(t, role(ada, catM["id"], "superuser"), http.StatusBadRequest, "ROLE_NOT_FOUND")
		harness.MustCode(t, role(ada, owner["id"], "admin"), http.StatusBadRequest, "YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER")
		if r := harness.MustOK(t, cat.Get(harness.OrgPath("get-active-member-role"))); r["role"] != "admin" {
			t.Fatalf("cat's role = %v", r)
		}

		// Removal by id and by address; admins cannot remove owners.
		remove := func(c *harness.Client, idOrEmail any) *harness.Response {
			return c.Post(harness.OrgPath("remove-member"), harness.MustJSON(t, map[string]any{"memberIdOrEmail": idOrEmail, "organizationId": org}))
		}
		harness.MustCode(t, remove(bob, owner["id"]), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER")
		harness.MustCode(t, remove(bob, harness.Email(t, "ada@example.com")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER")
		body := harness.MustOK(t, remove(bob, catM["id"]))
		harness.MustKeys(t, body, "member")
		mustMemberWithUser(t, body["member"].(map[string]any), harness.Email(t, "cat@example.com"), "admin")
		if activeOrg(t, cat) != nil {
			t.Fatal("a removed member's session keeps the organization active")
		}
		harness.MustCode(t, cat.Get(harness.OrgPath("list-members")+"?organizationId="+org), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")
		body = harness.MustOK(t, remove(ada, harness.Email(t, "DAN@example.com")))
		mustMemberWithUser(t, body["member"].(map[string]any), harness.Email(t, "dan@example.com"), "member")
		harness.MustCode(t, remove(ada, harness.Email(t, "dan@example.com")), http.StatusBadRequest, "MEMBER_NOT_FOUND")
		harness.MustCode(t, remove(ada, harness.Email(t, "nobody@example.com")), http.StatusBadRequest, "MEMBER_NOT_FOUND")
		harness.MustCode(t, remove(dan, harness.Email(t, "bob@example.com")), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")

		// Leaving: the only owner cannot; a member can; then an owner can.
		leave := harness.MustJSON(t, map[string]any{"organizationId": org})
		harness.MustCode(t, ada.Post(harness.OrgPath("leave"), leave), http.StatusBadRequest, "YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER")
		left := harness.MustOK(t, bob.Post(harness.OrgPath("leave"), leave))
		mustMemberWithUser(t, left, harness.Email(t, "bob@example.com"), "admin")
		if activeOrg(t, bob) != nil {
			t.Fatal("leaving left the organization active")
		}
		harness.MustCode(t, bob.Post(harness.OrgPath("leave"), leave), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")
		harness.MustCode(t, bob.Get(harness.OrgPath("get-active-member")), http.StatusBadRequest, "NO_ACTIVE_ORGANIZATION")
		if total := harness.MustOK(t, ada.Get(harness.OrgPath("list-members")))["total"]; total != float64(1) {
			t.Fatalf("total after removals = %v, want 1", total)
		}
		// With a second owner the first may leave.
		danOwner := harness.MustJoin(t, ada, org, dan, harness.Email(t, "dan@example.com"), "owner")
		mustMemberWithUser(t, harness.MustOK(t, ada.Post(harness.OrgPath("leave"), leave)), harness.Email(t, "ada@example.com"), "owner")
		harness.MustCode(t, dan.Post(harness.OrgPath("remove-member"), harness.MustJSON(t, map[string]any{"memberIdOrEmail": danOwner["id"]})), http.StatusBadRequest, "YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER")
	})
}

// Ensure has-permission answers from the caller's roles in the organization
// ({error:null, success}), refuses non-members with 403 and needs an
// organization and permissions.
func TestOrganization_has_permission(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.OrgEnv, func(t *testing.T, app *harness.App) {
		ada, bob, cat, org := mustAcmeTeam(t, app)

		check := func(c *harness.Client, body string, want bool) {
			t.Helper()
			r := harness.MustOK(t, c.Post(harness.OrgPath("has-permission"), body))
			harness.MustKeys(t, r, "error", "success")
			if r["error"] != nil || r["success"] != want {
				t.Fatalf("has-permission %s = %v, want success %v", body, r, want)
			}
		}
		check(ada, `{"permissions":{"organization":["delete"]}}`, true)
		check(ada, `{"permissions":{"member":["create","update","delete"],"invitation":["cancel"]}}`, true)
		check(bob, `{"permissions":{"organization":["delete"]}}`, false)
		check(bob, `{"permissions":{"organization":["update"]},"organizationId":"`+org+`"}`, true)
		check(cat, `{"permissions":{"member":["delete"]}}`, false)
		check(cat, `{"permission":{"ac":["read"]}}`, true)
		check(cat, `{"permissions":{"ac":["read"],"member":["delete"]}}`, false)
		check(cat, `{"permissions":{"nonsense":["fly"]}}`, false)
		if msg := harness.MustCode(t, cat.Post(harness.OrgPath("has-permission"), `{}`), http.StatusBadRequest, "VALIDATION_ERROR"); !strings.Contains(msg, "body.permissions") {
			t.Fatalf("message %q does not name body.permissions", msg)
		}
		harness.MustCode(t, cat.Post(harness.OrgPath("has-permission"), `{"permissions":{"member":"delete"}}`), http.StatusBadRequest, "VALIDATION_ERROR")

		// Another organization's admin is not a member here.
		dan := harness.MustVerifiedClient(t, app, "Dan", harness.Email(t, "dan@example.com"))
		harness.MustCode(t, dan.Post(harness.OrgPath("has-permission"), `{"permissions":{"ac":["read"]}}`), http.StatusBadRequest, "NO_ACTIVE_ORGANIZATION")
		other, _ := harness.MustCreateOrg(t, dan, "Other", harness.Own(t, "other"))["id"].(string)
		check(dan, `{"permissions":{"organization":["delete"]}}`, true)
		harness.MustCode(t, dan.Post(harness.OrgPath("has-permission"), `{"permissions":{"ac":["read"]},"organizationId":"`+org+`"}`), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")
		harness.MustCode(t, ada.Post(harness.OrgPath("has-permission"), `{"permissions":{"ac":["read"]},"organizationId":"`+other+`"}`), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")
	})
}

// Ensure an admin of one organization has no power over another: every
// route naming it answers 403 USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION, as
// for an organization that does not exist.
func TestOrganization_other_organization(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.OrgEnv, func(t *testing.T, app *harness.App) {
		ada := harness.MustVerifiedClient(t, app, "Ada", harness.Email(t, "ada@example.com"))
		eve := harness.MustVerifiedClient(t, app, "Eve", harness.Email(t, "eve@example.com"))
		target, _ := harness.MustCreateOrg(t, ada, "Acme", harness.Own(t, "acme"))["id"].(string)
		inv := harness.MustInvite(t, ada, target, harness.Email(t, "bob@example.com"), "member")
		harness.MustCreateOrg(t, eve, "Evil", harness.Own(t, "evil"))
		for _, id := range []string{target, "no-such-organization"} {
			q := "?organizationId=" + id
			for _, r := range []*harness.Response{
				eve.Get(harness.OrgPath("get-full-organization") + q),
				eve.Get(harness.OrgPath("get-organization") + q),
				eve.Get(harness.OrgPath("list-members") + q),
				eve.Get(harness.OrgPath("list-invitations") + q),
				eve.Get(harness.OrgPath("get-active-member-role") + q),
				eve.Post(harness.OrgPath("set-active"), harness.MustJSON(t, map[string]any{"organizationId": id})),
				eve.Post(harness.OrgPath("update"), harness.MustJSON(t, map[string]any{"organizationId": id, "data": map[string]any{"name": "Pwned"}})),
				eve.Post(harness.OrgPath("delete"), harness.MustJSON(t, map[string]any{"organizationId": id})),
				eve.Post(harness.OrgPath("invite-member"), harness.MustJSON(t, map[string]any{"organizationId": id, "email": harness.Email(t, "mallory@example.com"), "role": "owner"})),
				eve.Post(harness.OrgPath("remove-member"), harness.MustJSON(t, map[string]any{"organizationId": id, "memberIdOrEmail": harness.Email(t, "ada@example.com")})),
				eve.Post(harness.OrgPath("update-member-role"), harness.MustJSON(t, map[string]any{"organizationId": id, "memberId": "x", "role": "owner"})),
				eve.Post(harness.OrgPath("leave"), harness.MustJSON(t, map[string]any{"organizationId": id})),
				eve.Post(harness.OrgPath("has-permission"), harness.MustJSON(t, map[string]any{"organizationId": id, "permissions": map[string]any{"ac": []string{"read"}}})),
			} {
				harness.MustCode(t, r, http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")
			}
		}
		harness.MustCode(t, eve.Post(harness.OrgPath("cancel-invitation"), harness.MustJSON(t, map[string]any{"invitationId": inv["id"]})), http.StatusForbidden, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION")
		harness.MustCode(t, eve.Post(harness.OrgPath("cancel-invitation"), `{"invitationId":"no-such-invitation"}`), http.StatusBadRequest, "INVITATION_NOT_FOUND")
		// Nothing changed.
		full := harness.MustOK(t, ada.Get(harness.OrgPath("get-full-organization")))
		if full["name"] != "Acme" || len(full["members"].([]any)) != 1 || len(full["invitations"].([]any)) != 1 {
			t.Fatalf("organization changed: %v", full)
		}
	})
}

// orgRoutes lists every organization route with a body that passes validation.
var orgRoutes = []struct{ method, op, body string }{
	{http.MethodPost, "create", `{"name":"Acme","slug":"acme"}`},
	{http.MethodPost, "check-slug", `{"slug":"acme"}`},
	{http.MethodPost, "update", `{"data":{"name":"Acme"}}`},
	{http.MethodPost, "delete", `{"organizationId":"x"}`},
	{http.MethodPost, "set-active", `{"organizationId":null}`},
	{http.MethodPost, "invite-member", `{"email":"bob@example.com","role":"member"}`},
	{http.MethodPost, "accept-invitation", `{"invitationId":"x"}`},
	{http.MethodPost, "reject-invitation", `{"invitationId":"x"}`},
	{http.MethodPost, "cancel-invitation", `{"invitationId":"x"}`},
	{http.MethodPost, "remove-member", `{"memberIdOrEmail":"x"}`},
	{http.MethodPost, "update-member-role", `{"memberId":"x","role":"admin"}`},
	{http.MethodPost, "leave", `{"organizationId":"x"}`},
	{http.MethodPost, "has-permission", `{"permissions":{"ac":["read"]}}`},
	{http.MethodGet, "get-full-organization", ""},
	{http.MethodGet, "get-organization", ""},
	{http.MethodGet, "list", ""},
	{http.MethodGet, "get-invitation?id=x", ""},
	{http.MethodGet, "list-invitations", ""},
	{http.MethodGet, "list-user-invitations", ""},
	{http.MethodGet, "list-members", ""},
	{http.MethodGet, "get-active-member", ""},
	{http.MethodGet, "get-active-member-role", ""},
}

// Ensure every organization route needs a session: 401 UNAUTHORIZED in
// Better Auth's {message, code} shape without one, or with a signed-out one.
func TestOrganization_requires_session(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.OrgEnv, func(t *testing.T, app *harness.App) {
		ada := harness.MustVerifiedClient(t, app, "Ada", harness.Email(t, "ada@example.com"))
		stale := ada.Clone()
		harness.MustOK(t, ada.Post("/api/auth/sign-out", ""))
		for _, c := range []*harness.Client{app.NewClient(t), stale} {
			for _, rt := range orgRoutes {
				r := c.Clone().Do(rt.method, harness.OrgPath(rt.op), rt.body)
				harness.MustCode(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
			}
		}
		// The wrong method is an unknown route.
		harness.MustStatus(t, app.NewClient(t).Get(harness.OrgPath("create")), http.StatusNotFound)
		harness.MustStatus(t, app.NewClient(t).Post(harness.OrgPath("list"), `{}`), http.StatusNotFound)
	})
}

// mustAcmeTeam signs up Ada, Bob and Cat (the test's own addresses) and
// makes Acme (the test's own slug) with Ada its owner, Bob an admin and Cat
// a member; it returns their clients and the organization's id.
func mustAcmeTeam(t *testing.T, app *harness.App) (ada, bob, cat *harness.Client, org string) {
	t.Helper()
	ada = harness.MustVerifiedClient(t, app, "Ada", harness.Email(t, "ada@example.com"))
	bob = harness.MustVerifiedClient(t, app, "Bob", harness.Email(t, "bob@example.com"))
	cat = harness.MustVerifiedClient(t, app, "Cat", harness.Email(t, "cat@example.com"))
	org, _ = harness.MustCreateOrg(t, ada, "Acme", harness.Own(t, "acme"))["id"].(string)
	harness.MustJoin(t, ada, org, bob, harness.Email(t, "bob@example.com"), "admin")
	harness.MustJoin(t, ada, org, cat, harness.Email(t, "cat@example.com"), "member")
	return ada, bob, cat, org
}
