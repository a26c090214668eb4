package test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	adminEmail    = "root@example.com"
	adminPassword = "correct horse battery staple"
	userPassword  = "another good passphrase"
)

// adminEnv makes adminEmail a platform administrator (once verified), with
// no rate limits and sign-up signing in.
var adminEnv = fwEnv(fwQuick, map[string]string{"GATEHOUSE_ADMIN_EMAILS": adminEmail})

// adminForStores runs fn in parallel against a fresh app with adminEnv on
// the stores a behaviour runs on (storesOnce).
func adminForStores(t *testing.T, fn func(t *testing.T, app *fwApp)) {
	t.Helper()
	fwForStores(t, storesOnce, adminEnv, fn)
}

// mustVerifiedUser signs up through a new client, which stays signed in,
// follows the mailed verification link, and returns the client and the
// user's id.
func mustVerifiedUser(t testing.TB, app *fwApp, name, email, password string) (*fwClient, string) {
	t.Helper()
	c, id := mustPlainUser(t, app, name, email, password)
	mustOK(t, app.client(t).get(mustLink(t, app, email, "Verify your email address")))
	return c, id
}

// mustPlainUser signs up an unverified user through a new client, which
// stays signed in, and returns the client and the user's id.
func mustPlainUser(t testing.TB, app *fwApp, name, email, password string) (*fwClient, string) {
	t.Helper()
	c := app.client(t)
	return c, mustID(t, mustSignUp(t, c, name, email, password)["user"])
}

// mustAdmin returns a client signed in as the configured administrator
// (adminEmail, verified) and the administrator's user id.
func mustAdmin(t testing.TB, app *fwApp) (*fwClient, string) {
	t.Helper()
	return mustVerifiedUser(t, app, "Root Admin", adminEmail, adminPassword)
}

// mustObject fails unless v is a JSON object.
func mustObject(t testing.TB, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not a JSON object", v)
	}
	return m
}

// mustID returns the id of a JSON object.
func mustID(t testing.TB, v any) string {
	t.Helper()
	id, _ := mustObject(t, v)["id"].(string)
	if id == "" {
		t.Fatalf("no id in %v", v)
	}
	return id
}

// adminPath is the admin plugin's route named name.
func adminPath(name string) string { return "/api/auth/admin/" + name }

// listUsers lists users with query q and returns the page's emails in order
// and the whole body.
func listUsers(t testing.TB, c *fwClient, q url.Values) ([]string, map[string]any) {
	t.Helper()
	body := mustOK(t, c.get(adminPath("list-users")+"?"+q.Encode()))
	users, ok := body["users"].([]any)
	if !ok {
		t.Fatalf("list-users has no users array: %v", body)
	}
	emails := make([]string, len(users))
	for i, u := range users {
		emails[i], _ = mustObject(t, u)["email"].(string)
	}
	return emails, body
}

// Ensure every admin route answers 401 without a session, and 403 with the
// admin plugin's code to a signed-in user who is not an administrator;
// has-permission answers false to them and stop-impersonating 400.
func TestAdmin_routes_refuse_anonymous_and_plain_users(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesThatMatter, adminEnv, func(t *testing.T, app *fwApp) {
		_, adminID := mustAdmin(t, app)
		plain, _ := mustPlainUser(t, app, "Eve", "eve@example.com", userPassword)
		victim := mustJSON(t, map[string]string{"userId": adminID})
		routes := []struct {
			method, name, body, code string
		}{
			{http.MethodPost, "create-user", mustJSON(t, map[string]any{"email": "new@example.com", "name": "New", "password": userPassword}), "YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS"},
			{http.MethodGet, "list-users", "", "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS"},
			{http.MethodGet, "get-user?id=" + adminID, "", "YOU_ARE_NOT_ALLOWED_TO_GET_USER"},
			{http.MethodPost, "update-user", mustJSON(t, map[string]any{"userId": adminID, "data": map[string]any{"name": "Owned"}}), "YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS"},
			{http.MethodPost, "set-role", mustJSON(t, map[string]any{"userId": adminID, "role": "user"}), "YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE"},
			{http.MethodPost, "ban-user", victim, "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS"},
			{http.MethodPost, "unban-user", victim, "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS"},
			{http.MethodPost, "list-user-sessions", victim, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS"},
			{http.MethodPost, "revoke-user-session", mustJSON(t, map[string]string{"sessionToken": "some-session"}), "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS"},
			{http.MethodPost, "revoke-user-sessions", victim, "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS"},
			{http.MethodPost, "remove-user", victim, "YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS"},
			{http.MethodPost, "set-user-password", mustJSON(t, map[string]string{"userId": adminID, "newPassword": "a stolen passphrase"}), "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD"},
			{http.MethodPost, "impersonate-user", victim, "YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS"},
			{http.MethodPost, "stop-impersonating", "{}", "NOT_IMPERSONATING"},
			{http.MethodPost, "has-permission", mustJSON(t, map[string]any{"permissions": map[string][]string{"user": {"ban"}}}), ""},
		}
		for _, rt := range routes {
			if r := app.client(t).do(rt.method, adminPath(rt.name), rt.body); r.Status != http.StatusUnauthorized {
				t.Fatalf("anonymous %s %s = %d %s, want 401", rt.method, rt.name, r.Status, r.Body)
			}
			r := plain.do(rt.method, adminPath(rt.name), rt.body)
			switch rt.name {
			case "has-permission":
				if body := mustOK(t, r); body["success"] != false || body["error"] != nil {
					t.Fatalf("has-permission for a plain user = %s", r.Body)
				}
			case "stop-impersonating":
				mustCode(t, r, http.StatusBadRequest, rt.code)
			default:
				mustCode(t, r, http.StatusForbidden, rt.code)
			}
		}
		// Nothing was done on the plain user's behalf.
		admin := app.client(t)
		mustSignIn(t, admin, adminEmail, adminPassword)
		if u := mustOK(t, admin.get(adminPath("get-user")+"?id="+adminID)); u["name"] != "Root Admin" || u["banned"] != false {
			t.Fatalf("the refused requests changed the administrator: %v", u)
		}
		if emails, _ := listUsers(t, admin, url.Values{}); !slices.Equal(emails, []string{adminEmail, "eve@example.com"}) {
			t.Fatalf("users after the refused requests: %v", emails)
		}
	})
}

