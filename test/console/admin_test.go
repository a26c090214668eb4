package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure every admin route answers 401 without a session, and 403 with the
// admin plugin's code to a signed-in user who is not an administrator;
// has-permission answers false to them and stop-impersonating 400.
func TestAdmin_routes_refuse_anonymous_and_plain_users(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every user.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		_, adminID := harness.MustAdmin(t, app)
		plain, _ := harness.MustPlainUser(t, app, "Eve", "eve@example.com", harness.UserPassword)
		victim := harness.MustJSON(t, map[string]string{"userId": adminID})
		routes := []struct {
			method, name, body, code string
		}{
			{http.MethodPost, "create-user", harness.MustJSON(t, map[string]any{"email": "new@example.com", "name": "New", "password": harness.UserPassword}), "YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS"},
			{http.MethodGet, "list-users", "", "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS"},
			{http.MethodGet, "get-user?id=" + adminID, "", "YOU_ARE_NOT_ALLOWED_TO_GET_USER"},
			{http.MethodPost, "update-user", harness.MustJSON(t, map[string]any{"userId": adminID, "data": map[string]any{"name": "Owned"}}), "YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS"},
			{http.MethodPost, "set-role", harness.MustJSON(t, map[string]any{"userId": adminID, "role": "user"}), "YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE"},
			{http.MethodPost, "ban-user", victim, "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS"},
			{http.MethodPost, "unban-user", victim, "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS"},
			{http.MethodPost, "list-user-sessions", victim, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS"},
			{http.MethodPost, "revoke-user-session", harness.MustJSON(t, map[string]string{"sessionToken": "some-session"}), "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS"},
			{http.MethodPost, "revoke-user-sessions", victim, "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS"},
			{http.MethodPost, "remove-user", victim, "YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS"},
			{http.MethodPost, "set-user-password", harness.MustJSON(t, map[string]string{"userId": adminID, "newPassword": "a stolen passphrase"}), "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD"},
			{http.MethodPost, "impersonate-user", victim, "YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS"},
			{http.MethodPost, "stop-impersonating", "{}", "NOT_IMPERSONATING"},
			{http.MethodPost, "has-permission", harness.MustJSON(t, map[string]any{"permissions": map[string][]string{"user": {"ban"}}}), ""},
		}
		for _, rt := range routes {
			if r := app.NewClient(t).Do(rt.method, harness.AdminPath(rt.name), rt.body); r.Status != http.StatusUnauthorized {
				t.Fatalf("anonymous %s %s = %d %s, want 401", rt.method, rt.name, r.Status, r.Body)
			}
			r := plain.Do(rt.method, harness.AdminPath(rt.name), rt.body)
			switch rt.name {
			case "has-permission":
				if body := harness.MustOK(t, r); body["success"] != false || body["error"] != nil {
					t.Fatalf("has-permission for a plain user = %s", r.Body)
				}
			case "stop-impersonating":
				harness.MustCode(t, r, http.StatusBadRequest, rt.code)
			default:
				harness.MustCode(t, r, http.StatusForbidden, rt.code)
			}
		}
		// Nothing was done on the plain user's behalf.
		admin := app.NewClient(t)
		harness.MustSignIn(t, admin, harness.AdminEmail, harness.AdminPassword)
		if u := harness.MustOK(t, admin.Get(harness.AdminPath("get-user")+"?id="+adminID)); u["name"] != "Root Admin" || u["banned"] != false {
			t.Fatalf("the refused requests changed the administrator: %v", u)
		}
		if emails, _ := harness.ListUsers(t, admin, url.Values{}); !slices.Equal(emails, []string{harness.AdminEmail, "eve@example.com"}) {
			t.Fatalf("users after the refused requests: %v", emails)
		}
	})
}

