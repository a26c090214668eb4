package framework

import (
	"encoding/base64"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure NUL bytes and invalid UTF-8 anywhere a request carries text (path
// parameter, query name or value, JSON string at any depth, JSON object key,
// form field, credential header) are a 400 naming the part on framework,
// admin and trusted routes alike, on every store (PostgreSQL answered 500,
// SQLite stored the NUL), and that nothing changes.
// hostile is a HostileCase by position, as the tables below write them.
func hostile(name, method, path, body string, headers []string, shape, location string) harness.HostileCase {
	return harness.HostileCase{Name: name, Method: method, Path: path, Body: body, Headers: headers, Shape: shape, Location: location}
}

// It keeps a fresh application: it counts every service key and user the application holds.
func TestEdge_hostile_strings(t *testing.T) {
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		key := harness.MustCreateKey(t, admin, map[string]any{"name": "hostile backend", "scopes": []string{"users:read", "users:write"}})
		bearer := []string{"Authorization", "Bearer " + key["secret"].(string)}
		keysBefore := len(harness.MustOK(t, admin.Get(harness.ServiceKeysPath))["data"].([]any))
		usersBefore := len(harness.MustOK(t, app.NewClient(t).Get(harness.UsersPath, bearer...))["data"].([]any))
		form := []string{"Content-Type", "application/x-www-form-urlencoded"}
		deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
		basicNUL := "Basic " + base64.StdEncoding.EncodeToString([]byte("hostile%00:x"))

		tests := []harness.HostileCase{
			// The four reproductions.
			hostile("authorize_client_id_nul", "GET", "/api/auth/oauth2/authorize?response_type=code&client_id=%00&redirect_uri=https://x.example/cb", "", nil, "framework", "query.client_id"),
			hostile("token_form_client_id_nul", "POST", "/api/auth/oauth2/token", "grant_type=client_credentials&client_id=%00&client_secret=x", form, "oauth", "body.client_id"),
			hostile("sign_up_name_nul", "POST", "/api/auth/sign-up/email", `{"email":"n@example.org","name":"a\u0000b","password":"Str0ng-passphrase-nul"}`, nil, "framework", "body.name"),
			hostile("trusted_path_invalid_utf8", "GET", "/api/users/%ff", "", bearer, "problem", "path.id"),
			// Every other place text arrives.
			hostile("sign_up_name_raw_invalid_utf8", "POST", "/api/auth/sign-up/email", "{\"email\":\"u@example.org\",\"name\":\"a\xffb\",\"password\":\"Str0ng-passphrase-nul\"}", nil, "framework", "body.name"),
			hostile("sign_in_form_field_nul", "POST", "/api/auth/sign-in/email", "email=hostile%00%40example.org&password=Str0ng-passphrase-nul", form, "framework", "body.email"),
			hostile("framework_query_key_invalid_utf8", "GET", "/api/auth/get-session?%ff=1", "", nil, "framework", "query"),
			hostile("framework_deep_json", "POST", "/api/auth/sign-up/email", deep, nil, "framework", "body"),
			hostile("token_basic_credentials_nul", "POST", "/api/auth/oauth2/token", "grant_type=client_credentials", append([]string{"Authorization", basicNUL}, form...), "oauth", "header.authorization"),
			hostile("trusted_path_nul", "DELETE", "/api/users/a%00b", "", bearer, "problem", "path.id"),
			hostile("trusted_query_value_nul", "GET", "/api/users?limit=%00", "", bearer, "problem", "query.limit"),
			hostile("trusted_query_key_nul", "GET", "/api/users?%00=1", "", bearer, "problem", "query"),
			hostile("trusted_json_string_at_depth", "POST", harness.UsersPath, `{"email":"d@example.org","name":"D","publicMetadata":{"a":{"b":["x","hostile\u0000"]}}}`, bearer, "problem", "body.publicMetadata.a.b[1]"),
			hostile("trusted_json_key_nul", "POST", harness.UsersPath, `{"email":"k@example.org","name":"K","publicMetadata":{"a":{"hostile\u0000":1}}}`, bearer, "problem", "body.publicMetadata.a"),
			hostile("trusted_json_raw_invalid_utf8", "POST", harness.UsersPath, "{\"email\":\"r@example.org\",\"name\":\"R\xc3\"}", bearer, "problem", "body.name"),
			hostile("trusted_deep_json", "POST", harness.UsersPath, deep, bearer, "problem", "body"),
			hostile("trusted_api_key_invalid_utf8", "GET", harness.UsersPath, "", []string{"x-api-key", "gh_sk_\xff"}, "problem", "header.x-api-key"),
			hostile("admin_json_nul", "POST", harness.ServiceKeysPath, `{"name":"hostile\u0000","scopes":["users:read"]}`, nil, "problem", "body.name"),
			hostile("admin_path_nul", "DELETE", harness.ServiceKeysPath+"/%00", "", nil, "problem", "path.id"),
			hostile("admin_user_agent_invalid_utf8", "GET", harness.ServiceKeysPath, "", []string{"User-Agent", "hostile\xff"}, "problem", "header.user-agent"),
		}
		for _, tt := range tests {
			t.Run(tt.Name, func(t *testing.T) {
				c := admin
				if strings.HasPrefix(tt.Path, "/api/users") || strings.HasPrefix(tt.Path, "/api/auth/oauth2/") || strings.HasPrefix(tt.Path, "/api/auth/sign-") {
					c = app.NewClient(t) // no session: these need none
				}
				harness.MustNameHostile(t, c.Do(tt.Method, tt.Path, tt.Body, tt.Headers...), tt)
			})
		}
		// Nothing was created, and the refused sign-ups left no account.
		if n := len(harness.MustOK(t, admin.Get(harness.ServiceKeysPath))["data"].([]any)); n != keysBefore {
			t.Fatalf("service keys = %d, want %d", n, keysBefore)
		}
		if n := len(harness.MustOK(t, app.NewClient(t).Get(harness.UsersPath, bearer...))["data"].([]any)); n != usersBefore {
			t.Fatalf("users = %d, want %d", n, usersBefore)
		}
		for _, email := range []string{"n@example.org", "u@example.org"} {
			harness.MustSignInFails(t, app, email, "Str0ng-passphrase-nul")
		}
		// The sessions and the key still work: nothing was revoked.
		harness.MustSession(t, admin)
		harness.MustStatus(t, app.NewClient(t).Get(harness.UsersPath, bearer...), http.StatusOK)
	})
}

