package backend

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// mustCreateTrustedOrg creates an organization owned by ownerID.
func mustCreateTrustedOrg(t testing.TB, k harness.KeyClient, name, slug, ownerID string) map[string]any {
	t.Helper()
	return harness.MustTrustedOrg(t, k.Do(http.MethodPost, harness.OrgsPath, map[string]any{"name": name, "slug": slug, "ownerUserId": ownerID}), http.StatusCreated, name)
}

// mustOrgProblem fails unless r is a problem with status and code that,
// when location is not empty, names it.
func mustOrgProblem(t *testing.T, r *harness.Response, status int, code, location string) {
	t.Helper()
	p := harness.MustProblem(t, r, status, code)
	if location == "" {
		return
	}
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		if harness.MustObject(t, e)["location"] == location {
			return
		}
	}
	t.Fatalf("problem %s does not name %s", r.Body, location)
}

// mustTrustedPage reads one page of a listing at path with query q and
// returns its items and nextCursor ("" on the last page).
func mustTrustedPage(t testing.TB, k harness.KeyClient, path string, q url.Values) ([]map[string]any, string) {
	t.Helper()
	r := k.Do(http.MethodGet, path+"?"+q.Encode(), nil)
	harness.MustStatus(t, r, http.StatusOK)
	harness.MustKeys(t, r.JSON(t), "data", "nextCursor")
	var page struct {
		Data       []map[string]any `json:"data"`
		NextCursor *string          `json:"nextCursor"`
	}
	harness.MustUnmarshal(t, r.Body, &page)
	if page.Data == nil {
		t.Fatalf("page without data: %s", r.Body)
	}
	if page.NextCursor == nil {
		return page.Data, ""
	}
	if *page.NextCursor == "" {
		t.Fatalf("nextCursor is \"\", want a cursor or null: %s", r.Body)
	}
	return page.Data, *page.NextCursor
}

// mustWalkPages reads every page of limit at path and returns the ids in
// order, checking that every page but the last is full.
func mustWalkPages(t testing.TB, k harness.KeyClient, path string, limit int) []string {
	t.Helper()
	var ids []string
	q := url.Values{"limit": {fmt.Sprint(limit)}}
	for range 100 {
		items, next := mustTrustedPage(t, k, path, q)
		for _, it := range items {
			ids = append(ids, harness.MustID(t, it))
		}
		if next == "" {
			return ids
		}
		if len(items) != limit {
			t.Fatalf("a page of %d before the last holds %d", limit, len(items))
		}
		q.Set("cursor", next)
	}
	t.Fatal("more than 100 pages")
	return nil
}

// mustServiceKeyAudit fails unless the audit log's successful actions of
// the service key keyID on organization target are exactly actions, in
// order, and every entry of it there (refusals too) names the key as a
// service key and the target as an organization. It returns the codes of
// the refusals, oldest first.
func mustServiceKeyAudit(t testing.TB, admin *harness.Client, keyID, target string, actions ...string) []string {
	t.Helper()
	entries := harness.AuditAll(t, admin, url.Values{"actorId": {keyID}, "targetId": {target}})
	slices.Reverse(entries) // the log is newest first
	var got, refusals []string
	for _, e := range entries {
		if e["actorType"] != "service_key" || e["targetType"] != "organization" || e["requestId"] == "" {
			t.Fatalf("audit entry %v, want service key %s acting on an organization", e, keyID)
		}
		if e["outcome"] != "success" {
			refusals = append(refusals, fmt.Sprint(e["code"]))
			continue
		}
		got = append(got, e["action"].(string))
	}
	if !slices.Equal(got, actions) {
		t.Fatalf("audited actions on %s = %v, want %v", target, got, actions)
	}
	return refusals
}

