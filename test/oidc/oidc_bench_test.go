package oidc

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/test/harness"
)

// BenchmarkTokens measures the token routes through the handler: the key set
// and the discovery document (no database), a framework JWT for a session
// (one session lookup and an Ed25519 signature), a client-credentials grant
// (a client lookup, a grant insert and an RS256 signature) and the
// introspection of the access token it issued (a client lookup, a signature
// check and a grant lookup). They never assert timings.
//
//	go test -run '^$' -bench Tokens -benchmem ./test/
func BenchmarkTokens(b *testing.B) {
	for _, s := range harness.AllStores {
		b.Run("store="+string(s), func(b *testing.B) {
			app := harness.MustStartBench(b, s)
			cookie := app.MustSignUp(b)
			client, err := app.App.RegisterOAuthClient(context.Background(), oidc.RegisterOAuthClient{
				Name: "bench", Type: "confidential", RedirectURIs: []string{"https://rp.example.com/callback"}})
			if err != nil {
				b.Fatal(err)
			}
			id, secret := string(client.Client.ID), client.Secret
			grant := func() *http.Request {
				r := formRequest("/api/auth/oauth2/token", url.Values{"grant_type": {"client_credentials"}})
				r.SetBasicAuth(id, secret)
				return r
			}
			w := app.Serve(grant())
			if w.Code != http.StatusOK {
				b.Fatalf("client credentials: status %d: %s", w.Code, w.Body)
			}
			var tok struct {
				AccessToken string `json:"access_token"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &tok); err != nil {
				b.Fatal(err)
			}
			introspect := func() *http.Request {
				r := formRequest("/api/auth/oauth2/introspect", url.Values{"token": {tok.AccessToken}})
				r.SetBasicAuth(id, secret)
				return r
			}
			routes := []struct {
				name    string
				request func() *http.Request
				want    string
			}{
				{"jwks", func() *http.Request { return httptestGet("/api/auth/jwks", "") }, `"keys"`},
				{"discovery", func() *http.Request { return httptestGet("/.well-known/openid-configuration", "") }, `"issuer"`},
				{"framework_token", func() *http.Request { return httptestGet("/api/auth/token", app.Cookie+"="+cookie) }, `"token"`},
				{"client_credentials", grant, `"access_token"`},
				{"introspect", introspect, `"active":true`},
			}
			for _, rt := range routes {
				b.Run(rt.name, func(b *testing.B) {
					if w := app.Serve(rt.request()); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), rt.want) {
						b.Fatalf("%s: status %d: %s", rt.name, w.Code, w.Body)
					}
					b.ReportAllocs()
					for b.Loop() {
						if w := app.Serve(rt.request()); w.Code != http.StatusOK {
							b.Fatalf("%s: status %d: %s", rt.name, w.Code, w.Body)
						}
					}
				})
			}
		})
	}
}

func httptestGet(path, cookie string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if cookie != "" {
		r.Header.Set("Cookie", cookie)
	}
	return r
}

func formRequest(path string, form url.Values) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}
