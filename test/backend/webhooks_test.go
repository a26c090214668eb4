package backend

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure a trusted backend manages webhook endpoints on /api/webhooks: the
// secret is whsec_ and shown only at creation and rotation; the URL and the
// event types are checked (400 naming the part), private targets refused;
// every change is audited with the key as the actor.
func TestWebhooks_trusted_management(t *testing.T) {
	t.Parallel()
	// A fresh application: it lists every endpoint, and its endpoint receives the application's events.
	harness.AdminForStores(t, func(t *testing.T, app *harness.App) {
		k := harness.MustWebhookKit(t, app)
		r := k.Call(http.MethodPost, harness.WebhooksPath, `{"url":"https://hooks.example.com/in","description":"billing","eventTypes":["user.deleted","user.created"]}`)
		harness.MustStatus(t, r, http.StatusCreated)
		created := r.JSON(t)
		id, secret := harness.MustID(t, created), created["secret"].(string)
		if !strings.HasPrefix(secret, "whsec_") || len(secret) < 6+56 {
			t.Fatalf("secret %q is not whsec_ and the base64 of at least 43 bytes", secret)
		}
		if got := created["eventTypes"]; !slices.Equal(harness.ToStrings(got), []string{"user.created", "user.deleted"}) {
			t.Fatalf("eventTypes = %v, want the catalogue's order", got)
		}
		if created["enabled"] != true || created["disabledReason"] != nil || created["previousSecretExpiresAt"] != nil {
			t.Fatalf("created = %v", created)
		}

		got := harness.MustOK(t, k.Call(http.MethodGet, harness.WebhooksPath+"/"+id, ""))
		if _, ok := got["secret"]; ok || got["url"] != "https://hooks.example.com/in" || got["description"] != "billing" {
			t.Fatalf("get = %v", got)
		}
		list := harness.MustOK(t, k.Call(http.MethodGet, harness.WebhooksPath, ""))
		if data := list["data"].([]any); len(data) != 1 || harness.MustID(t, data[0]) != id {
			t.Fatalf("list = %v", list)
		}
		if strings.Contains(string(k.Call(http.MethodGet, harness.WebhooksPath, "").Body), secret[6:]) {
			t.Fatal("the list shows the secret")
		}

		patched := harness.MustOK(t, k.Call(http.MethodPatch, harness.WebhooksPath+"/"+id, `{"enabled":false,"eventTypes":[],"description":"  new  "}`))
		if patched["enabled"] != false || patched["disabledReason"] != "disabled" || len(harness.ToStrings(patched["eventTypes"])) != 0 || patched["description"] != "new" {
			t.Fatalf("patched = %v", patched)
		}
		patched = harness.MustOK(t, k.Call(http.MethodPatch, harness.WebhooksPath+"/"+id, `{"enabled":true}`))
		if patched["enabled"] != true || patched["disabledReason"] != nil {
			t.Fatalf("enabled again = %v", patched)
		}

		rotated := harness.MustOK(t, k.Call(http.MethodPost, harness.WebhooksPath+"/"+id+"/rotate-secret", ""))
		if s := rotated["secret"].(string); !strings.HasPrefix(s, "whsec_") || s == secret {
			t.Fatalf("rotated secret %q", s)
		}
		until, err := time.Parse(time.RFC3339, rotated["previousSecretExpiresAt"].(string))
		if err != nil || until.Before(time.Now().Add(23*time.Hour)) || until.After(time.Now().Add(25*time.Hour)) {
			t.Fatalf("previousSecretExpiresAt = %v, want about 24 h from now", rotated["previousSecretExpiresAt"])
		}

		page := harness.MustOK(t, k.Call(http.MethodGet, harness.WebhooksPath+"/"+id+"/messages?status=failed&limit=5", ""))
		if data := page["data"].([]any); len(data) != 0 || page["nextCursor"] != nil {
			t.Fatalf("messages of a new endpoint = %v", page)
		}
		harness.MustProblem(t, k.Call(http.MethodGet, harness.WebhooksPath+"/"+id+"/messages/msg_nope/attempts", ""), http.StatusNotFound, "webhook.message_not_found")
		harness.MustProblem(t, k.Call(http.MethodPost, harness.WebhooksPath+"/"+id+"/messages/msg_nope/replay", ""), http.StatusNotFound, "webhook.message_not_found")
		replayed := k.Call(http.MethodPost, harness.WebhooksPath+"/"+id+"/replay", `{"since":"2020-01-01T00:00:00Z"}`)
		harness.MustStatus(t, replayed, http.StatusAccepted)

		harness.MustStatus(t, k.Call(http.MethodDelete, harness.WebhooksPath+"/"+id, ""), http.StatusNoContent)
		harness.MustProblem(t, k.Call(http.MethodGet, harness.WebhooksPath+"/"+id, ""), http.StatusNotFound, "webhook.not_found")
		harness.MustProblem(t, k.Call(http.MethodDelete, harness.WebhooksPath+"/"+id, ""), http.StatusNotFound, "webhook.not_found")

		// Every change is audited, the key as the actor.
		audit := harness.MustOK(t, k.Admin.Get("/api/admin/audit-log?targetType=webhook&limit=50"))
		var actions []string
		for _, e := range audit["data"].([]any) {
			m := harness.MustObject(t, e)
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
	// A fresh application: its endpoint receives every event of the application.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k := harness.MustWebhookKit(t, app)
		for _, url := range []string{"http://hooks.example.com/in", "https://127.0.0.1/in", "https://[::1]/in", "https://[::ffff:10.0.0.1]/in",
			"https://169.254.169.254/latest", "https://100.64.0.1/", "https://224.0.0.1/", "https://0.0.0.0/", "https://user:pw@hooks.example.com/",
			"https://hooks.example.com/#x", "ftp://hooks.example.com/", "https://2130706433/", "not a url"} {
			r := k.Call(http.MethodPost, harness.WebhooksPath, harness.MustJSON(t, map[string]any{"url": url}))
			harness.MustCodeAt(t, r, "webhook.invalid", "body.url")
			if strings.Contains(string(r.Body), "pw@") {
				t.Fatalf("the refusal echoes the URL: %s", r.Body)
			}
		}
		r := k.Call(http.MethodPost, harness.WebhooksPath, `{"url":"https://hooks.example.com/in","eventTypes":["user.created","user.exploded"]}`)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "body.eventTypes[1]") {
			t.Fatalf("unknown event type: %d %s, want 400 naming body.eventTypes[1]", r.Status, r.Body)
		}
		harness.MustStatus(t, k.Call(http.MethodPost, harness.WebhooksPath, `{"url":"https://hooks.example.com/in","description":"`+strings.Repeat("d", 501)+`"}`), http.StatusBadRequest)

		id := harness.MustID(t, k.Call(http.MethodPost, harness.WebhooksPath, `{"url":"https://hooks.example.com/in"}`).JSON(t))
		harness.MustCodeAt(t, k.Call(http.MethodPatch, harness.WebhooksPath+"/"+id, `{}`), "request.empty_patch", "body")
		harness.MustCodeAt(t, k.Call(http.MethodPatch, harness.WebhooksPath+"/"+id, `{"url":"https://10.0.0.1/"}`), "webhook.invalid", "body.url")
		harness.MustCodeAt(t, k.Call(http.MethodPost, harness.WebhooksPath+"/"+id+"/replay", harness.MustJSON(t, map[string]any{"since": time.Now().Add(time.Hour)})),
			"webhook.invalid_since", "body.since")
		harness.MustCodeAt(t, k.Call(http.MethodGet, harness.WebhooksPath+"/"+id+"/messages?cursor=%21%21", ""), "request.invalid_cursor", "query.cursor")
		harness.MustProblem(t, k.Call(http.MethodPatch, harness.WebhooksPath+"/nope", `{"enabled":true}`), http.StatusNotFound, "webhook.not_found")
	})
}