// Ensure an address in GATEHOUSE_ADMIN_EMAILS makes its user an
// administrator only once verified, and GATEHOUSE_ADMIN_USER_IDS makes one
// at once; has-permission follows.
func TestAdmin_configured_administrators(t *testing.T) {
	t.Parallel()
	perm := mustJSON(t, map[string]any{"permissions": map[string][]string{"user": {"ban", "list"}, "session": {"revoke"}}})
	adminForStores(t, func(t *testing.T, app *fwApp) {
		c, _ := mustPlainUser(t, app, "Root Admin", adminEmail, adminPassword)
		mustCode(t, c.get(adminPath("list-users")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS")
		if body := mustOK(t, c.post(adminPath("has-permission"), perm)); body["success"] != false {
			t.Fatalf("unverified configured address has permission: %s", body)
		}
		mustOK(t, app.client(t).get(mustLink(t, app, adminEmail, "Verify your email address")))
		mustOK(t, c.get(adminPath("list-users")))
		if body := mustOK(t, c.post(adminPath("has-permission"), perm)); body["success"] != true || body["error"] != nil {
			t.Fatalf("verified configured address lacks permission: %v", body)
		}
		// The deprecated name of the field works too; unknown actions are refused.
		if body := mustOK(t, c.post(adminPath("has-permission"), mustJSON(t, map[string]any{"permission": map[string][]string{"user": {"create"}}}))); body["success"] != true {
			t.Fatalf("has-permission with permission = %v", body)
		}
		if body := mustOK(t, c.post(adminPath("has-permission"), mustJSON(t, map[string]any{"permissions": map[string][]string{"user": {"impersonate-admins"}}}))); body["success"] != false {
			t.Fatalf("impersonate-admins granted: %v", body)
		}
		mustCode(t, c.post(adminPath("has-permission"), "{}"), http.StatusBadRequest, "INVALID_PERMISSIONS")
	})
	t.Run("user_ids", func(t *testing.T) {
		t.Parallel()
		// The id is known only after sign-up, so the second app shares the first one's database.
		first := mustStartFramework(t, storeSQLite, fwQuick)
		c := first.client(t)
		id := mustID(t, mustSignUp(t, c, "Ida", "ida@example.com", userPassword)["user"])
		mustCode(t, c.get(adminPath("list-users")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS")
		second := mustStartFramework(t, storeSQLite, fwEnv(fwQuick, map[string]string{"GATEHOUSE_DATABASE_URL": first.DatabaseURL, "GATEHOUSE_ADMIN_USER_IDS": id}))
		c2 := second.client(t)
		mustSignIn(t, c2, "ida@example.com", userPassword) // unverified: ids need no verification
		mustOK(t, c2.get(adminPath("list-users")))
	})
}

// Ensure create-user, get-user, update-user and set-role: shapes, roles
// with and without a password, Better Auth's codes.
func TestAdmin_create_get_update_users(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)

		// With a password and a role: {user}, the address lower-cased, unverified.
		r := admin.post(adminPath("create-user"), mustJSON(t, map[string]any{"email": "Grace@Example.com", "name": "Grace Hopper", "password": userPassword, "role": []string{"admin"}}))
		body := mustOK(t, r)
		grace := mustObject(t, body["user"])
		if len(body) != 1 || grace["email"] != "grace@example.com" || grace["name"] != "Grace Hopper" || grace["role"] != "admin" ||
			grace["emailVerified"] != false || grace["banned"] != false || grace["image"] != nil || grace["banReason"] != nil || grace["banExpires"] != nil {
			t.Fatalf("create-user = %s", r.Body)
		}
		mustJSDates(t, grace, "createdAt", "updatedAt")
		graceC := app.client(t)
		mustSignIn(t, graceC, "grace@example.com", userPassword)
		mustOK(t, graceC.get(adminPath("list-users"))) // the admin role makes her an administrator

		// Without a password: nobody can sign in until it is set; data fields apply.
		r = admin.post(adminPath("create-user"), mustJSON(t, map[string]any{"email": "alan@example.com", "name": "Alan Turing", "data": map[string]any{"emailVerified": true, "image": "https://example.com/alan.png"}}))
		alan := mustObject(t, mustOK(t, r)["user"])
		if alan["role"] != "user" || alan["emailVerified"] != true || alan["image"] != "https://example.com/alan.png" {
			t.Fatalf("create-user without password = %s", r.Body)
		}
		mustSignInFails(t, app, "alan@example.com", "")
		mustSignInFails(t, app, "alan@example.com", userPassword)

		// A comma-separated role string is accepted; unknown roles are not.
		r = admin.post(adminPath("create-user"), mustJSON(t, map[string]any{"email": "linus@example.com", "name": "Linus", "password": userPassword, "role": "user"}))
		linus := mustObject(t, mustOK(t, r)["user"])
		mustCode(t, admin.post(adminPath("create-user"), mustJSON(t, map[string]any{"email": "x@example.com", "name": "X", "password": userPassword, "role": "superuser"})),
			http.StatusBadRequest, "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE")
		mustCode(t, admin.post(adminPath("create-user"), mustJSON(t, map[string]any{"email": "GRACE@example.com", "name": "Again", "password": userPassword})),
			http.StatusBadRequest, "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL")
		mustCode(t, admin.post(adminPath("create-user"), mustJSON(t, map[string]any{"email": "weak@example.com", "name": "Weak", "password": "short"})),
			http.StatusBadRequest, "PASSWORD_TOO_SHORT")

		// get-user is the bare user.
		r = admin.get(adminPath("get-user") + "?id=" + mustID(t, alan))
		got := mustOK(t, r)
		if got["id"] != alan["id"] || got["email"] != "alan@example.com" || got["user"] != nil {
			t.Fatalf("get-user = %s", r.Body)
		}
		mustCode(t, admin.get(adminPath("get-user")+"?id=no-such-user"), http.StatusNotFound, "USER_NOT_FOUND")

		// update-user answers the bare user; roles change through it too.
		r = admin.post(adminPath("update-user"), mustJSON(t, map[string]any{"userId": linus["id"], "data": map[string]any{"name": "Linus T", "role": []string{"user", "admin"}}}))
		upd := mustOK(t, r)
		if upd["id"] != linus["id"] || upd["name"] != "Linus T" || upd["role"] != "user,admin" || upd["user"] != nil {
			t.Fatalf("update-user = %s", r.Body)
		}
		mustCode(t, admin.post(adminPath("update-user"), mustJSON(t, map[string]any{"userId": linus["id"], "data": map[string]any{"role": "owner"}})),
			http.StatusBadRequest, "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE")
		mustCode(t, admin.post(adminPath("update-user"), mustJSON(t, map[string]any{"userId": "no-such-user", "data": map[string]any{"name": "Ghost"}})),
			http.StatusNotFound, "USER_NOT_FOUND")
		if got := mustOK(t, admin.get(adminPath("get-user")+"?id="+mustID(t, linus))); got["name"] != "Linus T" || got["role"] != "user,admin" {
			t.Fatalf("update-user did not persist: %v", got)
		}
		mustCode(t, admin.post(adminPath("update-user"), mustJSON(t, map[string]any{"userId": linus["id"], "data": map[string]any{}})), http.StatusBadRequest, "NO_DATA_TO_UPDATE")
		// Passwords, ids and bans do not change through update-user.
		for field, value := range map[string]any{"password": "a hijacked passphrase", "id": "another-id", "banned": true, "banReason": "x"} {
			mustStatus(t, admin.post(adminPath("update-user"), mustJSON(t, map[string]any{"userId": linus["id"], "data": map[string]any{field: value}})), http.StatusBadRequest)
		}
		mustSignIn(t, app.client(t), "linus@example.com", userPassword)
		if got := mustOK(t, admin.get(adminPath("get-user")+"?id="+mustID(t, linus))); got["banned"] != false {
			t.Fatalf("update-user banned the user: %v", got)
		}
		// A new address is lower-cased and unverified.
		r = admin.post(adminPath("update-user"), mustJSON(t, map[string]any{"userId": alan["id"], "data": map[string]any{"email": "Alan@Example.NET"}}))
		if upd := mustOK(t, r); upd["email"] != "alan@example.net" || upd["emailVerified"] != false {
			t.Fatalf("update-user email = %s", r.Body)
		}
		// An account made without a password gets one through set-user-password.
		mustStatusTrue(t, admin.post(adminPath("set-user-password"), mustJSON(t, map[string]any{"userId": alan["id"], "newPassword": userPassword})))
		mustSignIn(t, app.client(t), "alan@example.net", userPassword)

		// set-role answers {user}; unknown roles are refused; demotion takes effect at once.
		r = admin.post(adminPath("set-role"), mustJSON(t, map[string]any{"userId": grace["id"], "role": "user"}))
		if u := mustObject(t, mustOK(t, r)["user"]); u["role"] != "user" || u["id"] != grace["id"] {
			t.Fatalf("set-role = %s", r.Body)
		}
		mustCode(t, graceC.get(adminPath("list-users")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS")
		mustCode(t, admin.post(adminPath("set-role"), mustJSON(t, map[string]any{"userId": grace["id"], "role": []string{"admin", "root"}})),
			http.StatusBadRequest, "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE")
		if u := mustOK(t, admin.get(adminPath("get-user")+"?id="+mustID(t, grace))); u["role"] != "user" {
			t.Fatalf("a refused set-role changed the role: %v", u)
		}
	})
}

// Ensure list-users searches, filters, sorts and pages, with the total, and
// echoes limit and offset only when given.
func TestAdmin_list_users(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesThatMatter, adminEnv, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)
		create := func(email, name string, extra map[string]any) map[string]any {
			body := map[string]any{"email": email, "name": name, "password": userPassword}
			for k, v := range extra {
				body[k] = v
			}
			return mustObject(t, mustOK(t, admin.post(adminPath("create-user"), mustJSON(t, body)))["user"])
		}
		grace := create("grace@example.com", "Grace Hopper", map[string]any{"role": "admin"})
		create("alan@example.org", "Alan Turing", map[string]any{"data": map[string]any{"emailVerified": true}})
		linus := create("linus@example.com", "Linus Torvalds", nil)
		mustOK(t, admin.post(adminPath("ban-user"), mustJSON(t, map[string]any{"userId": linus["id"]})))

		all := []string{adminEmail, "grace@example.com", "alan@example.org", "linus@example.com"}
		tests := []struct {
			name  string
			q     url.Values
			want  []string // in order
			total int
		}{
			{"all_oldest_first", url.Values{}, all, 4},
			{"email_contains_any_case", url.Values{"searchValue": {"GRACE"}}, []string{"grace@example.com"}, 1},
			{"email_contains_domain", url.Values{"searchValue": {"example.com"}, "searchField": {"email"}, "searchOperator": {"contains"}}, []string{adminEmail, "grace@example.com", "linus@example.com"}, 3},
			{"email_starts_with", url.Values{"searchValue": {"al"}, "searchField": {"email"}, "searchOperator": {"starts_with"}}, []string{"alan@example.org"}, 1},
			{"email_starts_with_no_match", url.Values{"searchValue": {"example"}, "searchField": {"email"}, "searchOperator": {"starts_with"}}, []string{}, 0},
			{"name_contains", url.Values{"searchValue": {"tUr"}, "searchField": {"name"}}, []string{"alan@example.org"}, 1},
			{"name_starts_with", url.Values{"searchValue": {"li"}, "searchField": {"name"}, "searchOperator": {"starts_with"}}, []string{"linus@example.com"}, 1},
			{"name_starts_with_not_inside", url.Values{"searchValue": {"hopper"}, "searchField": {"name"}, "searchOperator": {"starts_with"}}, []string{}, 0},
			{"role_admin", url.Values{"filterField": {"role"}, "filterValue": {"admin"}}, []string{"grace@example.com"}, 1},
			{"banned", url.Values{"filterField": {"banned"}, "filterValue": {"true"}}, []string{"linus@example.com"}, 1},
			{"not_banned", url.Values{"filterField": {"banned"}, "filterValue": {"true"}, "filterOperator": {"ne"}}, []string{adminEmail, "grace@example.com", "alan@example.org"}, 3},
			{"verified", url.Values{"filterField": {"emailVerified"}, "filterValue": {"true"}}, []string{adminEmail, "alan@example.org"}, 2},
			{"unverified", url.Values{"filterField": {"emailVerified"}, "filterValue": {"false"}}, []string{"grace@example.com", "linus@example.com"}, 2},
			{"created_at_or_after", url.Values{"filterField": {"createdAt"}, "filterOperator": {"gte"}, "filterValue": {grace["createdAt"].(string)}}, []string{"grace@example.com", "alan@example.org", "linus@example.com"}, 3},
			{"created_before", url.Values{"filterField": {"createdAt"}, "filterOperator": {"lt"}, "filterValue": {grace["createdAt"].(string)}}, []string{adminEmail}, 1},
			{"search_and_filter", url.Values{"searchValue": {"example.com"}, "filterField": {"banned"}, "filterValue": {"false"}}, []string{adminEmail, "grace@example.com"}, 2},
			{"sort_name_asc", url.Values{"sortBy": {"name"}, "sortDirection": {"asc"}}, []string{"alan@example.org", "grace@example.com", "linus@example.com", adminEmail}, 4},
			{"sort_name_desc", url.Values{"sortBy": {"name"}, "sortDirection": {"desc"}}, []string{adminEmail, "linus@example.com", "grace@example.com", "alan@example.org"}, 4},
			{"sort_created_desc", url.Values{"sortBy": {"createdAt"}, "sortDirection": {"desc"}}, []string{"linus@example.com", "alan@example.org", "grace@example.com", adminEmail}, 4},
			{"first_page", url.Values{"sortBy": {"email"}, "limit": {"2"}}, []string{"alan@example.org", "grace@example.com"}, 4},
			{"second_page", url.Values{"sortBy": {"email"}, "limit": {"2"}, "offset": {"2"}}, []string{"linus@example.com", adminEmail}, 4},
			{"past_the_end", url.Values{"sortBy": {"email"}, "offset": {"10"}}, []string{}, 4},
		}
		for _, tt := range tests {
			emails, body := listUsers(t, admin, tt.q)
			if !slices.Equal(emails, tt.want) || body["total"] != float64(tt.total) {
				t.Fatalf("%s: users %v total %v, want %v total %d", tt.name, emails, body["total"], tt.want, tt.total)
			}
			for _, k := range []string{"limit", "offset"} {
				v, given := body[k]
				if tt.q.Has(k) != given || (given && v != float64(mustAtoi(t, tt.q.Get(k)))) {
					t.Fatalf("%s: %s = %v in %v, want it only when given (%q)", tt.name, k, v, body, tt.q.Get(k))
				}
			}
		}
		for _, bad := range []url.Values{
			{"filterField": {"banned"}, "filterValue": {"maybe"}},
			{"filterField": {"createdAt"}, "filterValue": {"yesterday"}},
			{"searchField": {"password"}, "searchValue": {"x"}},
			{"limit": {"0"}},
		} {
			mustFrameworkBadRequest(t, admin.get(adminPath("list-users")+"?"+bad.Encode()))
		}
	})
}

