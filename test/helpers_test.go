package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/bootstrap"
)

// testSecret is a development secret long enough for production rules.
const testSecret = "test-secret-0123456789-abcdefghijklmnopqrstuvwxyz"

// mustConfig returns the default configuration with a data directory of the
// test's own, overridden by env.
func mustConfig(t testing.TB, env map[string]string) bootstrap.Config {
	t.Helper()
	dir := t.TempDir()
	get := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		switch k {
		case "GATEHOUSE_DATA_DIR":
			return dir
		case "GATEHOUSE_SECRET":
			return testSecret
		}
		return ""
	}
	cfg, err := bootstrap.LoadConfig("test", nil, get, io.Discard)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	return cfg
}

// syncBuffer collects log output from concurrent requests.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testApp is a running Gatehouse and what it logged.
type testApp struct {
	*httptest.Server
	App  *bootstrap.App
	Logs *syncBuffer
}

// store names the storage an app runs on.
type store string

const (
	storeMemory   store = "memory"
	storeSQLite   store = "sqlite"
	storePostgres store = "postgres"
)

// allStores are every store Gatehouse runs on: the benchmarks compare them.
var allStores = []store{storeMemory, storeSQLite, storePostgres}

// The store policy (docs/development.md, "Which stores a test runs on"). A
// black-box behaviour runs once, on SQLite (storesOnce). The suites where the
// store's own behaviour matters (authorization matrices, concurrency and
// races, faults, replicas, scale, events and the outbox, paging, search and
// counts, hostile input) run on SQLite and PostgreSQL (storesThatMatter).
// That the three stores behave alike at their ports is the conformance
// suites' proof (ports/conformance, on memory, SQLite and PostgreSQL), and
// the use-case tests run on the memory store.
//
// GATEHOUSE_TEST_STORES changes both lists at once: "all" runs every such
// test on memory, SQLite and PostgreSQL; a comma-separated list of stores
// ("memory", "sqlite,postgres") runs them on those. Loops whose test needs a
// SQL database (a second process on the same one, a restart) take sqlOnly of
// a list.
var storesOnce, storesThatMatter = storePolicy(os.Getenv("GATEHOUSE_TEST_STORES"))

// storePolicy returns storesOnce and storesThatMatter under the switch sw.
func storePolicy(sw string) (once, matter []store) {
	switch strings.TrimSpace(sw) {
	case "":
		return []store{storeSQLite}, []store{storeSQLite, storePostgres}
	case "all":
		return allStores, allStores
	}
	var named []store
	for _, name := range strings.Split(sw, ",") {
		s := store(strings.TrimSpace(name))
		if !slices.Contains(allStores, s) {
			panic(fmt.Sprintf("GATEHOUSE_TEST_STORES=%q: %q is no store (all, or a list of memory, sqlite, postgres)", sw, s))
		}
		named = append(named, s)
	}
	return named, named
}

// sqlOnly returns the SQL stores of stores, for tests that need a database
// of their own (the memory store lives and dies with its process).
func sqlOnly(stores []store) []store {
	return slices.DeleteFunc(slices.Clone(stores), func(s store) bool { return s == storeMemory })
}

// mustStart wires and serves Gatehouse on s with cfg. On PostgreSQL it skips
// (or, under CI, fails) when no server is configured.
func mustStart(t testing.TB, s store, cfg bootstrap.Config) *testApp {
	t.Helper()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var (
		app     *bootstrap.App
		cleanup func()
		err     error
	)
	switch s {
	case storeMemory:
		app, cleanup, err = bootstrap.InitializeMemory(cfg, logger)
	case storeSQLite:
		cfg.Database.URL = string(gormtest.SQLiteURL(t))
		app, cleanup, err = bootstrap.InitializeSQL(t.Context(), cfg, logger)
	case storePostgres:
		if cfg.Database.URL == "" || !strings.HasPrefix(cfg.Database.URL, "postgres") {
			cfg.Database.URL = string(gormtest.PostgresMigratedURL(t))
		}
		app, cleanup, err = bootstrap.InitializeSQL(t.Context(), cfg, logger)
	}
	if err != nil {
		t.Fatalf("start on %s: %v", s, err)
	}
	srv := httptest.NewServer(app.Handler)
	stopMail := app.StartMail(context.Background(), logger)
	t.Cleanup(func() { srv.Close(); stopMail(); cleanup() })
	return &testApp{Server: srv, App: app, Logs: logs}
}

// forStores runs fn in parallel against a fresh app on each of stores.
func forStores(t *testing.T, stores []store, fn func(t *testing.T, app *testApp)) {
	t.Helper()
	for _, s := range stores {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			fn(t, mustStart(t, s, mustConfig(t, nil)))
		})
	}
}

// postgresURL returns the URL of a PostgreSQL database of the test's own,
// migrated (a copy of a migrated template).
func postgresURL(t testing.TB) gormstore.DatabaseURL { return gormtest.PostgresMigratedURL(t) }

// postgresEmptyURL returns the URL of an empty PostgreSQL database of the
// test's own, for the tests of migrating one.
func postgresEmptyURL(t testing.TB) gormstore.DatabaseURL { return gormtest.PostgresURL(t) }

// response is a read HTTP response.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// do sends a request and reads the whole response. Header pairs follow the body.
func do(t testing.TB, app *testApp, method, path string, body string, headers ...string) *response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, app.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := app.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// mustStatus fails the test unless r has the wanted status.
func mustStatus(t testing.TB, r *response, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status = %d, want %d; body: %s", r.Status, want, r.Body)
	}
}