// Ensure an organization's life through the trusted API: created for an
// existing owner (201, RFC 3339 times, metadata as an object), read by id and
// by slug with either header, updated, deleted (204) with its memberships;
// taken slugs are 409, unknown ids and owners 404, malformed input 400
// naming its location; every write is audited with the key as the actor.
func TestBackendOrganizations_lifecycle(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, admin, keyID := harness.MustOrgKey(t, app)
		owner, ownerID := harness.MustPlainUser(t, app, "Olive Owner", harness.Email(t, "olive@example.com"), harness.UserPassword)

		r := k.Do(http.MethodPost, harness.OrgsPath, map[string]any{"name": "Acme", "slug": harness.Own(t, "acme"), "ownerUserId": ownerID,
			"logo": "https://example.com/acme.png", "metadata": map[string]any{"plan": "pro"}})
		created := harness.MustTrustedOrg(t, r, http.StatusCreated, "Acme")
		id := harness.MustID(t, created)
		if created["slug"] != harness.Own(t, "acme") || created["logo"] != "https://example.com/acme.png" || created["memberCount"] != float64(1) ||
			harness.MustObject(t, created["metadata"])["plan"] != "pro" {
			t.Fatalf("created = %v", created)
		}
		// Read by id (Bearer) and by slug (x-api-key): the same organization.
		got := harness.MustTrustedOrg(t, k.Do(http.MethodGet, harness.OrgsPath+"/"+id, nil), http.StatusOK, "Acme")
		bySlug := harness.MustTrustedOrg(t, k.APIKey().Do(http.MethodGet, harness.OrgsPath+"/by-slug/"+harness.Own(t, "acme"), nil), http.StatusOK, "Acme")
		if got["id"] != id || bySlug["id"] != id || got["createdAt"] != created["createdAt"] {
			t.Fatalf("get = %v, by slug = %v, want %v", got, bySlug, created)
		}
		// The owner is its member in the framework too.
		if list := harness.MustList(t, owner.Get(harness.OrgPath("list"))); len(list) != 1 || list[0]["id"] != id {
			t.Fatalf("the owner's organizations = %v", list)
		}

		// Taken slugs, unknown owners and ids, malformed input.
		other := mustCreateTrustedOrg(t, k, "Other", harness.Own(t, "other"), ownerID)
		mustOrgProblem(t, k.Do(http.MethodPost, harness.OrgsPath, map[string]any{"name": "Again", "slug": harness.Own(t, "acme"), "ownerUserId": ownerID}),
			http.StatusConflict, "organization.slug_taken", "body.slug")
		mustOrgProblem(t, k.Do(http.MethodPatch, harness.OrgsPath+"/"+harness.MustID(t, other), map[string]any{"slug": harness.Own(t, "acme")}),
			http.StatusConflict, "organization.slug_taken", "body.slug")
		mustOrgProblem(t, k.Do(http.MethodPost, harness.OrgsPath, map[string]any{"name": "Ghost", "slug": harness.Own(t, "ghost"), "ownerUserId": "no-such-user"}),
			http.StatusNotFound, "user.not_found", "body.ownerUserId")
		for _, path := range []string{harness.OrgsPath + "/no-such-org", harness.OrgsPath + "/by-slug/no-such-org"} {
			mustOrgProblem(t, k.Do(http.MethodGet, path, nil), http.StatusNotFound, "organization.not_found", "")
		}
		mustOrgProblem(t, k.Do(http.MethodPatch, harness.OrgsPath+"/no-such-org", map[string]any{"name": "X"}), http.StatusNotFound, "organization.not_found", "")
		mustOrgProblem(t, k.Do(http.MethodDelete, harness.OrgsPath+"/no-such-org", nil), http.StatusNotFound, "organization.not_found", "")
		for _, tt := range []struct {
			body     any
			location string
		}{
			{map[string]any{"name": "Bad", "slug": "Not A Slug", "ownerUserId": ownerID}, "body.slug"},
			{map[string]any{"slug": "no-name", "ownerUserId": ownerID}, "body.name"},
			{map[string]any{"name": "No owner", "slug": "no-owner"}, "body.ownerUserId"},
			{map[string]any{"name": "Bad", "slug": "bad", "ownerUserId": ownerID, "metadata": []int{1}}, "body.metadata"},
			{map[string]any{"name": "Bad", "slug": "bad", "ownerUserId": ownerID, "members": []string{ownerID}}, "body.members"},
		} {
			harness.MustFieldProblem(t, k.Do(http.MethodPost, harness.OrgsPath, tt.body), tt.location)
		}
		harness.MustFieldProblem(t, k.Do(http.MethodGet, harness.OrgsPath+"/by-slug/Not_A_Slug", nil), "path.slug")
		harness.MustFieldProblem(t, k.Do(http.MethodPatch, harness.OrgsPath+"/"+id, map[string]any{"name": ""}), "body.name")

		// Update: fields change, logo and metadata null remove them; the old
		// slug is free again.
		r = k.APIKey().Do(http.MethodPatch, harness.OrgsPath+"/"+id, `{"name":"Acme Corp","slug":"`+harness.Own(t, "acme-corp")+`","logo":null,"metadata":null}`)
		updated := harness.MustTrustedOrg(t, r, http.StatusOK, "Acme Corp")
		if updated["slug"] != harness.Own(t, "acme-corp") || updated["logo"] != nil || updated["metadata"] != nil || updated["memberCount"] != float64(1) ||
			updated["createdAt"] != created["createdAt"] || updated["updatedAt"] == created["updatedAt"] {
			t.Fatalf("updated = %v (created %v)", updated, created)
		}
		mustOrgProblem(t, k.Do(http.MethodGet, harness.OrgsPath+"/by-slug/"+harness.Own(t, "acme"), nil), http.StatusNotFound, "organization.not_found", "")
		harness.MustTrustedOrg(t, k.Do(http.MethodGet, harness.OrgsPath+"/by-slug/"+harness.Own(t, "acme-corp"), nil), http.StatusOK, "Acme Corp")

		// Delete: 204, then gone with its memberships.
		r = k.Do(http.MethodDelete, harness.OrgsPath+"/"+id, nil)
		harness.MustStatus(t, r, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Fatalf("204 with a body: %s", r.Body)
		}
		mustOrgProblem(t, k.Do(http.MethodGet, harness.OrgsPath+"/"+id, nil), http.StatusNotFound, "organization.not_found", "")
		mustOrgProblem(t, k.Do(http.MethodGet, harness.OrgsPath+"/"+id+"/members", nil), http.StatusNotFound, "organization.not_found", "")
		if list := harness.MustList(t, owner.Get(harness.OrgPath("list"))); len(list) != 1 || list[0]["id"] != harness.MustID(t, other) {
			t.Fatalf("the owner's organizations after the delete = %v", list)
		}

		mustServiceKeyAudit(t, admin, keyID, id, "organizations.create", "organizations.update", "organizations.delete")
	})
}

