package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Jobs = (*Queue)(nil)

// Defaults of NewQueue.
const (
	// DefaultCapacity is how many jobs may wait.
	DefaultCapacity = 1000
	// DefaultDelay is how long a job waits before it runs. A job that
	// started at once would run beside the end of the request that queued
	// it (writing the answer, logging) and slow that answer down, which is
	// just what the queue is there to prevent: a reset for a known address
	// would again take longer than one for an unknown address.
	DefaultDelay = 100 * time.Millisecond
)

// Queue runs jobs in the background, one at a time, in the order they were
// queued: a newer reset link must not be replaced by an older request that
// happened to run later. Jobs still waiting when the process is killed are
// lost, as are mails in the mail queue; they are requests a user can repeat.
type Queue struct {
	logger *slog.Logger
	jobs   chan job
	delay  time.Duration

	mu     sync.RWMutex // guards closed against Enqueue racing Close's close(jobs)
	closed bool

	done chan struct{} // closed when the worker has exited
	stop context.Context
	halt context.CancelFunc // cancels running and waiting jobs when Close gives up
}

type job struct {
	ctx       context.Context
	name      string
	fn        func(ctx context.Context) error
	notBefore time.Time
}

// NewQueue starts the worker of a queue with room for capacity waiting jobs
// (DefaultCapacity when not positive), each run delay after it was queued
// (see DefaultDelay). Failed jobs are logged to logger
// (slog.Default() when nil) by name; the error must not carry personal data.
// Call Close to stop it.
func NewQueue(capacity int, delay time.Duration, logger *slog.Logger) *Queue {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	if logger == nil {
		logger = slog.Default()
	}
	q := &Queue{logger: logger, jobs: make(chan job, capacity), delay: delay, done: make(chan struct{})}
	q.stop, q.halt = context.WithCancel(context.Background())
	go q.work()
	return q
}

// Enqueue implements ports.Jobs.
func (q *Queue) Enqueue(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return domain.NewError(domain.KindUnavailable, "jobs.unavailable", "the service is shutting down; try again later")
	}
	select {
	case q.jobs <- job{ctx: context.WithoutCancel(ctx), name: name, fn: fn, notBefore: time.Now().Add(q.delay)}:
		return nil
	default:
		q.logger.LogAttrs(ctx, slog.LevelError, "job queue full: job refused", slog.String("job", name), slog.Int("capacity", cap(q.jobs)))
		return domain.NewError(domain.KindUnavailable, "jobs.unavailable", "too many requests are waiting; try again later")
	}
}

// Close stops accepting jobs and waits until the queued ones have run or ctx
// ends. In the latter case it cancels the job under way, drops the rest and
// returns ctx's error without waiting further.
func (q *Queue) Close(ctx context.Context) error {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.jobs)
	}
	q.mu.Unlock()
	select {
	case <-q.done:
		q.halt()
		return nil
	case <-ctx.Done():
		left := len(q.jobs)
		q.halt()
		return fmt.Errorf("jobs: queue closed with %d jobs not run: %w", left, ctx.Err())
	}
}

func (q *Queue) work() {
	defer close(q.done)
	for j := range q.jobs {
		// Jobs wait in order, so waiting for this one delays no later one
		// beyond its own time.
		if wait := time.Until(j.notBefore); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-q.stop.Done():
				t.Stop()
			}
		}
		if q.stop.Err() != nil {
			continue // Close gave up: drain without running
		}
		q.run(j)
	}
}

// run runs one job. A panic is logged and the worker goes on, so that one
// bad job does not stop every later one.
func (q *Queue) run(j job) {
	ctx, cancel := context.WithCancel(j.ctx)
	defer cancel()
	stopCancel := context.AfterFunc(q.stop, cancel)
	defer stopCancel()
	defer func() {
		if r := recover(); r != nil {
			q.logger.LogAttrs(ctx, slog.LevelError, "job panicked", slog.String("job", j.name), slog.Any("panic", r))
		}
	}()
	if err := j.fn(ctx); err != nil {
		q.logger.LogAttrs(ctx, slog.LevelError, "job failed", slog.String("job", j.name), slog.String("error", err.Error()))
	}
}
