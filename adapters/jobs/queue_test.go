package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/jobs"
	"github.com/gatehouse/gatehouse/domain"
)

// Ensure jobs run after Enqueue returns, one at a time in order, without
// the request's cancellation; a full queue refuses with Unavailable; Close
// runs what is queued and then refuses more.
func TestQueue_runs_in_order_and_refuses_when_full(t *testing.T) {
	t.Parallel()
	q := jobs.NewQueue(2, 0, slog.New(slog.DiscardHandler))
	gate, started := make(chan struct{}), make(chan struct{})
	var (
		mu  sync.Mutex
		ran []int
	)
	record := func(i int) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			if i == 0 {
				close(started)
				<-gate
			}
			mu.Lock()
			defer mu.Unlock()
			ran = append(ran, i)
			return ctx.Err()
		}
	}
	reqCtx, endRequest := context.WithCancel(context.Background())
	if err := q.Enqueue(reqCtx, "first", record(0)); err != nil {
		t.Fatal(err)
	}
	<-started // the worker holds job 0; two places are free
	for i := 1; i <= 2; i++ {
		if err := q.Enqueue(reqCtx, "next", record(i)); err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	if err := q.Enqueue(reqCtx, "over", record(3)); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("Enqueue on a full queue = %v, want unavailable", err)
	}
	endRequest()
	close(gate)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := ran, []int{0, 1, 2}; !slices.Equal(got, want) {
		t.Fatalf("ran %v, want %v", got, want)
	}
	if err := q.Enqueue(context.Background(), "late", record(4)); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("Enqueue after Close = %v, want unavailable", err)
	}
}
