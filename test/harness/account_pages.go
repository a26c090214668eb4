package harness

import (
	"testing"
)

// AccountTestInvite has the owner invite email to a new organization and
// returns the invitation's id.
func AccountTestInvite(t testing.TB, owner *Client, name, slug, email, role string) string {
	t.Helper()
	org := MustCreateOrg(t, owner, name, slug)
	id, _ := MustInvite(t, owner, org["id"].(string), email, role)["id"].(string)
	return id
}
