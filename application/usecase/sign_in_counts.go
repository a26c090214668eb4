package usecase

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

// SignInCounter records how each sign-in ended in the durable counts that
// every replica shares (ports.SignInStats), beside the process's metrics.
// A nil *SignInCounter records nothing.
//
// A sign-in is counted once, when it ends: a session was started (success),
// or it was refused (every other outcome, counted as a failure: wrong or
// unknown credentials, a locked, banned or unverified account, an address
// sent to its identity provider, a wrong code, the service's own failure).
// A right password that asks for the second factor is not counted: the
// sign-in goes on, and the code's answer counts it.
//
// Counting costs a sign-in no write: the counts gather in memory by hour
// and outcome, and Flush (a job every few seconds, and at stop) adds them
// to the store with one upsert per hour and outcome. A write per sign-in
// would put every sign-in of an hour in line for the same row's lock: under
// a credential-stuffing run, each failure would wait for all the others. A
// process killed outright loses the counts of its last seconds; the
// overview flushes this process's counts before reading them.
type SignInCounter struct {
	stats  ports.SignInStats
	clock  ports.Clock
	logger *slog.Logger

	mu      sync.Mutex
	pending map[signInBucket]int
}

// signInBucket is an hour (UTC) and an outcome.
type signInBucket struct {
	hour    time.Time
	outcome ports.SignInOutcome
}

// NewSignInCounter returns a SignInCounter writing to stats. logger
// (slog.Default() when nil) receives the counts that could not be written.
func NewSignInCounter(stats ports.SignInStats, clock ports.Clock, logger *slog.Logger) *SignInCounter {
	MustHave(stats, clock)
	if logger == nil {
		logger = slog.Default()
	}
	return &SignInCounter{stats: stats, clock: clock, logger: logger, pending: map[signInBucket]int{}}
}

// Count records one sign-in that ended with outcome, in memory until the
// next Flush. It costs the same whatever the outcome and whether or not
// the account exists, and never fails the sign-in.
func (c *SignInCounter) Count(_ context.Context, outcome ports.SignInOutcome) {
	if c == nil || outcome == ports.SignInSecondFactorRequired || outcome == "" {
		return
	}
	b := signInBucket{hour: c.clock.Now().UTC().Truncate(time.Hour), outcome: outcome}
	c.mu.Lock()
	c.pending[b]++
	c.mu.Unlock()
}

// Flush adds the counts gathered since the last Flush to the store, one
// write per hour and outcome. The counts of a write that fails are kept
// for the next Flush (and logged); the first error is returned. It is not
// cancelled with ctx's caller: a request that hangs up does not lose them
// (the store bounds each write).
func (c *SignInCounter) Flush(ctx context.Context) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	pending := c.pending
	if len(pending) == 0 {
		c.mu.Unlock()
		return nil
	}
	c.pending = make(map[signInBucket]int, len(pending))
	c.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	var first error
	for b, n := range pending {
		err := c.stats.Record(ctx, b.hour, b.outcome, n)
		if err == nil {
			continue
		}
		if first == nil {
			first = err
		}
		c.logger.LogAttrs(ctx, slog.LevelError, "sign-in counts: not written yet", slog.String("outcome", string(b.outcome)),
			slog.Int("count", n), slog.String("error", err.Error()))
		c.mu.Lock()
		c.pending[b] += n
		c.mu.Unlock()
	}
	return first
}
