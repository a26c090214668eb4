package console

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/test/harness"
)

// consoleBenchPages are the console pages BenchmarkConsolePages times, by
// name: the path of each, on a users table seeded by gormtest.SeedUsers,
// and a text the page must show (so a refusal is never timed).
var consoleBenchPages = []struct{ name, path, want string }{
	{"users", "/console/users", "users on this page"},
	{"users-search-address", "/console/users?q=user42%40example.com", "user42@example.com"},
	// The worst search: within addresses, matching only the oldest user,
	// so every row is read.
	{"users-search-within", "/console/users?q=user42%40", "user42@example.com"},
	{"users-search-name", "/console/users?q=User+777&by=name", "User 777"},
	{"users-unverified", "/console/users?verified=no", "users on this page"},
	{"user", "/console/users/user-00000500", "user500@example.com"},
	{"overview", "/console/overview", "Sign-ins"},
	{"audit", "/console/audit", "Audit log"},
	{"organizations", "/console/organizations", "Organizations"},
	{"domains", "/console/domains", "Domains"},
	{"service-keys", "/console/service-keys", "Service keys"},
	{"account", "/account", "bench@example.com"},
	{"account-sessions", "/account/sessions", "this device"},
}

// BenchmarkConsolePages measures the server time of the admin console's
// pages (routing, the session check, the use cases, the store and the
// template; no network) with 1,000 and 100,000 users, on SQLite and
// PostgreSQL. The budget is 100 ms a page at 100,000 users; the
// benchmark reports, it asserts nothing.
//
//	go test -run '^$' -bench ConsolePages -benchtime 20x ./test/
func BenchmarkConsolePages(b *testing.B) {
	env := harness.Env(harness.BenchEnv, map[string]string{"GATEHOUSE_ADMIN_EMAILS": harness.BenchUserEmail})
	for _, s := range []harness.Store{harness.StoreSQLite, harness.StorePostgres} {
		for _, n := range []int{1_000, 100_000} {
			b.Run(fmt.Sprintf("store=%s/users=%s", s, harness.BenchSizeName(n)), func(b *testing.B) {
				app := harness.MustStartBenchEnv(b, s, env)
				cookie := app.MustSignUp(b)
				// An administrator by address must have proven it.
				if err := app.DB.Exec("UPDATE users SET email_verified = ? WHERE email = ?", true, harness.BenchUserEmail).Error; err != nil {
					b.Fatal(err)
				}
				gormtest.SeedUsers(b, app.DB, n)
				get := func(b *testing.B, path string) *httptest.ResponseRecorder {
					r := httptest.NewRequest(http.MethodGet, path, nil)
					r.Header.Set("Cookie", app.Cookie+"="+cookie)
					return app.Serve(r)
				}
				for _, p := range consoleBenchPages {
					b.Run("page="+p.name, func(b *testing.B) {
						if w := get(b, p.path); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), p.want) {
							b.Fatalf("GET %s: %d, want 200 showing %q: %s", p.path, w.Code, p.want, w.Body)
						}
						b.ReportAllocs()
						for b.Loop() {
							get(b, p.path)
						}
					})
				}
			})
		}
	}
}