// Ensure an address in GATEHOUSE_ADMIN_EMAILS makes its user an
// administrator only once verified, and GATEHOUSE_ADMIN_USER_IDS makes one
// at once; has-permission follows.
func TestAdmin_configured_administrators(t *testing.T) {
	t.Parallel()
	perm := harness.MustJSON(t, map[string]any{"permissions": map[string][]string{"user": {"ban", "list"}, "session": {"revoke"}}})
	// Fresh applications: the administrator's address signs up unverified
	// here, and user_ids has a setting of its own.
	harness.AdminForStores(t, func(t *testing.T, app *harness.App) {
		c, _ := harness.MustPlainUser(t, app, "Root Admin", harness.AdminEmail, harness.AdminPassword)
		harness.MustCode(t, c.Get(harness.AdminPath("list-users")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS")
		if body := harness.MustOK(t, c.Post(harness.AdminPath("has-permission"), perm)); body["success"] != false {
			t.Fatalf("unverified configured address has permission: %s", body)
		}
		harness.MustOK(t, app.NewClient(t).Get(harness.MustLink(t, app, harness.AdminEmail, "Verify your email address")))
		harness.MustOK(t, c.Get(harness.AdminPath("list-users")))
		if body := harness.MustOK(t, c.Post(harness.AdminPath("has-permission"), perm)); body["success"] != true || body["error"] != nil {
			t.Fatalf("verified configured address lacks permission: %v", body)
		}
		// The deprecated name of the field works too; unknown actions are refused.
		if body := harness.MustOK(t, c.Post(harness.AdminPath("has-permission"), harness.MustJSON(t, map[string]any{"permission": map[string][]string{"user": {"create"}}}))); body["success"] != true {
			t.Fatalf("has-permission with permission = %v", body)
		}
		if body := harness.MustOK(t, c.Post(harness.AdminPath("has-permission"), harness.MustJSON(t, map[string]any{"permissions": map[string][]string{"user": {"impersonate-admins"}}}))); body["success"] != false {
			t.Fatalf("impersonate-admins granted: %v", body)
		}
		harness.MustCode(t, c.Post(harness.AdminPath("has-permission"), "{}"), http.StatusBadRequest, "INVALID_PERMISSIONS")
	})
	t.Run("user_ids", func(t *testing.T) {
		t.Parallel()
		// The id is known only after sign-up, so the second app shares the first one's database.
		first := harness.MustStart(t, harness.StoreSQLite, harness.FwQuick)
		c := first.NewClient(t)
		id := harness.MustID(t, harness.MustSignUp(t, c, "Ida", "ida@example.com", harness.UserPassword)["user"])
		harness.MustCode(t, c.Get(harness.AdminPath("list-users")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS")
		second := harness.MustStart(t, harness.StoreSQLite, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_DATABASE_URL": first.DatabaseURL, "GATEHOUSE_ADMIN_USER_IDS": id}))
		c2 := second.NewClient(t)
		harness.MustSignIn(t, c2, "ida@example.com", harness.UserPassword) // unverified: ids need no verification
		harness.MustOK(t, c2.Get(harness.AdminPath("list-users")))
	})
}

// Ensure create-user, get-user, update-user and set-role: shapes, roles
// with and without a password, Better Auth's codes.
func TestAdmin_create_get_update_users(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)

		// With a password and a role: {user}, the address lower-cased, unverified.
		r := admin.Post(harness.AdminPath("create-user"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "Grace@Example.com"), "name": "Grace Hopper", "password": harness.UserPassword, "role": []string{"admin"}}))
		body := harness.MustOK(t, r)
		grace := harness.MustObject(t, body["user"])
		if len(body) != 1 || grace["email"] != harness.Email(t, "grace@example.com") || grace["name"] != "Grace Hopper" || grace["role"] != "admin" ||
			grace["emailVerified"] != false || grace["banned"] != false || grace["image"] != nil || grace["banReason"] != nil || grace["banExpires"] != nil {
			t.Fatalf("create-user = %s", r.Body)
		}
		harness.MustJSDates(t, grace, "createdAt", "updatedAt")
		graceC := app.NewClient(t)
		harness.MustSignIn(t, graceC, harness.Email(t, "grace@example.com"), harness.UserPassword)
		harness.MustOK(t, graceC.Get(harness.AdminPath("list-users"))) // the admin role makes her an administrator

		// Without a password: nobody can sign in until it is set; data fields apply.
		r = admin.Post(harness.AdminPath("create-user"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "alan@example.com"), "name": "Alan Turing", "data": map[string]any{"emailVerified": true, "image": "https://example.com/alan.png"}}))
		alan := harness.MustObject(t, harness.MustOK(t, r)["user"])
		if alan["role"] != "user" || alan["emailVerified"] != true || alan["image"] != "https://example.com/alan.png" {
			t.Fatalf("create-user without password = %s", r.Body)
		}
		harness.MustSignInFails(t, app, harness.Email(t, "alan@example.com"), "")
		harness.MustSignInFails(t, app, harness.Email(t, "alan@example.com"), harness.UserPassword)

		// A comma-separated role string is accepted; unknown roles are not.
		r = admin.Post(harness.AdminPath("create-user"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "linus@example.com"), "name": "Linus", "password": harness.UserPassword, "role": "user"}))
		linus := harness.MustObject(t, harness.MustOK(t, r)["user"])
		harness.MustCode(t, admin.Post(harness.AdminPath("create-user"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "x@example.com"), "name": "X", "password": harness.UserPassword, "role": "superuser"})),
			http.StatusBadRequest, "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE")
		harness.MustCode(t, admin.Post(harness.AdminPath("create-user"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "GRACE@example.com"), "name": "Again", "password": harness.UserPassword})),
			http.StatusBadRequest, "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL")
		harness.MustCode(t, admin.Post(harness.AdminPath("create-user"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "weak@example.com"), "name": "Weak", "password": "short"})),
			http.StatusBadRequest, "PASSWORD_TOO_SHORT")

		// get-user is the bare user.
		r = admin.Get(harness.AdminPath("get-user") + "?id=" + harness.MustID(t, alan))
		got := harness.MustOK(t, r)
		if got["id"] != alan["id"] || got["email"] != harness.Email(t, "alan@example.com") || got["user"] != nil {
			t.Fatalf("get-user = %s", r.Body)
		}
		harness.MustCode(t, admin.Get(harness.AdminPath("get-user")+"?id=no-such-user"), http.StatusNotFound, "USER_NOT_FOUND")

		// update-user answers the bare user; roles change through it too.
		r = admin.Post(harness.AdminPath("update-user"), harness.MustJSON(t, map[string]any{"userId": linus["id"], "data": map[string]any{"name": "Linus T", "role": []string{"user", "admin"}}}))
		upd := harness.MustOK(t, r)
		if upd["id"] != linus["id"] || upd["name"] != "Linus T" || upd["role"] != "user,admin" || upd["user"] != nil {
			t.Fatalf("update-user = %s", r.Body)
		}
		harness.MustCode(t, admin.Post(harness.AdminPath("update-user"), harness.MustJSON(t, map[string]any{"userId": linus["id"], "data": map[string]any{"role": "owner"}})),
			http.StatusBadRequest, "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE")
		harness.MustCode(t, admin.Post(harness.AdminPath("update-user"), harness.MustJSON(t, map[string]any{"userId": "no-such-user", "data": map[string]any{"name": "Ghost"}})),
			http.StatusNotFound, "USER_NOT_FOUND")
		if got := harness.MustOK(t, admin.Get(harness.AdminPath("get-user")+"?id="+harness.MustID(t, linus))); got["name"] != "Linus T" || got["role"] != "user,admin" {
			t.Fatalf("update-user did not persist: %v", got)
		}
		harness.MustCode(t, admin.Post(harness.AdminPath("update-user"), harness.MustJSON(t, map[string]any{"userId": linus["id"], "data": map[string]any{}})), http.StatusBadRequest, "NO_DATA_TO_UPDATE")
		// Passwords, ids and bans do not change through update-user.
		for field, value := range map[string]any{"password": "a hijacked passphrase", "id": "another-id", "banned": true, "banReason": "x"} {
			harness.MustStatus(t, admin.Post(harness.AdminPath("update-user"), harness.MustJSON(t, map[string]any{"userId": linus["id"], "data": map[string]any{field: value}})), http.StatusBadRequest)
		}
		harness.MustSignIn(t, app.NewClient(t), harness.Email(t, "linus@example.com"), harness.UserPassword)
		if got := harness.MustOK(t, admin.Get(harness.AdminPath("get-user")+"?id="+harness.MustID(t, linus))); got["banned"] != false {
			t.Fatalf("update-user banned the user: %v", got)
		}
		// A new address is lower-cased and unverified.
		r = admin.Post(harness.AdminPath("update-user"), harness.MustJSON(t, map[string]any{"userId": alan["id"], "data": map[string]any{"email": harness.Email(t, "Alan@Example.NET")}}))
		if upd := harness.MustOK(t, r); upd["email"] != harness.Email(t, "alan@example.net") || upd["emailVerified"] != false {
			t.Fatalf("update-user email = %s", r.Body)
		}
		// An account made without a password gets one through set-user-password.
		harness.MustStatusTrue(t, admin.Post(harness.AdminPath("set-user-password"), harness.MustJSON(t, map[string]any{"userId": alan["id"], "newPassword": harness.UserPassword})))
		harness.MustSignIn(t, app.NewClient(t), harness.Email(t, "alan@example.net"), harness.UserPassword)

		// set-role answers {user}; unknown roles are refused; demotion takes effect at once.
		r = admin.Post(harness.AdminPath("set-role"), harness.MustJSON(t, map[string]any{"userId": grace["id"], "role": "user"}))
		if u := harness.MustObject(t, harness.MustOK(t, r)["user"]); u["role"] != "user" || u["id"] != grace["id"] {
			t.Fatalf("set-role = %s", r.Body)
		}
		harness.MustCode(t, graceC.Get(harness.AdminPath("list-users")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS")
		harness.MustCode(t, admin.Post(harness.AdminPath("set-role"), harness.MustJSON(t, map[string]any{"userId": grace["id"], "role": []string{"admin", "root"}})),
			http.StatusBadRequest, "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE")
		if u := harness.MustOK(t, admin.Get(harness.AdminPath("get-user")+"?id="+harness.MustID(t, grace))); u["role"] != "user" {
			t.Fatalf("a refused set-role changed the role: %v", u)
		}
	})
}

