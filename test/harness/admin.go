package harness

import (
	"net/url"
	"sync"
	"testing"
)

const (
	AdminEmail    = "root@example.com"
	AdminPassword = "correct horse battery staple"
	UserPassword  = "another good passphrase"
)

// AdminEnv makes AdminEmail a platform administrator (once verified), with
// no rate limits and sign-up signing in.
var AdminEnv = Env(FwQuick, map[string]string{"GATEHOUSE_ADMIN_EMAILS": AdminEmail})

// AdminForStores runs fn in parallel against a fresh app with AdminEnv on
// the stores a behaviour runs on (StoresOnce).
func AdminForStores(t *testing.T, fn func(t *testing.T, app *App)) {
	t.Helper()
	ForStores(t, StoresOnce, AdminEnv, fn)
}

// MustVerifiedUser signs up through a new client, which stays signed in,
// follows the mailed verification link, and returns the client and the
// user's id.
func MustVerifiedUser(t testing.TB, app *App, name, email, password string) (*Client, string) {
	t.Helper()
	c, id := MustPlainUser(t, app, name, email, password)
	MustOK(t, app.NewClient(t).Get(MustLink(t, app, email, "Verify your email address")))
	return c, id
}

// MustPlainUser signs up an unverified user through a new client, which
// stays signed in, and returns the client and the user's id.
func MustPlainUser(t testing.TB, app *App, name, email, password string) (*Client, string) {
	t.Helper()
	c := app.NewClient(t)
	return c, MustID(t, MustSignUp(t, c, name, email, password)["user"])
}

// MustAdmin returns a client signed in as the configured administrator
// (AdminEmail, verified) and the administrator's user id. The first call on
// an application signs the administrator up; later ones (tests sharing the
// application) sign in.
func MustAdmin(t testing.TB, app *App) (*Client, string) {
	t.Helper()
	a := app.admin
	if a == nil {
		return MustVerifiedUser(t, app, "Root Admin", AdminEmail, AdminPassword)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.id == "" {
		c, id := MustVerifiedUser(t, app, "Root Admin", AdminEmail, AdminPassword)
		a.id = id
		return c, id
	}
	c := app.NewClient(t)
	MustSignIn(t, c, AdminEmail, AdminPassword)
	return c, a.id
}

// adminAccount is an application's administrator once signed up.
type adminAccount struct {
	mu sync.Mutex
	id string
}

// MustObject fails unless v is a JSON object.
func MustObject(t testing.TB, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not a JSON object", v)
	}
	return m
}

// MustID returns the id of a JSON object.
func MustID(t testing.TB, v any) string {
	t.Helper()
	id, _ := MustObject(t, v)["id"].(string)
	if id == "" {
		t.Fatalf("no id in %v", v)
	}
	return id
}

// AdminPath is the admin plugin's route named name.
func AdminPath(name string) string { return "/api/auth/admin/" + name }

// ListUsers lists users with query q and returns the page's emails in order
// and the whole body.
func ListUsers(t testing.TB, c *Client, q url.Values) ([]string, map[string]any) {
	t.Helper()
	body := MustOK(t, c.Get(AdminPath("list-users")+"?"+q.Encode()))
	users, ok := body["users"].([]any)
	if !ok {
		t.Fatalf("list-users has no users array: %v", body)
	}
	emails := make([]string, len(users))
	for i, u := range users {
		emails[i], _ = MustObject(t, u)["email"].(string)
	}
	return emails, body
}
