package test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// domainsPath is the trusted API's domain collection.
const domainsPath = "/api/domains"

// challengeValue is a TXT challenge: the prefix and a 32-character token.
var challengeValue = regexp.MustCompile(`^gatehouse-verification=[A-Za-z0-9]{32}$`)

// domainKit is an app with a signed-in platform administrator and a service
// key holding the domain scopes.
type domainKit struct {
	t       *testing.T
	app     *fwApp
	admin   *fwClient
	adminID string
	secret  string
	keyID   string
}

// mustDomainKit signs the administrator in and issues the key.
func mustDomainKit(t *testing.T, app *fwApp) *domainKit {
	t.Helper()
	admin, adminID := mustAdmin(t, app)
	key := mustCreateKey(t, admin, map[string]any{"name": "domains backend", "scopes": []string{"domains:read", "domains:write"}})
	return &domainKit{t: t, app: app, admin: admin, adminID: adminID, secret: key["secret"].(string), keyID: mustID(t, key)}
}

// call sends a trusted request with the key as Authorization: Bearer.
func (k *domainKit) call(method, path, body string) *response {
	k.t.Helper()
	return k.app.client(k.t).do(method, path, body, "Authorization", "Bearer "+k.secret)
}

// patch sends an administrator's PATCH through c (a session, or none).
func (k *domainKit) patch(c *fwClient, id, body string) *response {
	k.t.Helper()
	return c.do(http.MethodPatch, "/api/admin/domains/"+id, body, "Origin", k.app.Cfg.HTTP.BaseURL, "Content-Type", "application/json")
}

// mustCreate claims hostname for org ("" for none) and returns the domain.
func (k *domainKit) mustCreate(hostname, org string) map[string]any {
	k.t.Helper()
	body := map[string]any{"hostname": hostname}
	if org != "" {
		body["organizationId"] = org
	}
	r := k.call(http.MethodPost, domainsPath, mustJSON(k.t, body))
	mustStatus(k.t, r, http.StatusCreated)
	return r.JSON(k.t)
}

// mustGet returns the domain id.
func (k *domainKit) mustGet(id string) map[string]any {
	k.t.Helper()
	return mustOK(k.t, k.call(http.MethodGet, domainsPath+"/"+id, ""))
}

// mustOrg creates an organization through the administrator's session and
// returns its id.
func (k *domainKit) mustOrg(name, slug string) string {
	k.t.Helper()
	return mustID(k.t, mustCreateOrg(k.t, k.admin, name, slug))
}

// record returns the domain's record of type typ.
func record(t testing.TB, d map[string]any, typ string) map[string]any {
	t.Helper()
	for _, r := range d["records"].([]any) {
		if m := mustObject(t, r); m["type"] == typ {
			return m
		}
	}
	t.Fatalf("no %s record in %v", typ, d["records"])
	return nil
}

// listDomains returns one page of GET /api/domains with q: the domains'
// hostnames in order, and the next cursor ("" on the last page).
func (k *domainKit) listDomains(q url.Values) ([]string, string) {
	k.t.Helper()
	r := k.call(http.MethodGet, domainsPath+"?"+q.Encode(), "")
	var page struct {
		Data       []map[string]any `json:"data"`
		NextCursor *string          `json:"nextCursor"`
	}
	mustStatus(k.t, r, http.StatusOK)
	mustUnmarshal(k.t, r.Body, &page)
	if page.Data == nil {
		k.t.Fatalf("page without data: %s", r.Body)
	}
	hosts := make([]string, len(page.Data))
	for i, d := range page.Data {
		hosts[i], _ = d["hostname"].(string)
	}
	if page.NextCursor == nil {
		return hosts, ""
	}
	return hosts, *page.NextCursor
}

// startDomainVerifier runs the domain verifier for app until the test ends,
// as "gatehouse serve" does, at the configured check interval.
func startDomainVerifier(t testing.TB, app *fwApp) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		app.App.VerifyDomainsEvery(ctx, app.Cfg.Domains.CheckInterval, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done }) // before the app's database closes
}

