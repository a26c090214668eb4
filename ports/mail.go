package ports

import (
	"context"

	"github.com/gatehouse/gatehouse/domain"
)

// Mailer delivers messages to users. Implementations render the message for
// its kind. Send may queue the message and return before it is delivered, so
// that how long a request takes never reveals whether a mail was sent; the
// production mailer keeps it in the outbox, inside the caller's unit of
// work when its context carries one.
type Mailer interface {
	// Send delivers or queues m. An error of kind domain.KindUnavailable means
	// it could not be accepted (too many mails wait, or the server refused it).
	Send(ctx context.Context, m domain.Mail) error
	// Reserve holds room for one mail, so that work which must end with a
	// mail can be refused before it changes anything. It gives an error of
	// kind domain.KindUnavailable when there is no room. The caller must
	// Release the slot when done with it.
	Reserve(ctx context.Context) (MailSlot, error)
}

// MailSlot is room held for one mail.
type MailSlot interface {
	// Send delivers or queues m in the held room; it never fails for lack of
	// room. A slot sends one mail; a second Send is refused.
	Send(ctx context.Context, m domain.Mail) error
	// Release gives the room back unless a mail took it. It may be called
	// more than once and after Send.
	Release()
}
