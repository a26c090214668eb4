package contracts

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
	"github.com/getkin/kin-openapi/openapi3"
)

var update = flag.Bool("update", false, "rewrite the golden contracts in testdata/openapi")

// nonAPIRoutes are the only routes allowed outside every contract: the
// documents themselves, the explorer and the hosted pages.
var nonAPIRoutes = map[string]bool{
	"GET /api/auth-openapi.json":             true,
	"GET /api/auth/open-api/generate-schema": true,
	"GET /api/backend-openapi.json":          true,
	"GET /api/docs":                          true,
	"GET /api/docs/":                         true, // redirects to /api/docs
	"GET /api/docs/assets/{file}":            true,
	// The hosted pages and their stylesheet; each page's path with a
	// trailing slash redirects to the page.
	"GET /":                     true,
	"HEAD /":                    true,
	"GET /favicon.ico":          true,
	"GET /sign-in":              true,
	"GET /sign-in/":             true,
	"GET /sign-up":              true,
	"GET /sign-up/":             true,
	"GET /forgot-password":      true,
	"GET /forgot-password/":     true,
	"GET /reset-password":       true,
	"GET /reset-password/":      true,
	"GET /consent":              true,
	"GET /consent/":             true,
	"GET /sign-out":             true,
	"GET /sign-out/":            true,
	"GET /account":              true,
	"GET /account/":             true,
	"GET /two-factor":           true,
	"GET /two-factor/":          true,
	"GET /assets/gatehouse.css": true,
	"GET /assets/passkey.js":    true,
	"GET /assets/webauthn.js":   true,
}

func fetchContract(t *testing.T, app *harness.App, path string) (*openapi3.T, []byte) {
	t.Helper()
	r := app.Do(t, http.MethodGet, path, "")
	harness.MustStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s Content-Type = %q", path, ct)
	}
	doc, err := openapi3.NewLoader().LoadFromData(r.Body)
	if err != nil {
		t.Fatalf("%s does not load as OpenAPI: %v", path, err)
	}
	return doc, r.Body
}

// Ensure each contract is valid OpenAPI 3.1 with its security schemes.
func TestContracts_are_valid_openapi(t *testing.T) {
	app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_BASE_URL": "http://localhost:8080"})
	wantSchemes := map[string][]string{
		"auth":      {"sessionCookie", "sessionBearer"},
		"framework": {"sessionCookie", "sessionBearer"},
		"backend":   {"serviceKeyBearer", "serviceKeyHeader"},
	}
	for name, path := range harness.ContractDocs {
		t.Run(name, func(t *testing.T) {
			doc, _ := fetchContract(t, app, path)
			if !strings.HasPrefix(doc.OpenAPI, "3.1") {
				t.Fatalf("openapi = %q, want 3.1.x", doc.OpenAPI)
			}
			if err := doc.Validate(t.Context()); err != nil {
				t.Fatalf("%s is not valid: %v", path, err)
			}
			for _, s := range wantSchemes[name] {
				if doc.Components == nil || doc.Components.SecuritySchemes[s] == nil {
					t.Fatalf("%s lacks security scheme %s", path, s)
				}
			}
			if len(doc.Servers) != 1 || doc.Servers[0].URL != "http://localhost:8080" {
				t.Fatalf("servers = %v, want the base URL", doc.Servers)
			}
		})
	}
}

// documented returns "METHOD /path" for every operation in doc.
func documented(doc *openapi3.T) map[string]bool {
	out := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out[method+" "+path] = true
		}
	}
	return out
}

