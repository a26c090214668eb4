package backend

import (
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// challengeValue is a TXT challenge: the prefix and a 32-character token.
var challengeValue = regexp.MustCompile(`^gatehouse-verification=[A-Za-z0-9]{32}$`)

// mustDomainKit signs the administrator in and issues the key.
func mustDomainKit(t *testing.T, app *harness.App) *harness.DomainKit {
	t.Helper()
	admin, adminID := harness.MustAdmin(t, app)
	key := harness.MustCreateKey(t, admin, map[string]any{"name": "domains backend", "scopes": []string{"domains:read", "domains:write"}})
	return &harness.DomainKit{T: t, App: app, Admin: admin, AdminID: adminID, Secret: key["secret"].(string), KeyID: harness.MustID(t, key)}
}

// Ensure a claimed domain comes back normalised and pending with its TXT
// challenge, the same from every read route (either key header), and that
// any spelling of its hostname finds it.
func TestDomains_create_and_read(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k := mustDomainKit(t, app)
		org := k.MustOrg("Acme", harness.Own(t, "acme"))

		d := k.MustCreate(ownHost(t, "Shop.EXAMPLE.com."), "")
		id := harness.MustID(t, d)
		if d["hostname"] != ownHost(t, "shop.example.com") || d["status"] != "pending" || d["organizationId"] != nil || d["attempts"] != float64(0) ||
			d["lastCheckedAt"] != nil || d["verifiedAt"] != nil || d["failedAt"] != nil || d["manualVerificationReason"] != nil {
			t.Fatalf("created domain = %v", d)
		}
		harness.MustJSDatesOrRFC3339(t, d, "createdAt", "updatedAt", "nextCheckAt")
		records := d["records"].([]any)
		txt := harness.Record(t, d, "TXT")
		if len(records) != 1 || txt["name"] != "_gatehouse-challenge."+ownHost(t, "shop.example.com") || !challengeValue.MatchString(txt["value"].(string)) ||
			txt["required"] != true || txt["status"] != "unchecked" || txt["lastCheckedAt"] != nil || len(txt["observed"].([]any)) != 0 {
			t.Fatalf("records = %v", records)
		}

		owned := k.MustCreate(ownHost(t, "shop.example.net"), org)
		if owned["organizationId"] != org || harness.Record(t, owned, "TXT")["value"] == txt["value"] {
			t.Fatalf("second domain = %v (its token must differ from %v)", owned, txt["value"])
		}

		// Every read route, with either header, answers the same domain.
		for _, headers := range [][]string{{"Authorization", "Bearer " + k.Secret}, {"x-api-key", k.Secret}} {
			got := harness.MustOK(t, app.NewClient(t).Get(harness.DomainsPath+"/"+id, headers...))
			if !reflect.DeepEqual(got, d) {
				t.Fatalf("GET by id with %s = %v, want %v", headers[0], got, d)
			}
			recs := harness.MustOK(t, app.NewClient(t).Get(harness.DomainsPath+"/"+id+"/dns-records", headers...))
			if !reflect.DeepEqual(recs, map[string]any{"records": d["records"]}) {
				t.Fatalf("dns-records with %s = %v", headers[0], recs)
			}
		}
		for _, spelling := range []string{ownHost(t, "shop.example.com"), ownHost(t, "SHOP.Example.Com."), ownHost(t, "shop.example.com.")} {
			got := harness.MustOK(t, k.Call(http.MethodGet, harness.DomainsPath+"/by-hostname/"+url.PathEscape(spelling), ""))
			if !reflect.DeepEqual(got, d) {
				t.Fatalf("by-hostname %q = %v", spelling, got)
			}
		}

		// Internationalised names are kept in punycode and found by either form.
		idn := k.MustCreate(ownHost(t, "Bücher.Example.com"), org)
		if idn["hostname"] != ownHost(t, "xn--bcher-kva.example.com") || harness.Record(t, idn, "TXT")["name"] != "_gatehouse-challenge."+ownHost(t, "xn--bcher-kva.example.com") {
			t.Fatalf("IDN domain = %v", idn)
		}
		for _, spelling := range []string{ownHost(t, "bücher.example.com"), ownHost(t, "BÜCHER.example.com."), ownHost(t, "XN--BCHER-KVA.example.com")} {
			if got := harness.MustOK(t, k.Call(http.MethodGet, harness.DomainsPath+"/by-hostname/"+url.PathEscape(spelling), "")); got["id"] != idn["id"] {
				t.Fatalf("by-hostname %q = %v, want %v", spelling, got["id"], idn["id"])
			}
		}
		harness.MustProblem(t, k.Call(http.MethodGet, harness.DomainsPath+"/by-hostname/unclaimed.example.com", ""), http.StatusNotFound, "domain.not_found")
		for _, bad := range []string{"*.example.com", "co.uk", "192.0.2.1", strings.Repeat("a", 64) + ".example.com"} {
			harness.MustFieldProblem(t, k.Call(http.MethodGet, harness.DomainsPath+"/by-hostname/"+url.PathEscape(bad), ""), "path.hostname")
		}
	})
}