// Ensure list-users searches, filters, sorts and pages, with the total, and
// echoes limit and offset only when given.
func TestAdmin_list_users(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every user.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		create := func(email, name string, extra map[string]any) map[string]any {
			body := map[string]any{"email": email, "name": name, "password": harness.UserPassword}
			for k, v := range extra {
				body[k] = v
			}
			return harness.MustObject(t, harness.MustOK(t, admin.Post(harness.AdminPath("create-user"), harness.MustJSON(t, body)))["user"])
		}
		grace := create("grace@example.com", "Grace Hopper", map[string]any{"role": "admin"})
		create("alan@example.org", "Alan Turing", map[string]any{"data": map[string]any{"emailVerified": true}})
		linus := create("linus@example.com", "Linus Torvalds", nil)
		harness.MustOK(t, admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": linus["id"]})))

		all := []string{harness.AdminEmail, "grace@example.com", "alan@example.org", "linus@example.com"}
		tests := []struct {
			name  string
			q     url.Values
			want  []string // in order
			total int
		}{
			{"all_oldest_first", url.Values{}, all, 4},
			{"email_contains_any_case", url.Values{"searchValue": {"GRACE"}}, []string{"grace@example.com"}, 1},
			{"email_contains_domain", url.Values{"searchValue": {"example.com"}, "searchField": {"email"}, "searchOperator": {"contains"}}, []string{harness.AdminEmail, "grace@example.com", "linus@example.com"}, 3},
			{"email_starts_with", url.Values{"searchValue": {"al"}, "searchField": {"email"}, "searchOperator": {"starts_with"}}, []string{"alan@example.org"}, 1},
			{"email_starts_with_no_match", url.Values{"searchValue": {"example"}, "searchField": {"email"}, "searchOperator": {"starts_with"}}, []string{}, 0},
			{"name_contains", url.Values{"searchValue": {"tUr"}, "searchField": {"name"}}, []string{"alan@example.org"}, 1},
			{"name_starts_with", url.Values{"searchValue": {"li"}, "searchField": {"name"}, "searchOperator": {"starts_with"}}, []string{"linus@example.com"}, 1},
			{"name_starts_with_not_inside", url.Values{"searchValue": {"hopper"}, "searchField": {"name"}, "searchOperator": {"starts_with"}}, []string{}, 0},
			{"role_admin", url.Values{"filterField": {"role"}, "filterValue": {"admin"}}, []string{"grace@example.com"}, 1},
			{"banned", url.Values{"filterField": {"banned"}, "filterValue": {"true"}}, []string{"linus@example.com"}, 1},
			{"not_banned", url.Values{"filterField": {"banned"}, "filterValue": {"true"}, "filterOperator": {"ne"}}, []string{harness.AdminEmail, "grace@example.com", "alan@example.org"}, 3},
			{"verified", url.Values{"filterField": {"emailVerified"}, "filterValue": {"true"}}, []string{harness.AdminEmail, "alan@example.org"}, 2},
			{"unverified", url.Values{"filterField": {"emailVerified"}, "filterValue": {"false"}}, []string{"grace@example.com", "linus@example.com"}, 2},
			{"created_at_or_after", url.Values{"filterField": {"createdAt"}, "filterOperator": {"gte"}, "filterValue": {grace["createdAt"].(string)}}, []string{"grace@example.com", "alan@example.org", "linus@example.com"}, 3},
			{"created_before", url.Values{"filterField": {"createdAt"}, "filterOperator": {"lt"}, "filterValue": {grace["createdAt"].(string)}}, []string{harness.AdminEmail}, 1},
			{"search_and_filter", url.Values{"searchValue": {"example.com"}, "filterField": {"banned"}, "filterValue": {"false"}}, []string{harness.AdminEmail, "grace@example.com"}, 2},
			{"sort_name_asc", url.Values{"sortBy": {"name"}, "sortDirection": {"asc"}}, []string{"alan@example.org", "grace@example.com", "linus@example.com", harness.AdminEmail}, 4},
			{"sort_name_desc", url.Values{"sortBy": {"name"}, "sortDirection": {"desc"}}, []string{harness.AdminEmail, "linus@example.com", "grace@example.com", "alan@example.org"}, 4},
			{"sort_created_desc", url.Values{"sortBy": {"createdAt"}, "sortDirection": {"desc"}}, []string{"linus@example.com", "alan@example.org", "grace@example.com", harness.AdminEmail}, 4},
			{"first_page", url.Values{"sortBy": {"email"}, "limit": {"2"}}, []string{"alan@example.org", "grace@example.com"}, 4},
			{"second_page", url.Values{"sortBy": {"email"}, "limit": {"2"}, "offset": {"2"}}, []string{"linus@example.com", harness.AdminEmail}, 4},
			{"past_the_end", url.Values{"sortBy": {"email"}, "offset": {"10"}}, []string{}, 4},
		}
		for _, tt := range tests {
			emails, body := harness.ListUsers(t, admin, tt.q)
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
			mustFrameworkBadRequest(t, admin.Get(harness.AdminPath("list-users")+"?"+bad.Encode()))
		}
	})
}