// Ensure platform administrators manage the same endpoints under
// /api/admin/webhooks with their session; anyone else is refused (401
// without a session, 403 for another user), and the changes are audited
// with the administrator as the actor.
func TestWebhooks_admin_management(t *testing.T) {
	t.Parallel()
	// A fresh application: its endpoint receives the application's events.
	harness.AdminForStores(t, func(t *testing.T, app *harness.App) {
		k := harness.MustWebhookKit(t, app)
		r := k.AdminCall(k.Admin, http.MethodPost, "", `{"url":"https://hooks.example.com/admin","eventTypes":["domain.verified"]}`)
		harness.MustStatus(t, r, http.StatusCreated)
		id := harness.MustID(t, r.JSON(t))
		if !strings.HasPrefix(r.JSON(t)["secret"].(string), "whsec_") {
			t.Fatalf("created = %s", r.Body)
		}
		// The trusted API sees it: one set of endpoints per deployment.
		harness.MustOK(t, k.Call(http.MethodGet, harness.WebhooksPath+"/"+id, ""))
		harness.MustOK(t, k.AdminCall(k.Admin, http.MethodGet, "/"+id+"/messages", ""))
		harness.MustOK(t, k.AdminCall(k.Admin, http.MethodPatch, "/"+id, `{"description":"by the admin"}`))

		harness.MustStatus(t, k.AdminCall(app.NewClient(t), http.MethodGet, "", ""), http.StatusUnauthorized)
		other, _ := harness.MustVerifiedUser(t, app, "Other", "other.hooks@example.com", harness.OrgPassword)
		harness.MustProblem(t, k.AdminCall(other, http.MethodGet, "", ""), http.StatusForbidden, "auth.not_platform_admin")
		harness.MustProblem(t, k.AdminCall(other, http.MethodDelete, "/"+id, ""), http.StatusForbidden, "auth.not_platform_admin")
		// A service key is no session.
		harness.MustStatus(t, app.NewClient(t).Do(http.MethodGet, "/api/admin/webhooks", "", "Authorization", "Bearer "+k.Secret), http.StatusUnauthorized)

		harness.MustStatus(t, k.AdminCall(k.Admin, http.MethodDelete, "/"+id, ""), http.StatusNoContent)
		audit := harness.MustOK(t, k.Admin.Get("/api/admin/audit-log?targetId="+id+"&limit=50"))
		var actions []string
		for _, e := range audit["data"].([]any) {
			m := harness.MustObject(t, e)
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
	// A fresh application: the package's one test without settings.
	app := harness.MustStart(t, harness.StoreMemory, nil)
	doc := app.Do(t, http.MethodGet, "/api/backend-openapi.json", "").JSON(t)
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi = %v", doc["openapi"])
	}
	hooks := harness.MustObject(t, doc["webhooks"])
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
		post := harness.MustObject(t, item["post"])
		var headers []string
		for _, p := range post["parameters"].([]any) {
			if m := harness.MustObject(t, p); m["in"] == "header" && m["required"] == true {
				headers = append(headers, m["name"].(string))
			}
		}
		if !slices.Equal(headers, []string{"webhook-id", "webhook-timestamp", "webhook-signature"}) {
			t.Errorf("%s headers = %v", typ, headers)
		}
		schema := harness.MustObject(t, harness.MustObject(t, harness.MustObject(t, harness.MustObject(t, post["requestBody"])["content"])["application/json"])["schema"])
		props := harness.MustObject(t, schema["properties"])
		if enum := harness.MustObject(t, props["type"])["enum"].([]any); len(enum) != 1 || enum[0] != typ {
			t.Errorf("%s type enum = %v", typ, enum)
		}
		if harness.MustObject(t, props["timestamp"])["format"] != "date-time" {
			t.Errorf("%s timestamp is not a date-time", typ)
		}
		if ref, _ := harness.MustObject(t, props["data"])["$ref"].(string); !strings.HasPrefix(ref, "#/components/schemas/") {
			t.Errorf("%s data = %v, want a $ref to its object", typ, props["data"])
		}
	}
}
