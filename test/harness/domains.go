package harness

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"testing"
)

// DomainsPath is the trusted API's domain collection.
const DomainsPath = "/api/domains"

// DomainKit is an app with a signed-in platform administrator and a service
// key holding the domain scopes.
type DomainKit struct {
	T       *testing.T
	App     *App
	Admin   *Client
	AdminID string
	Secret  string
	KeyID   string
}

// call sends a trusted request with the key as Authorization: Bearer.
func (k *DomainKit) Call(method, path, body string) *Response {
	k.T.Helper()
	return k.App.NewClient(k.T).Do(method, path, body, "Authorization", "Bearer "+k.Secret)
}

// patch sends an administrator's PATCH through c (a session, or none).
func (k *DomainKit) Patch(c *Client, id, body string) *Response {
	k.T.Helper()
	return c.Do(http.MethodPatch, "/api/admin/domains/"+id, body, "Origin", k.App.Cfg.HTTP.BaseURL, "Content-Type", "application/json")
}

// mustCreate claims hostname for org ("" for none) and returns the domain.
func (k *DomainKit) MustCreate(hostname, org string) map[string]any {
	k.T.Helper()
	body := map[string]any{"hostname": hostname}
	if org != "" {
		body["organizationId"] = org
	}
	r := k.Call(http.MethodPost, DomainsPath, MustJSON(k.T, body))
	MustStatus(k.T, r, http.StatusCreated)
	return r.JSON(k.T)
}

// mustGet returns the domain id.
func (k *DomainKit) MustGet(id string) map[string]any {
	k.T.Helper()
	return MustOK(k.T, k.Call(http.MethodGet, DomainsPath+"/"+id, ""))
}

// mustOrg creates an organization through the administrator's session and
// returns its id.
func (k *DomainKit) MustOrg(name, slug string) string {
	k.T.Helper()
	return MustID(k.T, MustCreateOrg(k.T, k.Admin, name, slug))
}

// Record returns the domain's record of type typ.
func Record(t testing.TB, d map[string]any, typ string) map[string]any {
	t.Helper()
	for _, r := range d["records"].([]any) {
		if m := MustObject(t, r); m["type"] == typ {
			return m
		}
	}
	t.Fatalf("no %s record in %v", typ, d["records"])
	return nil
}

// listDomains returns one page of GET /api/domains with q: the domains'
// hostnames in order, and the next cursor ("" on the last page).
func (k *DomainKit) ListDomains(q url.Values) ([]string, string) {
	k.T.Helper()
	r := k.Call(http.MethodGet, DomainsPath+"?"+q.Encode(), "")
	var page struct {
		Data       []map[string]any `json:"data"`
		NextCursor *string          `json:"nextCursor"`
	}
	MustStatus(k.T, r, http.StatusOK)
	MustUnmarshal(k.T, r.Body, &page)
	if page.Data == nil {
		k.T.Fatalf("page without data: %s", r.Body)
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

// StartDomainVerifier runs the domain verifier for app until the test ends,
// as "gatehouse serve" does, at the configured check interval.
func StartDomainVerifier(t testing.TB, app *App) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		app.App.VerifyDomainsEvery(ctx, app.Cfg.Domains.CheckInterval, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done }) // before the app's database closes
}