// Ensure every malformed claim is refused at its location: each kind of bad
// hostname at body.hostname, and unknown or mistyped fields.
func TestDomains_create_refuses_bad_input(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every domain.
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
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
				harness.MustFieldProblem(t, k.Call(http.MethodPost, harness.DomainsPath, harness.MustJSON(t, map[string]any{"hostname": h})), "body.hostname")
			})
		}
		harness.MustFieldProblem(t, k.Call(http.MethodPost, harness.DomainsPath, `{}`), "body.hostname")
		harness.MustFieldProblem(t, k.Call(http.MethodPost, harness.DomainsPath, `{"hostname":5}`), "body.hostname")
		harness.MustFieldProblem(t, k.Call(http.MethodPost, harness.DomainsPath, `{"hostname":"ok.example.com","organizationId":7}`), "body.organizationId")
		r := k.Call(http.MethodPost, harness.DomainsPath, `{"hostname":"ok.example.com","owner":"x"}`)
		harness.MustStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(string(r.Body), "owner") {
			t.Fatalf("unknown property refusal does not name it: %s", r.Body)
		}
		// Nothing was created by any refusal.
		if hosts, _ := k.ListDomains(url.Values{}); len(hosts) != 0 {
			t.Fatalf("refused claims created %v", hosts)
		}
	})
}

// Ensure a hostname is unique in the service whatever the organization or
// spelling (409), an unknown organization or domain is 404, and deletion
// (204) frees the hostname; deleting an organization deletes its domains.
func TestDomains_conflicts_not_found_and_delete(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k := mustDomainKit(t, app)
		orgA, orgB := k.MustOrg("Acme", harness.Own(t, "acme")), k.MustOrg("Globex", harness.Own(t, "globex"))
		first := k.MustCreate(ownHost(t, "taken.example.com"), orgA)

		for _, body := range []map[string]any{
			{"hostname": ownHost(t, "taken.example.com"), "organizationId": orgA},
			{"hostname": ownHost(t, "TAKEN.Example.com."), "organizationId": orgB},
			{"hostname": ownHost(t, "taken.example.com")},
		} {
			r := k.Call(http.MethodPost, harness.DomainsPath, harness.MustJSON(t, body))
			p := harness.MustProblem(t, r, http.StatusConflict, "domain.hostname_taken")
			if errs, _ := p["errors"].([]any); len(errs) != 1 || harness.MustObject(t, errs[0])["location"] != "body.hostname" {
				t.Fatalf("409 does not name body.hostname: %s", r.Body)
			}
		}
		r := k.Call(http.MethodPost, harness.DomainsPath, harness.MustJSON(t, map[string]any{"hostname": ownHost(t, "free.example.com"), "organizationId": missing}))
		p := harness.MustProblem(t, r, http.StatusNotFound, "organization.not_found")
		if errs, _ := p["errors"].([]any); len(errs) != 1 || harness.MustObject(t, errs[0])["location"] != "body.organizationId" {
			t.Fatalf("404 does not name body.organizationId: %s", r.Body)
		}

		for _, path := range []string{harness.DomainsPath + "/" + missing, harness.DomainsPath + "/" + missing + "/dns-records"} {
			harness.MustProblem(t, k.Call(http.MethodGet, path, ""), http.StatusNotFound, "domain.not_found")
		}
		harness.MustProblem(t, k.Call(http.MethodDelete, harness.DomainsPath+"/"+missing, ""), http.StatusNotFound, "domain.not_found")

		// Deletion answers 204, the domain is gone and its hostname free
		// again, with a new challenge.
		r = k.Call(http.MethodDelete, harness.DomainsPath+"/"+harness.MustID(t, first), "")
		harness.MustStatus(t, r, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Fatalf("204 with a body: %s", r.Body)
		}
		harness.MustProblem(t, k.Call(http.MethodGet, harness.DomainsPath+"/"+harness.MustID(t, first), ""), http.StatusNotFound, "domain.not_found")
		harness.MustProblem(t, k.Call(http.MethodDelete, harness.DomainsPath+"/"+harness.MustID(t, first), ""), http.StatusNotFound, "domain.not_found")
		again := k.MustCreate(ownHost(t, "taken.example.com"), orgB)
		if harness.Record(t, again, "TXT")["value"] == harness.Record(t, first, "TXT")["value"] {
			t.Fatal("a reclaimed hostname kept the old challenge")
		}

		// Deleting the organization deletes its domains.
		harness.MustOK(t, k.Admin.Post(harness.OrgPath("delete"), harness.MustJSON(t, map[string]any{"organizationId": orgB})))
		harness.MustProblem(t, k.Call(http.MethodGet, harness.DomainsPath+"/"+harness.MustID(t, again), ""), http.StatusNotFound, "domain.not_found")
		k.MustCreate(ownHost(t, "taken.example.com"), orgA)
	})
}