// mustFrameworkBadRequest fails unless r is a 400 framework error with a code.
func mustFrameworkBadRequest(t testing.TB, r *response) {
	t.Helper()
	mustStatus(t, r, http.StatusBadRequest)
	if code, _ := r.JSON(t)["code"].(string); code == "" {
		t.Fatalf("400 without a code: %s", r.Body)
	}
}

// mustAtoi parses a decimal.
func mustAtoi(t testing.TB, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("%q is not a number", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// Ensure a ban ends the user's sessions and refuses sign-in with 403
// BANNED_USER to the right password only; administrators cannot ban
// themselves; a ban can expire; unban lets the user back in.
func TestAdmin_ban_and_unban(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		admin, adminID := mustAdmin(t, app)
		const email = "bob@example.com"
		bob, bobID := mustPlainUser(t, app, "Bob", email, userPassword)
		bob2 := app.client(t)
		mustSignIn(t, bob2, email, userPassword)
		bobBearer := mustSignIn(t, app.client(t), email, userPassword)

		r := admin.post(adminPath("ban-user"), mustJSON(t, map[string]any{"userId": bobID, "banReason": "spam"}))
		u := mustObject(t, mustOK(t, r)["user"])
		if u["id"] != bobID || u["banned"] != true || u["banReason"] != "spam" || u["banExpires"] != nil {
			t.Fatalf("ban-user = %s", r.Body)
		}
		mustNoSession(t, bob)
		mustNoSession(t, bob2)
		mustNull(t, app.client(t).get("/api/auth/get-session", "Authorization", "Bearer "+bobBearer))
		mustCode(t, app.client(t).post("/api/auth/sign-in/email", mustCredentials(t, email, userPassword)), http.StatusForbidden, "BANNED_USER")
		mustSignInFails(t, app, email, "the wrong passphrase")
		if body := mustOK(t, admin.post(adminPath("list-user-sessions"), mustJSON(t, map[string]string{"userId": bobID}))); len(body["sessions"].([]any)) != 0 {
			t.Fatalf("banned user still has sessions: %v", body)
		}

		mustCode(t, admin.post(adminPath("ban-user"), mustJSON(t, map[string]any{"userId": adminID})), http.StatusBadRequest, "YOU_CANNOT_BAN_YOURSELF")
		mustSession(t, admin)
		mustCode(t, admin.post(adminPath("ban-user"), mustJSON(t, map[string]any{"userId": "no-such-user"})), http.StatusNotFound, "USER_NOT_FOUND")

		r = admin.post(adminPath("unban-user"), mustJSON(t, map[string]string{"userId": bobID}))
		if u := mustObject(t, mustOK(t, r)["user"]); u["banned"] != false || u["banReason"] != nil || u["banExpires"] != nil {
			t.Fatalf("unban-user = %s", r.Body)
		}
		mustSignIn(t, app.client(t), email, userPassword)

		// A ban with an expiry carries it, and lifts by itself.
		before := time.Now()
		r = admin.post(adminPath("ban-user"), mustJSON(t, map[string]any{"userId": bobID, "banExpiresIn": 3600}))
		u = mustObject(t, mustOK(t, r)["user"])
		mustJSDates(t, u, "banExpires")
		exp, _ := time.Parse(time.RFC3339Nano, u["banExpires"].(string))
		if exp.Before(before.Add(time.Hour-time.Second)) || exp.After(time.Now().Add(time.Hour+time.Second)) {
			t.Fatalf("banExpires = %v, want an hour from now", exp)
		}
		mustCode(t, app.client(t).post("/api/auth/sign-in/email", mustCredentials(t, email, userPassword)), http.StatusForbidden, "BANNED_USER")

		r = admin.post(adminPath("ban-user"), mustJSON(t, map[string]any{"userId": bobID, "banExpiresIn": 1}))
		u = mustObject(t, mustOK(t, r)["user"])
		exp, _ = time.Parse(time.RFC3339Nano, u["banExpires"].(string))
		time.Sleep(time.Until(exp) + 50*time.Millisecond)
		mustSignIn(t, app.client(t), email, userPassword)
	})
}