// Ensure the trusted organization routes take only a valid key with their
// scope: none is 401 with WWW-Authenticate, a read-only key cannot write
// (403), and cookies of a signed-in owner count for nothing.
func TestBackendOrganizations_need_a_key_with_the_scope(t *testing.T) {
	t.Parallel()
	// A fresh application: the package's one test on the memory store, where a shared one would save no start.
	harness.ForStores(t, []harness.Store{harness.StoreMemory}, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		rw, admin, _ := harness.MustOrgKey(t, app)
		owner, ownerID := harness.MustPlainUser(t, app, "Olive Owner", "olive@example.com", harness.UserPassword)
		id := harness.MustID(t, mustCreateTrustedOrg(t, rw, "Acme", "acme", ownerID))

		r := owner.Get(harness.OrgsPath + "/" + id)
		harness.MustProblem(t, r, http.StatusUnauthorized, "auth.invalid_service_key")
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
		}
		key := harness.MustCreateKey(t, admin, map[string]any{"name": "reader", "scopes": []string{"organizations:read"}})
		ro := harness.KeyClient{T: t, C: app.NewClient(t), Headers: []string{"x-api-key", key["secret"].(string)}}
		harness.MustTrustedOrg(t, ro.Do(http.MethodGet, harness.OrgsPath+"/"+id, nil), http.StatusOK, "Acme")
		harness.MustProblem(t, ro.Do(http.MethodDelete, harness.OrgsPath+"/"+id, nil), http.StatusForbidden, "auth.insufficient_scope")
		harness.MustProblem(t, ro.Do(http.MethodPost, harness.OrgsPath+"/"+id+"/members", map[string]any{"userId": ownerID, "role": "member"}),
			http.StatusForbidden, "auth.insufficient_scope")
		harness.MustTrustedOrg(t, rw.Do(http.MethodGet, harness.OrgsPath+"/"+id, nil), http.StatusOK, "Acme")
	})
}

