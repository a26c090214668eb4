package mailer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Mailer = (*Queue)(nil)

// Queue defaults; see the QueueOption functions.
const (
	DefaultQueueCapacity = 1000
	DefaultQueueWorkers  = 2
	DefaultQueueTimeout  = 30 * time.Second
)

// defaultRetryDelays are the waits before the second and third attempt.
var defaultRetryDelays = []time.Duration{1 * time.Second, 4 * time.Second}

// Queue delivers mail in the background through another mailer. Send only
// enqueues, so a request takes as long whether or not a mail goes out, and a
// slow SMTP server never holds a request. Mail still queued when the process
// stops is lost; that is acceptable for links the user can ask for again.
type Queue struct {
	next    sender
	logger  *slog.Logger
	jobs    chan job
	workers int
	timeout time.Duration
	delays  []time.Duration

	// mu guards closed against Send racing Close's close(jobs), and used:
	// the mails waiting in jobs plus the slots reserved. used never exceeds
	// cap(jobs), so sending on jobs under mu never blocks.
	mu     sync.Mutex
	closed bool
	used   int

	wg     sync.WaitGroup
	stop   context.Context // cancelled when Close gives up waiting
	cancel context.CancelFunc
}

// job is one mail and the values (request ID, trace) of the request that
// asked for it, without its cancellation.
type job struct {
	ctx context.Context
	m   domain.Mail
}

// QueueOption changes a Queue default.
type QueueOption func(*Queue)

// WithCapacity sets how many mails may wait (DefaultQueueCapacity).
func WithCapacity(n int) QueueOption {
	return func(q *Queue) {
		if n > 0 {
			q.jobs = make(chan job, n)
		}
	}
}

// WithWorkers sets how many mails are delivered at once (DefaultQueueWorkers).
func WithWorkers(n int) QueueOption {
	return func(q *Queue) {
		if n > 0 {
			q.workers = n
		}
	}
}

// WithTimeout bounds each delivery attempt (DefaultQueueTimeout).
func WithTimeout(d time.Duration) QueueOption {
	return func(q *Queue) {
		if d > 0 {
			q.timeout = d
		}
	}
}

// WithRetryDelays sets the waits between attempts after a transient
// failure; a mail gets len(delays)+1 attempts. The default is 1s and 4s.
func WithRetryDelays(delays ...time.Duration) QueueOption {
	return func(q *Queue) { q.delays = append([]time.Duration(nil), delays...) }
}

// NewQueue starts the workers that deliver through next. Call Close to stop
// them. logger (slog.Default() when nil) receives delivery failures, which
// name the kind and a masked recipient but never the link.
func NewQueue(next sender, logger *slog.Logger, opts ...QueueOption) *Queue {
	if next == nil {
		panic("mailer: NewQueue needs a Mailer")
	}
	if logger == nil {
		logger = slog.Default()
	}
	q := &Queue{
		next:    next,
		logger:  logger,
		jobs:    make(chan job, DefaultQueueCapacity),
		workers: DefaultQueueWorkers,
		timeout: DefaultQueueTimeout,
		delays:  defaultRetryDelays,
	}
	for _, opt := range opts {
		opt(q)
	}
	q.stop, q.cancel = context.WithCancel(context.Background())
	q.wg.Add(q.workers)
	for range q.workers {
		go q.work()
	}
	return q
}

// Send enqueues m and returns at once. The request's ctx is not used for
// delivery, which happens after the request has ended; only its values (for
// log correlation) are kept. A full or closed queue gives an error of kind
// domain.KindUnavailable.
func (q *Queue) Send(ctx context.Context, m domain.Mail) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.take(ctx, m.Kind, m.To); err != nil {
		return err
	}
	return q.put(ctx, m)
}

// Reserve holds a place in the queue for one mail. Sign-up reserves before
// it creates the account, so that a full queue refuses the sign-up before
// anything changes rather than leaving an account whose mail was dropped.
// A full or closed queue gives an error of kind domain.KindUnavailable.
func (q *Queue) Reserve(ctx context.Context) (ports.MailSlot, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.take(ctx, "", ""); err != nil {
		return nil, err
	}
	return &queueSlot{q: q}, nil
}