// Ensure list-user-sessions, revoke-user-session (by public handle),
// revoke-user-sessions, set-user-password and remove-user.
func TestAdmin_sessions_passwords_and_removal(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		admin, adminID := mustAdmin(t, app)
		const email = "carol@example.com"
		c1, carolID := mustPlainUser(t, app, "Carol", email, userPassword)
		c2 := app.client(t)
		mustSignIn(t, c2, email, userPassword)
		other, _ := mustPlainUser(t, app, "Dan", "dan@example.com", userPassword)
		handle2 := mustObject(t, mustSession(t, c2)["session"])["token"].(string)

		r := admin.post(adminPath("list-user-sessions"), mustJSON(t, map[string]string{"userId": carolID}))
		body := mustOK(t, r)
		sessions, _ := body["sessions"].([]any)
		if len(sessions) != 2 {
			t.Fatalf("list-user-sessions = %s, want 2 sessions", r.Body)
		}
		for _, s := range sessions {
			m := mustObject(t, s)
			if m["userId"] != carolID || m["token"] != m["id"] || m["impersonatedBy"] != nil {
				t.Fatalf("session = %v", m)
			}
			mustJSDates(t, m, "expiresAt", "createdAt", "updatedAt")
		}
		mustCode(t, admin.post(adminPath("list-user-sessions"), mustJSON(t, map[string]string{"userId": "no-such-user"})), http.StatusNotFound, "USER_NOT_FOUND")

		if body := mustOK(t, admin.post(adminPath("revoke-user-session"), mustJSON(t, map[string]string{"sessionToken": handle2}))); body["success"] != true {
			t.Fatalf("revoke-user-session = %v", body)
		}
		mustNoSession(t, c2)
		mustSession(t, c1)
		mustCode(t, admin.post(adminPath("revoke-user-session"), mustJSON(t, map[string]string{"sessionToken": handle2})), http.StatusNotFound, "SESSION_NOT_FOUND")

		c3 := app.client(t)
		mustSignIn(t, c3, email, userPassword)
		if body := mustOK(t, admin.post(adminPath("revoke-user-sessions"), mustJSON(t, map[string]string{"userId": carolID}))); body["success"] != true {
			t.Fatalf("revoke-user-sessions = %v", body)
		}
		mustNoSession(t, c1)
		mustNoSession(t, c3)
		mustSession(t, other)
		mustSession(t, admin)

		// set-user-password: the policy applies, sessions end, the new password signs in.
		c4 := app.client(t)
		mustSignIn(t, c4, email, userPassword)
		set := func(pw string) *response {
			return admin.post(adminPath("set-user-password"), mustJSON(t, map[string]string{"userId": carolID, "newPassword": pw}))
		}
		mustCode(t, set("short"), http.StatusBadRequest, "PASSWORD_TOO_SHORT")
		if msg := mustCode(t, admin.post(adminPath("set-user-password"), mustJSON(t, map[string]string{"userId": carolID})), http.StatusBadRequest, "VALIDATION_ERROR"); !strings.Contains(msg, "body.newPassword") {
			t.Fatalf("missing newPassword: message %q does not name body.newPassword", msg)
		}
		mustSession(t, c4) // refusals change nothing
		mustSignIn(t, app.client(t), email, userPassword)
		const newPw = "a password the admin chose"
		mustStatusTrue(t, set(newPw))
		mustNoSession(t, c4)
		mustSignInFails(t, app, email, userPassword)
		mustSignIn(t, app.client(t), email, newPw)

		// remove-user deletes the account and its sessions; not oneself.
		c5 := app.client(t)
		mustSignIn(t, c5, email, newPw)
		mustCode(t, admin.post(adminPath("remove-user"), mustJSON(t, map[string]string{"userId": adminID})), http.StatusBadRequest, "YOU_CANNOT_REMOVE_YOURSELF")
		mustSession(t, admin)
		if body := mustOK(t, admin.post(adminPath("remove-user"), mustJSON(t, map[string]string{"userId": carolID}))); body["success"] != true {
			t.Fatalf("remove-user = %v", body)
		}
		mustNoSession(t, c5)
		mustSignInFails(t, app, email, newPw)
		mustCode(t, admin.get(adminPath("get-user")+"?id="+carolID), http.StatusNotFound, "USER_NOT_FOUND")
		mustCode(t, admin.post(adminPath("remove-user"), mustJSON(t, map[string]string{"userId": carolID})), http.StatusNotFound, "USER_NOT_FOUND")
		// The address is free again.
		mustSignUp(t, app.client(t), "Carol", email, userPassword)
	})
}