// Ensure a claimed domain comes back normalised and pending with its TXT
// challenge, the same from every read route (either key header), and that
// any spelling of its hostname finds it.
func TestDomains_create_and_read(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		k := mustDomainKit(t, app)
		org := k.mustOrg("Acme", "acme")

		d := k.mustCreate("Shop.EXAMPLE.com.", "")
		id := mustID(t, d)
		if d["hostname"] != "shop.example.com" || d["status"] != "pending" || d["organizationId"] != nil || d["attempts"] != float64(0) ||
			d["lastCheckedAt"] != nil || d["verifiedAt"] != nil || d["failedAt"] != nil || d["manualVerificationReason"] != nil {
			t.Fatalf("created domain = %v", d)
		}
		mustJSDatesOrRFC3339(t, d, "createdAt", "updatedAt", "nextCheckAt")
		records := d["records"].([]any)
		txt := record(t, d, "TXT")
		if len(records) != 1 || txt["name"] != "_gatehouse-challenge.shop.example.com" || !challengeValue.MatchString(txt["value"].(string)) ||
			txt["required"] != true || txt["status"] != "unchecked" || txt["lastCheckedAt"] != nil || len(txt["observed"].([]any)) != 0 {
			t.Fatalf("records = %v", records)
		}

		owned := k.mustCreate("shop.example.net", org)
		if owned["organizationId"] != org || record(t, owned, "TXT")["value"] == txt["value"] {
			t.Fatalf("second domain = %v (its token must differ from %v)", owned, txt["value"])
		}

		// Every read route, with either header, answers the same domain.
		for _, headers := range [][]string{{"Authorization", "Bearer " + k.secret}, {"x-api-key", k.secret}} {
			got := mustOK(t, app.client(t).get(domainsPath+"/"+id, headers...))
			if !reflect.DeepEqual(got, d) {
				t.Fatalf("GET by id with %s = %v, want %v", headers[0], got, d)
			}
			recs := mustOK(t, app.client(t).get(domainsPath+"/"+id+"/dns-records", headers...))
			if !reflect.DeepEqual(recs, map[string]any{"records": d["records"]}) {
				t.Fatalf("dns-records with %s = %v", headers[0], recs)
			}
		}
		for _, spelling := range []string{"shop.example.com", "SHOP.Example.Com.", "shop.example.com."} {
			got := mustOK(t, k.call(http.MethodGet, domainsPath+"/by-hostname/"+url.PathEscape(spelling), ""))
			if !reflect.DeepEqual(got, d) {
				t.Fatalf("by-hostname %q = %v", spelling, got)
			}
		}

		// Internationalised names are kept in punycode and found by either form.
		idn := k.mustCreate("Bücher.Example.com", org)
		if idn["hostname"] != "xn--bcher-kva.example.com" || record(t, idn, "TXT")["name"] != "_gatehouse-challenge.xn--bcher-kva.example.com" {
			t.Fatalf("IDN domain = %v", idn)
		}
		for _, spelling := range []string{"bücher.example.com", "BÜCHER.example.com.", "XN--BCHER-KVA.example.com"} {
			if got := mustOK(t, k.call(http.MethodGet, domainsPath+"/by-hostname/"+url.PathEscape(spelling), "")); got["id"] != idn["id"] {
				t.Fatalf("by-hostname %q = %v, want %v", spelling, got["id"], idn["id"])
			}
		}
		mustProblem(t, k.call(http.MethodGet, domainsPath+"/by-hostname/unclaimed.example.com", ""), http.StatusNotFound, "domain.not_found")
		for _, bad := range []string{"*.example.com", "co.uk", "192.0.2.1", strings.Repeat("a", 64) + ".example.com"} {
			mustFieldProblem(t, k.call(http.MethodGet, domainsPath+"/by-hostname/"+url.PathEscape(bad), ""), "path.hostname")
		}
	})
}

