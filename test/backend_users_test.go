package test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// usersPath is the trusted API's users collection.
const usersPath = "/api/users"

// keyClient calls the trusted API with a service key, in the Authorization
// header or in x-api-key, never with cookies.
type keyClient struct {
	t       testing.TB
	c       *fwClient
	headers []string
}

// do sends a request with the key; body is JSON-encoded unless it is a string.
func (k keyClient) do(method, path string, body any) *response {
	k.t.Helper()
	raw, ok := body.(string)
	if !ok && body != nil {
		raw = mustJSON(k.t, body)
	}
	return k.c.do(method, path, raw, k.headers...)
}

// apiKey returns the same key sent as x-api-key.
func (k keyClient) apiKey() keyClient {
	secret := strings.TrimPrefix(k.headers[1], "Bearer ")
	return keyClient{t: k.t, c: k.c, headers: []string{"x-api-key", secret}}
}

// mustUsersKey signs the administrator in, issues a key holding scopes and
// returns a client sending it as Bearer, the administrator's client and the
// key's id.
func mustUsersKey(t testing.TB, app *fwApp, scopes ...string) (keyClient, *fwClient, string) {
	t.Helper()
	admin, _ := mustAdmin(t, app)
	if len(scopes) == 0 {
		scopes = []string{"users:read", "users:write"}
	}
	key := mustCreateKey(t, admin, map[string]any{"name": "users backend", "scopes": scopes})
	return keyClient{t: t, c: app.client(t), headers: []string{"Authorization", "Bearer " + key["secret"].(string)}}, admin, mustID(t, key)
}

// mustCreateBackendUser creates a user through the trusted API and returns it.
func mustCreateBackendUser(t testing.TB, k keyClient, body map[string]any) map[string]any {
	t.Helper()
	r := k.do(http.MethodPost, usersPath, body)
	mustStatus(t, r, http.StatusCreated)
	return r.JSON(t)
}

// backendUserFields are the keys of the trusted user object, exactly.
var backendUserFields = []string{"id", "email", "name", "emailVerified", "image", "role", "banned", "banReason", "banExpires", "twoFactorEnabled", "passkeys", "linkedAccounts",
	"publicMetadata", "privateMetadata", "createdAt", "updatedAt"}

// mustBackendUser fails unless u is a trusted user object with exactly its
// fields and RFC 3339 times.
func mustBackendUser(t testing.TB, u map[string]any) {
	t.Helper()
	mustKeys(t, u, backendUserFields...)
	mustJSDatesOrRFC3339(t, u, "createdAt", "updatedAt")
	for _, f := range []string{"publicMetadata", "privateMetadata"} {
		if _, ok := u[f].(map[string]any); !ok {
			t.Fatalf("%s = %v, want an object", f, u[f])
		}
	}
}

