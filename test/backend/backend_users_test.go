package backend

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// userEmails returns the addresses of users, in order.
func userEmails(users []map[string]any) []string {
	out := make([]string, len(users))
	for i, u := range users {
		out[i], _ = u["email"].(string)
	}
	return out
}

// Ensure a trusted backend creates, reads, changes and deletes users with
// either header: the user object shows metadata (the framework's does
// not), a created password signs in, a taken address is 409 in any case,
// only the allowed fields may be patched, and a deleted user's sessions and
// memberships go with them.
func TestBackendUsers_create_get_update_delete(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, _, _ := harness.MustUsersKey(t, app)
		x := k.APIKey()

		created := harness.MustCreateBackendUser(t, k, map[string]any{
			"email": harness.Email(t, "  Ada@Example.COM "), "name": "Ada Lovelace", "password": harness.UserPassword, "emailVerified": true,
			"image": "https://example.com/ada.png", "publicMetadata": map[string]any{"plan": "pro", "seats": 3},
			"privateMetadata": map[string]any{"crm": map[string]any{"id": "c-17"}, "flags": []any{true, nil}}})
		harness.MustBackendUser(t, created)
		id := harness.MustID(t, created)
		if created["email"] != harness.Email(t, "ada@example.com") || created["name"] != "Ada Lovelace" || created["emailVerified"] != true ||
			created["image"] != "https://example.com/ada.png" || created["role"] != "user" || created["banned"] != false ||
			created["banReason"] != nil || created["banExpires"] != nil || created["createdAt"] != created["updatedAt"] {
			t.Fatalf("created user = %v", created)
		}
		if got := harness.MustJSON(t, created["publicMetadata"]); got != `{"plan":"pro","seats":3}` {
			t.Fatalf("publicMetadata = %s", got)
		}
		if got := harness.MustJSON(t, created["privateMetadata"]); got != `{"crm":{"id":"c-17"},"flags":[true,null]}` {
			t.Fatalf("privateMetadata = %s", got)
		}
		// Read back with the other header.
		got := harness.MustOK(t, x.Do(http.MethodGet, harness.UsersPath+"/"+id, nil))
		if harness.MustJSON(t, got) != harness.MustJSON(t, created) {
			t.Fatalf("GET = %v, want %v", got, created)
		}

		// The password signs in; the framework's user object has no metadata.
		c := app.NewClient(t)
		harness.MustSignIn(t, c, harness.Email(t, "ada@example.com"), harness.UserPassword)
		fu := harness.MustUser(t, harness.MustSession(t, c))
		if fu["id"] != id || fu["publicMetadata"] != nil || fu["privateMetadata"] != nil || strings.Contains(harness.MustJSON(t, fu), "c-17") {
			t.Fatalf("framework user = %v", fu)
		}

		// Without a password: created, unverified, empty metadata, no sign-in.
		plain := harness.MustCreateBackendUser(t, x, map[string]any{"email": harness.Email(t, "grace@example.com"), "name": "Grace Hopper"})
		harness.MustBackendUser(t, plain)
		if plain["emailVerified"] != false || plain["image"] != nil || harness.MustJSON(t, plain["publicMetadata"]) != "{}" || harness.MustJSON(t, plain["privateMetadata"]) != "{}" {
			t.Fatalf("plain user = %v", plain)
		}
		harness.MustSignInFails(t, app, harness.Email(t, "grace@example.com"), harness.UserPassword)

		// A taken address, in any case.
		p := harness.MustProblem(t, k.Do(http.MethodPost, harness.UsersPath, map[string]any{"email": harness.Email(t, "ADA@example.com"), "name": "Again"}), http.StatusConflict, "user.email_taken")
		harness.MustNamed(t, p, "body.email")

		// PATCH changes the allowed fields; metadata sent replaces the object.
		time.Sleep(2 * time.Millisecond)
		patched := harness.MustOK(t, k.Do(http.MethodPatch, harness.UsersPath+"/"+id, map[string]any{
			"name": "Ada King", "image": "", "publicMetadata": map[string]any{"plan": "team"}}))
		harness.MustBackendUser(t, patched)
		if patched["name"] != "Ada King" || patched["image"] != nil || harness.MustJSON(t, patched["publicMetadata"]) != `{"plan":"team"}` ||
			harness.MustJSON(t, patched["privateMetadata"]) != harness.MustJSON(t, created["privateMetadata"]) || patched["email"] != harness.Email(t, "ada@example.com") ||
			patched["emailVerified"] != true || patched["createdAt"] != created["createdAt"] || patched["updatedAt"] == created["updatedAt"] {
			t.Fatalf("patched = %v", patched)
		}
		// A new address is unverified unless verified in the same request.
		moved := harness.MustOK(t, x.Do(http.MethodPatch, harness.UsersPath+"/"+id, map[string]any{"email": harness.Email(t, "Ada.King@Example.com"), "privateMetadata": map[string]any{}}))
		if moved["email"] != harness.Email(t, "ada.king@example.com") || moved["emailVerified"] != false || harness.MustJSON(t, moved["privateMetadata"]) != "{}" {
			t.Fatalf("after an address change = %v", moved)
		}
		verified := harness.MustOK(t, k.Do(http.MethodPatch, harness.UsersPath+"/"+id, map[string]any{"email": harness.Email(t, "ada@example.com"), "emailVerified": true, "image": "https://example.com/k.png"}))
		if verified["email"] != harness.Email(t, "ada@example.com") || verified["emailVerified"] != true || verified["image"] != "https://example.com/k.png" {
			t.Fatalf("after a verified address change = %v", verified)
		}
		// A null image removes it.
		if u := harness.MustOK(t, k.Do(http.MethodPatch, harness.UsersPath+"/"+id, `{"image":null}`)); u["image"] != nil || u["emailVerified"] != true {
			t.Fatalf("after removing the image = %v", u)
		}
		harness.MustProblem(t, k.Do(http.MethodPatch, harness.UsersPath+"/"+id, map[string]any{"email": harness.Email(t, "GRACE@example.com")}), http.StatusConflict, "user.email_taken")
		harness.MustNamed(t, harness.MustProblem(t, k.Do(http.MethodPatch, harness.UsersPath+"/"+id, map[string]any{}), http.StatusBadRequest, "user.no_changes"), "body")
		// Privileged and unknown fields are refused, named, and change nothing.
		for field, value := range map[string]any{"role": "admin", "banned": true, "banReason": "x", "password": harness.UserPassword,
			"id": "other", "createdAt": "2020-01-01T00:00:00Z", "updatedAt": "2020-01-01T00:00:00Z", "nickname": "A"} {
			r := k.Do(http.MethodPatch, harness.UsersPath+"/"+id, map[string]any{"name": "Sneaky", field: value})
			harness.MustFieldProblem(t, r, "body."+field)
		}
		if u := harness.MustOK(t, k.Do(http.MethodGet, harness.UsersPath+"/"+id, nil)); u["name"] != "Ada King" || u["role"] != "user" || u["banned"] != false {
			t.Fatalf("refused patches changed the user: %v", u)
		}

		// Unknown ids.
		for _, r := range []*harness.Response{
			k.Do(http.MethodGet, harness.UsersPath+"/"+missing, nil),
			k.Do(http.MethodPatch, harness.UsersPath+"/"+missing, map[string]any{"name": "X"}),
			k.Do(http.MethodDelete, harness.UsersPath+"/"+missing, nil),
		} {
			harness.MustProblem(t, r, http.StatusNotFound, "user.not_found")
		}

		// Deleting takes the user's sessions and memberships along.
		org := harness.MustCreateOrg(t, c, "Ada's", "adas")
		orgID := harness.MustID(t, org)
		if members, _ := harness.MustUserPage(t, k, url.Values{"organizationId": {orgID}}); len(members) != 1 || members[0]["id"] != id {
			t.Fatalf("members of the new organization = %v", members)
		}
		harness.MustStatus(t, k.Do(http.MethodDelete, harness.UsersPath+"/"+id, nil), http.StatusNoContent)
		harness.MustProblem(t, k.Do(http.MethodGet, harness.UsersPath+"/"+id, nil), http.StatusNotFound, "user.not_found")
		harness.MustProblem(t, k.Do(http.MethodDelete, harness.UsersPath+"/"+id, nil), http.StatusNotFound, "user.not_found")
		harness.MustNoSession(t, c)
		harness.MustSignInFails(t, app, harness.Email(t, "ada@example.com"), harness.UserPassword)
		if members, _ := harness.MustUserPage(t, k, url.Values{"organizationId": {orgID}}); len(members) != 0 {
			t.Fatalf("members after the deletion = %v", members)
		}
		// The address is free again.
		harness.MustCreateBackendUser(t, k, map[string]any{"email": harness.Email(t, "ada@example.com"), "name": "Ada II"})
	})
}

