package mailer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/mailer"
	"github.com/gatehouse/gatehouse/adapters/mailer/smtptest"
	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// fakeMailer records calls and answers with fn (nil: success).
type fakeMailer struct {
	fn func(ctx context.Context, call int, m domain.Mail) error

	mu    sync.Mutex
	calls int
	sent  []domain.Mail
}

func (f *fakeMailer) Send(ctx context.Context, m domain.Mail) error {
	f.mu.Lock()
	f.calls++
	call := f.calls
	f.mu.Unlock()
	if f.fn != nil {
		if err := f.fn(ctx, call, m); err != nil {
			return err
		}
	}
	f.mu.Lock()
	f.sent = append(f.sent, m)
	f.mu.Unlock()
	return nil
}

// syncBuffer is a bytes.Buffer safe to log into from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for l := range strings.Lines(s.b.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

var unavailable = &domain.Error{Kind: domain.KindUnavailable, Code: "mail.unavailable", Err: errors.New("451 try later")}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// outboxRig is an outbox mailer on a memory store, delivering through next.
type outboxRig struct {
	mailer *mailer.Outbox
	db     *memory.DB
	store  *memory.Outbox
	sealer ports.SecretSealer
	clock  *clock
	logs   *syncBuffer
}

func newOutboxRig(t *testing.T, next mailer.Sender, cfg mailer.OutboxConfig) *outboxRig {
	t.Helper()
	sealer, err := signingkeys.NewSecretSealer(signingkeys.Secrets{"a-test-secret-of-at-least-32-bytes-long"})
	if err != nil {
		t.Fatal(err)
	}
	db := memory.NewDB()
	store := memory.NewOutbox(db)
	c := &clock{t: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
	logs := &syncBuffer{}
	m := mailer.NewOutbox(store, sealer, c, system.NewIDGenerator(), next, slog.New(slog.NewJSONHandler(logs, nil)), cfg)
	return &outboxRig{mailer: m, db: db, store: store, sealer: sealer, clock: c, logs: logs}
}

// claim claims the waiting mails as the relay does.
func (r *outboxRig) claim(t *testing.T) []ports.OutboxMessage {
	t.Helper()
	msgs, err := r.store.Claim(context.Background(), ports.OutboxMail, r.clock.Now(), r.mailer.Lease(), 100)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// Ensure Send keeps the mail in the outbox's mail topic sealed: neither its
// link, its code nor its address can be read there, and the sealed payload
// opens only for its own message.
func TestOutbox_send_keeps_the_mail_sealed(t *testing.T) {
	t.Parallel()
	r := newOutboxRig(t, &fakeMailer{}, mailer.OutboxConfig{})
	m := mailOf(domain.MailResetPassword, "jane.doe@example.test")
	m.Code = "123456"
	if err := r.mailer.Send(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := r.claim(t)
	if len(msgs) != 1 {
		t.Fatalf("the outbox holds %d mails, want 1", len(msgs))
	}
	got := msgs[0]
	if got.Topic != ports.OutboxMail || got.Type != string(domain.MailResetPassword) {
		t.Errorf("topic, type = %q, %q", got.Topic, got.Type)
	}
	for _, secret := range []string{"tok-", "jane.doe", "123456"} {
		if bytes.Contains(got.Payload, []byte(secret)) {
			t.Errorf("the stored payload holds %q in the clear", secret)
		}
	}
	if _, err := r.sealer.Open("mail", got.ID, got.Payload); err != nil {
		t.Errorf("the payload does not open for its own id: %v", err)
	}
	if _, err := r.sealer.Open("mail", got.ID+"x", got.Payload); err == nil {
		t.Error("the payload opens for another message's id")
	}
}

// Ensure Deliver sends exactly what Send kept, through the mailer it wraps,
// and that a mail sent inside a unit of work that is undone is not kept.
func TestOutbox_deliver_sends_what_send_kept(t *testing.T) {
	t.Parallel()
	next := &fakeMailer{}
	r := newOutboxRig(t, next, mailer.OutboxConfig{})
	want := mailOf(domain.MailInvitation, "jane@example.test")
	want.Code = "654321"
	if err := r.mailer.Send(context.Background(), want); err != nil {
		t.Fatalf("Send: %v", err)
	}
	errUndo := errors.New("undo")
	err := memory.NewUnitOfWork(r.db).Do(context.Background(), func(ctx context.Context) error {
		if err := r.mailer.Send(ctx, mailOf(domain.MailVerifyEmail, "undone@example.test")); err != nil {
			return err
		}
		return errUndo
	})
	if !errors.Is(err, errUndo) {
		t.Fatalf("Do = %v", err)
	}
	msgs := r.claim(t)
	if len(msgs) != 1 {
		t.Fatalf("the outbox holds %d mails, want 1 (the undone unit's is gone)", len(msgs))
	}
	if err := r.mailer.Deliver(context.Background(), msgs[0]); err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	if len(next.sent) != 1 || next.sent[0] != want {
		t.Fatalf("sent %+v, want %+v", next.sent, want)
	}
}

// Ensure the outbox and the SMTP adapter work together end to end.
func TestOutbox_over_smtp(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	r := newOutboxRig(t, mustSMTP(t, srv, nil), mailer.OutboxConfig{})
	m := mailOf(domain.MailVerifyEmail, "queued@example.test")
	if err := r.mailer.Send(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	for _, msg := range r.claim(t) {
		if err := r.mailer.Deliver(context.Background(), msg); err != nil {
			t.Fatalf("Deliver: %v", err)
		}
	}
	got := srv.WaitFor(t, "queued@example.test", "Verify", 5*time.Second)
	if links := got.Links(); len(links) != 1 || links[0] != m.Link {
		t.Errorf("Links = %v, want [%s]", links, m.Link)
	}
}

// Ensure the outbox bounds the mails that wait: past its capacity Send
// refuses, a reservation holds a place (while it is held the outbox is full
// for everyone else, its own mail always gets in, and a released place is
// free again), a delivered mail frees its place, and Refresh counts the
// mails other processes appended. Sign-up relies on this to refuse before
// it creates anything.
func TestOutbox_capacity_and_reservations(t *testing.T) {
	t.Parallel()
	r := newOutboxRig(t, &fakeMailer{}, mailer.OutboxConfig{Capacity: 3})
	ctx := context.Background()
	m := mailOf(domain.MailVerifyEmail, "jane@example.test")
	mustUnavailable := func(what string, err error) {
		t.Helper()
		var de *domain.Error
		if !errors.As(err, &de) || de.Kind != domain.KindUnavailable || de.Code != "mail.unavailable" {
			t.Fatalf("%s = %v, want mail.unavailable", what, err)
		}
	}
	if err := r.mailer.Send(ctx, m); err != nil {
		t.Fatalf("first Send: %v", err)
	}
	a, err := r.mailer.Reserve(ctx)
	if err != nil {
		t.Fatalf("first Reserve: %v", err)
	}
	b, err := r.mailer.Reserve(ctx)
	if err != nil {
		t.Fatalf("second Reserve: %v", err)
	}
	_, err = r.mailer.Reserve(ctx)
	mustUnavailable("Reserve with every place held", err)
	mustUnavailable("Send with every place held", r.mailer.Send(ctx, m))
	if err := a.Send(ctx, m); err != nil {
		t.Fatalf("Send through a held place: %v", err)
	}
	if err := a.Send(ctx, m); err == nil {
		t.Fatal("second Send through one place succeeded")
	}
	a.Release() // after Send: changes nothing
	mustUnavailable("Send after releasing a used place", r.mailer.Send(ctx, m))
	b.Release()
	b.Release()
	if err := r.mailer.Send(ctx, m); err != nil {
		t.Fatalf("Send after a release: %v", err)
	}
	mustUnavailable("Send with three mails waiting", r.mailer.Send(ctx, m))

	msgs := r.claim(t)
	if len(msgs) != 3 {
		t.Fatalf("%d mails wait, want 3", len(msgs))
	}
	if err := r.mailer.Deliver(ctx, msgs[0]); err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	if err := r.store.Done(ctx, msgs[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := r.mailer.Send(ctx, m); err != nil {
		t.Fatalf("Send after a delivery: %v", err)
	}

	// Another process empties the outbox and then appends mails of its own:
	// Refresh reads what waits.
	r2 := newOutboxRig(t, &fakeMailer{}, mailer.OutboxConfig{Capacity: 2})
	if err := r2.store.Append(ctx, ports.OutboxMessage{ID: "other-1", Topic: ports.OutboxMail, Payload: []byte("x"), CreatedAt: r2.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := r2.store.Append(ctx, ports.OutboxMessage{ID: "other-2", Topic: ports.OutboxMail, Payload: []byte("x"), CreatedAt: r2.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := r2.mailer.Send(ctx, m); err != nil {
		t.Fatalf("Send before Refresh: %v", err)
	}
	if err := r2.mailer.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	mustUnavailable("Send once Refresh counted the other process's mails", r2.mailer.Send(ctx, m))
}

// Ensure Deliver retries only transient failures, gives up on the rest (a
// refusal, a mail that no longer opens, one past its maximum age), and that
// its logs carry neither the link nor the full address.
func TestOutbox_deliver_failures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fail      error
		alter     func(r *outboxRig, m *ports.OutboxMessage)
		wantRetry bool
		wantLevel string
	}{
		{name: "transient_is_retried", fail: unavailable, wantRetry: true, wantLevel: "WARN"},
		{name: "internal_is_given_up", fail: domain.Internal("render", errors.New("boom")), wantLevel: "ERROR"},
		{name: "altered_payload_is_given_up", alter: func(_ *outboxRig, m *ports.OutboxMessage) { m.Payload[len(m.Payload)-1] ^= 1 }, wantLevel: "ERROR"},
		{name: "too_old_is_given_up", alter: func(r *outboxRig, _ *ports.OutboxMessage) { r.clock.add(mailer.DefaultMaxAge + time.Second) }, wantLevel: "ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			next := &fakeMailer{fn: func(context.Context, int, domain.Mail) error { return tt.fail }}
			r := newOutboxRig(t, next, mailer.OutboxConfig{})
			if err := r.mailer.Send(context.Background(), mailOf(domain.MailResetPassword, "jane.doe@example.test")); err != nil {
				t.Fatalf("Send: %v", err)
			}
			msg := r.claim(t)[0]
			if tt.alter != nil {
				tt.alter(r, &msg)
			}
			err := r.mailer.Deliver(context.Background(), msg)
			if err == nil {
				t.Fatal("Deliver succeeded")
			}
			if got := !errors.Is(err, mailer.ErrUndeliverable); got != tt.wantRetry {
				t.Errorf("Deliver = %v: retry %v, want %v", err, got, tt.wantRetry)
			}
			if strings.Contains(err.Error(), "tok-") || strings.Contains(err.Error(), "jane.doe@") {
				t.Errorf("the error, which the outbox keeps, leaks the link or the address: %v", err)
			}
			lines := r.logs.lines(t)
			if len(lines) == 0 {
				t.Fatal("nothing logged")
			}
			if got := lines[len(lines)-1]["level"]; got != tt.wantLevel {
				t.Errorf("last log level = %v, want %s", got, tt.wantLevel)
			}
			for _, l := range lines {
				raw, _ := json.Marshal(l)
				if s := string(raw); strings.Contains(s, "tok-") || strings.Contains(s, "jane.doe@") {
					t.Errorf("log line leaks the link or the address: %s", s)
				}
			}
		})
	}
}
