package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// WebhookEndpointRepository stores webhook endpoints. Implementations are
// safe for concurrent use and return copies.
type WebhookEndpointRepository interface {
	// Create stores e. A taken id is domain.KindConflict.
	Create(ctx context.Context, e domain.WebhookEndpoint) error
	// Get returns endpoint id, or domain.ErrWebhookNotFound.
	Get(ctx context.Context, id domain.WebhookEndpointID) (domain.WebhookEndpoint, error)
	// List returns every endpoint, oldest first.
	List(ctx context.Context) ([]domain.WebhookEndpoint, error)
	// Update loads endpoint id, applies fn and saves the result atomically
	// (the row is locked on PostgreSQL); when fn fails nothing is saved. A
	// missing endpoint is domain.ErrWebhookNotFound.
	Update(ctx context.Context, id domain.WebhookEndpointID, fn func(e *domain.WebhookEndpoint) error) error
	// Delete removes endpoint id with its deliveries and their attempts; a
	// missing one is domain.ErrWebhookNotFound.
	Delete(ctx context.Context, id domain.WebhookEndpointID) error
}

// WebhookQueue holds the webhook messages and their deliveries to each
// endpoint, and hands the due deliveries to the senders. Every method joins
// the unit of work of ctx when there is one.
type WebhookQueue interface {
	// Enqueue stores m (once: a message already stored is kept as it is)
	// and a pending delivery of it to each of endpoints, due at now. A
	// delivery that exists already is left alone, so enqueueing again is
	// harmless.
	Enqueue(ctx context.Context, m domain.WebhookMessage, endpoints []domain.WebhookEndpointID, now time.Time) error
	// Claim takes up to limit pending deliveries due at now, the longest
	// due first, with their messages, and hides them from other claimers
	// until now+lease (their NextAttemptAt). Concurrent claimers, in this
	// process or another, never take the same delivery (FOR UPDATE SKIP
	// LOCKED on PostgreSQL); the deliveries of a claimer that died are
	// claimed again once the lease ends.
	Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]ClaimedDelivery, error)
	// Record stores attempt a and moves its delivery to status, counting
	// the attempt: due again at next while pending, finished otherwise.
	// claimed is the delivery's NextAttemptAt as Claim returned it: a
	// delivery that changed since (replayed while the attempt ran, or
	// claimed again after the lease ended) belongs to that change, so the
	// attempt is stored, as the delivery's last, but the delivery keeps its
	// status, count and due time. A delivery that no longer exists (its
	// endpoint was deleted) is domain.ErrWebhookMessageNotFound.
	Record(ctx context.Context, a domain.WebhookAttempt, claimed time.Time, status domain.WebhookDeliveryStatus, next time.Time) error
	// Replay makes the delivery of message to endpoint pending again, due
	// at now, with its attempts counted afresh (earlier attempts are
	// kept). A message the endpoint never had is
	// domain.ErrWebhookMessageNotFound.
	Replay(ctx context.Context, endpoint domain.WebhookEndpointID, message string, now time.Time) error
	// ReplaySince does so for every message created at or after since whose
	// type is in types (every type when types is empty), creating the
	// deliveries the endpoint never had, and returns how many are pending.
	ReplaySince(ctx context.Context, endpoint domain.WebhookEndpointID, since time.Time, types []domain.EventType, now time.Time) (int, error)
	// Purge removes the messages created before before, with their
	// deliveries and attempts, and returns how many messages.
	Purge(ctx context.Context, before time.Time) (int, error)
}

// ClaimedDelivery is a delivery a sender claimed, with its message.
type ClaimedDelivery struct {
	Delivery domain.WebhookDelivery
	Message  domain.WebhookMessage
}

// WebhookLog reads the deliveries of an endpoint and their attempts.
type WebhookLog interface {
	// ListDeliveries returns up to q.Limit deliveries of q.Endpoint, newest
	// message first (creation time, then id, both descending), each with
	// its latest attempt, and the position of the next page (nil on the
	// last), read through an index.
	ListDeliveries(ctx context.Context, q WebhookDeliveryQuery) ([]domain.WebhookDelivery, *domain.Position, error)
	// ListAttempts returns the attempts of message to endpoint, oldest
	// first; a message the endpoint never had is
	// domain.ErrWebhookMessageNotFound.
	ListAttempts(ctx context.Context, endpoint domain.WebhookEndpointID, message string) ([]domain.WebhookAttempt, error)
}

// WebhookDeliveryQuery filters and pages an endpoint's deliveries.
type WebhookDeliveryQuery struct {
	Endpoint domain.WebhookEndpointID
	// Status, when set, keeps only deliveries in that status.
	Status domain.WebhookDeliveryStatus
	// After continues a listing from the last delivery of the previous page.
	After *domain.Position
	Limit int
}

// WebhookPoster sends one webhook request and reports what came back. It
// refuses to connect to an address that is not public (domain.
// IsPublicAddress) unless private targets are allowed, checking every
// address a host name resolves to at connection time; it follows no
// redirect and gives up after its timeout.
type WebhookPoster interface {
	// Post sends body to url with the headers (name, value pairs) and
	// returns the response's status and the start of its body. A request
	// that got no response is an error whose message is safe to keep and
	// show (it never carries the body or the headers); latency is measured
	// either way.
	Post(ctx context.Context, url string, headers [][2]string, body []byte) (WebhookResponse, error)
}

// WebhookResponse is what an endpoint answered.
type WebhookResponse struct {
	StatusCode int
	// Body is the start of the response body, at most
	// domain.MaxWebhookResponseSnippet bytes.
	Body    []byte
	Latency time.Duration
}

// WebhookObserver is told the outcome of every delivery attempt, for
// metrics. Implementations are safe for concurrent use and never block.
type WebhookObserver interface {
	// WebhookDelivery counts one outcome: "succeeded" (a 2xx), "retrying"
	// (a failed attempt, another is scheduled), "failed" (the last attempt
	// of the schedule failed) or "skipped" (the endpoint was disabled
	// meanwhile, so the delivery failed without an attempt).
	WebhookDelivery(outcome string)
}