// mustFrameworkBadRequest fails unless r is a 400 framework error with a code.
func mustFrameworkBadRequest(t testing.TB, r *harness.Response) {
	t.Helper()
	harness.MustStatus(t, r, http.StatusBadRequest)
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
	// A fresh application: the clock moves by a minute, and the ban's expiry
	// is read against the wall clock.
	harness.AdminForStores(t, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		const email = "bob@example.com"
		bob, bobID := harness.MustPlainUser(t, app, "Bob", email, harness.UserPassword)
		bob2 := app.NewClient(t)
		harness.MustSignIn(t, bob2, email, harness.UserPassword)
		bobBearer := harness.MustSignIn(t, app.NewClient(t), email, harness.UserPassword)

		r := admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": bobID, "banReason": "spam"}))
		u := harness.MustObject(t, harness.MustOK(t, r)["user"])
		if u["id"] != bobID || u["banned"] != true || u["banReason"] != "spam" || u["banExpires"] != nil {
			t.Fatalf("ban-user = %s", r.Body)
		}
		harness.MustNoSession(t, bob)
		harness.MustNoSession(t, bob2)
		harness.MustNull(t, app.NewClient(t).Get("/api/auth/get-session", "Authorization", "Bearer "+bobBearer))
		harness.MustCode(t, app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, email, harness.UserPassword)), http.StatusForbidden, "BANNED_USER")
		harness.MustSignInFails(t, app, email, "the wrong passphrase")
		if body := harness.MustOK(t, admin.Post(harness.AdminPath("list-user-sessions"), harness.MustJSON(t, map[string]string{"userId": bobID}))); len(body["sessions"].([]any)) != 0 {
			t.Fatalf("banned user still has sessions: %v", body)
		}

		harness.MustCode(t, admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": adminID})), http.StatusBadRequest, "YOU_CANNOT_BAN_YOURSELF")
		harness.MustSession(t, admin)
		harness.MustCode(t, admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": "no-such-user"})), http.StatusNotFound, "USER_NOT_FOUND")

		r = admin.Post(harness.AdminPath("unban-user"), harness.MustJSON(t, map[string]string{"userId": bobID}))
		if u := harness.MustObject(t, harness.MustOK(t, r)["user"]); u["banned"] != false || u["banReason"] != nil || u["banExpires"] != nil {
			t.Fatalf("unban-user = %s", r.Body)
		}
		harness.MustSignIn(t, app.NewClient(t), email, harness.UserPassword)

		// A ban with an expiry carries it, and lifts by itself.
		before := time.Now()
		r = admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": bobID, "banExpiresIn": 3600}))
		u = harness.MustObject(t, harness.MustOK(t, r)["user"])
		harness.MustJSDates(t, u, "banExpires")
		exp, _ := time.Parse(time.RFC3339Nano, u["banExpires"].(string))
		if exp.Before(before.Add(time.Hour-time.Second)) || exp.After(time.Now().Add(time.Hour+time.Second)) {
			t.Fatalf("banExpires = %v, want an hour from now", exp)
		}
		harness.MustCode(t, app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, email, harness.UserPassword)), http.StatusForbidden, "BANNED_USER")

		r = admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": bobID, "banExpiresIn": 60}))
		u = harness.MustObject(t, harness.MustOK(t, r)["user"])
		exp, _ = time.Parse(time.RFC3339Nano, u["banExpires"].(string))
		harness.MustCode(t, app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, email, harness.UserPassword)), http.StatusForbidden, "BANNED_USER")
		app.Clock.AdvancePast(exp)
		harness.MustSignIn(t, app.NewClient(t), email, harness.UserPassword)
	})
}