// Ensure malformed input is refused with 400 naming its place (body, path
// or query), and that a key needs the route's scope.
func TestBackendUsers_malformed_input_and_scopes(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every user.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, admin, _ := harness.MustUsersKey(t, app)
		id := harness.MustID(t, harness.MustCreateBackendUser(t, k, map[string]any{"email": "ada@example.com", "name": "Ada"}))
		big := map[string]any{"k": strings.Repeat("x", 8192)}
		tests := []struct {
			name, method, path string
			body               any
			location           string
		}{
			{"missing_email", http.MethodPost, harness.UsersPath, map[string]any{"name": "A"}, "body.email"},
			{"missing_name", http.MethodPost, harness.UsersPath, map[string]any{"email": "a@example.com"}, "body.name"},
			{"bad_email", http.MethodPost, harness.UsersPath, map[string]any{"email": "not-an-address", "name": "A"}, "body.email"},
			{"empty_name", http.MethodPost, harness.UsersPath, map[string]any{"email": "a@example.com", "name": "  "}, "body.name"},
			{"short_password", http.MethodPost, harness.UsersPath, map[string]any{"email": "a@example.com", "name": "A", "password": "pw4x"}, "body.password"},
			{"common_password", http.MethodPost, harness.UsersPath, map[string]any{"email": "a@example.com", "name": "A", "password": "a@example.com"}, "body.password"},
			{"metadata_array", http.MethodPost, harness.UsersPath, map[string]any{"email": "a@example.com", "name": "A", "publicMetadata": []any{1}}, "body.publicMetadata"},
			{"metadata_string", http.MethodPost, harness.UsersPath, map[string]any{"email": "a@example.com", "name": "A", "privateMetadata": "{}"}, "body.privateMetadata"},
			{"metadata_null", http.MethodPost, harness.UsersPath, `{"email":"a@example.com","name":"A","publicMetadata":null}`, "body.publicMetadata"},
			{"metadata_over_8_KiB", http.MethodPost, harness.UsersPath, map[string]any{"email": "a@example.com", "name": "A", "privateMetadata": big}, "body.privateMetadata"},
			{"create_with_role", http.MethodPost, harness.UsersPath, map[string]any{"email": "a@example.com", "name": "A", "role": "admin"}, "body.role"},
			{"wrong_type", http.MethodPost, harness.UsersPath, map[string]any{"email": "a@example.com", "name": "A", "emailVerified": "yes"}, "body.emailVerified"},
			{"patch_metadata_over_8_KiB", http.MethodPatch, harness.UsersPath + "/" + id, map[string]any{"publicMetadata": big}, "body.publicMetadata"},
			{"patch_bad_email", http.MethodPatch, harness.UsersPath + "/" + id, map[string]any{"email": "nope"}, "body.email"},
			{"patch_null_name", http.MethodPatch, harness.UsersPath + "/" + id, `{"name":null}`, "body.name"},
			{"patch_null_verified", http.MethodPatch, harness.UsersPath + "/" + id, `{"image":null,"emailVerified":null}`, "body.emailVerified"},
			{"patch_null_metadata", http.MethodPatch, harness.UsersPath + "/" + id, `{"privateMetadata":null}`, "body.privateMetadata"},
			{"limit_101", http.MethodGet, harness.UsersPath + "?limit=101", nil, "query.limit"},
			{"limit_0", http.MethodGet, harness.UsersPath + "?limit=0", nil, "query.limit"},
			{"limit_text", http.MethodGet, harness.UsersPath + "?limit=ten", nil, "query.limit"},
			{"bad_cursor", http.MethodGet, harness.UsersPath + "?cursor=not-a-cursor", nil, "query.cursor"},
			{"forged_cursor", http.MethodGet, harness.UsersPath + "?cursor=" + "MTIzfgA", nil, "query.cursor"},
			{"bad_banned", http.MethodGet, harness.UsersPath + "?banned=maybe", nil, "query.banned"},
			{"bad_created_after", http.MethodGet, harness.UsersPath + "?createdAfter=yesterday", nil, "query.createdAfter"},
			{"bad_email_filter", http.MethodGet, harness.UsersPath + "?email=not-an-address", nil, "query.email"},
			{"overlong_id", http.MethodGet, harness.UsersPath + "/" + strings.Repeat("x", 129), nil, "path.id"},
			{"ban_zero_expiry", http.MethodPost, harness.UsersPath + "/" + id + "/ban", map[string]any{"expiresInSeconds": 0}, "body.expiresInSeconds"},
			{"ban_long_reason", http.MethodPost, harness.UsersPath + "/" + id + "/ban", map[string]any{"reason": strings.Repeat("r", 1025)}, "body.reason"},
			{"ban_unknown_field", http.MethodPost, harness.UsersPath + "/" + id + "/ban", map[string]any{"until": "never"}, "body.until"},
			{"password_missing", http.MethodPut, harness.UsersPath + "/" + id + "/password", map[string]any{}, "body.password"},
			{"password_short", http.MethodPut, harness.UsersPath + "/" + id + "/password", map[string]any{"password": "pw4x"}, "body.password"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := k.Do(tt.method, tt.path, tt.body)
				harness.MustFieldProblem(t, r, tt.location)
				if strings.Contains(string(r.Body), "pw4x") || strings.Contains(string(r.Body), "not-an-address") {
					t.Fatalf("the problem repeats the submitted value: %s", r.Body)
				}
			})
		}
		// Nothing was created or changed by the refusals.
		if users, _ := harness.MustUserPage(t, k, url.Values{}); !slices.Equal(userEmails(users), []string{"ada@example.com", harness.AdminEmail}) {
			t.Fatalf("users after refusals = %v", userEmails(users))
		}

		// Scopes: reading needs users:read, writing users:write; no key is 401.
		readOnly := harness.MustCreateKey(t, admin, map[string]any{"name": "reader", "scopes": []string{"users:read"}})["secret"].(string)
		writeOnly := harness.MustCreateKey(t, admin, map[string]any{"name": "writer", "scopes": []string{"users:write"}})["secret"].(string)
		reader := harness.KeyClient{T: t, C: app.NewClient(t), Headers: []string{"x-api-key", readOnly}}
		writer := harness.KeyClient{T: t, C: app.NewClient(t), Headers: []string{"Authorization", "Bearer " + writeOnly}}
		harness.MustOK(t, reader.Do(http.MethodGet, harness.UsersPath+"/"+id, nil))
		harness.MustProblem(t, reader.Do(http.MethodPost, harness.UsersPath, map[string]any{"email": "b@example.com", "name": "B"}), http.StatusForbidden, "auth.insufficient_scope")
		harness.MustProblem(t, reader.Do(http.MethodDelete, harness.UsersPath+"/"+id, nil), http.StatusForbidden, "auth.insufficient_scope")
		harness.MustProblem(t, writer.Do(http.MethodGet, harness.UsersPath, nil), http.StatusForbidden, "auth.insufficient_scope")
		harness.MustStatus(t, writer.Do(http.MethodPost, harness.UsersPath, map[string]any{"email": "b@example.com", "name": "B"}), http.StatusCreated)
		anon := harness.KeyClient{T: t, C: app.NewClient(t)}
		r := anon.Do(http.MethodGet, harness.UsersPath, nil)
		harness.MustProblem(t, r, http.StatusUnauthorized, r.JSON(t)["code"].(string))
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
		}
	})
}

