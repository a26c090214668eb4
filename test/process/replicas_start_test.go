package process

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure replicas starting together on an empty PostgreSQL database migrate
// it once and make one signing key per algorithm between them, which each
// of them publishes: the start-up writes take turns under a lease.
func TestReplicas_start_together_make_one_key_per_algorithm(t *testing.T) {
	t.Parallel()
	cfg := harness.MustConfig(t, nil)
	cfg.Database.URL = string(postgresEmptyURL(t))
	const replicas = 3
	apps := make([]*bootstrap.App, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			var cleanup func()
			apps[i], cleanup, errs[i] = bootstrap.InitializeSQL(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if errs[i] == nil {
				t.Cleanup(cleanup)
			}
		})
	}
	wg.Wait()
	var first []string
	for i, app := range apps {
		if errs[i] != nil {
			t.Fatalf("replica %d did not start: %v", i, errs[i])
		}
		srv := httptest.NewServer(app.Handler)
		t.Cleanup(srv.Close)
		jwks := harness.MustOK(t, (&harness.App{Server: srv, App: app}).Do(t, http.MethodGet, "/api/auth/jwks", ""))
		var kids []string
		for _, k := range jwks["keys"].([]any) {
			kids = append(kids, k.(map[string]any)["kid"].(string))
		}
		slices.Sort(kids)
		if len(kids) != len(domain.SigningAlgorithms) {
			t.Fatalf("replica %d publishes %d keys %v, want one per algorithm (%d)", i, len(kids), kids, len(domain.SigningAlgorithms))
		}
		if i == 0 {
			first = kids
		} else if !slices.Equal(kids, first) {
			t.Fatalf("replica %d publishes %v, replica 0 %v", i, kids, first)
		}
	}
}
