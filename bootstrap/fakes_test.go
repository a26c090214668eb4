package bootstrap

import (
	"io"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/application/servicekey"
)

// fixedClock always says the same time.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// Ensure the injectors that take fakes wire the clock they are given into
// the application (a service key is created at its time, on memory and on
// SQLite), and the system clock when they are given none.
func TestInitializeWithFakes_clock(t *testing.T) {
	at := time.Date(2031, 1, 2, 3, 4, 5, 6000, time.UTC)
	for _, tt := range []struct {
		name  string
		clock bool
		init  func(cfg Config, fakes Fakes) (*App, func(), error)
	}{
		{"memory", true, func(cfg Config, f Fakes) (*App, func(), error) { return InitializeMemoryWithFakes(cfg, discard(), f) }},
		{"sqlite", true, func(cfg Config, f Fakes) (*App, func(), error) {
			cfg.Database.URL = string(gormtest.SQLiteURL(t))
			return InitializeSQLWithFakes(t.Context(), cfg, discard(), f)
		}},
		{"memory_without_a_clock", false, func(cfg Config, f Fakes) (*App, func(), error) { return InitializeMemoryWithFakes(cfg, discard(), f) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := LoadConfig("test", nil, func(string) string { return "" }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Secrets = []string{"0123456789abcdef0123456789abcdef-fakes"}
			var fakes Fakes
			if tt.clock {
				fakes.Clock = fixedClock{at}
			}
			before := time.Now()
			app, cleanup, err := tt.init(cfg, fakes)
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			issued, err := app.CreateServiceKey(t.Context(), servicekey.CreateServiceKey{Name: "backend", Scopes: []string{"users:read"}})
			if err != nil {
				t.Fatal(err)
			}
			got := issued.Key.CreatedAt()
			if tt.clock && !got.Equal(at) {
				t.Fatalf("created at %v, want the fake clock's %v", got, at)
			}
			if !tt.clock && (got.Before(before.Add(-time.Second)) || got.After(time.Now().Add(time.Second))) {
				t.Fatalf("created at %v, want about now (%v)", got, before)
			}
		})
	}
}