// Ensure impersonation: the administrator's cookie jar acts as the user,
// the session says who impersonates, the user does not see it among their
// sessions, administrators cannot be impersonated, and stopping restores
// the administrator and ends the impersonation session.
func TestAdmin_impersonation(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		admin, adminID := mustAdmin(t, app)
		adminSessionID := mustObject(t, mustSession(t, admin)["session"])["id"]
		dave, daveID := mustPlainUser(t, app, "Dave", "dave@example.com", userPassword)
		other := mustObject(t, mustOK(t, admin.post(adminPath("create-user"), mustJSON(t, map[string]any{"email": "ops@example.com", "name": "Ops", "password": userPassword, "role": "admin"})))["user"])

		mustCode(t, admin.post(adminPath("impersonate-user"), mustJSON(t, map[string]string{"userId": mustID(t, other)})), http.StatusForbidden, "YOU_CANNOT_IMPERSONATE_ADMINS")
		mustCode(t, admin.post(adminPath("impersonate-user"), mustJSON(t, map[string]string{"userId": adminID})), http.StatusForbidden, "YOU_CANNOT_IMPERSONATE_ADMINS")
		mustCode(t, admin.post(adminPath("impersonate-user"), mustJSON(t, map[string]string{"userId": "no-such-user"})), http.StatusNotFound, "USER_NOT_FOUND")
		mustCode(t, admin.post(adminPath("stop-impersonating"), "{}"), http.StatusBadRequest, "NOT_IMPERSONATING")
		mustCode(t, dave.post(adminPath("stop-impersonating"), "{}"), http.StatusBadRequest, "NOT_IMPERSONATING")

		r := admin.post(adminPath("impersonate-user"), mustJSON(t, map[string]string{"userId": daveID}))
		body := mustOK(t, r)
		if u := mustObject(t, body["user"]); u["id"] != daveID {
			t.Fatalf("impersonate-user user = %s", r.Body)
		}
		impSession := mustObject(t, body["session"])
		if impSession["impersonatedBy"] != adminID || impSession["userId"] != daveID {
			t.Fatalf("impersonate-user session = %s", r.Body)
		}
		if c := setCookies(r)["gatehouse.admin_session"]; c == nil || c.Value == "" || !c.HttpOnly {
			t.Fatalf("no admin_session cookie: %q", r.Header.Values("Set-Cookie"))
		}
		// The impersonation lasts an hour, in a browser-session cookie.
		mustJSDates(t, impSession, "expiresAt")
		if exp, _ := time.Parse(time.RFC3339Nano, impSession["expiresAt"].(string)); exp.Before(time.Now().Add(59*time.Minute)) || exp.After(time.Now().Add(61*time.Minute)) {
			t.Fatalf("impersonation session expires at %v, want in an hour", exp)
		}
		if line := strings.ToLower(rawSetCookie(r, "gatehouse.session_token")); line == "" || strings.Contains(line, "max-age") || strings.Contains(line, "expires") {
			t.Fatalf("impersonation session cookie = %q, want one without a lifetime", line)
		}
		if c := setCookies(r)["gatehouse.dont_remember"]; c == nil || c.Value == "" {
			t.Fatalf("no dont_remember cookie: %q", r.Header.Values("Set-Cookie"))
		}
		if r.Header.Get("set-auth-token") == "" {
			t.Fatal("impersonate-user has no set-auth-token")
		}

		s := mustSession(t, admin)
		if mustUser(t, s)["id"] != daveID || mustObject(t, s["session"])["impersonatedBy"] != adminID {
			t.Fatalf("get-session while impersonating = %v", s)
		}
		impersonating := admin.clone()
		// Acting as Dave, the jar has no administrator's rights.
		mustCode(t, admin.get(adminPath("list-users")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS")

		// Dave does not see the impersonation among his sessions; administrators do.
		r = dave.get("/api/auth/list-sessions")
		var own []map[string]any
		mustUnmarshal(t, r.Body, &own)
		if len(own) != 1 || own[0]["id"] == impSession["id"] {
			t.Fatalf("Dave's list-sessions = %s, want only his own session", r.Body)
		}
		admin2 := app.client(t)
		mustSignIn(t, admin2, adminEmail, adminPassword)
		if n := len(mustOK(t, admin2.post(adminPath("list-user-sessions"), mustJSON(t, map[string]string{"userId": daveID})))["sessions"].([]any)); n != 2 {
			t.Fatalf("list-user-sessions during impersonation has %d sessions, want 2", n)
		}

		r = admin.post(adminPath("stop-impersonating"), "{}")
		body = mustOK(t, r)
		if mustObject(t, body["user"])["id"] != adminID || mustObject(t, body["session"])["id"] != adminSessionID {
			t.Fatalf("stop-impersonating = %s", r.Body)
		}
		if !strings.Contains(rawSetCookie(r, "gatehouse.admin_session"), "Max-Age=0") {
			t.Fatalf("admin_session not cleared: %q", r.Header.Values("Set-Cookie"))
		}
		s = mustSession(t, admin)
		if mustUser(t, s)["id"] != adminID || mustObject(t, s["session"])["impersonatedBy"] != nil || mustObject(t, s["session"])["id"] != adminSessionID {
			t.Fatalf("get-session after stop-impersonating = %v", s)
		}
		mustOK(t, admin.get(adminPath("list-users")))
		mustNoSession(t, impersonating)
		mustCode(t, impersonating.post(adminPath("stop-impersonating"), "{}"), http.StatusUnauthorized, "UNAUTHORIZED")
		if n := len(mustOK(t, admin.post(adminPath("list-user-sessions"), mustJSON(t, map[string]string{"userId": daveID})))["sessions"].([]any)); n != 1 {
			t.Fatalf("list-user-sessions after stop has %d sessions, want 1", n)
		}
		mustSession(t, dave)
		mustCode(t, admin.post(adminPath("stop-impersonating"), "{}"), http.StatusBadRequest, "NOT_IMPERSONATING")
	})
}