// Ensure the listing pages newest first through more than one page with a
// stable order and no duplicates, and that each filter selects what it
// says: an exact address in any case is a one-user page, contains-filters
// take % and _ literally, banned, organization and the creation range.
func TestBackendUsers_list_filters_and_paging(t *testing.T) {
	t.Parallel()
	// A fresh application: it pages through every user.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, admin, _ := harness.MustUsersKey(t, app)
		var created []map[string]any // oldest first
		for i := range 23 {
			created = append(created, harness.MustCreateBackendUser(t, k, map[string]any{
				"email": fmt.Sprintf("user%02d@example.com", i), "name": fmt.Sprintf("Member %02d", i)}))
		}
		pct := harness.MustCreateBackendUser(t, k, map[string]any{"email": "100%off@example.org", "name": "Deal_Hunter"})
		created = append(created, pct)
		all := append([]string{}, userEmails(created)...)
		slices.Reverse(all)
		all = append(all, harness.AdminEmail) // the administrator signed up first

		// Paging by 10: three pages, newest first, each user once.
		var seen []string
		q := url.Values{"limit": {"10"}}
		pages := 0
		for {
			users, next := harness.MustUserPage(t, k, q)
			pages++
			seen = append(seen, userEmails(users)...)
			if next == "" {
				break
			}
			if len(users) != 10 {
				t.Fatalf("page %d has %d users and a next page", pages, len(users))
			}
			q.Set("cursor", next)
		}
		if pages != 3 || !slices.Equal(seen, all) {
			t.Fatalf("paged %d pages: %v, want %v", pages, seen, all)
		}
		// The default page is 20; the same cursor gives the same page again.
		first, next := harness.MustUserPage(t, k, url.Values{})
		if len(first) != 20 || next == "" || !slices.Equal(userEmails(first), all[:20]) {
			t.Fatalf("default page = %v (next %q)", userEmails(first), next)
		}
		a, _ := harness.MustUserPage(t, k, url.Values{"cursor": {next}, "limit": {"3"}})
		// A user created now does not shift a page read from a cursor.
		harness.MustCreateBackendUser(t, k, map[string]any{"email": "late@example.com", "name": "Late"})
		b, _ := harness.MustUserPage(t, k, url.Values{"cursor": {next}, "limit": {"3"}})
		if !slices.Equal(userEmails(a), all[20:23]) || !slices.Equal(userEmails(a), userEmails(b)) {
			t.Fatalf("cursor pages = %v then %v, want %v", userEmails(a), userEmails(b), all[20:23])
		}

		// An exact address, in any case: one user, no next page.
		users, next := harness.MustUserPage(t, k, url.Values{"email": {"USER07@Example.COM"}, "limit": {"1"}})
		if len(users) != 1 || users[0]["id"] != created[7]["id"] || next != "" {
			t.Fatalf("email lookup = %v (next %q)", userEmails(users), next)
		}
		if users, _ := harness.MustUserPage(t, k, url.Values{"email": {"user07@example.co"}}); len(users) != 0 {
			t.Fatalf("a partial address matched %v", userEmails(users))
		}
		// Contains: case-insensitive; % and _ only match themselves.
		for _, tt := range []struct {
			q    url.Values
			want []string
		}{
			{url.Values{"emailContains": {"%"}}, []string{"100%off@example.org"}},
			{url.Values{"emailContains": {"USER1"}}, []string{"user19@example.com", "user18@example.com", "user17@example.com", "user16@example.com",
				"user15@example.com", "user14@example.com", "user13@example.com", "user12@example.com", "user11@example.com", "user10@example.com"}},
			{url.Values{"emailContains": {"user_"}}, nil},
			{url.Values{"nameContains": {"_h"}}, []string{"100%off@example.org"}},
			{url.Values{"nameContains": {"member 2"}}, []string{"user22@example.com", "user21@example.com", "user20@example.com"}},
			{url.Values{"nameContains": {"member 2"}, "emailContains": {"21"}}, []string{"user21@example.com"}},
		} {
			if users, _ := harness.MustUserPage(t, k, tt.q); !slices.Equal(userEmails(users), tt.want) {
				t.Errorf("%v = %v, want %v", tt.q, userEmails(users), tt.want)
			}
		}

		// Banned.
		for _, i := range []int{3, 5} {
			harness.MustOK(t, k.Do(http.MethodPost, harness.UsersPath+"/"+harness.MustID(t, created[i])+"/ban", map[string]any{"reason": "spam"}))
		}
		if users, _ := harness.MustUserPage(t, k, url.Values{"banned": {"true"}}); !slices.Equal(userEmails(users), []string{"user05@example.com", "user03@example.com"}) {
			t.Fatalf("banned = %v", userEmails(users))
		}
		if users, _ := harness.MustUserPage(t, k, url.Values{"banned": {"false"}, "limit": {"100"}}); len(users) != len(all)+1-2 {
			t.Fatalf("not banned = %d users, want %d", len(users), len(all)-1)
		}

		// Organization: the members of one made through the framework.
		orgID := harness.MustID(t, harness.MustCreateOrg(t, admin, "Listing", "listing"))
		if users, _ := harness.MustUserPage(t, k, url.Values{"organizationId": {orgID}}); !slices.Equal(userEmails(users), []string{harness.AdminEmail}) {
			t.Fatalf("members = %v", userEmails(users))
		}
		if users, _ := harness.MustUserPage(t, k, url.Values{"organizationId": {missing}}); len(users) != 0 {
			t.Fatalf("members of a missing organization = %v", userEmails(users))
		}

		// Created range: strictly after and strictly before.
		from, to := created[10]["createdAt"].(string), created[13]["createdAt"].(string)
		users, _ = harness.MustUserPage(t, k, url.Values{"createdAfter": {from}, "createdBefore": {to}})
		if !slices.Equal(userEmails(users), []string{"user12@example.com", "user11@example.com"}) {
			t.Fatalf("created in (%s, %s) = %v", from, to, userEmails(users))
		}
		ft, _ := time.Parse(time.RFC3339Nano, from)
		users, _ = harness.MustUserPage(t, k, url.Values{"createdBefore": {ft.Add(time.Microsecond).In(time.FixedZone("", -7*3600)).Format(time.RFC3339Nano)}, "limit": {"2"}})
		if !slices.Equal(userEmails(users), []string{"user10@example.com", "user09@example.com"}) {
			t.Fatalf("created before %s (in another zone) = %v", from, userEmails(users))
		}
	})
}

