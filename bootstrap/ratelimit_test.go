package bootstrap

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
)

// Ensure the purge job deletes the rate-limit windows that have ended when
// PostgreSQL counts them, keeps the others, and says how many it deleted.
func TestPurgeJob_deletes_ended_rate_limit_windows(t *testing.T) {
	u := gormtest.PostgresURL(t)
	env := map[string]string{"GATEHOUSE_DATA_DIR": t.TempDir(), "GATEHOUSE_SECRET": strings.Repeat("s", 32), "GATEHOUSE_DATABASE_URL": string(u)}
	cfg, err := LoadConfig("test", nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	app, cleanup, err := InitializeSQL(t.Context(), cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	if !strings.HasPrefix(app.RateLimits, "counted in PostgreSQL") {
		t.Fatalf("rate limits %q, want them counted in PostgreSQL", app.RateLimits)
	}
	db := gormtest.Open(t, u)
	if err := db.Exec(`INSERT INTO rate_limits (key, hits, expires_at) VALUES
		('10000:k:ended-1', 3, now() - interval '1 second'), ('10000:k:ended-2', 1, now() - interval '1 hour'),
		('60000:k:open', 2, now() + interval '1 minute')`).Error; err != nil {
		t.Fatal(err)
	}
	if err := app.purgeJob(time.Hour, logger).run(t.Context()); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := db.Raw(`SELECT key FROM rate_limits`).Scan(&keys).Error; err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "60000:k:open" {
		t.Fatalf("rows after the purge = %q, want only the open window", keys)
	}
	if !strings.Contains(logs.String(), `"rate_limit_windows":2`) {
		t.Fatalf("the purge did not log the 2 windows it deleted; logs:\n%s", logs.String())
	}
}
