package mailer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Mailer = (*Outbox)(nil)

// The outbox mailer's defaults; see OutboxConfig.
const (
	DefaultOutboxCapacity = 1000
	// DefaultSendTimeout bounds one delivery attempt.
	DefaultSendTimeout = 30 * time.Second
	// DefaultMaxAge is how long a mail is retried before it is given up on.
	DefaultMaxAge = 72 * time.Hour
	// refreshEvery is how often Refresh reads the number of waiting mails
	// from the outbox; in between, this process counts its own.
	refreshEvery = time.Minute
	// stopGrace is how long an attempt under way may still run once the
	// relay is stopping, before it is cut off.
	stopGrace = 5 * time.Second
)

// sealPurpose binds a sealed mail to the outbox's mail, and its id to the
// message's.
const sealPurpose = "mail"

// ErrUndeliverable marks what Deliver gives up on: a refusal no retry can
// change (a 5xx answer, a mail that does not render), a mail the service can
// no longer open, or one that has waited longer than its maximum age. The
// relay drops such a mail rather than trying again.
var ErrUndeliverable = errors.New("mailer: mail undeliverable")

// OutboxConfig sets up an Outbox.
type OutboxConfig struct {
	// Capacity is how many mails may wait at once before Send and Reserve
	// refuse (DefaultOutboxCapacity when not positive).
	Capacity int
	// SendTimeout bounds one delivery attempt (DefaultSendTimeout when not
	// positive). The relay's lease must be longer: see Lease.
	SendTimeout time.Duration
	// MaxAge is how long a mail is retried (DefaultMaxAge when not positive).
	MaxAge time.Duration
}

// Outbox is the durable mailer. Send seals the mail (ports.SecretSealer,
// purpose "mail", bound to the message id) and appends it to the outbox's
// mail topic, inside the caller's unit of work when its context carries
// one, so that a mail is kept with the change that asked for it and
// survives a restart; the mail relay hands each message to Deliver, which
// opens it and sends it through the SMTP (or development) mailer. Nothing
// readable is kept at rest: a link or a code is a credential.
//
// It also bounds how many mails may wait, as the memory queue it replaces
// did, so that a hanging SMTP server makes sign-up refuse (every address
// alike) rather than pile up mail. A mail being sent does not wait; one
// that failed and waits for its retry does. The count is this process's
// estimate: Refresh reads it from the outbox (all processes' mail, those
// being sent included), and this process's own sends and deliveries keep
// it up to date in between.
type Outbox struct {
	store  ports.Outbox
	sealer ports.SecretSealer
	clock  ports.Clock
	ids    ports.IDGenerator
	next   Sender
	logger *slog.Logger
	cfg    OutboxConfig

	mu          sync.Mutex
	waiting     int // mails in the outbox, as far as this process knows
	reserved    int // slots held
	refreshedAt time.Time
}