// Ensure the listing pages newest first with a cursor, filters by
// organization and status, and refuses bad parameters at their location.
func TestDomains_list(t *testing.T) {
	t.Parallel()
	// A fresh application: it pages through every domain.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k := mustDomainKit(t, app)
		orgA, orgB := k.MustOrg("Acme", "acme"), k.MustOrg("Globex", "globex")
		var all []string // newest first
		for i, org := range []string{orgA, "", orgB, orgA, ""} {
			h := "d" + string(rune('0'+i)) + ".example.com"
			k.MustCreate(h, org)
			all = append([]string{h}, all...)
			time.Sleep(2 * time.Millisecond) // distinct creation times; ties are ordered by id anyway
		}

		var got []string
		q := url.Values{"limit": {"2"}}
		for page := 0; ; page++ {
			hosts, next := k.ListDomains(q)
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
		if hosts, next := k.ListDomains(url.Values{}); !reflect.DeepEqual(hosts, all) || next != "" {
			t.Fatalf("default page = %v (next %q), want all five", hosts, next)
		}
		if hosts, _ := k.ListDomains(url.Values{"organizationId": {orgA}}); !reflect.DeepEqual(hosts, []string{"d3.example.com", "d0.example.com"}) {
			t.Fatalf("organization A = %v", hosts)
		}
		if hosts, _ := k.ListDomains(url.Values{"organizationId": {missing}}); len(hosts) != 0 {
			t.Fatalf("unknown organization = %v", hosts)
		}
		if hosts, _ := k.ListDomains(url.Values{"status": {"pending"}, "organizationId": {orgB}}); !reflect.DeepEqual(hosts, []string{"d2.example.com"}) {
			t.Fatalf("pending of B = %v", hosts)
		}
		if hosts, _ := k.ListDomains(url.Values{"status": {"verified"}}); len(hosts) != 0 {
			t.Fatalf("verified = %v", hosts)
		}
		for q, location := range map[string]string{
			"cursor=not-a-cursor": "query.cursor",
			"limit=0":             "query.limit",
			"limit=101":           "query.limit",
			"limit=x":             "query.limit",
			"status=archived":     "query.status",
		} {
			harness.MustFieldProblem(t, k.Call(http.MethodGet, harness.DomainsPath+"?"+q, ""), location)
		}
	})
}

