package harness

import (
	"net/http"
	"testing"
)

const WebhooksPath = "/api/webhooks"

// WebhookKit is a service key with the webhooks scopes and the
// administrator who issued it.
type WebhookKit struct {
	T      *testing.T
	App    *App
	Admin  *Client
	Secret string
}

func MustWebhookKit(t *testing.T, app *App) *WebhookKit {
	t.Helper()
	admin, _ := MustAdmin(t, app)
	key := MustCreateKey(t, admin, map[string]any{"name": "hooks backend", "scopes": []string{"webhooks:read", "webhooks:write"}})
	return &WebhookKit{T: t, App: app, Admin: admin, Secret: key["secret"].(string)}
}

func (k *WebhookKit) Call(method, path, body string) *Response {
	k.T.Helper()
	return k.App.NewClient(k.T).Do(method, path, body, "Authorization", "Bearer "+k.Secret, "Content-Type", "application/json")
}

// adminCall sends an administrator's request through c (a session, or none).
func (k *WebhookKit) AdminCall(c *Client, method, path, body string) *Response {
	k.T.Helper()
	return c.Do(method, "/api/admin/webhooks"+path, body, "Origin", k.App.Cfg.HTTP.BaseURL, "Content-Type", "application/json")
}

// MustCodeAt checks a 400 with code whose first error names location.
func MustCodeAt(t *testing.T, r *Response, code, location string) {
	t.Helper()
	p := MustProblem(t, r, http.StatusBadRequest, code)
	errs, _ := p["errors"].([]any)
	if len(errs) == 0 || MustObject(t, errs[0])["location"] != location {
		t.Fatalf("errors = %v, want the first at %s", p["errors"], location)
	}
}
