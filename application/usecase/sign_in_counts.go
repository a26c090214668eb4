package usecase

import (
	"context"
	"log/slog"

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
type SignInCounter struct {
	stats  ports.SignInStats
	clock  ports.Clock
	logger *slog.Logger
}

// NewSignInCounter returns a SignInCounter writing to stats. logger
// (slog.Default() when nil) receives the counts that could not be written.
func NewSignInCounter(stats ports.SignInStats, clock ports.Clock, logger *slog.Logger) *SignInCounter {
	MustHave(stats, clock)
	if logger == nil {
		logger = slog.Default()
	}
	return &SignInCounter{stats: stats, clock: clock, logger: logger}
}

// Count records one sign-in that ended with outcome. It writes whatever the
// outcome and whether or not the account exists, so the write costs the
// same for every answer; a write that fails is logged and never fails the
// sign-in. It is not cancelled with the request: a client that hangs up
// does not take its failure out of the counts (the store bounds the write).
func (c *SignInCounter) Count(ctx context.Context, outcome ports.SignInOutcome) {
	if c == nil || outcome == ports.SignInSecondFactorRequired {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if err := c.stats.Record(ctx, c.clock.Now(), outcome); err != nil {
		c.logger.LogAttrs(ctx, slog.LevelError, "sign-in: not counted", slog.String("outcome", string(outcome)),
			slog.String("error", err.Error()))
	}
}