// Ensure cookie-authenticated state changes on the administration routes
// need a trusted Origin, as the framework's do.
func TestAdmin_csrf(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)
		victim, victimID := mustPlainUser(t, app, "Vic", "vic@example.com", userPassword)
		key := mustJSON(t, map[string]any{"name": "csrf", "scopes": []string{"*"}})
		ban := mustJSON(t, map[string]string{"userId": victimID})
		for _, h := range []struct {
			name, origin, code string
		}{
			{"no_origin", "", "MISSING_OR_NULL_ORIGIN"},
			{"null_origin", "null", "MISSING_OR_NULL_ORIGIN"},
			{"evil_origin", "https://evil.example", "INVALID_ORIGIN"},
		} {
			mustCode(t, admin.post(adminPath("ban-user"), ban, "Origin", h.origin), http.StatusForbidden, h.code)
			r := admin.post("/api/admin/service-keys", key, "Origin", h.origin)
			mustProblem(t, r, http.StatusForbidden, "request."+strings.ToLower(h.code))
			r = admin.do(http.MethodDelete, "/api/admin/service-keys/anything", "", "Origin", h.origin)
			mustProblem(t, r, http.StatusForbidden, "request."+strings.ToLower(h.code))
		}
		mustSession(t, victim)
		if keys := mustOK(t, admin.get("/api/admin/service-keys"))["data"].([]any); len(keys) != 0 {
			t.Fatalf("a cross-site request created keys: %v", keys)
		}
		// A trusted Origin passes.
		mustOK(t, admin.post(adminPath("ban-user"), ban))
		mustStatus(t, admin.post("/api/admin/service-keys", key), http.StatusCreated)
	})
}