// NewOutbox returns the outbox mailer that appends to store and delivers
// through next. logger (slog.Default() when nil) receives delivery
// failures, which name the kind and a masked recipient but never the link.
func NewOutbox(store ports.Outbox, sealer ports.SecretSealer, clock ports.Clock, ids ports.IDGenerator, next Sender,
	logger *slog.Logger, cfg OutboxConfig) *Outbox {
	if store == nil || sealer == nil || clock == nil || ids == nil || next == nil {
		panic("mailer: NewOutbox needs a store, a sealer, a clock, ids and a mailer")
	}
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.Capacity <= 0 {
		cfg.Capacity = DefaultOutboxCapacity
	}
	if cfg.SendTimeout <= 0 {
		cfg.SendTimeout = DefaultSendTimeout
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	return &Outbox{store: store, sealer: sealer, clock: clock, ids: ids, next: next, logger: logger, cfg: cfg}
}

// Lease is how long the relay should hide a claimed mail from other
// claimers: longer than an attempt may take, so that a mail being sent is
// never sent again by another relay unless this one died.
func (o *Outbox) Lease() time.Duration { return o.cfg.SendTimeout + stopGrace + 30*time.Second }

// sealedMail is what a message's payload holds once opened.
type sealedMail struct {
	Kind         domain.MailKind `json:"kind"`
	To           domain.Email    `json:"to"`
	Name         string          `json:"name,omitempty"`
	Link         string          `json:"link,omitempty"`
	ExpiresIn    time.Duration   `json:"expiresIn,omitempty"`
	Organization string          `json:"organization,omitempty"`
	Inviter      string          `json:"inviter,omitempty"`
	Code         string          `json:"code,omitempty"`
	WebhookID    string          `json:"webhookId,omitempty"`
	WebhookURL   string          `json:"webhookUrl,omitempty"`
}

// Send implements ports.Mailer: it appends m to the outbox, or refuses with
// domain.KindUnavailable when as many mails as the capacity wait.
func (o *Outbox) Send(ctx context.Context, m domain.Mail) error {
	if err := o.take(ctx, m.Kind, m.To); err != nil {
		return err
	}
	return o.append(ctx, m)
}

// Reserve implements ports.Mailer: it holds room for one mail among those
// that may wait. Sign-up reserves before it creates the account, so that a
// full outbox refuses the sign-up before anything changes.
func (o *Outbox) Reserve(ctx context.Context) (ports.MailSlot, error) {
	if err := o.take(ctx, "", ""); err != nil {
		return nil, err
	}
	return &outboxSlot{o: o}, nil
}

// take counts one more mail waiting (kind and to set) or one more slot
// held, or says why there is no room; kind and to go into the log line of a
// full outbox. A mail is counted before it is appended, so that the relay,
// which may deliver it at once, never counts it gone first.
func (o *Outbox) take(ctx context.Context, kind domain.MailKind, to domain.Email) error {
	o.mu.Lock()
	full := o.waiting+o.reserved >= o.cfg.Capacity
	if !full && kind != "" {
		o.waiting++
	} else if !full {
		o.reserved++
	}
	o.mu.Unlock()
	if !full {
		return nil
	}
	attrs := []slog.Attr{slog.Int("capacity", o.cfg.Capacity)}
	if kind != "" {
		attrs = append(attrs, slog.String("kind", string(kind)), slog.String("to", maskAddress(to)))
	}
	o.logger.LogAttrs(ctx, slog.LevelError, "mail outbox full: mail refused", attrs...)
	return domain.NewError(domain.KindUnavailable, "mail.unavailable", "too many mails are waiting; try again later")
}

// append seals m and appends it to the outbox. m is already counted as
// waiting; a failure takes it off again.
func (o *Outbox) append(ctx context.Context, m domain.Mail) (err error) {
	defer func() {
		if err != nil {
			o.gone()
		}
	}()
	id := o.ids.NewID()
	plain, err := json.Marshal(sealedMail{Kind: m.Kind, To: m.To, Name: m.Name, Link: m.Link, ExpiresIn: m.ExpiresIn,
		Organization: m.Organization, Inviter: m.Inviter, Code: m.Code, WebhookID: m.WebhookID, WebhookURL: m.WebhookURL})
	if err != nil {
		return domain.Internal("mailer: encode mail", err)
	}
	sealed, err := o.sealer.Seal(sealPurpose, id, plain)
	if err != nil {
		return err
	}
	now := domain.Timestamp(o.clock.Now())
	return o.store.Append(ctx, ports.OutboxMessage{ID: id, Topic: ports.OutboxMail, Type: string(m.Kind), Payload: sealed,
		CreatedAt: now, AvailableAt: now})
}

// outboxSlot is room held in an Outbox.
type outboxSlot struct {
	o    *Outbox
	mu   sync.Mutex
	done bool // sent or released
}

// Send implements ports.MailSlot: the slot's room becomes the mail's.
func (s *outboxSlot) Send(ctx context.Context, m domain.Mail) error {
	if !s.finish(true) {
		return errSlotUsed
	}
	return s.o.append(ctx, m)
}

// Release implements ports.MailSlot.
func (s *outboxSlot) Release() { s.finish(false) }

// finish gives the slot's room back, or to a mail that waits, and reports
// whether the slot still held it.
func (s *outboxSlot) finish(send bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	s.done = true
	s.o.mu.Lock()
	s.o.reserved--
	if send {
		s.o.waiting++
	}
	s.o.mu.Unlock()
	return true
}

// Refresh reads how many mails wait in the outbox, all processes' alike,
// unless it did so less than a minute ago. The mail relay calls it on each
// pass.
func (o *Outbox) Refresh(ctx context.Context) error {
	now := o.clock.Now()
	o.mu.Lock()
	due := o.refreshedAt.IsZero() || now.Sub(o.refreshedAt) >= refreshEvery
	o.mu.Unlock()
	if !due {
		return nil
	}
	stats, err := o.store.Stats(ctx)
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.waiting, o.refreshedAt = stats[ports.OutboxMail].Depth, now
	o.mu.Unlock()
	return nil
}

// gone counts one mail fewer waiting: being sent, or never appended.
func (o *Outbox) gone() {
	o.mu.Lock()
	o.waiting = max(o.waiting-1, 0)
	o.mu.Unlock()
}

// Deliver opens one message of the mail topic and sends it, within the
// send timeout. Only transient failures (kind domain.KindUnavailable, not a
// 5xx refusal) return a plain error, to be retried; anything else, or a
// mail older than the maximum age, wraps ErrUndeliverable. Failures are
// logged with the kind and a masked recipient, never the link or code.
// When ctx ends during an attempt, the attempt gets a few more seconds
// before it is cut off, so that a stop rarely leaves a mail that was sent
// but not recorded as sent.
func (o *Outbox) Deliver(ctx context.Context, msg ports.OutboxMessage) error {
	// A mail being sent waits no more; a retry puts it back.
	o.gone()
	attrs := []slog.Attr{slog.String("id", msg.ID), slog.String("kind", msg.Type), slog.Int("attempt", msg.Attempts)}
	m, err := o.open(msg)
	if err != nil {
		o.logger.LogAttrs(ctx, slog.LevelError, "mail not delivered", append(attrs, slog.String("error", err.Error()))...)
		return fmt.Errorf("%w: %w", ErrUndeliverable, err)
	}
	attrs = append(attrs, slog.String("to", maskAddress(m.To)))
	if age := o.clock.Now().Sub(msg.CreatedAt); age > o.cfg.MaxAge {
		err := fmt.Errorf("%w: not delivered within %s", ErrUndeliverable, o.cfg.MaxAge)
		o.logger.LogAttrs(ctx, slog.LevelError, "mail not delivered", append(attrs, slog.String("error", err.Error()))...)
		return err
	}
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.cfg.SendTimeout)
	defer cancel()
	stopping := context.AfterFunc(ctx, func() {
		t := time.NewTimer(stopGrace)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-sendCtx.Done():
		}
	})
	err = o.next.Send(sendCtx, m)
	stopping()
	if err == nil {
		return nil
	}
	attrs = append(attrs, slog.String("error", err.Error()))
	if domain.KindOf(err) != domain.KindUnavailable || isPermanent(err) {
		o.logger.LogAttrs(ctx, slog.LevelError, "mail not delivered", attrs...)
		return fmt.Errorf("%w: %w", ErrUndeliverable, err)
	}
	o.logger.LogAttrs(ctx, slog.LevelWarn, "mail delivery failed; retrying", attrs...)
	o.mu.Lock()
	o.waiting++
	o.mu.Unlock()
	return err
}

// open returns the mail a message holds.
func (o *Outbox) open(msg ports.OutboxMessage) (domain.Mail, error) {
	plain, err := o.sealer.Open(sealPurpose, msg.ID, msg.Payload)
	if err != nil {
		return domain.Mail{}, err
	}
	var s sealedMail
	if err := json.Unmarshal(plain, &s); err != nil {
		return domain.Mail{}, domain.Internal("mailer: decode mail", err)
	}
	return domain.Mail{Kind: s.Kind, To: s.To, Name: s.Name, Link: s.Link, ExpiresIn: s.ExpiresIn,
		Organization: s.Organization, Inviter: s.Inviter, Code: s.Code, WebhookID: s.WebhookID, WebhookURL: s.WebhookURL}, nil
}
