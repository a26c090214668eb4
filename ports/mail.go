package ports

import (
	"context"

	"github.com/gatehouse/gatehouse/domain"
)

// Mailer delivers messages to users. Implementations render the message for
// its kind. Send may queue the message and return before it is delivered, so
// that how long a request takes never reveals whether a mail was sent.
type Mailer interface {
	// Send delivers or queues m. An error of kind domain.KindUnavailable means
	// it could not be accepted (the queue is full or the server refused it).
	Send(ctx context.Context, m domain.Mail) error
}
