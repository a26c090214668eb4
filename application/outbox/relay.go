package outbox

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

// Handler delivers one message. An error schedules another attempt; an
// error wrapping ErrGiveUp drops the message instead.
type Handler func(ctx context.Context, m ports.OutboxMessage) error

// ErrGiveUp marks a failure no retry can fix (a payload that no longer
// opens, say): the relay removes the message and reports it.
var ErrGiveUp = errors.New("outbox: giving up on message")

// Relay claims and delivers the messages of one topic.
type Relay struct {
	Outbox ports.Outbox
	Clock  ports.Clock
	Topic  ports.OutboxTopic
	Handle Handler
	// Lease hides a claimed message from other claimers; it must be longer
	// than Handle takes with one batch, or a slow delivery is repeated.
	Lease time.Duration
	// Batch is how many messages one pass claims.
	Batch int
	// Retry gives the wait before the next attempt after attempts failed
	// ones; nil uses DefaultRetry.
	Retry func(attempts int) time.Duration
}

// DefaultRetry waits 1 s after the first failure, doubling up to 10 min,
// with ±20 % jitter so that retries from many messages spread out.
func DefaultRetry(attempts int) time.Duration {
	d := time.Second
	for i := 1; i < attempts && d < 10*time.Minute; i++ {
		d *= 2
	}
	d = min(d, 10*time.Minute)
	return jitter(d)
}

// jitter returns d ± 20 %.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	span := int64(d) * 2 / 5
	return d - time.Duration(span/2) + time.Duration(rand.Int64N(span+1)) // #nosec G404 -- jitter, not a secret
}

// Report says what one pass did.
type Report struct {
	Claimed   int
	Delivered int
	Retried   int
	// Dropped are the messages given up on, with why.
	Dropped []Dropped
	// Full is true when the pass claimed a whole batch: more may wait.
	Full bool
}

// Dropped is a message the relay gave up on.
type Dropped struct {
	ID, Type string
	Err      error
}

// Pass claims one batch and delivers it. The error is the store's; a
// handler's failures are in the report and scheduled again.
func (r Relay) Pass(ctx context.Context) (Report, error) {
	var rep Report
	msgs, err := r.Outbox.Claim(ctx, r.Topic, r.Clock.Now(), r.Lease, r.Batch)
	if err != nil {
		return rep, err
	}
	rep.Claimed, rep.Full = len(msgs), len(msgs) == r.Batch
	retry := r.Retry
	if retry == nil {
		retry = DefaultRetry
	}
	for _, m := range msgs {
		if ctx.Err() != nil {
			break // the lease brings the rest back
		}
		herr := r.Handle(ctx, m)
		// The outcome is written even when ctx ended while delivering: a
		// delivered message must not be delivered again.
		wctx := context.WithoutCancel(ctx)
		switch {
		case herr == nil:
			if err := r.Outbox.Done(wctx, m.ID); err != nil {
				return rep, err
			}
			rep.Delivered++
		case errors.Is(herr, ErrGiveUp):
			if err := r.Outbox.Done(wctx, m.ID); err != nil {
				return rep, err
			}
			rep.Dropped = append(rep.Dropped, Dropped{ID: m.ID, Type: m.Type, Err: herr})
		default:
			if err := r.Outbox.Retry(wctx, m.ID, r.Clock.Now().Add(retry(m.Attempts)), herr.Error()); err != nil {
				return rep, err
			}
			rep.Retried++
		}
	}
	return rep, nil
}
