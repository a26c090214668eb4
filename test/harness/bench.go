package harness

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/bootstrap"
)

// The benchmarks call the handler directly (no listener, no loopback), so
// they measure Gatehouse itself: routing, middleware, the use case and the
// store. `make bench` adds a load run over real connections. They never
// assert timings; compare the figures instead.
//
//	go test -run '^$' -bench 'GetSession|SignIn' -benchmem ./test/

// BenchEnv turns off what would refuse or slow a benchmark's repeated
// requests: the per-address limits and the verified-address rule.
var BenchEnv = map[string]string{
	"GATEHOUSE_RATE_LIMIT":                 "off",
	"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION": "false",
}

const (
	BenchUserEmail    = "bench@example.com"
	BenchUserPassword = "correct horse battery staple"
)

// BenchApp is a Gatehouse wired for a benchmark, with a handle on its
// database (nil on memory) for seeding, and its clock.
type BenchApp struct {
	Handler http.Handler
	App     *bootstrap.App
	DB      *gorm.DB
	Cookie  string // the session cookie's name
	Clock   *Clock
}

// MustStartBench wires Gatehouse on s like MustStart, with MustConfig and
// gormtest's databases (so PostgreSQL is skipped, or under CI fails, when
// GATEHOUSE_TEST_POSTGRES_URL is unset), but keeps what MustStart does not
// suit a benchmark: it logs at info to io.Discard (MustStart keeps every
// debug line in a growing buffer, which would be measured too), serves no
// listener, and returns the database so that tables can be seeded.
func MustStartBench(b *testing.B, s Store) *BenchApp {
	b.Helper()
	return MustStartBenchEnv(b, s, BenchEnv)
}

// MustStartBenchEnv is MustStartBench with env instead of BenchEnv.
func MustStartBenchEnv(b *testing.B, s Store, env map[string]string) *BenchApp {
	b.Helper()
	cfg := MustConfig(b, env)
	logger := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	clock := NewClock()
	fakes := bootstrap.Fakes{Clock: clock}
	var (
		app     *bootstrap.App
		cleanup func()
		err     error
		db      *gorm.DB
	)
	switch s {
	case StoreMemory:
		app, cleanup, err = bootstrap.InitializeMemoryWithFakes(cfg, logger, fakes)
	case StoreSQLite, StorePostgres:
		u := gormtest.SQLiteURL(b)
		if s == StorePostgres {
			u = gormtest.PostgresURL(b)
		}
		cfg.Database.URL = string(u)
		if app, cleanup, err = bootstrap.InitializeSQLWithFakes(b.Context(), cfg, logger, fakes); err == nil {
			db = gormtest.Open(b, u) // a second pool on the same database, for seeding
		}
	}
	if err != nil {
		b.Fatalf("start on %s: %v", s, err)
	}
	b.Cleanup(cleanup)
	return &BenchApp{Handler: app.Handler, App: app, DB: db, Cookie: cfg.SessionCookieName(), Clock: clock}
}

// serve runs one request through the handler and returns the recorder.
func (a *BenchApp) Serve(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	a.Handler.ServeHTTP(w, r)
	return w
}

func (a *BenchApp) GetSessionRequest(cookie string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/auth/get-session", nil)
	r.Header.Set("Cookie", a.Cookie+"="+cookie)
	return r
}

// MustSignUp creates the benchmark's user and returns its session cookie's value.
func (a *BenchApp) MustSignUp(b *testing.B) string {
	b.Helper()
	r := httptest.NewRequest(http.MethodPost, "/api/auth/sign-up/email",
		strings.NewReader(`{"name":"Bench","email":"`+BenchUserEmail+`","password":"`+BenchUserPassword+`"}`))
	r.Header.Set("Content-Type", "application/json")
	w := a.Serve(r)
	if w.Code != http.StatusOK {
		b.Fatalf("sign-up: status %d: %s", w.Code, w.Body)
	}
	for _, c := range w.Result().Cookies() {
		if c.Name == a.Cookie && c.Value != "" {
			return c.Value
		}
	}
	b.Fatalf("sign-up set no %s cookie", a.Cookie)
	return ""
}

// BenchSizeName writes 1000 as 1k and 100000 as 100k.
func BenchSizeName(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// SeedRows inserts rows rows into table straight through SQL, 500 a
// statement, with the column values row(i) returns: seeding through the
// API would hash a password or check a key per row.
func SeedRows(tx *gorm.DB, table, cols string, rows int, row func(i int) []any) error {
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