// Ensure every malformed claim is refused at its location: each kind of bad
// hostname at body.hostname, and unknown or mistyped fields.
func TestDomains_create_refuses_bad_input(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		k := mustDomainKit(t, app)
		label63 := strings.Repeat("a", 63)
		bad := map[string]string{
			"empty":               "",
			"blank":               "   ",
			"ipv4":                "192.0.2.1",
			"ipv4_with_dot":       "192.0.2.1.",
			"ipv6":                "2001:db8::1",
			"ipv6_bracketed":      "[2001:db8::1]",
			"numeric_last_label":  "host.123",
			"hex_last_label":      "1.2.3.0x4",
			"wildcard":            "*.example.com",
			"inner_wildcard":      "a.*.example.com",
			"public_suffix":       "co.uk",
			"top_level_domain":    "com",
			"single_label":        "localhost",
			"label_too_long":      strings.Repeat("a", 64) + ".example.com",
			"name_too_long":       label63 + "." + label63 + "." + label63 + "." + label63 + ".com",
			"empty_label":         "a..example.com",
			"leading_hyphen":      "-shop.example.com",
			"trailing_hyphen":     "shop-.example.com",
			"space":               "my shop.example.com",
			"underscore":          "my_shop.example.com",
			"url":                 "https://shop.example.com",
			"path":                "shop.example.com/x",
			"port":                "shop.example.com:443",
			"over_max_length":     strings.Repeat("a.", 520),
			"idn_public_suffix":   "公司.cn",
			"invalid_punycode":    "xn--a.example.com",
			"double_trailing_dot": "shop.example.com..",
		}
		for name, h := range bad {
			t.Run(name, func(t *testing.T) {
				mustFieldProblem(t, k.call(http.MethodPost, domainsPath, mustJSON(t, map[string]any{"hostname": h})), "body.hostname")
			})
		}
		mustFieldProblem(t, k.call(http.MethodPost, domainsPath, `{}`), "body.hostname")
		mustFieldProblem(t, k.call(http.MethodPost, domainsPath, `{"hostname":5}`), "body.hostname")
		mustFieldProblem(t, k.call(http.MethodPost, domainsPath, `{"hostname":"ok.example.com","organizationId":7}`), "body.organizationId")
		r := k.call(http.MethodPost, domainsPath, `{"hostname":"ok.example.com","owner":"x"}`)
		mustStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(string(r.Body), "owner") {
			t.Fatalf("unknown property refusal does not name it: %s", r.Body)
		}
		// Nothing was created by any refusal.
		if hosts, _ := k.listDomains(url.Values{}); len(hosts) != 0 {
			t.Fatalf("refused claims created %v", hosts)
		}
	})
}

// Ensure a hostname is unique in the service whatever the organization or
// spelling (409), an unknown organization or domain is 404, and deletion
// (204) frees the hostname; deleting an organization deletes its domains.
func TestDomains_conflicts_not_found_and_delete(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		k := mustDomainKit(t, app)
		orgA, orgB := k.mustOrg("Acme", "acme"), k.mustOrg("Globex", "globex")
		first := k.mustCreate("taken.example.com", orgA)

		for _, body := range []map[string]any{
			{"hostname": "taken.example.com", "organizationId": orgA},
			{"hostname": "TAKEN.Example.com.", "organizationId": orgB},
			{"hostname": "taken.example.com"},
		} {
			r := k.call(http.MethodPost, domainsPath, mustJSON(t, body))
			p := mustProblem(t, r, http.StatusConflict, "domain.hostname_taken")
			if errs, _ := p["errors"].([]any); len(errs) != 1 || mustObject(t, errs[0])["location"] != "body.hostname" {
				t.Fatalf("409 does not name body.hostname: %s", r.Body)
			}
		}
		r := k.call(http.MethodPost, domainsPath, mustJSON(t, map[string]any{"hostname": "free.example.com", "organizationId": missing}))
		p := mustProblem(t, r, http.StatusNotFound, "organization.not_found")
		if errs, _ := p["errors"].([]any); len(errs) != 1 || mustObject(t, errs[0])["location"] != "body.organizationId" {
			t.Fatalf("404 does not name body.organizationId: %s", r.Body)
		}

		for _, path := range []string{domainsPath + "/" + missing, domainsPath + "/" + missing + "/dns-records"} {
			mustProblem(t, k.call(http.MethodGet, path, ""), http.StatusNotFound, "domain.not_found")
		}
		mustProblem(t, k.call(http.MethodDelete, domainsPath+"/"+missing, ""), http.StatusNotFound, "domain.not_found")

		// Deletion answers 204, the domain is gone and its hostname free
		// again, with a new challenge.
		r = k.call(http.MethodDelete, domainsPath+"/"+mustID(t, first), "")
		mustStatus(t, r, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Fatalf("204 with a body: %s", r.Body)
		}
		mustProblem(t, k.call(http.MethodGet, domainsPath+"/"+mustID(t, first), ""), http.StatusNotFound, "domain.not_found")
		mustProblem(t, k.call(http.MethodDelete, domainsPath+"/"+mustID(t, first), ""), http.StatusNotFound, "domain.not_found")
		again := k.mustCreate("taken.example.com", orgB)
		if record(t, again, "TXT")["value"] == record(t, first, "TXT")["value"] {
			t.Fatal("a reclaimed hostname kept the old challenge")
		}

		// Deleting the organization deletes its domains.
		mustOK(t, k.admin.post(orgPath("delete"), mustJSON(t, map[string]any{"organizationId": orgB})))
		mustProblem(t, k.call(http.MethodGet, domainsPath+"/"+mustID(t, again), ""), http.StatusNotFound, "domain.not_found")
		k.mustCreate("taken.example.com", orgA)
	})
}