// Ensure the gaps in the error contract are closed: an empty body where one
// is required names body, a malformed query string names its parameter
// instead of being dropped, and a 415 does not repeat the Content-Type.
func TestEdge_error_contract_gaps(t *testing.T) {
	harness.SharedForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		key := harness.MustCreateKey(t, admin, map[string]any{"name": "gaps backend", "scopes": []string{"users:read", "users:write"}})
		bearer := []string{"Authorization", "Bearer " + key["secret"].(string)}
		jsonType := []string{"Content-Type", "application/json"}
		hostileType := []string{"Content-Type", "text/x-hostile-type"}

		tests := []harness.HostileCase{
			hostile("framework_empty_body", "POST", "/api/auth/sign-in/email", "", jsonType, "framework", "body"),
			hostile("admin_empty_body", "POST", harness.ServiceKeysPath, "", jsonType, "problem", "body"),
			hostile("trusted_empty_body", "POST", harness.UsersPath, "", append(jsonType, bearer...), "problem", "body"),
			hostile("framework_malformed_limit", "GET", "/api/auth/admin/list-users?limit=%%%", "", nil, "framework", "query.limit"),
			hostile("trusted_malformed_limit", "GET", harness.UsersPath+"?limit=%%%", "", bearer, "problem", "query.limit"),
			hostile("trusted_semicolon_pair", "GET", harness.UsersPath+"?limit=5;x=1", "", bearer, "problem", "query.limit"),
		}
		for _, tt := range tests {
			t.Run(tt.Name, func(t *testing.T) {
				c := admin
				if strings.HasPrefix(tt.Path, "/api/users") {
					c = app.NewClient(t)
				}
				harness.MustNameHostile(t, c.Do(tt.Method, tt.Path, tt.Body, tt.Headers...), tt)
			})
		}
		t.Run("every_required_body", func(t *testing.T) {
			all := harness.MustCreateKey(t, admin, map[string]any{"name": "all scopes", "scopes": []string{"*"}})
			seen := map[string]bool{}
			for _, contract := range slices.Collect(maps.Values(harness.ContractDocs)) {
				var doc struct {
					Paths map[string]map[string]struct {
						RequestBody *struct {
							Required bool           `json:"required"`
							Content  map[string]any `json:"content"`
						} `json:"requestBody"`
					} `json:"paths"`
				}
				harness.MustUnmarshal(t, mustOK200(t, app.NewClient(t).Get(contract)).Body, &doc)
				for path, ops := range doc.Paths {
					for method, o := range ops {
						if o.RequestBody == nil || !o.RequestBody.Required || o.RequestBody.Content["application/json"] == nil {
							continue
						}
						route := strings.ToUpper(method) + " " + path
						if seen[route] {
							continue
						}
						seen[route] = true
						shape := "problem"
						if strings.HasPrefix(path, "/api/auth/") {
							shape = "framework"
						}
						concrete := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "x")
						tt := harness.HostileCase{Name: route, Method: strings.ToUpper(method), Path: concrete, Shape: shape, Location: "body",
							Headers: []string{"Content-Type", "application/json", "Origin", app.Cfg.HTTP.BaseURL, "Authorization", "Bearer " + all["secret"].(string)}}
						t.Run(route, func(t *testing.T) { harness.MustNameHostile(t, admin.Do(tt.Method, tt.Path, "", tt.Headers...), tt) })
					}
				}
			}
			if len(seen) < 40 { // the loop must have found the contracts' routes
				t.Fatalf("%d routes need a JSON body", len(seen))
			}
		})
		t.Run("unsupported_media_type_not_echoed", func(t *testing.T) {
			r := admin.Post("/api/auth/update-user", `{"name":"Mallory"}`, hostileType...)
			if msg := harness.MustCode(t, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"); strings.Contains(msg, "hostile") {
				t.Fatalf("message echoes the Content-Type: %q", msg)
			}
			r = app.NewClient(t).Post(harness.UsersPath, `{"email":"m@example.org","name":"M"}`, append(hostileType, bearer...)...)
			harness.MustProblem(t, r, http.StatusUnsupportedMediaType, "request.unsupported_media_type")
			if strings.Contains(string(r.Body), "hostile") {
				t.Fatalf("problem echoes the Content-Type: %s", r.Body)
			}
		})
		if name := harness.MustUser(t, harness.MustSession(t, admin))["name"]; name != "Root Admin" {
			t.Fatalf("name = %v, want unchanged", name)
		}
	})
}

// mustOK200 fails unless r is a 200, and returns it.
func mustOK200(t testing.TB, r *harness.Response) *harness.Response {
	t.Helper()
	harness.MustStatus(t, r, http.StatusOK)
	return r
}
