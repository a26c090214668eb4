package test

import (
	"encoding/base64"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// hostileCase is one request carrying a hostile string, and the part the
// 400 must name.
type hostileCase struct {
	name, method, path, body string
	headers                  []string
	shape                    string // "framework", "problem" or "oauth"
	location                 string
}

// mustNameHostile fails unless r is a 400 in the shape that names location
// and repeats nothing of the hostile input.
func mustNameHostile(t *testing.T, r *response, tt hostileCase) {
	t.Helper()
	switch tt.shape {
	case "framework":
		msg := mustCode(t, r, http.StatusBadRequest, "VALIDATION_ERROR")
		if !strings.Contains(msg, "["+tt.location+"] ") {
			t.Fatalf("message %q does not name %s", msg, tt.location)
		}
	case "oauth":
		mustStatus(t, r, http.StatusBadRequest)
		body := r.JSON(t)
		desc, _ := body["error_description"].(string)
		if body["error"] != "invalid_request" || !strings.Contains(desc, "["+tt.location+"] ") {
			t.Fatalf("body = %s, want invalid_request naming %s", r.Body, tt.location)
		}
	default:
		p := mustProblem(t, r, http.StatusBadRequest, "request.invalid")
		mustNamed(t, p, tt.location)
	}
	for _, echo := range []string{`\u0000`, "\x00", "\xff", `\ufffd`, "\ufffd", "hostile"} {
		if strings.Contains(string(r.Body), echo) {
			t.Fatalf("answer echoes the input (%q): %s", echo, r.Body)
		}
	}
}

// Ensure NUL bytes and invalid UTF-8 anywhere a request carries text (path
// parameter, query name or value, JSON string at any depth, JSON object key,
// form field, credential header) are a 400 naming the part on framework,
// admin and trusted routes alike, on every store (PostgreSQL answered 500,
// SQLite stored the NUL), and that nothing changes.
func TestEdge_hostile_strings(t *testing.T) {
	fwForStores(t, storesThatMatter, adminEnv, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)
		key := mustCreateKey(t, admin, map[string]any{"name": "hostile backend", "scopes": []string{"users:read", "users:write"}})
		bearer := []string{"Authorization", "Bearer " + key["secret"].(string)}
		keysBefore := len(mustOK(t, admin.get(serviceKeysPath))["data"].([]any))
		usersBefore := len(mustOK(t, app.client(t).get(usersPath, bearer...))["data"].([]any))
		form := []string{"Content-Type", "application/x-www-form-urlencoded"}
		deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
		basicNUL := "Basic " + base64.StdEncoding.EncodeToString([]byte("hostile%00:x"))

		tests := []hostileCase{
			// The four reproductions.
			{"authorize_client_id_nul", "GET", "/api/auth/oauth2/authorize?response_type=code&client_id=%00&redirect_uri=https://x.example/cb", "", nil, "framework", "query.client_id"},
			{"token_form_client_id_nul", "POST", "/api/auth/oauth2/token", "grant_type=client_credentials&client_id=%00&client_secret=x", form, "oauth", "body.client_id"},
			{"sign_up_name_nul", "POST", "/api/auth/sign-up/email", `{"email":"n@example.org","name":"a\u0000b","password":"Str0ng-passphrase-nul"}`, nil, "framework", "body.name"},
			{"trusted_path_invalid_utf8", "GET", "/api/users/%ff", "", bearer, "problem", "path.id"},
			// Every other place text arrives.
			{"sign_up_name_raw_invalid_utf8", "POST", "/api/auth/sign-up/email", "{\"email\":\"u@example.org\",\"name\":\"a\xffb\",\"password\":\"Str0ng-passphrase-nul\"}", nil, "framework", "body.name"},
			{"sign_in_form_field_nul", "POST", "/api/auth/sign-in/email", "email=hostile%00%40example.org&password=Str0ng-passphrase-nul", form, "framework", "body.email"},
			{"framework_query_key_invalid_utf8", "GET", "/api/auth/get-session?%ff=1", "", nil, "framework", "query"},
			{"framework_deep_json", "POST", "/api/auth/sign-up/email", deep, nil, "framework", "body"},
			{"token_basic_credentials_nul", "POST", "/api/auth/oauth2/token", "grant_type=client_credentials", append([]string{"Authorization", basicNUL}, form...), "oauth", "header.authorization"},
			{"trusted_path_nul", "DELETE", "/api/users/a%00b", "", bearer, "problem", "path.id"},
			{"trusted_query_value_nul", "GET", "/api/users?limit=%00", "", bearer, "problem", "query.limit"},
			{"trusted_query_key_nul", "GET", "/api/users?%00=1", "", bearer, "problem", "query"},
			{"trusted_json_string_at_depth", "POST", usersPath, `{"email":"d@example.org","name":"D","publicMetadata":{"a":{"b":["x","hostile\u0000"]}}}`, bearer, "problem", "body.publicMetadata.a.b[1]"},
			{"trusted_json_key_nul", "POST", usersPath, `{"email":"k@example.org","name":"K","publicMetadata":{"a":{"hostile\u0000":1}}}`, bearer, "problem", "body.publicMetadata.a"},
			{"trusted_json_raw_invalid_utf8", "POST", usersPath, "{\"email\":\"r@example.org\",\"name\":\"R\xc3\"}", bearer, "problem", "body.name"},
			{"trusted_deep_json", "POST", usersPath, deep, bearer, "problem", "body"},
			{"trusted_api_key_invalid_utf8", "GET", usersPath, "", []string{"x-api-key", "gh_sk_\xff"}, "problem", "header.x-api-key"},
			{"admin_json_nul", "POST", serviceKeysPath, `{"name":"hostile\u0000","scopes":["users:read"]}`, nil, "problem", "body.name"},
			{"admin_path_nul", "DELETE", serviceKeysPath + "/%00", "", nil, "problem", "path.id"},
			{"admin_user_agent_invalid_utf8", "GET", serviceKeysPath, "", []string{"User-Agent", "hostile\xff"}, "problem", "header.user-agent"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := admin
				if strings.HasPrefix(tt.path, "/api/users") || strings.HasPrefix(tt.path, "/api/auth/oauth2/") || strings.HasPrefix(tt.path, "/api/auth/sign-") {
					c = app.client(t) // no session: these need none
				}
				mustNameHostile(t, c.do(tt.method, tt.path, tt.body, tt.headers...), tt)
			})
		}
		// Nothing was created, and the refused sign-ups left no account.
		if n := len(mustOK(t, admin.get(serviceKeysPath))["data"].([]any)); n != keysBefore {
			t.Fatalf("service keys = %d, want %d", n, keysBefore)
		}
		if n := len(mustOK(t, app.client(t).get(usersPath, bearer...))["data"].([]any)); n != usersBefore {
			t.Fatalf("users = %d, want %d", n, usersBefore)
		}
		for _, email := range []string{"n@example.org", "u@example.org"} {
			mustSignInFails(t, app, email, "Str0ng-passphrase-nul")
		}
		// The sessions and the key still work: nothing was revoked.
		mustSession(t, admin)
		mustStatus(t, app.client(t).get(usersPath, bearer...), http.StatusOK)
	})
}

