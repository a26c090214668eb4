package test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

const webhooksPath = "/api/webhooks"

// webhookKit is a service key with the webhooks scopes and the
// administrator who issued it.
type webhookKit struct {
	t      *testing.T
	app    *fwApp
	admin  *fwClient
	secret string
}

func mustWebhookKit(t *testing.T, app *fwApp) *webhookKit {
	t.Helper()
	admin, _ := mustAdmin(t, app)
	key := mustCreateKey(t, admin, map[string]any{"name": "hooks backend", "scopes": []string{"webhooks:read", "webhooks:write"}})
	return &webhookKit{t: t, app: app, admin: admin, secret: key["secret"].(string)}
}

func (k *webhookKit) call(method, path, body string) *response {
	k.t.Helper()
	return k.app.client(k.t).do(method, path, body, "Authorization", "Bearer "+k.secret, "Content-Type", "application/json")
}

// adminCall sends an administrator's request through c (a session, or none).
func (k *webhookKit) adminCall(c *fwClient, method, path, body string) *response {
	k.t.Helper()
	return c.do(method, "/api/admin/webhooks"+path, body, "Origin", k.app.Cfg.HTTP.BaseURL, "Content-Type", "application/json")
}

// mustCodeAt checks a 400 with code whose first error names location.
func mustCodeAt(t *testing.T, r *response, code, location string) {
	t.Helper()
	p := mustProblem(t, r, http.StatusBadRequest, code)
	errs, _ := p["errors"].([]any)
	if len(errs) == 0 || mustObject(t, errs[0])["location"] != location {
		t.Fatalf("errors = %v, want the first at %s", p["errors"], location)
	}
}

// Ensure a trusted backend manages webhook endpoints on /api/webhooks: the
// secret is whsec_ and shown only at creation and rotation; the URL and the
// event types are checked (400 naming the part), private targets refused;
// every change is audited with the key as the actor.
func TestWebhooks_trusted_management(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		k := mustWebhookKit(t, app)
		r := k.call(http.MethodPost, webhooksPath, `{"url":"https://hooks.example.com/in","description":"billing","eventTypes":["user.deleted","user.created"]}`)
		mustStatus(t, r, http.StatusCreated)
		created := r.JSON(t)
		id, secret := mustID(t, created), created["secret"].(string)
		if !strings.HasPrefix(secret, "whsec_") || len(secret) < 6+56 {
			t.Fatalf("secret %q is not whsec_ and the base64 of at least 43 bytes", secret)
		}
		if got := created["eventTypes"]; !slices.Equal(toStrings(got), []string{"user.created", "user.deleted"}) {
			t.Fatalf("eventTypes = %v, want the catalogue's order", got)
		}
		if created["enabled"] != true || created["disabledReason"] != nil || created["previousSecretExpiresAt"] != nil {
			t.Fatalf("created = %v", created)
		}

		got := mustOK(t, k.call(http.MethodGet, webhooksPath+"/"+id, ""))
		if _, ok := got["secret"]; ok || got["url"] != "https://hooks.example.com/in" || got["description"] != "billing" {
			t.Fatalf("get = %v", got)
		}
		list := mustOK(t, k.call(http.MethodGet, webhooksPath, ""))
		if data := list["data"].([]any); len(data) != 1 || mustID(t, data[0]) != id {
			t.Fatalf("list = %v", list)
		}
		if strings.Contains(string(k.call(http.MethodGet, webhooksPath, "").Body), secret[6:]) {
			t.Fatal("the list shows the secret")
		}

		patched := mustOK(t, k.call(http.MethodPatch, webhooksPath+"/"+id, `{"enabled":false,"eventTypes":[],"description":"  new  "}`))
		if patched["enabled"] != false || patched["disabledReason"] != "disabled" || len(toStrings(patched["eventTypes"])) != 0 || patched["description"] != "new" {
			t.Fatalf("patched = %v", patched)
		}
		patched = mustOK(t, k.call(http.MethodPatch, webhooksPath+"/"+id, `{"enabled":true}`))
		if patched["enabled"] != true || patched["disabledReason"] != nil {
			t.Fatalf("enabled again = %v", patched)
		}

		rotated := mustOK(t, k.call(http.MethodPost, webhooksPath+"/"+id+"/rotate-secret", ""))
		if s := rotated["secret"].(string); !strings.HasPrefix(s, "whsec_") || s == secret {
			t.Fatalf("rotated secret %q", s)
		}
		until, err := time.Parse(time.RFC3339, rotated["previousSecretExpiresAt"].(string))
		if err != nil || until.Before(time.Now().Add(23*time.Hour)) || until.After(time.Now().Add(25*time.Hour)) {
			t.Fatalf("previousSecretExpiresAt = %v, want about 24 h from now", rotated["previousSecretExpiresAt"])
		}

		page := mustOK(t, k.call(http.MethodGet, webhooksPath+"/"+id+"/messages?status=failed&limit=5", ""))
		if data := page["data"].([]any); len(data) != 0 || page["nextCursor"] != nil {
			t.Fatalf("messages of a new endpoint = %v", page)
		}
		mustProblem(t, k.call(http.MethodGet, webhooksPath+"/"+id+"/messages/msg_nope/attempts", ""), http.StatusNotFound, "webhook.message_not_found")
		mustProblem(t, k.call(http.MethodPost, webhooksPath+"/"+id+"/messages/msg_nope/replay", ""), http.StatusNotFound, "webhook.message_not_found")
		replayed := k.call(http.MethodPost, webhooksPath+"/"+id+"/replay", `{"since":"2020-01-01T00:00:00Z"}`)
		mustStatus(t, replayed, http.StatusAccepted)

		mustStatus(t, k.call(http.MethodDelete, webhooksPath+"/"+id, ""), http.StatusNoContent)
		mustProblem(t, k.call(http.MethodGet, webhooksPath+"/"+id, ""), http.StatusNotFound, "webhook.not_found")
		mustProblem(t, k.call(http.MethodDelete, webhooksPath+"/"+id, ""), http.StatusNotFound, "webhook.not_found")

		// Every change is audited, the key as the actor.
		audit := mustOK(t, k.admin.get("/api/admin/audit-log?targetType=webhook&limit=50"))
		var actions []string
		for _, e := range audit["data"].([]any) {
			m := mustObject(t, e)
			if m["targetId"] == id && m["actorType"] == "service_key" && m["outcome"] == "success" {
				actions = append(actions, m["action"].(string))
			}
		}
		for _, want := range []string{"webhooks.create", "webhooks.update", "webhooks.rotate-secret", "webhooks.replay-since", "webhooks.delete"} {
			if !slices.Contains(actions, want) {
				t.Errorf("the audit log lacks %s: %v", want, actions)
			}
		}
	})
}