// take counts one more place used, or says why there is none. kind and to
// (empty for a reservation) go into the log line of a full queue. q.mu is held.
func (q *Queue) take(ctx context.Context, kind domain.MailKind, to domain.Email) error {
	if q.closed {
		return domain.NewError(domain.KindUnavailable, "mail.unavailable", "the mailer is shutting down; try again later")
	}
	if q.used >= cap(q.jobs) {
		attrs := []slog.Attr{slog.Int("capacity", cap(q.jobs))}
		if kind != "" {
			attrs = append(attrs, slog.String("kind", string(kind)), slog.String("to", maskAddress(to)))
		}
		q.logger.LogAttrs(ctx, slog.LevelError, "mail queue full: mail refused", attrs...)
		return domain.NewError(domain.KindUnavailable, "mail.unavailable", "too many mails are waiting; try again later")
	}
	q.used++
	return nil
}

// put queues m in a place already taken. q.mu is held.
func (q *Queue) put(ctx context.Context, m domain.Mail) error {
	if q.closed {
		q.used--
		return domain.NewError(domain.KindUnavailable, "mail.unavailable", "the mailer is shutting down; try again later")
	}
	q.jobs <- job{ctx: context.WithoutCancel(ctx), m: m}
	return nil
}

// queueSlot is a place held in a Queue.
type queueSlot struct {
	q    *Queue
	done bool // sent or released; guarded by q.mu
}

// Send implements ports.MailSlot.
func (s *queueSlot) Send(ctx context.Context, m domain.Mail) error {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	if s.done {
		return errSlotUsed
	}
	s.done = true
	return s.q.put(ctx, m)
}

// Release implements ports.MailSlot.
func (s *queueSlot) Release() {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	if !s.done {
		s.done = true
		s.q.used--
	}
}

// Close stops accepting mail and waits until the queued and in-flight mails
// are delivered or ctx ends. In the latter case it cancels the attempts under
// way, drops the rest and returns ctx's error without waiting further.
func (q *Queue) Close(ctx context.Context) error {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.jobs)
	}
	q.mu.Unlock()

	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	select {
	case <-done:
		q.cancel()
		return nil
	case <-ctx.Done():
		left := len(q.jobs)
		// Abort in-flight attempts and retry waits; the workers drop what is
		// left and exit on their own.
		q.cancel()
		return fmt.Errorf("mailer: queue closed with %d mails undelivered: %w", left, ctx.Err())
	}
}

func (q *Queue) work() {
	defer q.wg.Done()
	for j := range q.jobs {
		q.mu.Lock()
		q.used--
		q.mu.Unlock()
		if q.stop.Err() != nil {
			continue // Close gave up: drain without sending
		}
		q.deliver(j)
	}
}

// deliver tries j until it is sent, fails permanently or runs out of
// attempts. Only transient failures (kind Unavailable, not a 5xx refusal)
// are retried.
func (q *Queue) deliver(j job) {
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(j.ctx, q.timeout)
		stopCancel := context.AfterFunc(q.stop, cancel)
		err := q.next.Send(ctx, j.m)
		stopCancel()
		cancel()
		if err == nil {
			return
		}
		attrs := []slog.Attr{
			slog.String("kind", string(j.m.Kind)),
			slog.String("to", maskAddress(j.m.To)),
			slog.Int("attempt", attempt),
			slog.String("error", err.Error()),
		}
		transient := domain.KindOf(err) == domain.KindUnavailable && !isPermanent(err)
		if !transient || attempt > len(q.delays) {
			q.logger.LogAttrs(j.ctx, slog.LevelError, "mail not delivered", attrs...)
			return
		}
		q.logger.LogAttrs(j.ctx, slog.LevelWarn, "mail delivery failed; retrying", attrs...)
		t := time.NewTimer(q.delays[attempt-1])
		select {
		case <-t.C:
		case <-q.stop.Done():
			t.Stop()
			q.logger.LogAttrs(j.ctx, slog.LevelError, "mail not delivered: mailer closed", attrs...)
			return
		}
	}
}