// Ensure list-user-sessions, revoke-user-session (by public handle),
// revoke-user-sessions, set-user-password and remove-user.
func TestAdmin_sessions_passwords_and_removal(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		email := harness.Email(t, "carol@example.com")
		c1, carolID := harness.MustPlainUser(t, app, "Carol", email, harness.UserPassword)
		c2 := app.NewClient(t)
		harness.MustSignIn(t, c2, email, harness.UserPassword)
		other, _ := harness.MustPlainUser(t, app, "Dan", harness.Email(t, "dan@example.com"), harness.UserPassword)
		handle2 := harness.MustObject(t, harness.MustSession(t, c2)["session"])["token"].(string)

		r := admin.Post(harness.AdminPath("list-user-sessions"), harness.MustJSON(t, map[string]string{"userId": carolID}))
		body := harness.MustOK(t, r)
		sessions, _ := body["sessions"].([]any)
		if len(sessions) != 2 {
			t.Fatalf("list-user-sessions = %s, want 2 sessions", r.Body)
		}
		for _, s := range sessions {
			m := harness.MustObject(t, s)
			if m["userId"] != carolID || m["token"] != m["id"] || m["impersonatedBy"] != nil {
				t.Fatalf("session = %v", m)
			}
			harness.MustJSDates(t, m, "expiresAt", "createdAt", "updatedAt")
		}
		harness.MustCode(t, admin.Post(harness.AdminPath("list-user-sessions"), harness.MustJSON(t, map[string]string{"userId": "no-such-user"})), http.StatusNotFound, "USER_NOT_FOUND")

		if body := harness.MustOK(t, admin.Post(harness.AdminPath("revoke-user-session"), harness.MustJSON(t, map[string]string{"sessionToken": handle2}))); body["success"] != true {
			t.Fatalf("revoke-user-session = %v", body)
		}
		harness.MustNoSession(t, c2)
		harness.MustSession(t, c1)
		harness.MustCode(t, admin.Post(harness.AdminPath("revoke-user-session"), harness.MustJSON(t, map[string]string{"sessionToken": handle2})), http.StatusNotFound, "SESSION_NOT_FOUND")

		c3 := app.NewClient(t)
		harness.MustSignIn(t, c3, email, harness.UserPassword)
		if body := harness.MustOK(t, admin.Post(harness.AdminPath("revoke-user-sessions"), harness.MustJSON(t, map[string]string{"userId": carolID}))); body["success"] != true {
			t.Fatalf("revoke-user-sessions = %v", body)
		}
		harness.MustNoSession(t, c1)
		harness.MustNoSession(t, c3)
		harness.MustSession(t, other)
		harness.MustSession(t, admin)

		// set-user-password: the policy applies, sessions end, the new password signs in.
		c4 := app.NewClient(t)
		harness.MustSignIn(t, c4, email, harness.UserPassword)
		set := func(pw string) *harness.Response {
			return admin.Post(harness.AdminPath("set-user-password"), harness.MustJSON(t, map[string]string{"userId": carolID, "newPassword": pw}))
		}
		harness.MustCode(t, set("short"), http.StatusBadRequest, "PASSWORD_TOO_SHORT")
		if msg := harness.MustCode(t, admin.Post(harness.AdminPath("set-user-password"), harness.MustJSON(t, map[string]string{"userId": carolID})), http.StatusBadRequest, "VALIDATION_ERROR"); !strings.Contains(msg, "body.newPassword") {
			t.Fatalf("missing newPassword: message %q does not name body.newPassword", msg)
		}
		harness.MustSession(t, c4) // refusals change nothing
		harness.MustSignIn(t, app.NewClient(t), email, harness.UserPassword)
		const newPw = "a password the admin chose"
		harness.MustStatusTrue(t, set(newPw))
		harness.MustNoSession(t, c4)
		harness.MustSignInFails(t, app, email, harness.UserPassword)
		harness.MustSignIn(t, app.NewClient(t), email, newPw)

		// remove-user deletes the account and its sessions; not oneself.
		c5 := app.NewClient(t)
		harness.MustSignIn(t, c5, email, newPw)
		harness.MustCode(t, admin.Post(harness.AdminPath("remove-user"), harness.MustJSON(t, map[string]string{"userId": adminID})), http.StatusBadRequest, "YOU_CANNOT_REMOVE_YOURSELF")
		harness.MustSession(t, admin)
		if body := harness.MustOK(t, admin.Post(harness.AdminPath("remove-user"), harness.MustJSON(t, map[string]string{"userId": carolID}))); body["success"] != true {
			t.Fatalf("remove-user = %v", body)
		}
		harness.MustNoSession(t, c5)
		harness.MustSignInFails(t, app, email, newPw)
		harness.MustCode(t, admin.Get(harness.AdminPath("get-user")+"?id="+carolID), http.StatusNotFound, "USER_NOT_FOUND")
		harness.MustCode(t, admin.Post(harness.AdminPath("remove-user"), harness.MustJSON(t, map[string]string{"userId": carolID})), http.StatusNotFound, "USER_NOT_FOUND")
		// The address is free again.
		harness.MustSignUp(t, app.NewClient(t), "Carol", email, harness.UserPassword)
	})
}