// Ensure organizations page newest first through more than one page: the
// pages join into the whole list with nothing twice, organizations created
// meanwhile do not shift later pages, and bad limits and cursors are 400s
// naming them.
func TestBackendOrganizations_paging(t *testing.T) {
	t.Parallel()
	// A fresh application: it pages through every organization.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, _, _ := harness.MustOrgKey(t, app)
		_, ownerID := harness.MustPlainUser(t, app, "Olive Owner", "olive@example.com", harness.UserPassword)
		var want []string
		for i := range 12 {
			want = append(want, harness.MustID(t, mustCreateTrustedOrg(t, k, fmt.Sprintf("Org %d", i), fmt.Sprintf("org-%d", i), ownerID)))
		}
		slices.Reverse(want) // newest first
		for _, limit := range []int{5, 12, 100} {
			if got := mustWalkPages(t, k, harness.OrgsPath, limit); !slices.Equal(got, want) {
				t.Fatalf("limit %d: pages gave %v, want %v", limit, got, want)
			}
		}
		// The default page is 20, each item a full organization.
		items, next := mustTrustedPage(t, k, harness.OrgsPath, url.Values{})
		if len(items) != 12 || next != "" {
			t.Fatalf("default page = %d items, next %q", len(items), next)
		}
		for _, it := range items {
			harness.MustKeys(t, it, harness.TrustedOrgFields...)
		}
		// A cursor keeps its place while organizations are created.
		first, next := mustTrustedPage(t, k.APIKey(), harness.OrgsPath, url.Values{"limit": {"5"}})
		mustCreateTrustedOrg(t, k, "Newest", "newest", ownerID)
		second, _ := mustTrustedPage(t, k, harness.OrgsPath, url.Values{"limit": {"5"}, "cursor": {next}})
		if harness.MustID(t, first[0]) != want[0] || harness.MustID(t, second[0]) != want[5] {
			t.Fatalf("pages = %v then %v, want them to start at %s and %s", first, second, want[0], want[5])
		}

		for _, q := range []string{"limit=0", "limit=101", "limit=x"} {
			harness.MustFieldProblem(t, k.Do(http.MethodGet, harness.OrgsPath+"?"+q, nil), "query.limit")
		}
		for _, c := range []string{"garbage", "!!", url.QueryEscape(strings.Repeat("a", 600))} {
			harness.MustFieldProblem(t, k.Do(http.MethodGet, harness.OrgsPath+"?cursor="+c, nil), "query.cursor")
		}
	})
}