// Ensure ban, revoke-sessions and set-password end the user's sessions, a
// banned user cannot sign in until unbanned, a timed ban carries its
// expiry, and the password policy applies to the new password.
func TestBackendUsers_ban_sessions_password(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, _, _ := harness.MustUsersKey(t, app)
		x := k.APIKey()
		id := harness.MustID(t, harness.MustCreateBackendUser(t, k, map[string]any{"email": harness.Email(t, "ada@example.com"), "name": "Ada", "password": harness.UserPassword}))
		path := harness.UsersPath + "/" + id
		signedIn := func() *harness.Client {
			c := app.NewClient(t)
			harness.MustSignIn(t, c, harness.Email(t, "ada@example.com"), harness.UserPassword)
			harness.MustSession(t, c)
			return c
		}

		c := signedIn()
		banned := harness.MustOK(t, k.Do(http.MethodPost, path+"/ban", map[string]any{"reason": "chargebacks"}))
		harness.MustBackendUser(t, banned)
		if banned["banned"] != true || banned["banReason"] != "chargebacks" || banned["banExpires"] != nil {
			t.Fatalf("banned = %v", banned)
		}
		harness.MustNoSession(t, c)
		harness.MustCode(t, app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, harness.Email(t, "ada@example.com"), harness.UserPassword)), http.StatusForbidden, "BANNED_USER")
		unbanned := harness.MustOK(t, x.Do(http.MethodPost, path+"/unban", nil))
		if unbanned["banned"] != false || unbanned["banReason"] != nil || unbanned["banExpires"] != nil {
			t.Fatalf("unbanned = %v", unbanned)
		}
		c = signedIn()

		// A timed ban without a body reason; the expiry is expiresInSeconds away.
		before := time.Now()
		timed := harness.MustOK(t, x.Do(http.MethodPost, path+"/ban", map[string]any{"expiresInSeconds": 3600}))
		exp, err := time.Parse(time.RFC3339Nano, fmt.Sprint(timed["banExpires"]))
		if err != nil || timed["banReason"] != nil || exp.Before(before.Add(time.Hour-time.Second)) || exp.After(time.Now().Add(time.Hour+time.Second)) {
			t.Fatalf("timed ban = %v", timed)
		}
		harness.MustNoSession(t, c)
		harness.MustOK(t, k.Do(http.MethodPost, path+"/unban", ""))
		// A ban with no body at all.
		harness.MustOK(t, k.Do(http.MethodPost, path+"/ban", nil))
		harness.MustOK(t, k.Do(http.MethodPost, path+"/unban", nil))

		// Revoking sessions ends every device's session.
		c1, c2 := signedIn(), signedIn()
		harness.MustStatus(t, x.Do(http.MethodDelete, path+"/sessions", nil), http.StatusNoContent)
		harness.MustNoSession(t, c1)
		harness.MustNoSession(t, c2)

		// Setting the password ends sessions; the old one stops working.
		c = signedIn()
		const newPassword = "a brand new passphrase"
		harness.MustFieldProblem(t, k.Do(http.MethodPut, path+"/password", map[string]any{"password": harness.Email(t, "ada@example.com")}), "body.password")
		harness.MustSession(t, c) // a refused password changes nothing
		harness.MustStatus(t, k.Do(http.MethodPut, path+"/password", map[string]any{"password": newPassword}), http.StatusNoContent)
		harness.MustNoSession(t, c)
		harness.MustSignInFails(t, app, harness.Email(t, "ada@example.com"), harness.UserPassword)
		harness.MustSignIn(t, app.NewClient(t), harness.Email(t, "ada@example.com"), newPassword)

		// A user created without a password gets one.
		gid := harness.MustID(t, harness.MustCreateBackendUser(t, k, map[string]any{"email": harness.Email(t, "grace@example.com"), "name": "Grace"}))
		harness.MustStatus(t, x.Do(http.MethodPut, harness.UsersPath+"/"+gid+"/password", map[string]any{"password": newPassword}), http.StatusNoContent)
		harness.MustSignIn(t, app.NewClient(t), harness.Email(t, "grace@example.com"), newPassword)

		// Unknown users.
		for _, r := range []*harness.Response{
			k.Do(http.MethodPost, harness.UsersPath+"/"+missing+"/ban", map[string]any{"reason": "x"}),
			k.Do(http.MethodPost, harness.UsersPath+"/"+missing+"/unban", nil),
			k.Do(http.MethodDelete, harness.UsersPath+"/"+missing+"/sessions", nil),
			k.Do(http.MethodPut, harness.UsersPath+"/"+missing+"/password", map[string]any{"password": newPassword}),
		} {
			harness.MustProblem(t, r, http.StatusNotFound, "user.not_found")
		}
	})
}

