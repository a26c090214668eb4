package bootstrap

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/application/outbox"
)

// job is a periodic task of the service: it runs every interval (and when
// woken) until its context ends.
type job struct {
	name    string                          // names the job in its warnings
	every   time.Duration                   // the interval between runs
	run     func(ctx context.Context) error // one run; an error is logged, and the job goes on
	atStart bool                            // run once at start, before the first interval
	// atStop runs once more after the context ends, with a context of its
	// own bounded by finalTimeout, for work that must not be lost.
	atStop bool
	wake   <-chan struct{} // also runs when this receives, if not nil
	// lease names the lease of a job one replica at a time runs
	// (App.singleton), given up at stop so that another takes over at once.
	lease string
}

// finalTimeout bounds a job's run at stop.
const finalTimeout = 5 * time.Second

// runJob runs j until ctx ends. Errors are logged at warn, except those of
// a run cut short by the end of ctx.
func runJob(ctx context.Context, j job, logger *slog.Logger) {
	once := func(ctx context.Context, stopping bool) {
		if err := j.run(ctx); err != nil && (stopping || ctx.Err() == nil) {
			logger.Warn(j.name, slog.String("error", err.Error()))
		}
	}
	t := time.NewTicker(j.every)
	defer t.Stop()
	if j.atStart {
		once(ctx, false)
	}
	for {
		select {
		case <-ctx.Done():
			if j.atStop {
				final, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalTimeout)
				defer cancel()
				once(final, true)
			}
			return
		case <-t.C:
		case <-j.wake:
		}
		if ctx.Err() != nil {
			continue // stop rather than run once more
		}
		once(ctx, false)
	}
}

// startJobs runs each job in its own goroutine until the returned stop is
// called; stop ends them and waits for them, final runs included.
func startJobs(ctx context.Context, logger *slog.Logger, jobs ...job) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() { runJob(ctx, j, logger) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// relay is a job that delivers one topic of the outbox: its relay (built
// here, from the topic's handler: the webhook fan-out, the mailer), run at
// start (what an earlier run left), when this process appends to the topic
// (wake) and every interval (other replicas' messages, retries come due),
// pass after pass while full batches wait.
type relay struct {
	name    string
	relay   outbox.Relay
	every   time.Duration
	wake    <-chan struct{}
	passes  int                             // the most passes one run makes; 0: until none is full
	prepare func(ctx context.Context) error // runs before the passes, if not nil; its error is reported with theirs
	dropped func(d outbox.Dropped)          // told of each message given up on, if not nil
}

// job returns r as a job of the list.
func (r relay) job() job {
	return job{name: r.name, every: r.every, atStart: true, wake: r.wake, run: func(ctx context.Context) error {
		var prepErr error
		if r.prepare != nil {
			prepErr = r.prepare(ctx)
		}
		for n := 1; ; n++ {
			rep, err := r.relay.Pass(ctx)
			if r.dropped != nil {
				for _, d := range rep.Dropped {
					r.dropped(d)
				}
			}
			if err != nil || !rep.Full || ctx.Err() != nil || n == r.passes {
				return errors.Join(prepErr, err)
			}
		}
	}}
}
