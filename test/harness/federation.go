package harness

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Federation: Gatehouse A signs users in through Gatehouse B, a second
// Gatehouse serving as the upstream OpenID provider, with B's hosted
// sign-in page in between, as a browser would walk it. A is the service
// under test; B is a real OpenID provider nobody configured for A's sake
// beyond registering A as its client.

// FedPassword is the password of the users at the upstream.
const FedPassword = "upstream passphrase 7 stars"

// FedWorld is A, B, A's client at B, and A's provider for B.
type FedWorld struct {
	A, B     *App
	AdminA   *Client
	Provider string
	HTTP     StrictClient
}

// MustFedWorld starts A on s and B on memory, registers A at B as a
// first-party confidential client, and registers B at A as provider
// "upstream" with the given fields (trustedForLinking and the like). B's
// cookies have another prefix: both apps live on 127.0.0.1, where a
// browser keeps one cookie jar for every port.
func MustFedWorld(t *testing.T, s Store, fields map[string]any) *FedWorld {
	t.Helper()
	w := MustFedWorldOn(t, s, AdminEnv, "upstream")
	w.register(t, fields)
	return w
}

// MustFedWorldOn is MustFedWorld with A's environment and the provider's
// id, without registering the provider at A yet (register does).
func MustFedWorldOn(t *testing.T, s Store, env map[string]string, provider string) *FedWorld {
	t.Helper()
	w := &FedWorld{Provider: provider}
	w.A = MustStart(t, s, env)
	w.B = MustStart(t, StoreMemory, Env(AdminEnv, map[string]string{"GATEHOUSE_COOKIE_PREFIX": "upstream"}))
	adminB, _ := MustAdmin(t, w.B)
	w.HTTP = MustRegisterStrictClient(t, adminB, "Gatehouse A", "confidential", true, w.A.URL+"/api/auth/callback/"+w.Provider)
	w.AdminA, _ = MustAdmin(t, w.A)
	return w
}

// register registers B at A as the world's provider, with fields added.
func (w *FedWorld) register(t *testing.T, fields map[string]any) {
	t.Helper()
	body := map[string]any{"id": w.Provider, "preset": "oidc", "name": "Upstream", "issuer": w.B.URL + "/api/auth",
		"clientId": w.HTTP.ID, "clientSecret": w.HTTP.Secret, "scopes": []string{"openid", "email", "profile", "offline_access"}}
	for k, v := range fields {
		body[k] = v
	}
	r := w.AdminA.Post("/api/admin/identity-providers", MustJSON(t, body))
	MustStatus(t, r, http.StatusCreated)
	if strings.Contains(string(r.Body), w.HTTP.Secret) {
		t.Fatalf("the provider's answer shows its client secret: %s", r.Body)
	}
}

// start posts sign-in/social (or link-social with a session) at A from
// browser br and returns the provider's authorization URL.
func (w *FedWorld) Start(t testing.TB, br *StrictBrowser, path string, body map[string]any) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, w.A.URL+path, strings.NewReader(MustJSON(t, body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", w.A.URL)
	br.StopAt = "-" // do not follow the Location header
	page := br.Send(req)
	br.StopAt = ""
	if page.Status != http.StatusOK {
		t.Fatalf("%s: %d %s", path, page.Status, page.Body)
	}
	var out struct {
		URL      string `json:"url"`
		Redirect bool   `json:"redirect"`
	}
	if err := json.Unmarshal([]byte(page.Body), &out); err != nil || out.URL == "" || !out.Redirect {
		t.Fatalf("%s answered %s, want {url, redirect:true}", path, page.Body)
	}
	if page.Header.Get("Location") != out.URL {
		t.Fatalf("Location = %q, want the url %q", page.Header.Get("Location"), out.URL)
	}
	return out.URL
}

// authorizeAtB follows the authorization URL in br: B's sign-in page when
// br has no session there (signing in as email), then back to A's
// callback. It stops before the callback and returns its URL.
func (w *FedWorld) AuthorizeAtB(t testing.TB, br *StrictBrowser, authURL, email string) *url.URL {
	t.Helper()
	callback := w.A.URL + "/api/auth/callback/" + w.Provider
	br.StopAt = callback
	page := br.Get(authURL)
	if page.Status == http.StatusOK && page.URL.Path == "/sign-in" {
		f := StrictSignInForm(t, page)
		f.Set(t, "email", email)
		f.Set(t, "password", FedPassword)
		page = br.Submit(page, f, nil)
	}
	if page.Status != http.StatusFound && page.Status != http.StatusSeeOther {
		t.Fatalf("authorization at B ended at %d %s (visited %v):\n%s", page.Status, page.URL, br.Seen, page.Body)
	}
	loc, err := page.URL.Parse(page.Header.Get("Location"))
	if err != nil || StrictWithoutQuery(loc) != callback {
		t.Fatalf("B redirected to %q, want A's callback %s", page.Header.Get("Location"), callback)
	}
	return loc
}

// finish follows the callback in br and returns the first answer that is
// not a redirect within A, with the URL it came from.
func (w *FedWorld) Finish(t testing.TB, br *StrictBrowser, callback *url.URL) *StrictPage {
	t.Helper()
	br.StopAt = ""
	return br.Get(callback.String())
}

// signInThroughB runs a whole sign-in at A through B and returns the
// page the browser lands on.
func (w *FedWorld) SignInThroughB(t testing.TB, br *StrictBrowser, email string, body map[string]any) *StrictPage {
	t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	body["provider"] = w.Provider
	return w.Finish(t, br, w.AuthorizeAtB(t, br, w.Start(t, br, "/api/auth/sign-in/social", body), email))
}

// sessionAtA returns the user of br's session at A, or nil.
func (w *FedWorld) SessionAtA(t testing.TB, br *StrictBrowser) map[string]any {
	t.Helper()
	page := br.Get(w.A.URL + "/api/auth/get-session")
	if page.Status != http.StatusOK {
		t.Fatalf("get-session: %d %s", page.Status, page.Body)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(page.Body), &s); err != nil {
		t.Fatalf("get-session: %v: %s", err, page.Body)
	}
	if s == nil {
		return nil
	}
	return MustObject(t, s["user"])
}

// apiAtA calls A's framework with br's cookies (JSON body, A's Origin).
func (w *FedWorld) APIAtA(t testing.TB, br *StrictBrowser, method, path string, body any) *StrictPage {
	t.Helper()
	var rd *strings.Reader
	if body != nil {
		rd = strings.NewReader(MustJSON(t, body))
	} else {
		rd = strings.NewReader("")
	}
	req, err := http.NewRequestWithContext(t.Context(), method, w.A.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Origin", w.A.URL)
	br.StopAt = "-"
	defer func() { br.StopAt = "" }()
	return br.Send(req)
}