// mustUserPage reads one page of the listing with query q and returns the
// users and the next cursor ("" on the last page).
func mustUserPage(t testing.TB, k keyClient, q url.Values) ([]map[string]any, string) {
	t.Helper()
	r := k.do(http.MethodGet, usersPath+"?"+q.Encode(), nil)
	mustStatus(t, r, http.StatusOK)
	var page struct {
		Data       []map[string]any `json:"data"`
		NextCursor *string          `json:"nextCursor"`
	}
	mustUnmarshal(t, r.Body, &page)
	mustKeys(t, r.JSON(t), "data", "nextCursor")
	if page.Data == nil {
		t.Fatalf("page without data: %s", r.Body)
	}
	for _, u := range page.Data {
		mustBackendUser(t, u)
	}
	if page.NextCursor == nil {
		return page.Data, ""
	}
	if *page.NextCursor == "" {
		t.Fatalf("empty nextCursor: %s", r.Body)
	}
	return page.Data, *page.NextCursor
}

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
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		k, _, _ := mustUsersKey(t, app)
		x := k.apiKey()

		created := mustCreateBackendUser(t, k, map[string]any{
			"email": "  Ada@Example.COM ", "name": "Ada Lovelace", "password": userPassword, "emailVerified": true,
			"image": "https://example.com/ada.png", "publicMetadata": map[string]any{"plan": "pro", "seats": 3},
			"privateMetadata": map[string]any{"crm": map[string]any{"id": "c-17"}, "flags": []any{true, nil}}})
		mustBackendUser(t, created)
		id := mustID(t, created)
		if created["email"] != "ada@example.com" || created["name"] != "Ada Lovelace" || created["emailVerified"] != true ||
			created["image"] != "https://example.com/ada.png" || created["role"] != "user" || created["banned"] != false ||
			created["banReason"] != nil || created["banExpires"] != nil || created["createdAt"] != created["updatedAt"] {
			t.Fatalf("created user = %v", created)
		}
		if got := mustJSON(t, created["publicMetadata"]); got != `{"plan":"pro","seats":3}` {
			t.Fatalf("publicMetadata = %s", got)
		}
		if got := mustJSON(t, created["privateMetadata"]); got != `{"crm":{"id":"c-17"},"flags":[true,null]}` {
			t.Fatalf("privateMetadata = %s", got)
		}
		// Read back with the other header.
		got := mustOK(t, x.do(http.MethodGet, usersPath+"/"+id, nil))
		if mustJSON(t, got) != mustJSON(t, created) {
			t.Fatalf("GET = %v, want %v", got, created)
		}

		// The password signs in; the framework's user object has no metadata.
		c := app.client(t)
		mustSignIn(t, c, "ada@example.com", userPassword)
		fu := mustUser(t, mustSession(t, c))
		if fu["id"] != id || fu["publicMetadata"] != nil || fu["privateMetadata"] != nil || strings.Contains(mustJSON(t, fu), "c-17") {
			t.Fatalf("framework user = %v", fu)
		}

		// Without a password: created, unverified, empty metadata, no sign-in.
		plain := mustCreateBackendUser(t, x, map[string]any{"email": "grace@example.com", "name": "Grace Hopper"})
		mustBackendUser(t, plain)
		if plain["emailVerified"] != false || plain["image"] != nil || mustJSON(t, plain["publicMetadata"]) != "{}" || mustJSON(t, plain["privateMetadata"]) != "{}" {
			t.Fatalf("plain user = %v", plain)
		}
		mustSignInFails(t, app, "grace@example.com", userPassword)

		// A taken address, in any case.
		p := mustProblem(t, k.do(http.MethodPost, usersPath, map[string]any{"email": "ADA@example.com", "name": "Again"}), http.StatusConflict, "user.email_taken")
		mustNamed(t, p, "body.email")

		// PATCH changes the allowed fields; metadata sent replaces the object.
		time.Sleep(2 * time.Millisecond)
		patched := mustOK(t, k.do(http.MethodPatch, usersPath+"/"+id, map[string]any{
			"name": "Ada King", "image": "", "publicMetadata": map[string]any{"plan": "team"}}))
		mustBackendUser(t, patched)
		if patched["name"] != "Ada King" || patched["image"] != nil || mustJSON(t, patched["publicMetadata"]) != `{"plan":"team"}` ||
			mustJSON(t, patched["privateMetadata"]) != mustJSON(t, created["privateMetadata"]) || patched["email"] != "ada@example.com" ||
			patched["emailVerified"] != true || patched["createdAt"] != created["createdAt"] || patched["updatedAt"] == created["updatedAt"] {
			t.Fatalf("patched = %v", patched)
		}
		// A new address is unverified unless verified in the same request.
		moved := mustOK(t, x.do(http.MethodPatch, usersPath+"/"+id, map[string]any{"email": "Ada.King@Example.com", "privateMetadata": map[string]any{}}))
		if moved["email"] != "ada.king@example.com" || moved["emailVerified"] != false || mustJSON(t, moved["privateMetadata"]) != "{}" {
			t.Fatalf("after an address change = %v", moved)
		}
		verified := mustOK(t, k.do(http.MethodPatch, usersPath+"/"+id, map[string]any{"email": "ada@example.com", "emailVerified": true, "image": "https://example.com/k.png"}))
		if verified["email"] != "ada@example.com" || verified["emailVerified"] != true || verified["image"] != "https://example.com/k.png" {
			t.Fatalf("after a verified address change = %v", verified)
		}
		// A null image removes it.
		if u := mustOK(t, k.do(http.MethodPatch, usersPath+"/"+id, `{"image":null}`)); u["image"] != nil || u["emailVerified"] != true {
			t.Fatalf("after removing the image = %v", u)
		}
		mustProblem(t, k.do(http.MethodPatch, usersPath+"/"+id, map[string]any{"email": "GRACE@example.com"}), http.StatusConflict, "user.email_taken")
		mustNamed(t, mustProblem(t, k.do(http.MethodPatch, usersPath+"/"+id, map[string]any{}), http.StatusBadRequest, "user.no_changes"), "body")
		// Privileged and unknown fields are refused, named, and change nothing.
		for field, value := range map[string]any{"role": "admin", "banned": true, "banReason": "x", "password": userPassword,
			"id": "other", "createdAt": "2020-01-01T00:00:00Z", "updatedAt": "2020-01-01T00:00:00Z", "nickname": "A"} {
			r := k.do(http.MethodPatch, usersPath+"/"+id, map[string]any{"name": "Sneaky", field: value})
			mustFieldProblem(t, r, "body."+field)
		}
		if u := mustOK(t, k.do(http.MethodGet, usersPath+"/"+id, nil)); u["name"] != "Ada King" || u["role"] != "user" || u["banned"] != false {
			t.Fatalf("refused patches changed the user: %v", u)
		}

		// Unknown ids.
		for _, r := range []*response{
			k.do(http.MethodGet, usersPath+"/"+missing, nil),
			k.do(http.MethodPatch, usersPath+"/"+missing, map[string]any{"name": "X"}),
			k.do(http.MethodDelete, usersPath+"/"+missing, nil),
		} {
			mustProblem(t, r, http.StatusNotFound, "user.not_found")
		}

		// Deleting takes the user's sessions and memberships along.
		org := mustCreateOrg(t, c, "Ada's", "adas")
		orgID := mustID(t, org)
		if members, _ := mustUserPage(t, k, url.Values{"organizationId": {orgID}}); len(members) != 1 || members[0]["id"] != id {
			t.Fatalf("members of the new organization = %v", members)
		}
		mustStatus(t, k.do(http.MethodDelete, usersPath+"/"+id, nil), http.StatusNoContent)
		mustProblem(t, k.do(http.MethodGet, usersPath+"/"+id, nil), http.StatusNotFound, "user.not_found")
		mustProblem(t, k.do(http.MethodDelete, usersPath+"/"+id, nil), http.StatusNotFound, "user.not_found")
		mustNoSession(t, c)
		mustSignInFails(t, app, "ada@example.com", userPassword)
		if members, _ := mustUserPage(t, k, url.Values{"organizationId": {orgID}}); len(members) != 0 {
			t.Fatalf("members after the deletion = %v", members)
		}
		// The address is free again.
		mustCreateBackendUser(t, k, map[string]any{"email": "ada@example.com", "name": "Ada II"})
	})
}