// Ensure hostile or malformed registrations are 400 naming the part, never
// 500, and never echo the value.
func TestWebhooks_refuses_bad_registrations(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesThatMatter, adminEnv, func(t *testing.T, app *fwApp) {
		k := mustWebhookKit(t, app)
		for _, url := range []string{"http://hooks.example.com/in", "https://127.0.0.1/in", "https://[::1]/in", "https://[::ffff:10.0.0.1]/in",
			"https://169.254.169.254/latest", "https://100.64.0.1/", "https://224.0.0.1/", "https://0.0.0.0/", "https://user:pw@hooks.example.com/",
			"https://hooks.example.com/#x", "ftp://hooks.example.com/", "https://2130706433/", "not a url"} {
			r := k.call(http.MethodPost, webhooksPath, mustJSON(t, map[string]any{"url": url}))
			mustCodeAt(t, r, "webhook.invalid", "body.url")
			if strings.Contains(string(r.Body), "pw@") {
				t.Fatalf("the refusal echoes the URL: %s", r.Body)
			}
		}
		r := k.call(http.MethodPost, webhooksPath, `{"url":"https://hooks.example.com/in","eventTypes":["user.created","user.exploded"]}`)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "body.eventTypes[1]") {
			t.Fatalf("unknown event type: %d %s, want 400 naming body.eventTypes[1]", r.Status, r.Body)
		}
		mustStatus(t, k.call(http.MethodPost, webhooksPath, `{"url":"https://hooks.example.com/in","description":"`+strings.Repeat("d", 501)+`"}`), http.StatusBadRequest)

		id := mustID(t, k.call(http.MethodPost, webhooksPath, `{"url":"https://hooks.example.com/in"}`).JSON(t))
		mustCodeAt(t, k.call(http.MethodPatch, webhooksPath+"/"+id, `{}`), "request.empty_patch", "body")
		mustCodeAt(t, k.call(http.MethodPatch, webhooksPath+"/"+id, `{"url":"https://10.0.0.1/"}`), "webhook.invalid", "body.url")
		mustCodeAt(t, k.call(http.MethodPost, webhooksPath+"/"+id+"/replay", mustJSON(t, map[string]any{"since": time.Now().Add(time.Hour)})),
			"webhook.invalid_since", "body.since")
		mustCodeAt(t, k.call(http.MethodGet, webhooksPath+"/"+id+"/messages?cursor=%21%21", ""), "request.invalid_cursor", "query.cursor")
		mustProblem(t, k.call(http.MethodPatch, webhooksPath+"/nope", `{"enabled":true}`), http.StatusNotFound, "webhook.not_found")
	})
}