// Ensure members through the trusted API: added (201, with a user summary)
// once, listed newest first by cursor, their roles changed and removed; the
// last owner keeps the role and the membership (409 organization.last_owner);
// members of another organization are 404 here.
func TestBackendOrganizations_members(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, admin, keyID := harness.MustOrgKey(t, app)
		_, ownerID := harness.MustPlainUser(t, app, "Olive Owner", harness.Email(t, "olive@example.com"), harness.UserPassword)
		bob, bobID := harness.MustPlainUser(t, app, "Bob Member", harness.Email(t, "bob@example.com"), harness.UserPassword)
		id := harness.MustID(t, mustCreateTrustedOrg(t, k, "Acme", harness.Own(t, "acme"), ownerID))
		members := harness.OrgsPath + "/" + id + "/members"

		r := k.Do(http.MethodPost, members, map[string]any{"userId": bobID, "role": "admin"})
		harness.MustStatus(t, r, http.StatusCreated)
		added := r.JSON(t)
		harness.MustKeys(t, added, "id", "organizationId", "userId", "role", "createdAt", "user")
		harness.MustRFC3339(t, added, "createdAt")
		u := harness.MustObject(t, added["user"])
		harness.MustKeys(t, u, "id", "name", "email", "image")
		if added["userId"] != bobID || added["organizationId"] != id || added["role"] != "admin" || u["email"] != harness.Email(t, "bob@example.com") || u["name"] != "Bob Member" {
			t.Fatalf("added member = %v", added)
		}
		bobMember := harness.MustID(t, added)
		// Bob sees the organization through the framework.
		if list := harness.MustList(t, bob.Get(harness.OrgPath("list"))); len(list) != 1 || list[0]["id"] != id {
			t.Fatalf("bob's organizations = %v", list)
		}
		if got := harness.MustTrustedOrg(t, k.Do(http.MethodGet, harness.OrgsPath+"/"+id, nil), http.StatusOK, "Acme"); got["memberCount"] != float64(2) {
			t.Fatalf("memberCount = %v, want 2", got["memberCount"])
		}
		mustOrgProblem(t, k.APIKey().Do(http.MethodPost, members, map[string]any{"userId": bobID, "role": "member"}),
			http.StatusConflict, "organization.already_member", "")
		mustOrgProblem(t, k.Do(http.MethodPost, members, map[string]any{"userId": "no-such-user", "role": "member"}),
			http.StatusNotFound, "user.not_found", "body.userId")
		mustOrgProblem(t, k.Do(http.MethodPost, members, map[string]any{"userId": bobID, "role": "emperor"}),
			http.StatusBadRequest, "organization.unknown_role", "body.role")
		harness.MustFieldProblem(t, k.Do(http.MethodPost, members, map[string]any{"userId": bobID}), "body.role")
		mustOrgProblem(t, k.Do(http.MethodPost, harness.OrgsPath+"/no-such-org/members", map[string]any{"userId": bobID, "role": "member"}),
			http.StatusNotFound, "organization.not_found", "")

		// Newest first, paged by cursor: bob, then the owner.
		var ownerMember string
		for _, limit := range []int{1, 20} {
			got := mustWalkPages(t, k, members, limit)
			if len(got) != 2 || got[0] != bobMember {
				t.Fatalf("limit %d: members = %v, want bob's %s first", limit, got, bobMember)
			}
			ownerMember = got[1]
		}
		harness.MustFieldProblem(t, k.Do(http.MethodGet, members+"?cursor=garbage", nil), "query.cursor")

		// The last owner keeps the role and the membership.
		mustOrgProblem(t, k.Do(http.MethodPatch, members+"/"+ownerMember, map[string]any{"role": "member"}),
			http.StatusConflict, "organization.last_owner", "")
		mustOrgProblem(t, k.Do(http.MethodDelete, members+"/"+ownerMember, nil), http.StatusConflict, "organization.last_owner", "")
		// Once bob is an owner too, the first owner can go.
		r = k.APIKey().Do(http.MethodPatch, members+"/"+bobMember, map[string]any{"role": []string{"owner", "admin"}})
		if m := harness.MustOK(t, r); m["role"] != "owner,admin" || harness.MustObject(t, m["user"])["id"] != bobID {
			t.Fatalf("updated member = %v", m)
		}
		harness.MustStatus(t, k.Do(http.MethodDelete, members+"/"+ownerMember, nil), http.StatusNoContent)
		mustOrgProblem(t, k.Do(http.MethodDelete, members+"/"+ownerMember, nil), http.StatusNotFound, "organization.member_not_found", "")
		mustOrgProblem(t, k.Do(http.MethodDelete, members+"/"+bobMember, nil), http.StatusConflict, "organization.last_owner", "")

		// A member of another organization is not found here.
		otherID := harness.MustID(t, mustCreateTrustedOrg(t, k, "Other", harness.Own(t, "other"), ownerID))
		others := mustWalkPages(t, k, harness.OrgsPath+"/"+otherID+"/members", 20)
		mustOrgProblem(t, k.Do(http.MethodPatch, members+"/"+others[0], map[string]any{"role": "member"}),
			http.StatusNotFound, "organization.member_not_found", "")
		mustOrgProblem(t, k.Do(http.MethodDelete, members+"/"+others[0], nil), http.StatusNotFound, "organization.member_not_found", "")
		if got := mustWalkPages(t, k, members, 20); !slices.Equal(got, []string{bobMember}) {
			t.Fatalf("members = %v, want only bob", got)
		}

		// Deleting the organization takes bob's membership with it.
		harness.MustStatus(t, k.Do(http.MethodDelete, harness.OrgsPath+"/"+id, nil), http.StatusNoContent)
		if list := harness.MustList(t, bob.Get(harness.OrgPath("list"))); len(list) != 0 {
			t.Fatalf("bob's organizations after the delete = %v", list)
		}
		mustServiceKeyAudit(t, admin, keyID, id, "organizations.create", "organizations.add-member", "organizations.update-member-role",
			"organizations.remove-member", "organizations.delete")
	})
}