// mustNamed fails unless problem p names location among its errors.
func mustNamed(t testing.TB, p map[string]any, location string) {
	t.Helper()
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		if mustObject(t, e)["location"] == location {
			return
		}
	}
	t.Fatalf("problem %v does not name %s", p, location)
}

// Ensure malformed input is refused with 400 naming its place (body, path
// or query), and that a key needs the route's scope.
func TestBackendUsers_malformed_input_and_scopes(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesThatMatter, adminEnv, func(t *testing.T, app *fwApp) {
		k, admin, _ := mustUsersKey(t, app)
		id := mustID(t, mustCreateBackendUser(t, k, map[string]any{"email": "ada@example.com", "name": "Ada"}))
		big := map[string]any{"k": strings.Repeat("x", 8192)}
		tests := []struct {
			name, method, path string
			body               any
			location           string
		}{
			{"missing_email", http.MethodPost, usersPath, map[string]any{"name": "A"}, "body.email"},
			{"missing_name", http.MethodPost, usersPath, map[string]any{"email": "a@example.com"}, "body.name"},
			{"bad_email", http.MethodPost, usersPath, map[string]any{"email": "not-an-address", "name": "A"}, "body.email"},
			{"empty_name", http.MethodPost, usersPath, map[string]any{"email": "a@example.com", "name": "  "}, "body.name"},
			{"short_password", http.MethodPost, usersPath, map[string]any{"email": "a@example.com", "name": "A", "password": "pw4x"}, "body.password"},
			{"common_password", http.MethodPost, usersPath, map[string]any{"email": "a@example.com", "name": "A", "password": "a@example.com"}, "body.password"},
			{"metadata_array", http.MethodPost, usersPath, map[string]any{"email": "a@example.com", "name": "A", "publicMetadata": []any{1}}, "body.publicMetadata"},
			{"metadata_string", http.MethodPost, usersPath, map[string]any{"email": "a@example.com", "name": "A", "privateMetadata": "{}"}, "body.privateMetadata"},
			{"metadata_null", http.MethodPost, usersPath, `{"email":"a@example.com","name":"A","publicMetadata":null}`, "body.publicMetadata"},
			{"metadata_over_8_KiB", http.MethodPost, usersPath, map[string]any{"email": "a@example.com", "name": "A", "privateMetadata": big}, "body.privateMetadata"},
			{"create_with_role", http.MethodPost, usersPath, map[string]any{"email": "a@example.com", "name": "A", "role": "admin"}, "body.role"},
			{"wrong_type", http.MethodPost, usersPath, map[string]any{"email": "a@example.com", "name": "A", "emailVerified": "yes"}, "body.emailVerified"},
			{"patch_metadata_over_8_KiB", http.MethodPatch, usersPath + "/" + id, map[string]any{"publicMetadata": big}, "body.publicMetadata"},
			{"patch_bad_email", http.MethodPatch, usersPath + "/" + id, map[string]any{"email": "nope"}, "body.email"},
			{"patch_null_name", http.MethodPatch, usersPath + "/" + id, `{"name":null}`, "body.name"},
			{"patch_null_verified", http.MethodPatch, usersPath + "/" + id, `{"image":null,"emailVerified":null}`, "body.emailVerified"},
			{"patch_null_metadata", http.MethodPatch, usersPath + "/" + id, `{"privateMetadata":null}`, "body.privateMetadata"},
			{"limit_101", http.MethodGet, usersPath + "?limit=101", nil, "query.limit"},
			{"limit_0", http.MethodGet, usersPath + "?limit=0", nil, "query.limit"},
			{"limit_text", http.MethodGet, usersPath + "?limit=ten", nil, "query.limit"},
			{"bad_cursor", http.MethodGet, usersPath + "?cursor=not-a-cursor", nil, "query.cursor"},
			{"forged_cursor", http.MethodGet, usersPath + "?cursor=" + "MTIzfgA", nil, "query.cursor"},
			{"bad_banned", http.MethodGet, usersPath + "?banned=maybe", nil, "query.banned"},
			{"bad_created_after", http.MethodGet, usersPath + "?createdAfter=yesterday", nil, "query.createdAfter"},
			{"bad_email_filter", http.MethodGet, usersPath + "?email=not-an-address", nil, "query.email"},
			{"overlong_id", http.MethodGet, usersPath + "/" + strings.Repeat("x", 129), nil, "path.id"},
			{"ban_zero_expiry", http.MethodPost, usersPath + "/" + id + "/ban", map[string]any{"expiresInSeconds": 0}, "body.expiresInSeconds"},
			{"ban_long_reason", http.MethodPost, usersPath + "/" + id + "/ban", map[string]any{"reason": strings.Repeat("r", 1025)}, "body.reason"},
			{"ban_unknown_field", http.MethodPost, usersPath + "/" + id + "/ban", map[string]any{"until": "never"}, "body.until"},
			{"password_missing", http.MethodPut, usersPath + "/" + id + "/password", map[string]any{}, "body.password"},
			{"password_short", http.MethodPut, usersPath + "/" + id + "/password", map[string]any{"password": "pw4x"}, "body.password"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := k.do(tt.method, tt.path, tt.body)
				mustFieldProblem(t, r, tt.location)
				if strings.Contains(string(r.Body), "pw4x") || strings.Contains(string(r.Body), "not-an-address") {
					t.Fatalf("the problem repeats the submitted value: %s", r.Body)
				}
			})
		}
		// Nothing was created or changed by the refusals.
		if users, _ := mustUserPage(t, k, url.Values{}); !slices.Equal(userEmails(users), []string{"ada@example.com", adminEmail}) {
			t.Fatalf("users after refusals = %v", userEmails(users))
		}

		// Scopes: reading needs users:read, writing users:write; no key is 401.
		readOnly := mustCreateKey(t, admin, map[string]any{"name": "reader", "scopes": []string{"users:read"}})["secret"].(string)
		writeOnly := mustCreateKey(t, admin, map[string]any{"name": "writer", "scopes": []string{"users:write"}})["secret"].(string)
		reader := keyClient{t: t, c: app.client(t), headers: []string{"x-api-key", readOnly}}
		writer := keyClient{t: t, c: app.client(t), headers: []string{"Authorization", "Bearer " + writeOnly}}
		mustOK(t, reader.do(http.MethodGet, usersPath+"/"+id, nil))
		mustProblem(t, reader.do(http.MethodPost, usersPath, map[string]any{"email": "b@example.com", "name": "B"}), http.StatusForbidden, "auth.insufficient_scope")
		mustProblem(t, reader.do(http.MethodDelete, usersPath+"/"+id, nil), http.StatusForbidden, "auth.insufficient_scope")
		mustProblem(t, writer.do(http.MethodGet, usersPath, nil), http.StatusForbidden, "auth.insufficient_scope")
		mustStatus(t, writer.do(http.MethodPost, usersPath, map[string]any{"email": "b@example.com", "name": "B"}), http.StatusCreated)
		anon := keyClient{t: t, c: app.client(t)}
		r := anon.do(http.MethodGet, usersPath, nil)
		mustProblem(t, r, http.StatusUnauthorized, r.JSON(t)["code"].(string))
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
	fwForStores(t, storesThatMatter, adminEnv, func(t *testing.T, app *fwApp) {
		k, admin, _ := mustUsersKey(t, app)
		var created []map[string]any // oldest first
		for i := range 23 {
			created = append(created, mustCreateBackendUser(t, k, map[string]any{
				"email": fmt.Sprintf("user%02d@example.com", i), "name": fmt.Sprintf("Member %02d", i)}))
		}
		pct := mustCreateBackendUser(t, k, map[string]any{"email": "100%off@example.org", "name": "Deal_Hunter"})
		created = append(created, pct)
		all := append([]string{}, userEmails(created)...)
		slices.Reverse(all)
		all = append(all, adminEmail) // the administrator signed up first

		// Paging by 10: three pages, newest first, each user once.
		var seen []string
		q := url.Values{"limit": {"10"}}
		pages := 0
		for {
			users, next := mustUserPage(t, k, q)
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
		first, next := mustUserPage(t, k, url.Values{})
		if len(first) != 20 || next == "" || !slices.Equal(userEmails(first), all[:20]) {
			t.Fatalf("default page = %v (next %q)", userEmails(first), next)
		}
		a, _ := mustUserPage(t, k, url.Values{"cursor": {next}, "limit": {"3"}})
		// A user created now does not shift a page read from a cursor.
		mustCreateBackendUser(t, k, map[string]any{"email": "late@example.com", "name": "Late"})
		b, _ := mustUserPage(t, k, url.Values{"cursor": {next}, "limit": {"3"}})
		if !slices.Equal(userEmails(a), all[20:23]) || !slices.Equal(userEmails(a), userEmails(b)) {
			t.Fatalf("cursor pages = %v then %v, want %v", userEmails(a), userEmails(b), all[20:23])
		}

		// An exact address, in any case: one user, no next page.
		users, next := mustUserPage(t, k, url.Values{"email": {"USER07@Example.COM"}, "limit": {"1"}})
		if len(users) != 1 || users[0]["id"] != created[7]["id"] || next != "" {
			t.Fatalf("email lookup = %v (next %q)", userEmails(users), next)
		}
		if users, _ := mustUserPage(t, k, url.Values{"email": {"user07@example.co"}}); len(users) != 0 {
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
			if users, _ := mustUserPage(t, k, tt.q); !slices.Equal(userEmails(users), tt.want) {
				t.Errorf("%v = %v, want %v", tt.q, userEmails(users), tt.want)
			}
		}

		// Banned.
		for _, i := range []int{3, 5} {
			mustOK(t, k.do(http.MethodPost, usersPath+"/"+mustID(t, created[i])+"/ban", map[string]any{"reason": "spam"}))
		}
		if users, _ := mustUserPage(t, k, url.Values{"banned": {"true"}}); !slices.Equal(userEmails(users), []string{"user05@example.com", "user03@example.com"}) {
			t.Fatalf("banned = %v", userEmails(users))
		}
		if users, _ := mustUserPage(t, k, url.Values{"banned": {"false"}, "limit": {"100"}}); len(users) != len(all)+1-2 {
			t.Fatalf("not banned = %d users, want %d", len(users), len(all)-1)
		}

		// Organization: the members of one made through the framework.
		orgID := mustID(t, mustCreateOrg(t, admin, "Listing", "listing"))
		if users, _ := mustUserPage(t, k, url.Values{"organizationId": {orgID}}); !slices.Equal(userEmails(users), []string{adminEmail}) {
			t.Fatalf("members = %v", userEmails(users))
		}
		if users, _ := mustUserPage(t, k, url.Values{"organizationId": {missing}}); len(users) != 0 {
			t.Fatalf("members of a missing organization = %v", userEmails(users))
		}

		// Created range: strictly after and strictly before.
		from, to := created[10]["createdAt"].(string), created[13]["createdAt"].(string)
		users, _ = mustUserPage(t, k, url.Values{"createdAfter": {from}, "createdBefore": {to}})
		if !slices.Equal(userEmails(users), []string{"user12@example.com", "user11@example.com"}) {
			t.Fatalf("created in (%s, %s) = %v", from, to, userEmails(users))
		}
		ft, _ := time.Parse(time.RFC3339Nano, from)
		users, _ = mustUserPage(t, k, url.Values{"createdBefore": {ft.Add(time.Microsecond).In(time.FixedZone("", -7*3600)).Format(time.RFC3339Nano)}, "limit": {"2"}})
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
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		k, _, _ := mustUsersKey(t, app)
		x := k.apiKey()
		id := mustID(t, mustCreateBackendUser(t, k, map[string]any{"email": "ada@example.com", "name": "Ada", "password": userPassword}))
		path := usersPath + "/" + id
		signedIn := func() *fwClient {
			c := app.client(t)
			mustSignIn(t, c, "ada@example.com", userPassword)
			mustSession(t, c)
			return c
		}

		c := signedIn()
		banned := mustOK(t, k.do(http.MethodPost, path+"/ban", map[string]any{"reason": "chargebacks"}))
		mustBackendUser(t, banned)
		if banned["banned"] != true || banned["banReason"] != "chargebacks" || banned["banExpires"] != nil {
			t.Fatalf("banned = %v", banned)
		}
		mustNoSession(t, c)
		mustCode(t, app.client(t).post("/api/auth/sign-in/email", mustCredentials(t, "ada@example.com", userPassword)), http.StatusForbidden, "BANNED_USER")
		unbanned := mustOK(t, x.do(http.MethodPost, path+"/unban", nil))
		if unbanned["banned"] != false || unbanned["banReason"] != nil || unbanned["banExpires"] != nil {
			t.Fatalf("unbanned = %v", unbanned)
		}
		c = signedIn()

		// A timed ban without a body reason; the expiry is expiresInSeconds away.
		before := time.Now()
		timed := mustOK(t, x.do(http.MethodPost, path+"/ban", map[string]any{"expiresInSeconds": 3600}))
		exp, err := time.Parse(time.RFC3339Nano, fmt.Sprint(timed["banExpires"]))
		if err != nil || timed["banReason"] != nil || exp.Before(before.Add(time.Hour-time.Second)) || exp.After(time.Now().Add(time.Hour+time.Second)) {
			t.Fatalf("timed ban = %v", timed)
		}
		mustNoSession(t, c)
		mustOK(t, k.do(http.MethodPost, path+"/unban", ""))
		// A ban with no body at all.
		mustOK(t, k.do(http.MethodPost, path+"/ban", nil))
		mustOK(t, k.do(http.MethodPost, path+"/unban", nil))

		// Revoking sessions ends every device's session.
		c1, c2 := signedIn(), signedIn()
		mustStatus(t, x.do(http.MethodDelete, path+"/sessions", nil), http.StatusNoContent)
		mustNoSession(t, c1)
		mustNoSession(t, c2)

		// Setting the password ends sessions; the old one stops working.
		c = signedIn()
		const newPassword = "a brand new passphrase"
		mustFieldProblem(t, k.do(http.MethodPut, path+"/password", map[string]any{"password": "ada@example.com"}), "body.password")
		mustSession(t, c) // a refused password changes nothing
		mustStatus(t, k.do(http.MethodPut, path+"/password", map[string]any{"password": newPassword}), http.StatusNoContent)
		mustNoSession(t, c)
		mustSignInFails(t, app, "ada@example.com", userPassword)
		mustSignIn(t, app.client(t), "ada@example.com", newPassword)

		// A user created without a password gets one.
		gid := mustID(t, mustCreateBackendUser(t, k, map[string]any{"email": "grace@example.com", "name": "Grace"}))
		mustStatus(t, x.do(http.MethodPut, usersPath+"/"+gid+"/password", map[string]any{"password": newPassword}), http.StatusNoContent)
		mustSignIn(t, app.client(t), "grace@example.com", newPassword)

		// Unknown users.
		for _, r := range []*response{
			k.do(http.MethodPost, usersPath+"/"+missing+"/ban", map[string]any{"reason": "x"}),
			k.do(http.MethodPost, usersPath+"/"+missing+"/unban", nil),
			k.do(http.MethodDelete, usersPath+"/"+missing+"/sessions", nil),
			k.do(http.MethodPut, usersPath+"/"+missing+"/password", map[string]any{"password": newPassword}),
		} {
			mustProblem(t, r, http.StatusNotFound, "user.not_found")
		}
	})
}

// Ensure every trusted user write is in the audit log with the service key
// as the actor, the user as the target, and its outcome.
func TestBackendUsers_audit_log(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		k, admin, keyID := mustUsersKey(t, app)
		id := mustID(t, mustCreateBackendUser(t, k, map[string]any{"email": "ada@example.com", "name": "Ada"}))
		path := usersPath + "/" + id
		mustOK(t, k.do(http.MethodPatch, path, map[string]any{"name": "Ada L."}))
		mustOK(t, k.do(http.MethodPost, path+"/ban", map[string]any{"reason": "spam"}))
		mustOK(t, k.do(http.MethodPost, path+"/unban", nil))
		mustStatus(t, k.do(http.MethodDelete, path+"/sessions", nil), http.StatusNoContent)
		mustStatus(t, k.do(http.MethodPut, path+"/password", map[string]any{"password": "a brand new passphrase"}), http.StatusNoContent)
		mustStatus(t, k.do(http.MethodDelete, path, nil), http.StatusNoContent)
		mustProblem(t, k.do(http.MethodDelete, path, nil), http.StatusNotFound, "user.not_found")
		mustStatus(t, k.do(http.MethodGet, usersPath, nil), http.StatusOK) // reads are not audited

		entries := auditAll(t, admin, url.Values{"actorId": {keyID}})
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
