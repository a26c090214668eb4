package console

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// entryIDs returns the ids of entries in order.
func entryIDs(entries []map[string]any) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i], _ = e["id"].(string)
	}
	return out
}

// occurredAt parses an entry's time.
func occurredAt(t testing.TB, e map[string]any) time.Time {
	t.Helper()
	s, _ := e["occurredAt"].(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("occurredAt %q: %v", s, err)
	}
	return at
}

// expectedEntry is an audited request and what its entry must say.
type expectedEntry struct {
	requestID                             string
	actorID, action, targetType, targetID string
	outcome, code                         string
}

// Ensure administrative actions are audited with actor, action, target,
// request id, address and outcome, refusals included; the log filters by
// actor, action, target and time, pages with a cursor over every entry
// exactly once, newest first, and no route changes or deletes entries.
func TestAudit_log(t *testing.T) {
	t.Parallel()
	// A fresh application: it pages through the whole audit log.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		_, bobID := harness.MustPlainUser(t, app, "Bob", "bob@example.com", harness.UserPassword)
		eve, eveID := harness.MustPlainUser(t, app, "Eve", "eve@example.com", harness.UserPassword)
		bob2 := app.NewClient(t)
		harness.MustSignIn(t, bob2, "bob@example.com", harness.UserPassword)
		bobSession := harness.MustObject(t, harness.MustSession(t, bob2)["session"])["id"].(string)

		var want []expectedEntry
		did := func(r *harness.Response, status int, actorID, action, targetType, targetID, outcome, code string) map[string]any {
			t.Helper()
			harness.MustStatus(t, r, status)
			id := r.Header.Get("X-Request-Id")
			if id == "" {
				t.Fatalf("%s: no X-Request-Id", action)
			}
			want = append(want, expectedEntry{id, actorID, action, targetType, targetID, outcome, code})
			if len(r.Body) == 0 {
				return nil
			}
			return r.JSON(t)
		}
		ok := func(r *harness.Response, action, targetType, targetID string) map[string]any {
			t.Helper()
			return did(r, http.StatusOK, adminID, action, targetType, targetID, "success", "")
		}
		post := func(name string, body any) *harness.Response {
			return admin.Post(harness.AdminPath(name), harness.MustJSON(t, body))
		}

		created := post("create-user", map[string]any{"email": "grace@example.com", "name": "Grace", "password": harness.UserPassword})
		graceID := harness.MustID(t, created.JSON(t)["user"])
		ok(created, "admin.create-user", "user", graceID)
		ok(post("update-user", map[string]any{"userId": graceID, "data": map[string]any{"name": "Grace Hopper"}}), "admin.update-user", "user", graceID)
		ok(post("set-role", map[string]any{"userId": graceID, "role": "admin"}), "admin.set-role", "user", graceID)
		ok(post("revoke-user-session", map[string]any{"sessionToken": bobSession}), "admin.revoke-user-session", "session", bobSession)
		ok(post("ban-user", map[string]any{"userId": bobID, "banReason": "spam"}), "admin.ban-user", "user", bobID)
		did(eve.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": adminID})), http.StatusForbidden, eveID, "admin.ban-user", "user", adminID, "denied", "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS")
		did(post("ban-user", map[string]any{"userId": adminID}), http.StatusBadRequest, adminID, "admin.ban-user", "user", adminID, "failure", "YOU_CANNOT_BAN_YOURSELF")
		ok(post("unban-user", map[string]any{"userId": bobID}), "admin.unban-user", "user", bobID)
		ok(post("set-user-password", map[string]any{"userId": bobID, "newPassword": "a password the admin chose"}), "admin.set-user-password", "user", bobID)
		ok(post("revoke-user-sessions", map[string]any{"userId": bobID}), "admin.revoke-user-sessions", "user", bobID)
		ok(post("impersonate-user", map[string]any{"userId": bobID}), "admin.impersonate-user", "user", bobID)
		ok(admin.Post(harness.AdminPath("stop-impersonating"), "{}"), "admin.stop-impersonating", "user", bobID)
		key := did(admin.Post(harness.ServiceKeysPath, harness.MustJSON(t, map[string]any{"name": "audited", "scopes": []string{"users:read"}})), http.StatusCreated, adminID, "service-key.create", "service_key", "", "success", "")
		keyID := harness.MustID(t, key)
		want[len(want)-1].targetID = keyID
		ok(admin.Post(harness.ServiceKeysPath+"/"+keyID+"/rotate", `{"overlapSeconds":60}`), "service-key.rotate", "service_key", keyID)
		did(eve.Post(harness.ServiceKeysPath, harness.MustJSON(t, map[string]any{"name": "mine", "scopes": []string{"*"}})), http.StatusForbidden, eveID, "service-key.create", "service_key", "", "denied", "auth.not_platform_admin")
		did(admin.Do(http.MethodDelete, harness.ServiceKeysPath+"/"+keyID, "", "Origin", app.Cfg.HTTP.BaseURL), http.StatusNoContent, adminID, "service-key.revoke", "service_key", keyID, "success", "")
		ok(post("remove-user", map[string]any{"userId": bobID}), "admin.remove-user", "user", bobID)

		all := harness.AuditAll(t, admin, nil)
		byRequest := map[string]map[string]any{}
		for _, e := range all {
			byRequest[e["requestId"].(string)] = e
		}
		for _, w := range want {
			e := byRequest[w.requestID]
			if e == nil {
				t.Fatalf("no entry for %s (request %s) in %v", w.action, w.requestID, all)
			}
			code, _ := e["code"].(string)
			if e["actorType"] != "user" || e["actorId"] != w.actorID || e["action"] != w.action || e["targetType"] != w.targetType ||
				e["targetId"] != w.targetID || e["outcome"] != w.outcome || code != w.code || e["ipAddress"] != "127.0.0.1" || e["id"] == "" {
				t.Fatalf("entry for %s = %v, want %+v", w.action, e, w)
			}
		}
		if len(all) != len(want) {
			t.Fatalf("%d entries, want %d (reads are not audited): %v", len(all), len(want), all)
		}
		// Newest first, and the order of the requests.
		for i := range all {
			if all[i]["requestId"] != want[len(want)-1-i].requestID {
				t.Fatalf("entry %d is %v, want the one of %s", i, all[i], want[len(want)-1-i].action)
			}
		}

		// Filters agree with the whole log.
		filter := func(keep func(e map[string]any) bool) []string {
			var out []string
			for _, e := range all {
				if keep(e) {
					out = append(out, e["id"].(string))
				}
			}
			return out
		}
		mid := occurredAt(t, all[len(all)/2])
		for _, tt := range []struct {
			name string
			q    url.Values
			keep func(e map[string]any) bool
			min  int
		}{
			{"actor", url.Values{"actorId": {eveID}}, func(e map[string]any) bool { return e["actorId"] == eveID }, 2},
			{"actor_type_user", url.Values{"actorType": {"user"}}, func(map[string]any) bool { return true }, len(all)},
			{"actor_type_cli", url.Values{"actorType": {"cli"}}, func(map[string]any) bool { return false }, 0},
			{"action", url.Values{"action": {"admin.ban-user"}}, func(e map[string]any) bool { return e["action"] == "admin.ban-user" }, 3},
			{"target", url.Values{"targetId": {bobID}}, func(e map[string]any) bool { return e["targetId"] == bobID }, 7},
			{"target_type", url.Values{"targetType": {"service_key"}}, func(e map[string]any) bool { return e["targetType"] == "service_key" }, 4},
			{"action_and_target", url.Values{"action": {"admin.ban-user"}, "targetId": {adminID}}, func(e map[string]any) bool {
				return e["action"] == "admin.ban-user" && e["targetId"] == adminID
			}, 2},
			{"since", url.Values{"since": {mid.Format(time.RFC3339Nano)}}, func(e map[string]any) bool { return !occurredAt(t, e).Before(mid) }, 1},
			{"until", url.Values{"until": {mid.Format(time.RFC3339Nano)}}, func(e map[string]any) bool { return occurredAt(t, e).Before(mid) }, 1},
			{"since_and_until", url.Values{"since": {occurredAt(t, all[len(all)-2]).Format(time.RFC3339Nano)}, "until": {occurredAt(t, all[1]).Format(time.RFC3339Nano)}},
				func(e map[string]any) bool {
					at := occurredAt(t, e)
					return !at.Before(occurredAt(t, all[len(all)-2])) && at.Before(occurredAt(t, all[1]))
				}, 1},
		} {
			got, wantIDs := entryIDs(harness.AuditAll(t, admin, tt.q)), filter(tt.keep)
			if !slices.Equal(got, wantIDs) || len(got) < tt.min {
				t.Fatalf("%s: %v, want %v (at least %d)", tt.name, got, wantIDs, tt.min)
			}
		}

		// Paging returns every entry exactly once, newest first, with any page size.
		for _, limit := range []string{"1", "4", "5"} {
			var paged []map[string]any
			q := url.Values{"limit": {limit}}
			pages := 0
			for {
				entries, next := harness.AuditPage(t, admin, q)
				pages++
				if len(entries) > mustAtoi(t, limit) || pages > len(all)+1 {
					t.Fatalf("limit %s: page of %d, page %d", limit, len(entries), pages)
				}
				paged = append(paged, entries...)
				if next == "" {
					break
				}
				q.Set("cursor", next)
			}
			if got := entryIDs(paged); !slices.Equal(got, entryIDs(all)) {
				t.Fatalf("limit %s: paged ids %v, want %v", limit, got, entryIDs(all))
			}
			for i := 1; i < len(paged); i++ {
				if occurredAt(t, paged[i]).After(occurredAt(t, paged[i-1])) {
					t.Fatalf("limit %s: entry %d is newer than entry %d", limit, i, i-1)
				}
			}
		}
		// A filtered listing pages too.
		q := url.Values{"targetId": {bobID}, "limit": {"2"}}
		var paged []map[string]any
		for {
			entries, next := harness.AuditPage(t, admin, q)
			paged = append(paged, entries...)
			if next == "" {
				break
			}
			q.Set("cursor", next)
		}
		if got, wantIDs := entryIDs(paged), filter(func(e map[string]any) bool { return e["targetId"] == bobID }); !slices.Equal(got, wantIDs) {
			t.Fatalf("filtered paging: %v, want %v", got, wantIDs)
		}

		// Bad cursors and limits are refused naming the parameter.
		for _, c := range []string{"!!!", "bm90LWEtY3Vyc29y", "MTIzNA", "eH5hYmM"} {
			harness.MustFieldProblem(t, admin.Get(harness.AuditPath+"?cursor="+url.QueryEscape(c)), "query.cursor")
		}
		harness.MustFieldProblem(t, admin.Get(harness.AuditPath+"?limit=0"), "query.limit")
		harness.MustFieldProblem(t, admin.Get(harness.AuditPath+"?limit=101"), "query.limit")
		harness.MustFieldProblem(t, admin.Get(harness.AuditPath+"?since=yesterday"), "query.since")
		harness.MustFieldProblem(t, admin.Get(harness.AuditPath+"?actorType=robot"), "query.actorType")

		// No route changes or deletes entries.
		first := all[0]["id"].(string)
		for _, m := range []string{http.MethodDelete, http.MethodPatch, http.MethodPut, http.MethodPost} {
			for _, path := range []string{harness.AuditPath, harness.AuditPath + "/" + first} {
				r := admin.Do(m, path, `{"outcome":"success"}`, "Origin", app.Cfg.HTTP.BaseURL)
				if r.Status != http.StatusNotFound && r.Status != http.StatusMethodNotAllowed {
					t.Fatalf("%s %s = %d %s, want 404 or 405", m, path, r.Status, r.Body)
				}
			}
		}
		if got := entryIDs(harness.AuditAll(t, admin, nil)); !slices.Equal(got, entryIDs(all)) {
			t.Fatalf("the log changed: %v, want %v", got, entryIDs(all))
		}
	})
}
