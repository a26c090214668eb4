package framework

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/harness"
)

func benchSignInRequest() *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api/auth/sign-in/email",
		strings.NewReader(`{"email":"`+harness.BenchUserEmail+`","password":"`+harness.BenchUserPassword+`"}`))
	r.Header.Set("Content-Type", "application/json")
	return r
}

// seedBenchSessions inserts n live sessions of n/10 users (at least one) straight
// into the tables, 500 rows a statement in one transaction: seeding through
// sign-ins would hash a password per session.
func seedBenchSessions(b *testing.B, db *gorm.DB, n int) {
	b.Helper()
	users := max(n/10, 1)
	now := domain.Timestamp(time.Now())
	err := db.Transaction(func(tx *gorm.DB) error {
		err := harness.SeedRows(tx, "users", "id, name, email, email_verified, image, created_at, updated_at", users, func(i int) []any {
			return []any{fmt.Sprintf("seed-user-%08d", i), "Seed", fmt.Sprintf("seed%d@example.com", i), true, "", now, now}
		})
		if err != nil {
			return err
		}
		return harness.SeedRows(tx, "sessions", "id, user_id, token_hash, remember_me, ip_address, user_agent, expires_at, created_at, updated_at", n, func(i int) []any {
			return []any{fmt.Sprintf("seed-session-%08d", i), fmt.Sprintf("seed-user-%08d", i%users),
				string(domain.HashToken(fmt.Sprintf("seed%028d", i))), true, "203.0.113.7", "bench", now.Add(24 * time.Hour), now, now}
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	// On PostgreSQL, refresh the planner's statistics as autovacuum would
	// after a bulk load. SQLite gathers none unless told to, and Gatehouse
	// never tells it, so its tables stay as a deployment's would be.
	if gormstore.DialectOf(db) == gormstore.DialectPostgres {
		_ = db.Exec("ANALYZE sessions").Error
		_ = db.Exec("ANALYZE users").Error
	}
}

// BenchmarkGetSession measures get-session with a valid cookie, the request
// every page of a signed-in client makes: one indexed query, so the cost
// should stay flat from sessions=1k to sessions=100k. The parallel variants
// run GOMAXPROCS goroutines. The memory store's tables cannot be seeded
// from here (InitializeMemory keeps them private), so it holds one session.
func BenchmarkGetSession(b *testing.B) {
	for _, s := range harness.AllStores {
		b.Run("store="+string(s), func(b *testing.B) {
			sizes := []int{1_000, 100_000}
			if s == harness.StoreMemory {
				sizes = []int{1}
			}
			type fixture struct {
				name   string
				app    *harness.BenchApp
				cookie string
			}
			var fixtures []fixture
			for _, n := range sizes {
				app := harness.MustStartBench(b, s)
				if app.DB != nil {
					seedBenchSessions(b, app.DB, n-1) // the sign-up adds the last one
				}
				cookie := app.MustSignUp(b)
				if w := app.Serve(app.GetSessionRequest(cookie)); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"session"`) {
					b.Fatalf("get-session: status %d: %s", w.Code, w.Body)
				}
				fixtures = append(fixtures, fixture{"sessions=" + harness.BenchSizeName(n), app, cookie})
			}
			for _, f := range fixtures {
				b.Run(f.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if w := f.app.Serve(f.app.GetSessionRequest(f.cookie)); w.Code != http.StatusOK {
							b.Fatalf("get-session: status %d: %s", w.Code, w.Body)
						}
					}
				})
			}
			b.Run("parallel", func(b *testing.B) {
				for _, f := range fixtures {
					b.Run(f.name, func(b *testing.B) {
						b.ReportAllocs()
						b.RunParallel(func(pb *testing.PB) {
							for pb.Next() {
								if w := f.app.Serve(f.app.GetSessionRequest(f.cookie)); w.Code != http.StatusOK {
									b.Errorf("get-session: status %d: %s", w.Code, w.Body)
									return
								}
							}
						})
					})
				}
			})
		})
	}
}

// BenchmarkSignIn measures sign-in with the right password: one argon2id
// verification (most of the cost, by design) plus two lookups and a
// session insert.
func BenchmarkSignIn(b *testing.B) {
	for _, s := range harness.AllStores {
		b.Run("store="+string(s), func(b *testing.B) {
			app := harness.MustStartBench(b, s)
			app.MustSignUp(b)
			b.ReportAllocs()
			for b.Loop() {
				if w := app.Serve(benchSignInRequest()); w.Code != http.StatusOK {
					b.Fatalf("sign-in: status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
