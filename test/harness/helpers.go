package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/bootstrap"
)

// TestSecret is a development secret long enough for production rules.
const TestSecret = "test-secret-0123456789-abcdefghijklmnopqrstuvwxyz"

// MustConfig returns the default configuration with a data directory of the
// test's own, overridden by env.
func MustConfig(t testing.TB, env map[string]string) bootstrap.Config {
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
			return TestSecret
		}
		return ""
	}
	cfg, err := bootstrap.LoadConfig("test", nil, get, io.Discard)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	return cfg
}

// SyncBuffer collects log output from concurrent requests.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Store names the storage an app runs on.
type Store string

const (
	StoreMemory   Store = "memory"
	StoreSQLite   Store = "sqlite"
	StorePostgres Store = "postgres"
)

// AllStores are every store Gatehouse runs on: the benchmarks compare them.
var AllStores = []Store{StoreMemory, StoreSQLite, StorePostgres}

// The store policy (docs/development.md, "Which stores a test runs on"). A
// black-box behaviour runs once, on SQLite (StoresOnce). The suites where the
// store's own behaviour matters (authorization matrices, concurrency and
// races, faults, replicas, scale, events and the outbox, paging, search and
// counts, hostile input) run on SQLite and PostgreSQL (StoresThatMatter).
// That the three stores behave alike at their ports is the conformance
// suites' proof (ports/conformance, on memory, SQLite and PostgreSQL), and
// the use-case tests run on the memory store.
//
// GATEHOUSE_TEST_STORES changes both lists at once: "all" runs every such
// test on memory, SQLite and PostgreSQL; a comma-separated list of stores
// ("memory", "sqlite,postgres") runs them on those. Loops whose test needs a
// SQL database (a second process on the same one, a restart) take SQLOnly of
// a list.
var StoresOnce, StoresThatMatter = storePolicy(os.Getenv("GATEHOUSE_TEST_STORES"))

// storePolicy returns StoresOnce and StoresThatMatter under the switch sw.
func storePolicy(sw string) (once, matter []Store) {
	switch strings.TrimSpace(sw) {
	case "":
		return []Store{StoreSQLite}, []Store{StoreSQLite, StorePostgres}
	case "all":
		return AllStores, AllStores
	}
	var named []Store
	for _, name := range strings.Split(sw, ",") {
		s := Store(strings.TrimSpace(name))
		if !slices.Contains(AllStores, s) {
			panic(fmt.Sprintf("GATEHOUSE_TEST_STORES=%q: %q is no store (all, or a list of memory, sqlite, postgres)", sw, s))
		}
		named = append(named, s)
	}
	return named, named
}

// SQLOnly returns the SQL stores of stores, for tests that need a database
// of their own (the memory store lives and dies with its process).
func SQLOnly(stores []Store) []Store {
	return slices.DeleteFunc(slices.Clone(stores), func(s Store) bool { return s == StoreMemory })
}

// PostgresURL returns the URL of a PostgreSQL database of the test's own,
// migrated (a copy of a migrated template).
func PostgresURL(t testing.TB) gormstore.DatabaseURL { return gormtest.PostgresMigratedURL(t) }

// Response is a read HTTP response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// MustStatus fails the test unless r has the wanted status.
func MustStatus(t testing.TB, r *Response, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status = %d, want %d; body: %s", r.Status, want, r.Body)
	}
}