// Ensure every routed API operation is documented, every documented
// operation is routed, and each contract holds what it should.
func TestContracts_match_the_routes(t *testing.T) {
	app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_BASE_URL": "http://localhost:8080"})
	docs := map[string]map[string]bool{}
	all := map[string]bool{}
	for name, path := range harness.ContractDocs {
		doc, _ := fetchContract(t, app, path)
		docs[name] = documented(doc)
		for op := range docs[name] {
			all[op] = true
		}
	}
	routed := map[string]bool{}
	for _, r := range app.App.Server.Routes() {
		key := r.Method + " " + r.Path
		routed[key] = true
		if !all[key] && !nonAPIRoutes[key] && !harness.ConsoleRoute(r.Path) {
			t.Errorf("%s is routed but in no contract (and not an allowed non-API route)", key)
		}
	}
	for op := range all {
		if !routed[op] {
			t.Errorf("%s is documented but not routed", op)
		}
	}
	for op := range nonAPIRoutes {
		if !routed[op] {
			t.Errorf("allowed non-API route %s is not routed: remove it from the list", op)
		}
	}
	// Framework operations live under /api/auth and also in the auth contract.
	for op := range docs["framework"] {
		if !strings.Contains(op, " /api/auth/") {
			t.Errorf("framework contract holds %s, outside /api/auth", op)
		}
		if !docs["auth"][op] {
			t.Errorf("framework operation %s is missing from the auth contract", op)
		}
	}
	for op := range docs["auth"] {
		if strings.Contains(op, " /api/auth/") && !docs["framework"][op] {
			t.Errorf("auth contract holds %s under /api/auth, but the framework contract does not", op)
		}
	}
	for _, want := range []struct{ contract, op string }{
		{"framework", "GET /api/auth/ok"},
		{"auth", "GET /api/health/ready"},
		{"backend", "GET /api/health/ready"},
	} {
		if !docs[want.contract][want.op] {
			t.Errorf("%s contract lacks %s", want.contract, want.op)
		}
	}
}

// Ensure each served contract declares exactly the security schemes its
// operations use: every scheme an operation (or the document) asks for is
// declared, and every declared scheme is asked for by something, so the
// explorer's Authorize dialog offers no credential the contract never takes.
func TestContracts_declare_exactly_the_security_schemes_they_use(t *testing.T) {
	app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_BASE_URL": "http://localhost:8080"})
	for name, path := range harness.ContractDocs {
		t.Run(name, func(t *testing.T) {
			r := app.Do(t, http.MethodGet, path, "")
			harness.MustStatus(t, r, http.StatusOK)
			var doc struct {
				Security   []map[string][]string
				Paths      map[string]map[string]json.RawMessage
				Components struct {
					SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
				}
			}
			if err := json.Unmarshal(r.Body, &doc); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			used := map[string][]string{} // scheme → operations using it
			for _, req := range doc.Security {
				for s := range req {
					used[s] = append(used[s], "(document)")
				}
			}
			for p, item := range doc.Paths {
				for method, raw := range item {
					var op struct{ Security []map[string][]string }
					if err := json.Unmarshal(raw, &op); err != nil {
						continue // not an operation (parameters, summary…)
					}
					for _, req := range op.Security {
						for s := range req {
							used[s] = append(used[s], strings.ToUpper(method)+" "+p)
						}
					}
				}
			}
			if len(used) == 0 {
				t.Fatalf("%s: no operation asks for any security scheme", path)
			}
			for s, ops := range used {
				if _, ok := doc.Components.SecuritySchemes[s]; !ok {
					t.Errorf("%s: scheme %s is used (by %s) but not declared", path, s, ops[0])
				}
			}
			for s := range doc.Components.SecuritySchemes {
				if _, ok := used[s]; !ok {
					t.Errorf("%s: scheme %s is declared but no operation uses it", path, s)
				}
			}
		})
	}
}

// Ensure error responses are documented in the shape each route sends:
// Better Auth's {message, code} under /api/auth, problem+json elsewhere.
func TestContracts_document_error_shapes(t *testing.T) {
	app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_BASE_URL": "http://localhost:8080"})
	doc, _ := fetchContract(t, app, harness.ContractDocs["auth"])
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			r := op.Responses.Value("500")
			if r == nil || r.Value == nil {
				t.Errorf("%s %s documents no 500", method, path)
				continue
			}
			_, framework := r.Value.Content["application/json"]
			_, problem := r.Value.Content["application/problem+json"]
			if strings.HasPrefix(path, "/api/auth/") != framework || framework == problem {
				t.Errorf("%s %s documents its errors as %v", method, path, keys(r.Value.Content))
			}
		}
	}
}

func keys(m openapi3.Content) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Ensure the committed golden contracts match what the code generates, so a
// contract change is always a reviewed diff. Regenerate with make openapi.
func TestContracts_golden(t *testing.T) {
	app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_BASE_URL": "http://localhost:8080"})
	for name, path := range harness.ContractDocs {
		t.Run(name, func(t *testing.T) {
			_, raw := fetchContract(t, app, path)
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, raw, "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			golden := filepath.Join("testdata", "openapi", name+".json")
			if *update {
				if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read %s (run make openapi): %v", golden, err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Fatalf("%s differs from %s: run make openapi and review the diff", path, golden)
			}
		})
	}
}
