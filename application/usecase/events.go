package usecase

import (
	"context"
	"fmt"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Emit records that the change under way did something of the event
// catalogue, with data as ports.Event describes it. A *domain.User is
// completed into a ports.UserEventData and a *domain.Organization into a
// ports.OrganizationWithCount, read in the change's unit of work; emit the
// data of a deletion before deleting. The event is encoded at once, so
// later changes to data do not show in it.
type Emit func(t domain.EventType, data any)

// Events writes the events of changes to the transactional outbox, in the
// same unit of work as the change they report: the change and its events
// are kept together or not at all. Once the unit commits, the outbox
// signals the local event relay (ports.Outbox.Appended), so delivery does
// not wait for its next poll.
type Events struct {
	uow      ports.UnitOfWork
	outbox   ports.Outbox
	encoder  ports.EventEncoder
	ids      ports.IDGenerator
	clock    ports.Clock
	passkeys ports.PasskeyRepository
	linked   ports.LinkedAccountRepository
	orgs     ports.OrganizationRepository
}

// NewEvents writes events to outbox within uow, encoded by encoder, named
// by ids and dated by clock; passkeys, linked and orgs complete the data of
// user and organization events.
func NewEvents(uow ports.UnitOfWork, outbox ports.Outbox, encoder ports.EventEncoder, ids ports.IDGenerator, clock ports.Clock,
	passkeys ports.PasskeyRepository, linked ports.LinkedAccountRepository, orgs ports.OrganizationRepository) *Events {
	MustHave(uow, outbox, encoder, ids, clock, passkeys, linked, orgs)
	return &Events{uow: uow, outbox: outbox, encoder: encoder, ids: ids, clock: clock,
		passkeys: passkeys, linked: linked, orgs: orgs}
}

// Do runs change in a unit of work and appends the events it emitted to
// the outbox in the same unit. When change returns an error (or an event
// cannot be encoded or written) nothing of it is kept and the error is
// returned; the outbox's failure is domain.KindInternal. Every repository
// call of change must use the context it receives. A Do inside another
// joins it.
func (ev *Events) Do(ctx context.Context, change func(ctx context.Context, emit Emit) error) error {
	return ev.uow.Do(ctx, func(ctx context.Context) error {
		var msgs []ports.OutboxMessage
		var emitErr error
		emit := func(t domain.EventType, data any) {
			if emitErr != nil {
				return
			}
			m, err := ev.message(ctx, t, data)
			if err != nil {
				emitErr = err
				return
			}
			msgs = append(msgs, m)
		}
		if err := change(ctx, emit); err != nil {
			return err
		}
		if emitErr != nil {
			return emitErr
		}
		for _, m := range msgs {
			if err := ev.outbox.Append(ctx, m); err != nil {
				return domain.Internal("events: append", err)
			}
		}
		return nil
	})
}

// message builds, completes and encodes the event t with data.
func (ev *Events) message(ctx context.Context, t domain.EventType, data any) (ports.OutboxMessage, error) {
	if !domain.KnownEventType(t) {
		return ports.OutboxMessage{}, domain.Internal("events: emit", fmt.Errorf("unknown event type %q", t))
	}
	data, err := ev.complete(ctx, data)
	if err != nil {
		return ports.OutboxMessage{}, err
	}
	now := ev.clock.Now()
	e := ports.Event{ID: "msg_" + ev.ids.NewID(), Type: t, OccurredAt: now, Data: data}
	if imp, ok := ImpersonationFrom(ctx); ok {
		e.Actor = &ports.EventActor{UserID: imp.User, ImpersonatedBy: imp.Admin}
	}
	payload, err := ev.encoder.Encode(e)
	if err != nil {
		return ports.OutboxMessage{}, domain.Internal("events: encode "+string(t), err)
	}
	return ports.OutboxMessage{ID: e.ID, Topic: ports.OutboxEvents, Type: string(t), Payload: payload, CreatedAt: now, AvailableAt: now}, nil
}

// complete reads what the trusted API shows beside a user or an
// organization.
func (ev *Events) complete(ctx context.Context, data any) (any, error) {
	switch d := data.(type) {
	case *domain.User:
		n, err := ev.passkeys.CountByUser(ctx, d.ID())
		if err != nil {
			return nil, err
		}
		linked, err := ev.linked.ListByUser(ctx, d.ID())
		if err != nil {
			return nil, err
		}
		return ports.UserEventData{User: d, Passkeys: n, LinkedAccounts: linked}, nil
	case *domain.Organization:
		n, err := ev.orgs.CountMembers(ctx, d.ID())
		if err != nil {
			return nil, err
		}
		return ports.OrganizationWithCount{Organization: d, MemberCount: n}, nil
	}
	return data, nil
}
