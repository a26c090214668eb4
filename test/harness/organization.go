package harness

import (
	"net/http"
	"testing"
)

// The organization plugin's routes (better-auth-wire §7.3), black-box over
// HTTP on every store. Users sign up and verify their address through the
// mailed link, as the default configuration requires.

// OrgEnv keeps the default verification rule and turns off the rate limits,
// which these tests' many requests from one address would trip.
var OrgEnv = map[string]string{"GATEHOUSE_RATE_LIMIT": "off"}

const OrgPassword = "correct horse battery"

// OrgPath is the route path of an organization operation.
func OrgPath(op string) string { return "/api/auth/organization/" + op }

// MustVerifiedClient signs up name/email, follows the verification link and
// returns a client signed in as that user.
func MustVerifiedClient(t testing.TB, app *App, name, email string) *Client {
	t.Helper()
	c := app.NewClient(t)
	MustSignUp(t, c, name, email, OrgPassword)
	MustOK(t, app.NewClient(t).Get(MustLink(t, app, email, "Verify your email address")))
	MustSignIn(t, c, email, OrgPassword)
	return c
}

// MustCreateOrg creates an organization through c and returns it.
func MustCreateOrg(t testing.TB, c *Client, name, slug string) map[string]any {
	t.Helper()
	return MustOK(t, c.Post(OrgPath("create"), MustJSON(t, map[string]any{"name": name, "slug": slug})))
}

// MustInvite invites email to org through c and returns the invitation.
func MustInvite(t testing.TB, c *Client, org, email string, role any) map[string]any {
	t.Helper()
	return MustOK(t, c.Post(OrgPath("invite-member"), MustJSON(t, map[string]any{"organizationId": org, "email": email, "role": role})))
}

// MustJoin has owner invite member's address to org with role and member
// accept it; it returns the new membership.
func MustJoin(t testing.TB, owner *Client, org string, member *Client, email, role string) map[string]any {
	t.Helper()
	inv := MustInvite(t, owner, org, email, role)
	body := MustOK(t, member.Post(OrgPath("accept-invitation"), MustJSON(t, map[string]any{"invitationId": inv["id"]})))
	m, _ := body["member"].(map[string]any)
	if m == nil || m["role"] != role || m["organizationId"] != org {
		t.Fatalf("accept-invitation = %v", body)
	}
	return m
}

// MustList fails unless r is a 200 with a JSON array, and returns it.
func MustList(t testing.TB, r *Response) []map[string]any {
	t.Helper()
	MustStatus(t, r, http.StatusOK)
	var out []map[string]any
	MustUnmarshal(t, r.Body, &out)
	return out
}

// MustKeys fails unless obj has exactly keys.
func MustKeys(t testing.TB, obj map[string]any, keys ...string) {
	t.Helper()
	if len(obj) != len(keys) {
		t.Fatalf("object has keys %v, want %v", mapKeys(obj), keys)
	}
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			t.Fatalf("object has keys %v, want %v", mapKeys(obj), keys)
		}
	}
}

func mapKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