// Ensure impersonation: the administrator's cookie jar acts as the user,
// the session says who impersonates, the user does not see it among their
// sessions, administrators cannot be impersonated, and stopping restores
// the administrator and ends the impersonation session.
func TestAdmin_impersonation(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		adminSessionID := harness.MustObject(t, harness.MustSession(t, admin)["session"])["id"]
		dave, daveID := harness.MustPlainUser(t, app, "Dave", harness.Email(t, "dave@example.com"), harness.UserPassword)
		other := harness.MustObject(t, harness.MustOK(t, admin.Post(harness.AdminPath("create-user"), harness.MustJSON(t, map[string]any{"email": harness.Email(t, "ops@example.com"), "name": "Ops", "password": harness.UserPassword, "role": "admin"})))["user"])

		harness.MustCode(t, admin.Post(harness.AdminPath("impersonate-user"), harness.MustJSON(t, map[string]string{"userId": harness.MustID(t, other)})), http.StatusForbidden, "YOU_CANNOT_IMPERSONATE_ADMINS")
		harness.MustCode(t, admin.Post(harness.AdminPath("impersonate-user"), harness.MustJSON(t, map[string]string{"userId": adminID})), http.StatusForbidden, "YOU_CANNOT_IMPERSONATE_ADMINS")
		harness.MustCode(t, admin.Post(harness.AdminPath("impersonate-user"), harness.MustJSON(t, map[string]string{"userId": "no-such-user"})), http.StatusNotFound, "USER_NOT_FOUND")
		harness.MustCode(t, admin.Post(harness.AdminPath("stop-impersonating"), "{}"), http.StatusBadRequest, "NOT_IMPERSONATING")
		harness.MustCode(t, dave.Post(harness.AdminPath("stop-impersonating"), "{}"), http.StatusBadRequest, "NOT_IMPERSONATING")

		r := admin.Post(harness.AdminPath("impersonate-user"), harness.MustJSON(t, map[string]string{"userId": daveID}))
		body := harness.MustOK(t, r)
		if u := harness.MustObject(t, body["user"]); u["id"] != daveID {
			t.Fatalf("impersonate-user user = %s", r.Body)
		}
		impSession := harness.MustObject(t, body["session"])
		if impSession["impersonatedBy"] != adminID || impSession["userId"] != daveID {
			t.Fatalf("impersonate-user session = %s", r.Body)
		}
		if c := harness.SetCookies(r)["gatehouse.admin_session"]; c == nil || c.Value == "" || !c.HttpOnly {
			t.Fatalf("no admin_session cookie: %q", r.Header.Values("Set-Cookie"))
		}
		// The impersonation lasts an hour, in a browser-session cookie.
		harness.MustJSDates(t, impSession, "expiresAt")
		if exp, _ := time.Parse(time.RFC3339Nano, impSession["expiresAt"].(string)); exp.Before(time.Now().Add(59*time.Minute)) || exp.After(time.Now().Add(61*time.Minute)) {
			t.Fatalf("impersonation session expires at %v, want in an hour", exp)
		}
		if line := strings.ToLower(harness.RawSetCookie(r, "gatehouse.session_token")); line == "" || strings.Contains(line, "max-age") || strings.Contains(line, "expires") {
			t.Fatalf("impersonation session cookie = %q, want one without a lifetime", line)
		}
		if c := harness.SetCookies(r)["gatehouse.dont_remember"]; c == nil || c.Value == "" {
			t.Fatalf("no dont_remember cookie: %q", r.Header.Values("Set-Cookie"))
		}
		if r.Header.Get("set-auth-token") == "" {
			t.Fatal("impersonate-user has no set-auth-token")
		}

		s := harness.MustSession(t, admin)
		if harness.MustUser(t, s)["id"] != daveID || harness.MustObject(t, s["session"])["impersonatedBy"] != adminID {
			t.Fatalf("get-session while impersonating = %v", s)
		}
		impersonating := admin.Clone()
		// Acting as Dave, the jar has no administrator's rights.
		harness.MustCode(t, admin.Get(harness.AdminPath("list-users")), http.StatusForbidden, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS")

		// Dave does not see the impersonation among his sessions; administrators do.
		r = dave.Get("/api/auth/list-sessions")
		var own []map[string]any
		harness.MustUnmarshal(t, r.Body, &own)
		if len(own) != 1 || own[0]["id"] == impSession["id"] {
			t.Fatalf("Dave's list-sessions = %s, want only his own session", r.Body)
		}
		admin2 := app.NewClient(t)
		harness.MustSignIn(t, admin2, harness.AdminEmail, harness.AdminPassword)
		if n := len(harness.MustOK(t, admin2.Post(harness.AdminPath("list-user-sessions"), harness.MustJSON(t, map[string]string{"userId": daveID})))["sessions"].([]any)); n != 2 {
			t.Fatalf("list-user-sessions during impersonation has %d sessions, want 2", n)
		}

		r = admin.Post(harness.AdminPath("stop-impersonating"), "{}")
		body = harness.MustOK(t, r)
		if harness.MustObject(t, body["user"])["id"] != adminID || harness.MustObject(t, body["session"])["id"] != adminSessionID {
			t.Fatalf("stop-impersonating = %s", r.Body)
		}
		if !strings.Contains(harness.RawSetCookie(r, "gatehouse.admin_session"), "Max-Age=0") {
			t.Fatalf("admin_session not cleared: %q", r.Header.Values("Set-Cookie"))
		}
		s = harness.MustSession(t, admin)
		if harness.MustUser(t, s)["id"] != adminID || harness.MustObject(t, s["session"])["impersonatedBy"] != nil || harness.MustObject(t, s["session"])["id"] != adminSessionID {
			t.Fatalf("get-session after stop-impersonating = %v", s)
		}
		harness.MustOK(t, admin.Get(harness.AdminPath("list-users")))
		harness.MustNoSession(t, impersonating)
		harness.MustCode(t, impersonating.Post(harness.AdminPath("stop-impersonating"), "{}"), http.StatusUnauthorized, "UNAUTHORIZED")
		if n := len(harness.MustOK(t, admin.Post(harness.AdminPath("list-user-sessions"), harness.MustJSON(t, map[string]string{"userId": daveID})))["sessions"].([]any)); n != 1 {
			t.Fatalf("list-user-sessions after stop has %d sessions, want 1", n)
		}
		harness.MustSession(t, dave)
		harness.MustCode(t, admin.Post(harness.AdminPath("stop-impersonating"), "{}"), http.StatusBadRequest, "NOT_IMPERSONATING")
	})
}

