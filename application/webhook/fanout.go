package webhook

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Fanout hands each event of the outbox to the webhook endpoints: it keeps
// the event once as a webhook message and adds a pending delivery for every
// enabled endpoint whose filter wants its type, and removes it from the
// outbox, all in one unit of work. An event is so never lost (the outbox
// keeps it until that transaction commits) nor doubled (enqueueing again
// after a crash adds nothing).
type Fanout struct {
	uow       ports.UnitOfWork
	outbox    ports.Outbox
	endpoints ports.WebhookEndpointRepository
	queue     ports.WebhookQueue
	clock     ports.Clock
	wake      *Wake
}

// NewFanout returns the fan-out of events to webhook endpoints.
func NewFanout(uow ports.UnitOfWork, ob ports.Outbox, endpoints ports.WebhookEndpointRepository, queue ports.WebhookQueue, clock ports.Clock,
	wake *Wake) *Fanout {
	usecase.MustHave(uow, ob, endpoints, queue, clock, wake)
	return &Fanout{uow: uow, outbox: ob, endpoints: endpoints, queue: queue, clock: clock, wake: wake}
}

// FanoutLease hides the events a pass claimed from other processes' relays;
// one pass writes a batch in well under it. A replica that dies holding a
// claim delays those events by at most this much. Should a slow pass outlive
// it, the second fan-out of an event fails on the message it finds already
// queued and changes nothing, so a lease that runs out early costs no
// duplicate.
const FanoutLease = 15 * time.Second

// FanoutBatch is how many events one fan-out pass claims.
const FanoutBatch = 100

// Handle fans event m out, as Fanout describes: it is the handler of the
// outbox's events topic (ports.OutboxEvents), whose relay bootstrap's job
// list runs, claiming FanoutBatch events for FanoutLease at a time. The
// relay's own removal of m afterwards finds nothing left to remove.
func (f *Fanout) Handle(ctx context.Context, m ports.OutboxMessage) error {
	var wanted int
	err := f.uow.Do(ctx, func(ctx context.Context) error {
		all, err := f.endpoints.List(ctx)
		if err != nil {
			return err
		}
		t := domain.EventType(m.Type)
		ids := make([]domain.WebhookEndpointID, 0, len(all))
		for _, e := range all {
			if e.Enabled && e.Wants(t) {
				ids = append(ids, e.ID)
			}
		}
		msg := domain.WebhookMessage{ID: m.ID, Type: t, Payload: m.Payload, CreatedAt: m.CreatedAt}
		if err := f.queue.Enqueue(ctx, msg, ids, f.clock.Now()); err != nil {
			return err
		}
		wanted = len(ids)
		return f.outbox.Done(ctx, m.ID)
	})
	if err == nil && wanted > 0 {
		f.wake.Signal() // the sender of this process sends them at once
	}
	return err
}
