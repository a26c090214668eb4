package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/application/usecase"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// waitRuns waits until runs receives n times, failing after a while.
func waitRuns(t *testing.T, runs <-chan struct{}, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-runs:
		case <-time.After(5 * time.Second):
			t.Fatalf("run %d of %d did not happen", i+1, n)
		}
	}
}

// Ensure a job that runs at start runs before its first interval, and one
// that does not waits for it.
func TestJobs_run_at_start_only_when_asked(t *testing.T) {
	runs := make(chan struct{}, 10)
	var later atomic.Int32
	stop := startJobs(t.Context(), discard(),
		job{name: "now", every: time.Hour, atStart: true, run: func(context.Context) error { runs <- struct{}{}; return nil }},
		job{name: "later", every: time.Hour, run: func(context.Context) error { later.Add(1); return nil }},
	)
	waitRuns(t, runs, 1)
	stop()
	if n := later.Load(); n != 0 {
		t.Fatalf("a job not asked to run at start ran %d times within its first hour", n)
	}
}

// Ensure a job runs every interval and when woken.
func TestJobs_run_every_interval_and_when_woken(t *testing.T) {
	runs := make(chan struct{}, 10)
	stop := startJobs(t.Context(), discard(), job{name: "tick", every: time.Millisecond, run: func(context.Context) error { runs <- struct{}{}; return nil }})
	waitRuns(t, runs, 3)
	stop()

	woken := make(chan struct{})
	stop = startJobs(t.Context(), discard(), job{name: "woken", every: time.Hour, wake: woken, run: func(context.Context) error { runs <- struct{}{}; return nil }})
	defer stop()
	for range 2 {
		woken <- struct{}{}
		waitRuns(t, runs, 1)
	}
}

// Ensure stop ends every job and waits for it: no run starts after stop
// returns, whether stop or the parent context ended it.
func TestJobs_stop_on_context(t *testing.T) {
	var runs atomic.Int32
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan struct{}, 100)
	stop := startJobs(ctx, discard(), job{name: "tick", every: time.Millisecond, run: func(context.Context) error {
		runs.Add(1)
		started <- struct{}{}
		return nil
	}})
	waitRuns(t, started, 2)
	cancel()
	stop() // returns once the job has returned
	after := runs.Load()
	time.Sleep(20 * time.Millisecond)
	if n := runs.Load(); n != after {
		t.Fatalf("the job ran %d more times after it stopped", n-after)
	}
}

// Ensure a job asked to run at stop runs once more after the context ends,
// with a live context of its own, and stop waits for that run.
func TestJobs_final_run_at_stop(t *testing.T) {
	var mu sync.Mutex
	var ctxErrs []error
	stop := startJobs(t.Context(), discard(), job{name: "flush", every: time.Hour, atStop: true, run: func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		ctxErrs = append(ctxErrs, ctx.Err())
		return nil
	}})
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(ctxErrs) != 1 || ctxErrs[0] != nil {
		t.Fatalf("runs at stop = %v, want one with a live context", ctxErrs)
	}
}

// Ensure a failed run is logged under the job's name and the job goes on,
// and a run cut short by the stop is not logged.
func TestJobs_log_failures_and_go_on(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&syncWriter{w: &buf, mu: &mu}, nil))
	runs := make(chan struct{}, 10)
	stop := startJobs(t.Context(), logger, job{name: "purge expired", every: time.Millisecond, atStart: true, run: func(context.Context) error {
		runs <- struct{}{}
		return errors.New("database away")
	}})
	waitRuns(t, runs, 2)
	stop()
	mu.Lock()
	logs := buf.String()
	mu.Unlock()
	if !strings.Contains(logs, `msg="purge expired" error="database away"`) {
		t.Fatalf("logs = %q, want the failure under the job's name", logs)
	}

	buf.Reset()
	stop = startJobs(t.Context(), logger, job{name: "cut short", every: time.Hour, atStart: true, run: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}})
	stop()
	mu.Lock()
	defer mu.Unlock()
	if buf.Len() != 0 {
		t.Fatalf("a run ended by the stop was logged: %q", buf.String())
	}
}

type syncWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Ensure StartJobs starts the service's jobs and its stop waits for them,
// the service-key use being written once more as they stop.
func TestApp_StartJobs_writes_key_use_at_stop(t *testing.T) {
	cfg, err := LoadConfig("test", nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Secrets = []string{"0123456789abcdef0123456789abcdef-jobs"}
	app, cleanup, err := InitializeMemory(cfg, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	ctx := t.Context()
	issued, err := app.CreateServiceKey(ctx, servicekey.CreateServiceKey{Name: "backend", Scopes: []string{"users:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.app.ServiceKeys.Authenticate(ctx, issued.Secret); err != nil {
		t.Fatal(err)
	}
	stop := app.StartJobs(ctx, discard())
	stop()
	keys, err := app.app.ServiceKeys.List(ctx, usecase.KeyRequest{Actor: usecase.CLIActor})
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys = %v, %v", keys, err)
	}
	if keys[0].LastUsedAt().IsZero() {
		t.Fatal("the key's use was not written when the jobs stopped")
	}
}
