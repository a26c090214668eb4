package oidc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// The discovery URLs (security.md §5): OpenID Connect Discovery appends the
// well-known segment to the issuer; RFC 8414 inserts it between the host and
// the issuer's path (and §5 allows the OpenID segment there too); some
// clients look at the host root.
var providerMetadataPaths = []string{
	"/api/auth/.well-known/openid-configuration",
	"/api/auth/.well-known/oauth-authorization-server",
	"/.well-known/openid-configuration",
	"/.well-known/oauth-authorization-server",
	"/.well-known/oauth-authorization-server/api/auth",
	"/.well-known/openid-configuration/api/auth",
}

const protectedResourcePath = "/.well-known/oauth-protected-resource"

// mustDiscoveryAnswer fails unless r is a discovery document's answer: 200
// JSON, cacheable for five minutes, readable from any origin.
func mustDiscoveryAnswer(t testing.TB, path string, r *harness.Response) map[string]any {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("%s: status %d (Location %q), want 200; body %s", path, r.Status, r.Header.Get("Location"), r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && !strings.HasPrefix(ct, "application/json;") {
		t.Fatalf("%s: Content-Type %q, want application/json", path, ct)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=300" {
		t.Fatalf("%s: Cache-Control %q, want public, max-age=300", path, cc)
	}
	if o := r.Header.Get("Access-Control-Allow-Origin"); o != "*" {
		t.Fatalf("%s: Access-Control-Allow-Origin %q, want *", path, o)
	}
	return r.JSON(t)
}

// mustNoEmptyArrays fails when a member of doc is an empty array (OpenID
// Connect Discovery §3: such members are omitted).
func mustNoEmptyArrays(t testing.TB, path string, doc map[string]any) {
	t.Helper()
	for k, v := range doc {
		if arr, ok := v.([]any); ok && len(arr) == 0 {
			t.Fatalf("%s: %s is an empty array", path, k)
		}
	}
}

// Ensure every discovery URL answers the same provider metadata, 200 JSON
// and never a redirect, with the issuer exactly BASE_URL/api/auth, every
// member OpenID Connect Discovery §3 requires, RS256 for ID tokens, and a
// jwks_uri that resolves to a key set holding an RS256 key, each key named.
func TestDiscovery_provider_metadata(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		issuer := app.Cfg.HTTP.BaseURL + "/api/auth"
		c := app.NewClient(t)
		var first []byte
		for _, path := range providerMetadataPaths {
			r := c.Get(path)
			doc := mustDiscoveryAnswer(t, path, r)
			if first == nil {
				first = r.Body
			} else if !bytes.Equal(first, r.Body) {
				t.Fatalf("%s differs from %s:\n%s\n%s", path, providerMetadataPaths[0], r.Body, first)
			}
			if doc["issuer"] != issuer {
				t.Fatalf("%s: issuer %v, want exactly %s", path, doc["issuer"], issuer)
			}
			for _, m := range []string{"issuer", "authorization_endpoint", "token_endpoint", "jwks_uri",
				"response_types_supported", "subject_types_supported", "id_token_signing_alg_values_supported",
				"userinfo_endpoint", "scopes_supported", "claims_supported"} {
				if doc[m] == nil {
					t.Fatalf("%s: %s missing", path, m)
				}
			}
			mustNoEmptyArrays(t, path, doc)
			// A trailing slash is another URL: 404, never a redirect.
			if r := c.Get(path + "/"); r.Status != http.StatusNotFound {
				t.Fatalf("%s/: status %d (Location %q), want 404", path, r.Status, r.Header.Get("Location"))
			}
		}

		var doc struct {
			Issuer            string   `json:"issuer"`
			Authorization     string   `json:"authorization_endpoint"`
			Token             string   `json:"token_endpoint"`
			Userinfo          string   `json:"userinfo_endpoint"`
			JWKS              string   `json:"jwks_uri"`
			Revocation        string   `json:"revocation_endpoint"`
			Introspection     string   `json:"introspection_endpoint"`
			EndSession        string   `json:"end_session_endpoint"`
			Scopes            []string `json:"scopes_supported"`
			ResponseTypes     []string `json:"response_types_supported"`
			ResponseModes     []string `json:"response_modes_supported"`
			GrantTypes        []string `json:"grant_types_supported"`
			Subjects          []string `json:"subject_types_supported"`
			IDTokenAlgs       []string `json:"id_token_signing_alg_values_supported"`
			TokenAuth         []string `json:"token_endpoint_auth_methods_supported"`
			RevocationAuth    []string `json:"revocation_endpoint_auth_methods_supported"`
			IntrospectionAuth []string `json:"introspection_endpoint_auth_methods_supported"`
			PKCE              []string `json:"code_challenge_methods_supported"`
			Claims            []string `json:"claims_supported"`
			Prompts           []string `json:"prompt_values_supported"`
			IssParameter      bool     `json:"authorization_response_iss_parameter_supported"`
			RequestParameter  *bool    `json:"request_parameter_supported"`
			RequestURI        *bool    `json:"request_uri_parameter_supported"`
			ClaimsParameter   *bool    `json:"claims_parameter_supported"`
		}
		harness.MustUnmarshal(t, first, &doc)
		for name, got := range map[string]string{
			"authorization_endpoint": doc.Authorization, "token_endpoint": doc.Token, "userinfo_endpoint": doc.Userinfo,
			"jwks_uri": doc.JWKS, "revocation_endpoint": doc.Revocation, "introspection_endpoint": doc.Introspection,
			"end_session_endpoint": doc.EndSession,
		} {
			want := map[string]string{
				"authorization_endpoint": "/oauth2/authorize", "token_endpoint": "/oauth2/token", "userinfo_endpoint": "/oauth2/userinfo",
				"jwks_uri": "/jwks", "revocation_endpoint": "/oauth2/revoke", "introspection_endpoint": "/oauth2/introspect",
				"end_session_endpoint": "/oauth2/end-session",
			}[name]
			if got != issuer+want {
				t.Fatalf("%s = %q, want %q", name, got, issuer+want)
			}
		}
		for name, tc := range map[string]struct{ got, want []string }{
			"scopes_supported":                              {doc.Scopes, []string{"openid", "profile", "email", "offline_access"}},
			"response_types_supported":                      {doc.ResponseTypes, []string{"code"}},
			"response_modes_supported":                      {doc.ResponseModes, []string{"query"}},
			"grant_types_supported":                         {doc.GrantTypes, []string{"authorization_code", "refresh_token", "client_credentials"}},
			"subject_types_supported":                       {doc.Subjects, []string{"public"}},
			"code_challenge_methods_supported":              {doc.PKCE, []string{"S256"}},
			"prompt_values_supported":                       {doc.Prompts, []string{"none", "login", "consent"}},
			"token_endpoint_auth_methods_supported":         {doc.TokenAuth, []string{"client_secret_basic", "client_secret_post", "none"}},
			"revocation_endpoint_auth_methods_supported":    {doc.RevocationAuth, []string{"client_secret_basic", "client_secret_post", "none"}},
			"introspection_endpoint_auth_methods_supported": {doc.IntrospectionAuth, []string{"client_secret_basic", "client_secret_post"}},
		} {
			if !slices.Equal(tc.got, tc.want) {
				t.Fatalf("%s = %v, want %v", name, tc.got, tc.want)
			}
		}
		if !slices.Contains(doc.IDTokenAlgs, "RS256") {
			t.Fatalf("id_token_signing_alg_values_supported = %v, want RS256 listed", doc.IDTokenAlgs)
		}
		for _, claim := range []string{"sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "azp", "at_hash", "email", "email_verified", "name", "picture"} {
			if !slices.Contains(doc.Claims, claim) {
				t.Fatalf("claims_supported = %v, lacks %s", doc.Claims, claim)
			}
		}
		if !doc.IssParameter || doc.RequestParameter == nil || *doc.RequestParameter ||
			doc.RequestURI == nil || *doc.RequestURI || doc.ClaimsParameter == nil || *doc.ClaimsParameter {
			t.Fatalf("parameter support flags wrong: %s", first)
		}

		// The key set: every key named and pinned to an algorithm, no
		// private member, and a key for every ID token algorithm.
		r := c.Get(doc.JWKS)
		harness.MustStatus(t, r, http.StatusOK)
		var set struct {
			Keys []map[string]any `json:"keys"`
		}
		harness.MustUnmarshal(t, r.Body, &set)
		kids, algs := map[string]bool{}, map[string]bool{}
		for _, k := range set.Keys {
			kid, _ := k["kid"].(string)
			alg, _ := k["alg"].(string)
			if kid == "" || alg == "" || kids[kid] {
				t.Fatalf("key without a unique kid or without alg: %v", k)
			}
			kids[kid], algs[alg] = true, true
			if alg == "RS256" && k["kty"] != "RSA" {
				t.Fatalf("RS256 key of type %v", k["kty"])
			}
			for _, private := range []string{"d", "p", "q", "dp", "dq", "qi", "k"} {
				if k[private] != nil {
					t.Fatalf("key %s publishes the private member %s", kid, private)
				}
			}
		}
		for _, alg := range doc.IDTokenAlgs {
			if !algs[alg] {
				t.Fatalf("no key for the ID token algorithm %s in %s", alg, r.Body)
			}
		}
	})
}

