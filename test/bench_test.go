package test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/domain"
)

// The benchmarks call the handler directly (no listener, no loopback), so
// they measure Gatehouse itself: routing, middleware, the use case and the
// store. `make bench` adds a load run over real connections. They never
// assert timings; compare the figures instead.
//
//	go test -run '^$' -bench 'GetSession|SignIn' -benchmem ./test/

// benchEnv turns off what would refuse or slow a benchmark's repeated
// requests: the per-address limits and the verified-address rule.
var benchEnv = map[string]string{
	"GATEHOUSE_RATE_LIMIT":                 "off",
	"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "false",
}

const (
	benchUserEmail    = "bench@example.com"
	benchUserPassword = "correct horse battery staple"
)

// benchApp is a Gatehouse wired for a benchmark, with a handle on its
// database (nil on memory) for seeding.
type benchApp struct {
	handler http.Handler
	app     *bootstrap.App
	db      *gorm.DB
	cookie  string // the session cookie's name
}

// mustStartBench wires Gatehouse on s like mustStart, with mustConfig and
// gormtest's databases (so PostgreSQL is skipped, or under CI fails, when
// GATEHOUSE_TEST_POSTGRES_URL is unset), but keeps what mustStart does not
// suit a benchmark: it logs at info to io.Discard (mustStart keeps every
// debug line in a growing buffer, which would be measured too), serves no
// listener, and returns the database so that tables can be seeded.
func mustStartBench(b *testing.B, s store) *benchApp {
	b.Helper()
	return mustStartBenchEnv(b, s, benchEnv)
}

// mustStartBenchEnv is mustStartBench with env instead of benchEnv.
func mustStartBenchEnv(b *testing.B, s store, env map[string]string) *benchApp {
	b.Helper()
	cfg := mustConfig(b, env)
	logger := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var (
		app     *bootstrap.App
		cleanup func()
		err     error
		db      *gorm.DB
	)
	switch s {
	case storeMemory:
		app, cleanup, err = bootstrap.InitializeMemory(cfg, logger)
	case storeSQLite, storePostgres:
		u := gormtest.SQLiteURL(b)
		if s == storePostgres {
			u = gormtest.PostgresURL(b)
		}
		cfg.Database.URL = string(u)
		if app, cleanup, err = bootstrap.InitializeSQL(b.Context(), cfg, logger); err == nil {
			db = gormtest.Open(b, u) // a second pool on the same database, for seeding
		}
	}
	if err != nil {
		b.Fatalf("start on %s: %v", s, err)
	}
	b.Cleanup(cleanup)
	return &benchApp{handler: app.Handler, app: app, db: db, cookie: cfg.SessionCookieName()}
}

// serve runs one request through the handler and returns the recorder.
func (a *benchApp) serve(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, r)
	return w
}

func benchSignInRequest() *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api/auth/sign-in/email",
		strings.NewReader(`{"email":"`+benchUserEmail+`","password":"`+benchUserPassword+`"}`))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func (a *benchApp) getSessionRequest(cookie string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/auth/get-session", nil)
	r.Header.Set("Cookie", a.cookie+"="+cookie)
	return r
}

// mustSignUp creates the benchmark's user and returns its session cookie's value.
func (a *benchApp) mustSignUp(b *testing.B) string {
	b.Helper()
	r := httptest.NewRequest(http.MethodPost, "/api/auth/sign-up/email",
		strings.NewReader(`{"name":"Bench","email":"`+benchUserEmail+`","password":"`+benchUserPassword+`"}`))
	r.Header.Set("Content-Type", "application/json")
	w := a.serve(r)
	if w.Code != http.StatusOK {
		b.Fatalf("sign-up: status %d: %s", w.Code, w.Body)
	}
	for _, c := range w.Result().Cookies() {
		if c.Name == a.cookie && c.Value != "" {
			return c.Value
		}
	}
	b.Fatalf("sign-up set no %s cookie", a.cookie)
	return ""
}

// seedBenchSessions inserts n live sessions of n/10 users (at least one) straight
// into the tables, 500 rows a statement in one transaction: seeding through
// sign-ins would hash a password per session.
func seedBenchSessions(b *testing.B, db *gorm.DB, n int) {
	b.Helper()
	users := max(n/10, 1)
	now := domain.Timestamp(time.Now())
	err := db.Transaction(func(tx *gorm.DB) error {
		err := seedRows(tx, "users", "id, name, email, email_verified, image, created_at, updated_at", users, func(i int) []any {
			return []any{fmt.Sprintf("seed-user-%08d", i), "Seed", fmt.Sprintf("seed%d@example.com", i), true, "", now, now}
		})
		if err != nil {
			return err
		}
		return seedRows(tx, "sessions", "id, user_id, token_hash, remember_me, ip_address, user_agent, expires_at, created_at, updated_at", n, func(i int) []any {
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
	for _, s := range allStores {
		b.Run("store="+string(s), func(b *testing.B) {
			sizes := []int{1_000, 100_000}
			if s == storeMemory {
				sizes = []int{1}
			}
			type fixture struct {
				name   string
				app    *benchApp
				cookie string
			}
			var fixtures []fixture
			for _, n := range sizes {
				app := mustStartBench(b, s)
				if app.db != nil {
					seedBenchSessions(b, app.db, n-1) // the sign-up adds the last one
				}
				cookie := app.mustSignUp(b)
				if w := app.serve(app.getSessionRequest(cookie)); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"session"`) {
					b.Fatalf("get-session: status %d: %s", w.Code, w.Body)
				}
				fixtures = append(fixtures, fixture{"sessions=" + benchSizeName(n), app, cookie})
			}
			for _, f := range fixtures {
				b.Run(f.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if w := f.app.serve(f.app.getSessionRequest(f.cookie)); w.Code != http.StatusOK {
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
								if w := f.app.serve(f.app.getSessionRequest(f.cookie)); w.Code != http.StatusOK {
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
	for _, s := range allStores {
		b.Run("store="+string(s), func(b *testing.B) {
			app := mustStartBench(b, s)
			app.mustSignUp(b)
			b.ReportAllocs()
			for b.Loop() {
				if w := app.serve(benchSignInRequest()); w.Code != http.StatusOK {
					b.Fatalf("sign-in: status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

// benchSizeName writes 1000 as 1k and 100000 as 100k.
func benchSizeName(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// seedRows inserts rows rows into table straight through SQL, 500 a
// statement, with the column values row(i) returns: seeding through the
// API would hash a password or check a key per row.
func seedRows(tx *gorm.DB, table, cols string, rows int, row func(i int) []any) error {
	const batch = 500
	width := strings.Count(cols, ",") + 1
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", width), ",") + ")"
	for start := 0; start < rows; start += batch {
		end := min(start+batch, rows)
		args := make([]any, 0, (end-start)*width)
		for i := start; i < end; i++ {
			args = append(args, row(i)...)
		}
		q := "INSERT INTO " + table + " (" + cols + ") VALUES " + strings.TrimSuffix(strings.Repeat(one+",", end-start), ",")
		if err := tx.Exec(q, args...).Error; err != nil {
			return fmt.Errorf("seed %s: %w", table, err)
		}
	}
	return nil
}