// Ensure the listing pages newest first with a cursor, filters by
// organization and status, and refuses bad parameters at their location.
func TestDomains_list(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesThatMatter, adminEnv, func(t *testing.T, app *fwApp) {
		k := mustDomainKit(t, app)
		orgA, orgB := k.mustOrg("Acme", "acme"), k.mustOrg("Globex", "globex")
		var all []string // newest first
		for i, org := range []string{orgA, "", orgB, orgA, ""} {
			h := "d" + string(rune('0'+i)) + ".example.com"
			k.mustCreate(h, org)
			all = append([]string{h}, all...)
			time.Sleep(2 * time.Millisecond) // distinct creation times; ties are ordered by id anyway
		}

		var got []string
		q := url.Values{"limit": {"2"}}
		for page := 0; ; page++ {
			hosts, next := k.listDomains(q)
			if page < 2 && len(hosts) != 2 || page == 2 && len(hosts) != 1 || page > 2 {
				t.Fatalf("page %d = %v (next %q)", page, hosts, next)
			}
			got = append(got, hosts...)
			if next == "" {
				break
			}
			q.Set("cursor", next)
		}
		if !reflect.DeepEqual(got, all) {
			t.Fatalf("paged = %v, want %v", got, all)
		}
		if hosts, next := k.listDomains(url.Values{}); !reflect.DeepEqual(hosts, all) || next != "" {
			t.Fatalf("default page = %v (next %q), want all five", hosts, next)
		}
		if hosts, _ := k.listDomains(url.Values{"organizationId": {orgA}}); !reflect.DeepEqual(hosts, []string{"d3.example.com", "d0.example.com"}) {
			t.Fatalf("organization A = %v", hosts)
		}
		if hosts, _ := k.listDomains(url.Values{"organizationId": {missing}}); len(hosts) != 0 {
			t.Fatalf("unknown organization = %v", hosts)
		}
		if hosts, _ := k.listDomains(url.Values{"status": {"pending"}, "organizationId": {orgB}}); !reflect.DeepEqual(hosts, []string{"d2.example.com"}) {
			t.Fatalf("pending of B = %v", hosts)
		}
		if hosts, _ := k.listDomains(url.Values{"status": {"verified"}}); len(hosts) != 0 {
			t.Fatalf("verified = %v", hosts)
		}
		for q, location := range map[string]string{
			"cursor=not-a-cursor": "query.cursor",
			"limit=0":             "query.limit",
			"limit=101":           "query.limit",
			"limit=x":             "query.limit",
			"status=archived":     "query.status",
		} {
			mustFieldProblem(t, k.call(http.MethodGet, domainsPath+"?"+q, ""), location)
		}
	})
}

// Ensure trusted writes are audited with the key as the actor and the
// domain as the target, refusals included.
func TestDomains_audit(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		k := mustDomainKit(t, app)
		d := k.mustCreate("audited.example.com", "")
		mustProblem(t, k.call(http.MethodPost, domainsPath, `{"hostname":"audited.example.com"}`), http.StatusConflict, "domain.hostname_taken")
		mustStatus(t, k.call(http.MethodDelete, domainsPath+"/"+mustID(t, d), ""), http.StatusNoContent)

		created := auditAll(t, k.admin, url.Values{"action": {"domains.create"}})
		if len(created) != 2 {
			t.Fatalf("domains.create entries = %v, want the success and the conflict", created)
		}
		conflict, success := created[0], created[1] // newest first
		for _, e := range created {
			if e["actorType"] != "service_key" || e["actorId"] != k.keyID || e["targetType"] != "domain" || e["requestId"] == "" {
				t.Fatalf("entry = %v", e)
			}
		}
		if success["targetId"] != d["id"] || success["outcome"] != "success" || conflict["outcome"] == "success" || conflict["code"] != "domain.hostname_taken" {
			t.Fatalf("entries = %v", created)
		}
		deleted := auditAll(t, k.admin, url.Values{"action": {"domains.delete"}, "targetId": {mustID(t, d)}})
		if len(deleted) != 1 || deleted[0]["outcome"] != "success" || deleted[0]["actorId"] != k.keyID || deleted[0]["targetType"] != "domain" {
			t.Fatalf("domains.delete entries = %v", deleted)
		}
	})
}