// Ensure invitations through the trusted API: created (201) and mailed with
// or without a named inviter, accepted by the invited user through the
// framework, listed, refused when duplicated, and revoked (204), after which
// the link no longer works.
func TestBackendOrganizations_invitations(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, admin, keyID := harness.MustOrgKey(t, app)
		_, ownerID := harness.MustPlainUser(t, app, "Olive Owner", harness.Email(t, "olive@example.com"), harness.UserPassword)
		_, strangerID := harness.MustPlainUser(t, app, "Sam Stranger", harness.Email(t, "sam@example.com"), harness.UserPassword)
		id := harness.MustID(t, mustCreateTrustedOrg(t, k, "Acme", harness.Own(t, "acme"), ownerID))
		invitations := harness.OrgsPath + "/" + id + "/invitations"

		// Without an inviter: the mail says only that the recipient is invited.
		r := k.Do(http.MethodPost, invitations, map[string]any{"email": harness.Email(t, "Carol@Example.com"), "role": "member"})
		harness.MustStatus(t, r, http.StatusCreated)
		inv := r.JSON(t)
		harness.MustKeys(t, inv, "id", "organizationId", "email", "role", "status", "inviterUserId", "expiresAt", "createdAt", "updatedAt")
		harness.MustRFC3339(t, inv, "expiresAt", "createdAt", "updatedAt")
		if inv["email"] != harness.Email(t, "carol@example.com") || inv["status"] != "pending" || inv["inviterUserId"] != nil || inv["organizationId"] != id {
			t.Fatalf("invitation = %v", inv)
		}
		mail := app.Mail.WaitFor(t, harness.Email(t, "carol@example.com"), "Acme", harness.MailWait)
		if !strings.HasPrefix(mail.Subject, "You are invited to join Acme") || strings.Contains(mail.Text, "invited you") {
			t.Fatalf("mail without an inviter: %q\n%s", mail.Subject, mail.Text)
		}
		if links := mail.Links(); len(links) != 1 || !strings.HasSuffix(links[0], "/accept-invitation/"+harness.MustID(t, inv)) {
			t.Fatalf("mail links = %v, want the invitation's", links)
		}

		// The invited user signs up, verifies the address and accepts through
		// the framework.
		carol, carolID := harness.MustVerifiedUser(t, app, "Carol Invitee", harness.Email(t, "carol@example.com"), harness.UserPassword)
		body := harness.MustOK(t, carol.Post(harness.OrgPath("accept-invitation"), harness.MustJSON(t, map[string]any{"invitationId": inv["id"]})))
		if m := harness.MustObject(t, body["member"]); m["userId"] != carolID || m["organizationId"] != id {
			t.Fatalf("accept-invitation = %v", body)
		}
		page, _ := mustTrustedPage(t, k, harness.OrgsPath+"/"+id+"/members", url.Values{})
		if len(page) != 2 || page[0]["userId"] != carolID {
			t.Fatalf("members after accepting = %v", page)
		}

		// With an inviter, who must be a member: the mail names them.
		mustOrgProblem(t, k.Do(http.MethodPost, invitations, map[string]any{"email": harness.Email(t, "dan@example.com"), "role": "admin", "inviterUserId": strangerID}),
			http.StatusBadRequest, "organization.inviter_not_member", "body.inviterUserId")
		r = k.APIKey().Do(http.MethodPost, invitations, map[string]any{"email": harness.Email(t, "dan@example.com"), "role": "admin", "inviterUserId": ownerID})
		harness.MustStatus(t, r, http.StatusCreated)
		dan := r.JSON(t)
		if dan["inviterUserId"] != ownerID || dan["role"] != "admin" {
			t.Fatalf("invitation = %v", dan)
		}
		mail = app.Mail.WaitFor(t, harness.Email(t, "dan@example.com"), "Acme", harness.MailWait)
		if !strings.HasPrefix(mail.Subject, "Olive Owner invited you to join Acme") {
			t.Fatalf("mail with an inviter: %q", mail.Subject)
		}

		// Duplicates, members, malformed input, unknown organizations.
		mustOrgProblem(t, k.Do(http.MethodPost, invitations, map[string]any{"email": harness.Email(t, "dan@example.com"), "role": "member"}),
			http.StatusConflict, "organization.already_invited", "body.email")
		r = k.Do(http.MethodPost, invitations, map[string]any{"email": harness.Email(t, "dan@example.com"), "role": "member", "resend": true})
		harness.MustStatus(t, r, http.StatusCreated)
		if resent := r.JSON(t); resent["id"] != dan["id"] || resent["role"] != "member" {
			t.Fatalf("resent invitation = %v, want %v renewed", resent, dan)
		}
		mustOrgProblem(t, k.Do(http.MethodPost, invitations, map[string]any{"email": harness.Email(t, "carol@example.com"), "role": "member"}),
			http.StatusConflict, "organization.already_member", "")
		harness.MustFieldProblem(t, k.Do(http.MethodPost, invitations, map[string]any{"email": "not an address", "role": "member"}), "body.email")
		mustOrgProblem(t, k.Do(http.MethodPost, harness.OrgsPath+"/no-such-org/invitations", map[string]any{"email": harness.Email(t, "eve@example.com"), "role": "member"}),
			http.StatusNotFound, "organization.not_found", "")

		// Listed newest first, with their statuses.
		r = k.Do(http.MethodGet, invitations, nil)
		harness.MustStatus(t, r, http.StatusOK)
		harness.MustKeys(t, r.JSON(t), "data")
		var list struct {
			Data []map[string]any `json:"data"`
		}
		harness.MustUnmarshal(t, r.Body, &list)
		if len(list.Data) != 2 || list.Data[0]["id"] != dan["id"] || list.Data[0]["status"] != "pending" ||
			list.Data[1]["id"] != inv["id"] || list.Data[1]["status"] != "accepted" {
			t.Fatalf("invitations = %v", list.Data)
		}

		// Revoked: 204, then canceled, and the link no longer works; an
		// answered invitation cannot be revoked; another organization's
		// invitation is not found here.
		danID := harness.MustID(t, dan)
		harness.MustStatus(t, k.Do(http.MethodDelete, invitations+"/"+danID, nil), http.StatusNoContent)
		mustOrgProblem(t, k.Do(http.MethodDelete, invitations+"/"+danID, nil), http.StatusConflict, "organization.invitation_not_pending", "")
		mustOrgProblem(t, k.Do(http.MethodDelete, invitations+"/"+harness.MustID(t, inv), nil), http.StatusConflict, "organization.invitation_not_pending", "")
		mustOrgProblem(t, k.Do(http.MethodDelete, invitations+"/no-such-invitation", nil), http.StatusNotFound, "organization.invitation_not_found", "")
		danClient, _ := harness.MustVerifiedUser(t, app, "Dan", harness.Email(t, "dan@example.com"), harness.UserPassword)
		harness.MustCode(t, danClient.Post(harness.OrgPath("accept-invitation"), harness.MustJSON(t, map[string]any{"invitationId": danID})), http.StatusBadRequest, "INVITATION_NOT_FOUND")
		otherID := harness.MustID(t, mustCreateTrustedOrg(t, k, "Other", harness.Own(t, "other"), ownerID))
		r = k.Do(http.MethodPost, harness.OrgsPath+"/"+otherID+"/invitations", map[string]any{"email": harness.Email(t, "eve@example.com"), "role": "member"})
		harness.MustStatus(t, r, http.StatusCreated)
		mustOrgProblem(t, k.Do(http.MethodDelete, invitations+"/"+harness.MustID(t, r.JSON(t)), nil), http.StatusNotFound, "organization.invitation_not_found", "")

		refusals := mustServiceKeyAudit(t, admin, keyID, id, "organizations.create", "organizations.invite", "organizations.invite",
			"organizations.invite", "organizations.revoke-invitation")
		if !slices.Contains(refusals, "organization.already_invited") || !slices.Contains(refusals, "organization.invitation_not_pending") {
			t.Fatalf("audited refusals = %v, want organization.already_invited and organization.invitation_not_pending among them", refusals)
		}
	})
}
