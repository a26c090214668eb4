package mailer

import (
	"context"
	"errors"
	"sync"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Sender sends one mail now: SMTP, or Log in development. The outbox
// delivers through one, and a slot without a queue sends through one.
type Sender interface {
	Send(ctx context.Context, m domain.Mail) error
}

// directSlot is the slot of a mailer without a queue: there is always room,
// and its one mail goes straight to the mailer.
type directSlot struct {
	to   Sender
	mu   sync.Mutex
	used bool
}

var _ ports.MailSlot = (*directSlot)(nil)

// Send implements ports.MailSlot.
func (s *directSlot) Send(ctx context.Context, m domain.Mail) error {
	s.mu.Lock()
	used := s.used
	s.used = true
	s.mu.Unlock()
	if used {
		return errSlotUsed
	}
	return s.to.Send(ctx, m)
}

// Release implements ports.MailSlot; a direct slot holds nothing.
func (s *directSlot) Release() {}

// errSlotUsed refuses a second mail through one slot: it would take room
// nobody reserved.
var errSlotUsed = domain.Internal("mailer: slot", errors.New("the slot has already sent its mail"))

// Reserve implements ports.Mailer: the development mailer always has room.
func (l *Log) Reserve(context.Context) (ports.MailSlot, error) { return &directSlot{to: l}, nil }

// Reserve implements ports.Mailer: SMTP without a queue always has room;
// the server may still refuse the mail.
func (s *SMTP) Reserve(context.Context) (ports.MailSlot, error) { return &directSlot{to: s}, nil }