// Ensure cookie-authenticated state changes on the administration routes
// need a trusted Origin, as the framework's do.
func TestAdmin_csrf(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every service key.
	harness.AdminForStores(t, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		victim, victimID := harness.MustPlainUser(t, app, "Vic", "vic@example.com", harness.UserPassword)
		key := harness.MustJSON(t, map[string]any{"name": "csrf", "scopes": []string{"*"}})
		ban := harness.MustJSON(t, map[string]string{"userId": victimID})
		for _, h := range []struct {
			name, origin, code string
		}{
			{"no_origin", "", "MISSING_OR_NULL_ORIGIN"},
			{"null_origin", "null", "MISSING_OR_NULL_ORIGIN"},
			{"evil_origin", "https://evil.example", "INVALID_ORIGIN"},
		} {
			harness.MustCode(t, admin.Post(harness.AdminPath("ban-user"), ban, "Origin", h.origin), http.StatusForbidden, h.code)
			r := admin.Post("/api/admin/service-keys", key, "Origin", h.origin)
			harness.MustProblem(t, r, http.StatusForbidden, "request."+strings.ToLower(h.code))
			r = admin.Do(http.MethodDelete, "/api/admin/service-keys/anything", "", "Origin", h.origin)
			harness.MustProblem(t, r, http.StatusForbidden, "request."+strings.ToLower(h.code))
		}
		harness.MustSession(t, victim)
		if keys := harness.MustOK(t, admin.Get("/api/admin/service-keys"))["data"].([]any); len(keys) != 0 {
			t.Fatalf("a cross-site request created keys: %v", keys)
		}
		// A trusted Origin passes.
		harness.MustOK(t, admin.Post(harness.AdminPath("ban-user"), ban))
		harness.MustStatus(t, admin.Post("/api/admin/service-keys", key), http.StatusCreated)
	})
}