// Ensure PATCH /api/admin/domains/{id} is the platform administrator's
// alone (401 without a session, 403 for anyone else, both audited), moves a
// domain between organizations or detaches it, and refuses bad changes at
// their location.
func TestDomains_admin_update(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		k := mustDomainKit(t, app)
		orgA, orgB := k.mustOrg("Acme", "acme"), k.mustOrg("Globex", "globex")
		d := k.mustCreate("admin.example.com", orgA)
		id := mustID(t, d)

		r := k.patch(app.client(t), id, `{"organizationId":"`+orgB+`"}`)
		mustProblem(t, r, http.StatusUnauthorized, r.JSON(t)["code"].(string))
		plain, _ := mustPlainUser(t, app, "Eve", "eve@example.com", userPassword)
		mustProblem(t, k.patch(plain, id, `{"organizationId":"`+orgB+`"}`), http.StatusForbidden, "auth.not_platform_admin")
		if k.mustGet(id)["organizationId"] != orgA {
			t.Fatal("a refused change was applied")
		}
		// The service key is no session either.
		r = app.client(t).do(http.MethodPatch, "/api/admin/domains/"+id, `{"recheck":true}`, "Authorization", "Bearer "+k.secret,
			"Origin", app.Cfg.HTTP.BaseURL, "Content-Type", "application/json")
		mustStatus(t, r, http.StatusUnauthorized)

		moved := mustOK(t, k.patch(k.admin, id, `{"organizationId":"`+orgB+`"}`))
		if moved["organizationId"] != orgB || moved["status"] != "pending" {
			t.Fatalf("moved = %v", moved)
		}
		if got := k.mustGet(id); !reflect.DeepEqual(got, moved) {
			t.Fatalf("GET after PATCH = %v, want %v", got, moved)
		}
		for _, detach := range []string{`{"organizationId":null}`, `{"organizationId":""}`} {
			if got := mustOK(t, k.patch(k.admin, id, detach)); got["organizationId"] != nil {
				t.Fatalf("%s = %v", detach, got)
			}
		}
		if hosts, _ := k.listDomains(url.Values{"organizationId": {orgA}}); len(hosts) != 0 {
			t.Fatalf("organization A still lists %v", hosts)
		}

		r = k.patch(k.admin, id, `{"organizationId":"`+missing+`"}`)
		if p := mustProblem(t, r, http.StatusNotFound, "organization.not_found"); mustObject(t, p["errors"].([]any)[0])["location"] != "body.organizationId" {
			t.Fatalf("unknown organization = %s", r.Body)
		}
		mustProblem(t, k.patch(k.admin, missing, `{"recheck":true}`), http.StatusNotFound, "domain.not_found")
		for body, location := range map[string]string{
			`{}`:                "body",
			`{"recheck":false}`: "body",
			`{"recheck":true,"verify":{"reason":"ok"}}`: "body.verify",
			`{"verify":{}}`:               "body.verify.reason",
			`{"verify":{"reason":""}}`:    "body.verify.reason",
			`{"verify":{"reason":"   "}}`: "body.verify.reason",
			`{"verify":{"reason":"` + strings.Repeat("x", 501) + `"}}`: "body.verify.reason",
			`{"recheck":"yes"}`:    "body.recheck",
			`{"organizationId":5}`: "body.organizationId",
		} {
			mustFieldProblem(t, k.patch(k.admin, id, body), location)
		}
		r = k.patch(k.admin, id, `{"recheck":true,"status":"verified"}`)
		mustStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(string(r.Body), "status") {
			t.Fatalf("unknown property refusal does not name it: %s", r.Body)
		}
		if got := k.mustGet(id); got["organizationId"] != nil || got["status"] != "pending" {
			t.Fatalf("refused changes were applied: %v", got)
		}

		entries := auditAll(t, k.admin, url.Values{"action": {"admin.update-domain"}, "targetId": {id}})
		var success, denied int
		for _, e := range entries {
			switch {
			case e["outcome"] == "success" && e["actorType"] == "user" && e["actorId"] == k.adminID && e["targetType"] == "domain":
				success++
			case e["outcome"] == "denied" && e["code"] == "auth.not_platform_admin":
				denied++
			}
		}
		if success != 3 || denied != 1 {
			t.Fatalf("admin.update-domain entries: %d successes, %d denials, want 3 and 1: %v", success, denied, entries)
		}
	})
}