// Ensure a browser on another origin can read the metadata (a trusted one
// too), with no credentials, and that it never carries a session.
func TestDiscovery_cors(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_TRUSTED_ORIGINS": "https://app.example.com"}))
	for _, path := range append(slices.Clone(providerMetadataPaths), protectedResourcePath) {
		for _, origin := range []string{"https://elsewhere.example.org", "https://app.example.com"} {
			r := app.NewClient(t).Get(path, "Origin", origin)
			mustDiscoveryAnswer(t, path, r)
			if r.Header.Get("Access-Control-Allow-Credentials") == "true" {
				t.Fatalf("%s from %s: credentials allowed with *", path, origin)
			}
			if len(r.Header.Values("Set-Cookie")) > 0 {
				t.Fatalf("%s sets cookies: %q", path, r.Header.Values("Set-Cookie"))
			}
		}
	}
}

// Ensure the trusted API's protected resource metadata (RFC 9728): resource
// exactly the base URL, the header as the only bearer method, the service
// key scopes, no authorization server (it takes service keys, not OAuth
// tokens), documentation that resolves; and that its 401s point at it.
func TestDiscovery_protected_resource(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		r := c.Get(protectedResourcePath)
		doc := mustDiscoveryAnswer(t, protectedResourcePath, r)
		mustNoEmptyArrays(t, protectedResourcePath, doc)
		var meta struct {
			Resource      string   `json:"resource"`
			Name          string   `json:"resource_name"`
			Documentation string   `json:"resource_documentation"`
			Bearer        []string `json:"bearer_methods_supported"`
			Scopes        []string `json:"scopes_supported"`
		}
		harness.MustUnmarshal(t, r.Body, &meta)
		if meta.Resource != app.Cfg.HTTP.BaseURL {
			t.Fatalf("resource = %q, want exactly %q", meta.Resource, app.Cfg.HTTP.BaseURL)
		}
		if meta.Name == "" || !slices.Equal(meta.Bearer, []string{"header"}) {
			t.Fatalf("metadata = %s", r.Body)
		}
		want := []string{"users:read", "users:write", "organizations:read", "organizations:write", "domains:read", "domains:write", "webhooks:read", "webhooks:write", "*"}
		if !slices.Equal(meta.Scopes, want) {
			t.Fatalf("scopes_supported = %v, want %v", meta.Scopes, want)
		}
		if _, ok := doc["authorization_servers"]; ok {
			t.Fatalf("authorization_servers listed, but the trusted API takes no OAuth token: %s", r.Body)
		}
		if !strings.HasPrefix(meta.Documentation, app.Cfg.HTTP.BaseURL+"/") {
			t.Fatalf("resource_documentation = %q", meta.Documentation)
		}
		harness.MustStatus(t, c.Get(meta.Documentation), http.StatusOK)
		if r := c.Get(protectedResourcePath + "/"); r.Status != http.StatusNotFound {
			t.Fatalf("trailing slash: %d (Location %q), want 404", r.Status, r.Header.Get("Location"))
		}

		r = c.Get("/api/service-key")
		harness.MustStatus(t, r, http.StatusUnauthorized)
		challenge := r.Header.Get("WWW-Authenticate")
		if !strings.HasPrefix(challenge, "Bearer ") || !strings.Contains(challenge, `resource_metadata="`+app.Cfg.HTTP.BaseURL+protectedResourcePath+`"`) {
			t.Fatalf("WWW-Authenticate = %q, want Bearer with resource_metadata", challenge)
		}
	})
}

// Ensure the discovery operations are in the contracts: the framework's
// metadata in the framework contract, the root ones in the auth contract,
// the protected resource's in the backend contract.
func TestDiscovery_in_the_contracts(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, harness.FwQuick)
	c := app.NewClient(t)
	paths := func(doc string) map[string]any {
		var spec struct {
			Paths map[string]any `json:"paths"`
		}
		r := c.Get(doc)
		harness.MustStatus(t, r, http.StatusOK)
		if err := json.Unmarshal(r.Body, &spec); err != nil {
			t.Fatal(err)
		}
		return spec.Paths
	}
	framework, auth, backend := paths("/api/auth/open-api/generate-schema"), paths("/api/auth-openapi.json"), paths("/api/backend-openapi.json")
	for _, p := range providerMetadataPaths {
		if auth[p] == nil {
			t.Errorf("auth contract lacks %s", p)
		}
		if strings.HasPrefix(p, "/api/auth/") && framework[p] == nil {
			t.Errorf("framework contract lacks %s", p)
		}
	}
	if backend[protectedResourcePath] == nil {
		t.Errorf("backend contract lacks %s", protectedResourcePath)
	}
}
