package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// UnitOfWork runs several repository calls as one transaction, so that a
// change, its audit entry and its events are kept together or not at all.
type UnitOfWork interface {
	// Do runs fn once in a transaction. Every repository call made with the
	// context fn receives takes part in it; when fn returns an error (or
	// panics) nothing written through that context is kept, and the error
	// is returned. A Do inside another joins the outer transaction. Calls
	// made with a context that carries no unit of work behave as before,
	// each on its own.
	Do(ctx context.Context, fn func(ctx context.Context) error) error
}

// OutboxTopic says what a message in the outbox is for, and so which relay
// delivers it.
type OutboxTopic string

// The outbox topics.
const (
	OutboxEvents OutboxTopic = "event" // a domain event, fanned out to webhook endpoints
	OutboxMail   OutboxTopic = "mail"  // a mail to send, sealed
)

// OutboxMessage is one message waiting in the outbox.
type OutboxMessage struct {
	ID    string
	Topic OutboxTopic
	// Type is the event type, or the mail kind.
	Type string
	// Payload is the event's webhook payload, or the sealed mail.
	Payload   []byte
	CreatedAt time.Time
	// AvailableAt is when it may next be claimed: its creation (Append
	// takes a zero AvailableAt to mean CreatedAt), the end of its current
	// claim, or its next retry.
	AvailableAt time.Time
	// Attempts counts the claims so far.
	Attempts  int
	LastError string
}

// OutboxStats describes one topic's waiting messages.
type OutboxStats struct {
	Depth  int       // messages not yet delivered
	Oldest time.Time // the creation of the oldest, zero when Depth is 0
}

// Outbox stores messages written in the same transaction as the change they
// report, and hands them to the relays that deliver them. Delivery is at
// least once: a message is removed only once delivered.
type Outbox interface {
	// Append stores m, inside the unit of work of ctx when there is one. A
	// taken id is domain.KindConflict.
	Append(ctx context.Context, m OutboxMessage) error
	// Claim takes up to limit messages of topic available at now, oldest
	// first, counts an attempt on each and hides them from other claimers
	// until now+lease. Concurrent claimers, in this process or another,
	// never take the same message (FOR UPDATE SKIP LOCKED on PostgreSQL);
	// a message whose claimer died is claimed again once its lease ends.
	Claim(ctx context.Context, topic OutboxTopic, now time.Time, lease time.Duration, limit int) ([]OutboxMessage, error)
	// Done removes a delivered message. A missing one is not an error.
	Done(ctx context.Context, id string) error
	// Retry makes a claimed message available again at at, recording why
	// this attempt failed. A missing one is not an error.
	Retry(ctx context.Context, id string, at time.Time, lastError string) error
	// Stats describes the waiting messages of each topic that has any.
	Stats(ctx context.Context) (map[OutboxTopic]OutboxStats, error)
	// Appended returns the channel that receives when messages of topic
	// have been appended in this process and committed (after the unit of
	// work, for an Append inside one), so that the topic's relay claims
	// them at once rather than at its next poll. One signal at most waits,
	// and nothing blocks the writer. Messages that other processes append
	// are found by polling.
	Appended(topic OutboxTopic) <-chan struct{}
}

// Event is a domain event on its way to the outbox.
type Event struct {
	// ID is unique per event, and is the webhook-id every delivery of it
	// carries ("msg_…").
	ID         string
	Type       domain.EventType
	OccurredAt time.Time
	// Data is what changed, as the application holds it: UserEventData,
	// *domain.Session, OrganizationWithCount, MemberWithUser,
	// *domain.Invitation, *domain.Domain, *domain.ServiceKey,
	// domain.FactorChange or domain.LinkedAccount. The encoder presents it
	// as the trusted API does.
	Data any
	// Actor is set when the change came through an impersonation session:
	// the user whose session it was and the administrator impersonating
	// them. Nil otherwise.
	Actor *EventActor
}

// EventActor is who made a change through an impersonation session.
type EventActor struct {
	// UserID is the impersonated user.
	UserID domain.UserID
	// ImpersonatedBy is the administrator impersonating them.
	ImpersonatedBy domain.UserID
}

// EventEncoder turns an event into its webhook payload, {"type",
// "timestamp", "data"}, where data is the same object the trusted API
// returns for that thing. An unknown data type is domain.KindInternal.
type EventEncoder interface {
	Encode(e Event) ([]byte, error)
}
