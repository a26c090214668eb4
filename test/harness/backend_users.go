package harness

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// UsersPath is the trusted API's users collection.
const UsersPath = "/api/users"

// KeyClient calls the trusted API with a service key, in the Authorization
// header or in x-api-key, never with cookies.
type KeyClient struct {
	T       testing.TB
	C       *Client
	Headers []string
}

// Do sends a request with the key; body is JSON-encoded unless it is a string.
func (k KeyClient) Do(method, path string, body any) *Response {
	k.T.Helper()
	raw, ok := body.(string)
	if !ok && body != nil {
		raw = MustJSON(k.T, body)
	}
	return k.C.Do(method, path, raw, k.Headers...)
}

// apiKey returns the same key sent as x-api-key.
func (k KeyClient) APIKey() KeyClient {
	secret := strings.TrimPrefix(k.Headers[1], "Bearer ")
	return KeyClient{T: k.T, C: k.C, Headers: []string{"x-api-key", secret}}
}

// MustUsersKey signs the administrator in, issues a key holding scopes and
// returns a client sending it as Bearer, the administrator's client and the
// key's id.
func MustUsersKey(t testing.TB, app *App, scopes ...string) (KeyClient, *Client, string) {
	t.Helper()
	admin, _ := MustAdmin(t, app)
	if len(scopes) == 0 {
		scopes = []string{"users:read", "users:write"}
	}
	key := MustCreateKey(t, admin, map[string]any{"name": "users backend", "scopes": scopes})
	return KeyClient{T: t, C: app.NewClient(t), Headers: []string{"Authorization", "Bearer " + key["secret"].(string)}}, admin, MustID(t, key)
}

// MustCreateBackendUser creates a user through the trusted API and returns it.
func MustCreateBackendUser(t testing.TB, k KeyClient, body map[string]any) map[string]any {
	t.Helper()
	r := k.Do(http.MethodPost, UsersPath, body)
	MustStatus(t, r, http.StatusCreated)
	return r.JSON(t)
}

// BackendUserFields are the keys of the trusted user object, exactly.
var BackendUserFields = []string{"id", "email", "name", "emailVerified", "image", "role", "banned", "banReason", "banExpires", "twoFactorEnabled", "passkeys", "linkedAccounts",
	"publicMetadata", "privateMetadata", "createdAt", "updatedAt"}

// MustBackendUser fails unless u is a trusted user object with exactly its
// fields and RFC 3339 times.
func MustBackendUser(t testing.TB, u map[string]any) {
	t.Helper()
	MustKeys(t, u, BackendUserFields...)
	MustJSDatesOrRFC3339(t, u, "createdAt", "updatedAt")
	for _, f := range []string{"publicMetadata", "privateMetadata"} {
		if _, ok := u[f].(map[string]any); !ok {
			t.Fatalf("%s = %v, want an object", f, u[f])
		}
	}
}

// MustUserPage reads one page of the listing with query q and returns the
// users and the next cursor ("" on the last page).
func MustUserPage(t testing.TB, k KeyClient, q url.Values) ([]map[string]any, string) {
	t.Helper()
	r := k.Do(http.MethodGet, UsersPath+"?"+q.Encode(), nil)
	MustStatus(t, r, http.StatusOK)
	var page struct {
		Data       []map[string]any `json:"data"`
		NextCursor *string          `json:"nextCursor"`
	}
	MustUnmarshal(t, r.Body, &page)
	MustKeys(t, r.JSON(t), "data", "nextCursor")
	if page.Data == nil {
		t.Fatalf("page without data: %s", r.Body)
	}
	for _, u := range page.Data {
		MustBackendUser(t, u)
	}
	if page.NextCursor == nil {
		return page.Data, ""
	}
	if *page.NextCursor == "" {
		t.Fatalf("empty nextCursor: %s", r.Body)
	}
	return page.Data, *page.NextCursor
}

// MustNamed fails unless problem p names location among its errors.
func MustNamed(t testing.TB, p map[string]any, location string) {
	t.Helper()
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		if MustObject(t, e)["location"] == location {
			return
		}
	}
	t.Fatalf("problem %v does not name %s", p, location)
}