// Ensure the gaps in the error contract are closed: an empty body where one
// is required names body, a malformed query string names its parameter
// instead of being dropped, and a 415 does not repeat the Content-Type.
func TestEdge_error_contract_gaps(t *testing.T) {
	fwForStores(t, storesThatMatter, adminEnv, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)
		key := mustCreateKey(t, admin, map[string]any{"name": "gaps backend", "scopes": []string{"users:read", "users:write"}})
		bearer := []string{"Authorization", "Bearer " + key["secret"].(string)}
		jsonType := []string{"Content-Type", "application/json"}
		hostileType := []string{"Content-Type", "text/x-hostile-type"}

		tests := []hostileCase{
			{"framework_empty_body", "POST", "/api/auth/sign-in/email", "", jsonType, "framework", "body"},
			{"admin_empty_body", "POST", serviceKeysPath, "", jsonType, "problem", "body"},
			{"trusted_empty_body", "POST", usersPath, "", append(jsonType, bearer...), "problem", "body"},
			{"framework_malformed_limit", "GET", "/api/auth/admin/list-users?limit=%%%", "", nil, "framework", "query.limit"},
			{"trusted_malformed_limit", "GET", usersPath + "?limit=%%%", "", bearer, "problem", "query.limit"},
			{"trusted_semicolon_pair", "GET", usersPath + "?limit=5;x=1", "", bearer, "problem", "query.limit"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := admin
				if strings.HasPrefix(tt.path, "/api/users") {
					c = app.client(t)
				}
				mustNameHostile(t, c.do(tt.method, tt.path, tt.body, tt.headers...), tt)
			})
		}
		t.Run("every_required_body", func(t *testing.T) {
			all := mustCreateKey(t, admin, map[string]any{"name": "all scopes", "scopes": []string{"*"}})
			seen := map[string]bool{}
			for _, contract := range slices.Collect(maps.Values(contractDocs)) {
				var doc struct {
					Paths map[string]map[string]struct {
						RequestBody *struct {
							Required bool           `json:"required"`
							Content  map[string]any `json:"content"`
						} `json:"requestBody"`
					} `json:"paths"`
				}
				mustUnmarshal(t, mustOK200(t, app.client(t).get(contract)).Body, &doc)
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
						tt := hostileCase{name: route, method: strings.ToUpper(method), path: concrete, shape: shape, location: "body",
							headers: []string{"Content-Type", "application/json", "Origin", app.Cfg.HTTP.BaseURL, "Authorization", "Bearer " + all["secret"].(string)}}
						t.Run(route, func(t *testing.T) { mustNameHostile(t, admin.do(tt.method, tt.path, "", tt.headers...), tt) })
					}
				}
			}
			if len(seen) < 40 { // the loop must have found the contracts' routes
				t.Fatalf("%d routes need a JSON body", len(seen))
			}
		})
		t.Run("unsupported_media_type_not_echoed", func(t *testing.T) {
			r := admin.post("/api/auth/update-user", `{"name":"Mallory"}`, hostileType...)
			if msg := mustCode(t, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE"); strings.Contains(msg, "hostile") {
				t.Fatalf("message echoes the Content-Type: %q", msg)
			}
			r = app.client(t).post(usersPath, `{"email":"m@example.org","name":"M"}`, append(hostileType, bearer...)...)
			mustProblem(t, r, http.StatusUnsupportedMediaType, "request.unsupported_media_type")
			if strings.Contains(string(r.Body), "hostile") {
				t.Fatalf("problem echoes the Content-Type: %s", r.Body)
			}
		})
		if name := mustUser(t, mustSession(t, admin))["name"]; name != "Root Admin" {
			t.Fatalf("name = %v, want unchanged", name)
		}
	})
}

// mustOK200 fails unless r is a 200, and returns it.
func mustOK200(t testing.TB, r *response) *response {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	return r
}