// Ensure every trusted user write is in the audit log with the service key
// as the actor, the user as the target, and its outcome.
func TestBackendUsers_audit_log(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, admin, keyID := harness.MustUsersKey(t, app)
		id := harness.MustID(t, harness.MustCreateBackendUser(t, k, map[string]any{"email": harness.Email(t, "ada@example.com"), "name": "Ada"}))
		path := harness.UsersPath + "/" + id
		harness.MustOK(t, k.Do(http.MethodPatch, path, map[string]any{"name": "Ada L."}))
		harness.MustOK(t, k.Do(http.MethodPost, path+"/ban", map[string]any{"reason": "spam"}))
		harness.MustOK(t, k.Do(http.MethodPost, path+"/unban", nil))
		harness.MustStatus(t, k.Do(http.MethodDelete, path+"/sessions", nil), http.StatusNoContent)
		harness.MustStatus(t, k.Do(http.MethodPut, path+"/password", map[string]any{"password": "a brand new passphrase"}), http.StatusNoContent)
		harness.MustStatus(t, k.Do(http.MethodDelete, path, nil), http.StatusNoContent)
		harness.MustProblem(t, k.Do(http.MethodDelete, path, nil), http.StatusNotFound, "user.not_found")
		harness.MustStatus(t, k.Do(http.MethodGet, harness.UsersPath, nil), http.StatusOK) // reads are not audited

		entries := harness.AuditAll(t, admin, url.Values{"actorId": {keyID}})
		type entry struct{ action, outcome, code string }
		var got []entry
		for _, e := range entries {
			if e["actorType"] != "service_key" || e["targetType"] != "user" || e["targetId"] != id || e["requestId"] == "" {
				t.Fatalf("entry = %v", e)
			}
			code, _ := e["code"].(string)
			got = append(got, entry{e["action"].(string), e["outcome"].(string), code})
		}
		slices.Reverse(got) // oldest first
		want := []entry{
			{"users.create", "success", ""}, {"users.update", "success", ""}, {"users.ban", "success", ""}, {"users.unban", "success", ""},
			{"users.revoke-sessions", "success", ""}, {"users.set-password", "success", ""}, {"users.delete", "success", ""},
			{"users.delete", "failure", "user.not_found"},
		}
		if !slices.Equal(got, want) {
			t.Fatalf("audit entries = %v, want %v", got, want)
		}
	})
}