// Ensure trusted writes are audited with the key as the actor and the
// domain as the target, refusals included.
func TestDomains_audit(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k := mustDomainKit(t, app)
		d := k.MustCreate(ownHost(t, "audited.example.com"), "")
		harness.MustProblem(t, k.Call(http.MethodPost, harness.DomainsPath, `{"hostname":"`+ownHost(t, "audited.example.com")+`"}`), http.StatusConflict, "domain.hostname_taken")
		harness.MustStatus(t, k.Call(http.MethodDelete, harness.DomainsPath+"/"+harness.MustID(t, d), ""), http.StatusNoContent)

		// The key's entries: the other tests on the application have keys of their own.
		created := harness.AuditAll(t, k.Admin, url.Values{"action": {"domains.create"}, "actorId": {k.KeyID}})
		if len(created) != 2 {
			t.Fatalf("domains.create entries = %v, want the success and the conflict", created)
		}
		conflict, success := created[0], created[1] // newest first
		for _, e := range created {
			if e["actorType"] != "service_key" || e["actorId"] != k.KeyID || e["targetType"] != "domain" || e["requestId"] == "" {
				t.Fatalf("entry = %v", e)
			}
		}
		if success["targetId"] != d["id"] || success["outcome"] != "success" || conflict["outcome"] == "success" || conflict["code"] != "domain.hostname_taken" {
			t.Fatalf("entries = %v", created)
		}
		deleted := harness.AuditAll(t, k.Admin, url.Values{"action": {"domains.delete"}, "targetId": {harness.MustID(t, d)}})
		if len(deleted) != 1 || deleted[0]["outcome"] != "success" || deleted[0]["actorId"] != k.KeyID || deleted[0]["targetType"] != "domain" {
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
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k := mustDomainKit(t, app)
		orgA, orgB := k.MustOrg("Acme", harness.Own(t, "acme")), k.MustOrg("Globex", harness.Own(t, "globex"))
		d := k.MustCreate(ownHost(t, "admin.example.com"), orgA)
		id := harness.MustID(t, d)

		r := k.Patch(app.NewClient(t), id, `{"organizationId":"`+orgB+`"}`)
		harness.MustProblem(t, r, http.StatusUnauthorized, r.JSON(t)["code"].(string))
		plain, _ := harness.MustPlainUser(t, app, "Eve", harness.Email(t, "eve@example.com"), harness.UserPassword)
		harness.MustProblem(t, k.Patch(plain, id, `{"organizationId":"`+orgB+`"}`), http.StatusForbidden, "auth.not_platform_admin")
		if k.MustGet(id)["organizationId"] != orgA {
			t.Fatal("a refused change was applied")
		}
		// The service key is no session either.
		r = app.NewClient(t).Do(http.MethodPatch, "/api/admin/domains/"+id, `{"recheck":true}`, "Authorization", "Bearer "+k.Secret,
			"Origin", app.Cfg.HTTP.BaseURL, "Content-Type", "application/json")
		harness.MustStatus(t, r, http.StatusUnauthorized)

		moved := harness.MustOK(t, k.Patch(k.Admin, id, `{"organizationId":"`+orgB+`"}`))
		if moved["organizationId"] != orgB || moved["status"] != "pending" {
			t.Fatalf("moved = %v", moved)
		}
		if got := k.MustGet(id); !reflect.DeepEqual(got, moved) {
			t.Fatalf("GET after PATCH = %v, want %v", got, moved)
		}
		for _, detach := range []string{`{"organizationId":null}`, `{"organizationId":""}`} {
			if got := harness.MustOK(t, k.Patch(k.Admin, id, detach)); got["organizationId"] != nil {
				t.Fatalf("%s = %v", detach, got)
			}
		}
		if hosts, _ := k.ListDomains(url.Values{"organizationId": {orgA}}); len(hosts) != 0 {
			t.Fatalf("organization A still lists %v", hosts)
		}

		r = k.Patch(k.Admin, id, `{"organizationId":"`+missing+`"}`)
		if p := harness.MustProblem(t, r, http.StatusNotFound, "organization.not_found"); harness.MustObject(t, p["errors"].([]any)[0])["location"] != "body.organizationId" {
			t.Fatalf("unknown organization = %s", r.Body)
		}
		harness.MustProblem(t, k.Patch(k.Admin, missing, `{"recheck":true}`), http.StatusNotFound, "domain.not_found")
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
			harness.MustFieldProblem(t, k.Patch(k.Admin, id, body), location)
		}
		r = k.Patch(k.Admin, id, `{"recheck":true,"status":"verified"}`)
		harness.MustStatus(t, r, http.StatusBadRequest)
		if !strings.Contains(string(r.Body), "status") {
			t.Fatalf("unknown property refusal does not name it: %s", r.Body)
		}
		if got := k.MustGet(id); got["organizationId"] != nil || got["status"] != "pending" {
			t.Fatalf("refused changes were applied: %v", got)
		}

		entries := harness.AuditAll(t, k.Admin, url.Values{"action": {"admin.update-domain"}, "targetId": {id}})
		var success, denied int
		for _, e := range entries {
			switch {
			case e["outcome"] == "success" && e["actorType"] == "user" && e["actorId"] == k.AdminID && e["targetType"] == "domain":
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