// Ensure platform administrators manage the same endpoints under
// /api/admin/webhooks with their session; anyone else is refused (401
// without a session, 403 for another user), and the changes are audited
// with the administrator as the actor.
func TestWebhooks_admin_management(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		k := mustWebhookKit(t, app)
		r := k.adminCall(k.admin, http.MethodPost, "", `{"url":"https://hooks.example.com/admin","eventTypes":["domain.verified"]}`)
		mustStatus(t, r, http.StatusCreated)
		id := mustID(t, r.JSON(t))
		if !strings.HasPrefix(r.JSON(t)["secret"].(string), "whsec_") {
			t.Fatalf("created = %s", r.Body)
		}
		// The trusted API sees it: one set of endpoints per deployment.
		mustOK(t, k.call(http.MethodGet, webhooksPath+"/"+id, ""))
		mustOK(t, k.adminCall(k.admin, http.MethodGet, "/"+id+"/messages", ""))
		mustOK(t, k.adminCall(k.admin, http.MethodPatch, "/"+id, `{"description":"by the admin"}`))

		mustStatus(t, k.adminCall(app.client(t), http.MethodGet, "", ""), http.StatusUnauthorized)
		other, _ := mustVerifiedUser(t, app, "Other", "other.hooks@example.com", orgPassword)
		mustProblem(t, k.adminCall(other, http.MethodGet, "", ""), http.StatusForbidden, "auth.not_platform_admin")
		mustProblem(t, k.adminCall(other, http.MethodDelete, "/"+id, ""), http.StatusForbidden, "auth.not_platform_admin")
		// A service key is no session.
		mustStatus(t, app.client(t).do(http.MethodGet, "/api/admin/webhooks", "", "Authorization", "Bearer "+k.secret), http.StatusUnauthorized)

		mustStatus(t, k.adminCall(k.admin, http.MethodDelete, "/"+id, ""), http.StatusNoContent)
		audit := mustOK(t, k.admin.get("/api/admin/audit-log?targetId="+id+"&limit=50"))
		var actions []string
		for _, e := range audit["data"].([]any) {
			m := mustObject(t, e)
			actions = append(actions, m["actorType"].(string)+" "+m["action"].(string)+" "+m["outcome"].(string))
		}
		for _, want := range []string{"user admin.create-webhook success", "user admin.update-webhook success",
			"user admin.delete-webhook denied", "user admin.delete-webhook success"} {
			if !slices.Contains(actions, want) {
				t.Errorf("the audit log lacks %q: %v", want, actions)
			}
		}
	})
}

// Ensure the trusted contract's webhooks section documents every event of
// the catalogue: a POST with the three Standard Webhooks headers and the
// payload {type, timestamp, data}, data referring to a schema.
func TestWebhooks_contract_documents_every_event(t *testing.T) {
	t.Parallel()
	app := mustStart(t, storeMemory, mustConfig(t, nil))
	doc := do(t, app, http.MethodGet, "/api/backend-openapi.json", "").JSON(t)
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi = %v", doc["openapi"])
	}
	hooks := mustObject(t, doc["webhooks"])
	for _, typ := range []string{"user.created", "user.updated", "user.deleted", "user.banned", "session.created", "session.revoked",
		"organization.created", "organization.updated", "organization.deleted", "member.added", "member.role_changed", "member.removed",
		"invitation.created", "invitation.accepted", "invitation.rejected", "invitation.canceled",
		"domain.created", "domain.verified", "domain.failed", "domain.deleted", "service_key.created", "service_key.revoked",
		"factor.enabled", "factor.disabled", "account.linked", "account.unlinked"} {
		item, ok := hooks[typ].(map[string]any)
		if !ok {
			t.Errorf("the webhooks section lacks %s", typ)
			continue
		}
		post := mustObject(t, item["post"])
		var headers []string
		for _, p := range post["parameters"].([]any) {
			if m := mustObject(t, p); m["in"] == "header" && m["required"] == true {
				headers = append(headers, m["name"].(string))
			}
		}
		if !slices.Equal(headers, []string{"webhook-id", "webhook-timestamp", "webhook-signature"}) {
			t.Errorf("%s headers = %v", typ, headers)
		}
		schema := mustObject(t, mustObject(t, mustObject(t, mustObject(t, post["requestBody"])["content"])["application/json"])["schema"])
		props := mustObject(t, schema["properties"])
		if enum := mustObject(t, props["type"])["enum"].([]any); len(enum) != 1 || enum[0] != typ {
			t.Errorf("%s type enum = %v", typ, enum)
		}
		if mustObject(t, props["timestamp"])["format"] != "date-time" {
			t.Errorf("%s timestamp is not a date-time", typ)
		}
		if ref, _ := mustObject(t, props["data"])["$ref"].(string); !strings.HasPrefix(ref, "#/components/schemas/") {
			t.Errorf("%s data = %v, want a $ref to its object", typ, props["data"])
		}
	}
}
