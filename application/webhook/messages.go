package webhook

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// ListMessages filters and pages an endpoint's deliveries.
type ListMessages struct {
	Status domain.WebhookDeliveryStatus // "" for every status
	Limit  int                          // 1 to 100
	Cursor string                       // NextCursor of the previous page
}

// MessagePage is one page of an endpoint's deliveries, newest message
// first, and the cursor of the next page ("" on the last).
type MessagePage struct {
	Deliveries []domain.WebhookDelivery
	NextCursor string
}

var errBadStatus = domain.Invalid("request.invalid_status", "Invalid status",
	domain.FieldViolation{Field: "status", Message: "must be pending, succeeded or failed"})

// Messages returns a page of endpoint id's deliveries, each with its
// latest attempt; an unknown endpoint is webhook.not_found.
func (w *Webhooks) Messages(ctx context.Context, req usecase.Caller, id domain.WebhookEndpointID, q ListMessages) (MessagePage, error) {
	if err := w.authorize(ctx, req, domain.ScopeWebhooksRead, false); err != nil {
		return MessagePage{}, err
	}
	after, err := usecase.PageRequest(q.Limit, q.Cursor)
	if err != nil {
		return MessagePage{}, err
	}
	switch q.Status {
	case "", domain.WebhookPending, domain.WebhookSucceeded, domain.WebhookFailed:
	default:
		return MessagePage{}, errBadStatus
	}
	if _, err := w.endpoints.Get(ctx, id); err != nil {
		return MessagePage{}, err
	}
	list, next, err := w.log.ListDeliveries(ctx, ports.WebhookDeliveryQuery{Endpoint: id, Status: q.Status, After: after, Limit: q.Limit})
	if err != nil {
		return MessagePage{}, err
	}
	return MessagePage{Deliveries: list, NextCursor: usecase.NextCursor(next)}, nil
}

// Attempts returns the attempts of message to endpoint id, oldest first.
func (w *Webhooks) Attempts(ctx context.Context, req usecase.Caller, id domain.WebhookEndpointID, message string) ([]domain.WebhookAttempt, error) {
	if err := w.authorize(ctx, req, domain.ScopeWebhooksRead, false); err != nil {
		return nil, err
	}
	if _, err := w.endpoints.Get(ctx, id); err != nil {
		return nil, err
	}
	return w.log.ListAttempts(ctx, id, message)
}

// Replay sends message to endpoint id again, now, whatever became of it,
// with the same webhook-id; its attempts are counted afresh. Audited as
// webhooks.replay.
func (w *Webhooks) Replay(ctx context.Context, req usecase.Caller, id domain.WebhookEndpointID, message string) error {
	err := w.change(ctx, req, "replay", id, func(ctx context.Context) error {
		if err := w.authorize(ctx, req, domain.ScopeWebhooksWrite, false); err != nil {
			return err
		}
		if _, err := w.endpoints.Get(ctx, id); err != nil {
			return err
		}
		return w.queue.Replay(ctx, id, message, w.clock.Now())
	})
	if err == nil {
		w.wakeSender()
	}
	return err
}

var errFutureSince = domain.Invalid("webhook.invalid_since", "Invalid time",
	domain.FieldViolation{Field: "since", Message: "must not be in the future"})

// ReplaySince sends endpoint id every message kept since since that its
// filter wants, now, whatever became of each: those it had are made
// pending again, those it never had (it was disabled, or created later)
// are added. It returns how many are pending. Audited as
// webhooks.replay-since.
func (w *Webhooks) ReplaySince(ctx context.Context, req usecase.Caller, id domain.WebhookEndpointID, since time.Time) (int, error) {
	var n int
	err := w.change(ctx, req, "replay-since", id, func(ctx context.Context) error {
		if err := w.authorize(ctx, req, domain.ScopeWebhooksWrite, false); err != nil {
			return err
		}
		now := w.clock.Now()
		if since.After(now) {
			return errFutureSince
		}
		e, err := w.endpoints.Get(ctx, id)
		if err != nil {
			return err
		}
		n, err = w.queue.ReplaySince(ctx, id, since, e.EventTypes, now)
		return err
	})
	if err == nil && n > 0 {
		w.wakeSender()
	}
	return n, err
}
