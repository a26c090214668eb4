package harness

import (
	"testing"
	"time"
)

// The trusted organization routes (/api/organizations), black-box over HTTP
// on every store, called with a service key as a consumer's backend would.
// Users are signed up through the framework, as they would be in real use.

// OrgsPath is the trusted organization API.
const OrgsPath = "/api/organizations"

// MustOrgKey signs the administrator in, issues a key with scopes
// (organizations:read and write by default) and returns a client sending it
// as Bearer, the administrator's client and the key's id.
func MustOrgKey(t testing.TB, app *App, scopes ...string) (KeyClient, *Client, string) {
	t.Helper()
	admin, _ := MustAdmin(t, app)
	if len(scopes) == 0 {
		scopes = []string{"organizations:read", "organizations:write"}
	}
	key := MustCreateKey(t, admin, map[string]any{"name": "organizations backend", "scopes": scopes})
	return KeyClient{T: t, C: app.NewClient(t), Headers: []string{"Authorization", "Bearer " + key["secret"].(string)}}, admin, MustID(t, key)
}

// TrustedOrgFields are the keys of a trusted organization, exactly.
var TrustedOrgFields = []string{"id", "name", "slug", "logo", "metadata", "memberCount", "createdAt", "updatedAt", "requireTwoFactor"}

// MustRFC3339 fails unless each named field of obj is an RFC 3339 time.
func MustRFC3339(t testing.TB, obj map[string]any, fields ...string) {
	t.Helper()
	for _, f := range fields {
		s, _ := obj[f].(string)
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			t.Fatalf("%s = %v, want an RFC 3339 time", f, obj[f])
		}
	}
}

// MustTrustedOrg fails unless r is a trusted organization with status and
// name, and returns it.
func MustTrustedOrg(t testing.TB, r *Response, status int, name string) map[string]any {
	t.Helper()
	MustStatus(t, r, status)
	o := r.JSON(t)
	MustKeys(t, o, TrustedOrgFields...)
	MustRFC3339(t, o, "createdAt", "updatedAt")
	if o["name"] != name {
		t.Fatalf("organization = %v, want name %q", o, name)
	}
	return o
}
