package backend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/harness"
)

// BenchmarkTrustedLookup measures the trusted API's lookups through the
// handler, with a service key, at 1,000 and at 100,000 users and domains:
// a user by id and by e-mail, a domain by id and by hostname, and the first
// and a deep page of each listing. Each is one indexed query after the
// key's own lookup, so the figures should not grow with the tables.
//
//	go test -run '^$' -bench TrustedLookup -benchmem ./test/
func BenchmarkTrustedLookup(b *testing.B) {
	for _, s := range []harness.Store{harness.StoreSQLite, harness.StorePostgres} {
		b.Run("store="+string(s), func(b *testing.B) {
			for _, n := range []int{1_000, 100_000} {
				app := harness.MustStartBench(b, s)
				seedTrustedBench(b, app.DB, n)
				k, err := app.App.CreateServiceKey(b.Context(), servicekey.CreateServiceKey{Name: "bench", Scopes: []string{"*"}})
				if err != nil {
					b.Fatal(err)
				}
				get := func(path string) *httptest.ResponseRecorder {
					r := httptest.NewRequest(http.MethodGet, path, nil)
					r.Header.Set("Authorization", "Bearer "+k.Secret)
					return app.Serve(r)
				}
				// A deep page: follow the cursor 40 pages of 100 in, then
				// reuse that cursor.
				deep := func(path string) string {
					cursor := ""
					for range 40 {
						w := get(path + "?limit=100&cursor=" + url.QueryEscape(cursor))
						var page struct {
							NextCursor string `json:"nextCursor"`
						}
						if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &page) != nil || page.NextCursor == "" {
							if n < 5_000 {
								break // 1,000 rows: the deepest page there is
							}
							b.Fatalf("%s: %d %s", path, w.Code, w.Body)
						}
						cursor = page.NextCursor
					}
					return path + "?limit=100&cursor=" + url.QueryEscape(cursor)
				}
				mid := n / 2
				ops := []struct{ name, path string }{
					{"user-by-id", fmt.Sprintf("/api/users/seed-user-%08d", mid)},
					{"user-by-email", fmt.Sprintf("/api/users?email=SEED%d@EXAMPLE.COM", mid)},
					{"users-first-page", "/api/users?limit=100"},
					{"users-deep-page", deep("/api/users")},
					{"domain-by-id", fmt.Sprintf("/api/domains/seed-domain-%08d", mid)},
					{"domain-by-hostname", fmt.Sprintf("/api/domains/by-hostname/HOST%d.EXAMPLE.COM.", mid)},
					{"domains-first-page", "/api/domains?limit=100"},
					{"domains-deep-page", deep("/api/domains")},
				}
				for _, op := range ops {
					if w := get(op.path); w.Code != http.StatusOK {
						b.Fatalf("%s: %d %s", op.name, w.Code, w.Body)
					} else if strings.Contains(op.name, "email") && strings.Count(w.Body.String(), `"email"`) != 1 {
						b.Fatalf("%s: want one user: %s", op.name, w.Body)
					}
					b.Run(fmt.Sprintf("rows=%s/op=%s", harness.BenchSizeName(n), op.name), func(b *testing.B) {
						b.ReportAllocs()
						for b.Loop() {
							if w := get(op.path); w.Code != http.StatusOK {
								b.Fatalf("%s: %d %s", op.name, w.Code, w.Body)
							}
						}
					})
				}
			}
		})
	}
}

// seedTrustedBench inserts n users and n domains straight into the tables
// in one transaction, one second apart so the listing order is the seeding
// order.
func seedTrustedBench(b *testing.B, db *gorm.DB, n int) {
	b.Helper()
	base := domain.Timestamp(time.Now().Add(-time.Duration(n) * time.Second))
	err := db.Transaction(func(tx *gorm.DB) error {
		err := harness.SeedRows(tx, "users", "id, name, email, email_verified, image, created_at, updated_at", n, func(i int) []any {
			at := base.Add(time.Duration(i) * time.Second)
			return []any{fmt.Sprintf("seed-user-%08d", i), "Seed", fmt.Sprintf("seed%d@example.com", i), true, "", at, at}
		})
		if err != nil {
			return err
		}
		return harness.SeedRows(tx, "domains", "id, hostname, status, token, records, attempts, window_start, manual_reason, created_at, updated_at", n, func(i int) []any {
			at := base.Add(time.Duration(i) * time.Second)
			return []any{fmt.Sprintf("seed-domain-%08d", i), fmt.Sprintf("host%d.example.com", i), "pending",
				fmt.Sprintf("token%027d", i), "[]", 0, at, "", at, at}
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	if db.Dialector.Name() == "postgres" {
		_ = db.Exec("ANALYZE users").Error
		_ = db.Exec("ANALYZE domains").Error
	}
}
