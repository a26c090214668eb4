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
	"github.com/gatehouse/gatehouse/domain"
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

func (f *fakeMailer) counts() (calls, sent int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, len(f.sent)
}

// syncBuffer is a bytes.Buffer safe for the queue's workers to log into.
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

func mustClose(t *testing.T, q *mailer.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := q.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

var unavailable = &domain.Error{Kind: domain.KindUnavailable, Code: "mail.unavailable", Err: errors.New("451 try later")}

// Ensure Send returns before delivery and delivery outlives the request.
func TestQueue_delivers_asynchronously(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	next := &fakeMailer{fn: func(ctx context.Context, _ int, _ domain.Mail) error {
		<-gate
		return ctx.Err() // the request's cancellation must not reach delivery
	}}
	q := mailer.NewQueue(next, slog.New(slog.DiscardHandler))

	reqCtx, endRequest := context.WithCancel(context.Background())
	start := time.Now()
	if err := q.Send(reqCtx, mailOf(domain.MailVerifyEmail, "jane@example.test")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("Send took %v; it should only enqueue", d)
	}
	endRequest()
	if _, sent := next.counts(); sent != 0 {
		t.Fatal("delivered before the mailer was released")
	}
	close(gate)
	mustClose(t, q)
	if calls, sent := next.counts(); calls != 1 || sent != 1 {
		t.Errorf("calls, sent = %d, %d; want 1, 1", calls, sent)
	}
}

func TestQueue_full_is_unavailable(t *testing.T) {
	t.Parallel()
	started, gate := make(chan struct{}, 10), make(chan struct{})
	next := &fakeMailer{fn: func(context.Context, int, domain.Mail) error {
		started <- struct{}{}
		<-gate
		return nil
	}}
	q := mailer.NewQueue(next, slog.New(slog.DiscardHandler), mailer.WithCapacity(1), mailer.WithWorkers(1))
	ctx := context.Background()
	m := mailOf(domain.MailResetPassword, "jane@example.test")

	if err := q.Send(ctx, m); err != nil { // taken by the worker
		t.Fatalf("first Send: %v", err)
	}
	<-started
	if err := q.Send(ctx, m); err != nil { // waits in the buffer
		t.Fatalf("second Send: %v", err)
	}
	err := q.Send(ctx, m)
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindUnavailable || de.Code != "mail.unavailable" {
		t.Fatalf("third Send = %v, want mail.unavailable", err)
	}
	close(gate)
	mustClose(t, q)
	if _, sent := next.counts(); sent != 2 {
		t.Errorf("sent = %d, want 2", sent)
	}
}

// Ensure a reservation holds a place: while it is held the queue is full
// for everyone else, its own mail always gets in, and a released place is
// free again. Sign-up relies on this to refuse before it creates anything.
func TestQueue_reserve_holds_a_place(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	next := &fakeMailer{fn: func(context.Context, int, domain.Mail) error { <-gate; return nil }}
	// No worker may take a mail out while the test counts places: the
	// only worker is stuck on a first mail.
	started := make(chan struct{})
	first := &fakeMailer{fn: func(ctx context.Context, call int, m domain.Mail) error {
		if call == 1 {
			close(started)
		}
		return next.Send(ctx, m)
	}}
	q := mailer.NewQueue(first, slog.New(slog.DiscardHandler), mailer.WithCapacity(2), mailer.WithWorkers(1))
	ctx := context.Background()
	m := mailOf(domain.MailVerifyEmail, "jane@example.test")
	if err := q.Send(ctx, m); err != nil {
		t.Fatalf("first Send: %v", err)
	}
	<-started

	a, err := q.Reserve(ctx)
	if err != nil {
		t.Fatalf("first Reserve: %v", err)
	}
	b, err := q.Reserve(ctx)
	if err != nil {
		t.Fatalf("second Reserve: %v", err)
	}
	if _, err := q.Reserve(ctx); domain.KindOf(err) != domain.KindUnavailable {
		t.Fatalf("Reserve with every place held = %v, want unavailable", err)
	}
	if err := q.Send(ctx, m); domain.KindOf(err) != domain.KindUnavailable {
		t.Fatalf("Send with every place held = %v, want unavailable", err)
	}
	if err := a.Send(ctx, m); err != nil {
		t.Fatalf("Send through a held place: %v", err)
	}
	if err := a.Send(ctx, m); err == nil {
		t.Fatal("second Send through one place succeeded")
	}
	a.Release() // after Send: changes nothing
	if err := q.Send(ctx, m); domain.KindOf(err) != domain.KindUnavailable {
		t.Fatalf("Send after releasing a used place = %v, want unavailable", err)
	}
	b.Release()
	b.Release()
	if err := q.Send(ctx, m); err != nil {
		t.Fatalf("Send after a release: %v", err)
	}
	close(gate)
	mustClose(t, q)
	if _, sent := next.counts(); sent != 3 {
		t.Errorf("sent = %d, want 3", sent)
	}
}

func TestQueue_close_drains(t *testing.T) {
	t.Parallel()
	next := &fakeMailer{fn: func(context.Context, int, domain.Mail) error {
		time.Sleep(10 * time.Millisecond)
		return nil
	}}
	q := mailer.NewQueue(next, slog.New(slog.DiscardHandler), mailer.WithWorkers(1))
	for range 5 {
		if err := q.Send(context.Background(), mailOf(domain.MailVerifyEmail, "jane@example.test")); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	mustClose(t, q)
	if _, sent := next.counts(); sent != 5 {
		t.Errorf("sent = %d, want 5", sent)
	}
	if err := q.Send(context.Background(), mailOf(domain.MailVerifyEmail, "jane@example.test")); !errors.Is(err, domain.ErrUnavailable) {
		t.Errorf("Send after Close = %v, want unavailable", err)
	}
	if err := q.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestQueue_close_gives_up_at_deadline(t *testing.T) {
	t.Parallel()
	next := &fakeMailer{fn: func(ctx context.Context, _ int, _ domain.Mail) error {
		<-ctx.Done() // a server that never answers
		return unavailable
	}}
	q := mailer.NewQueue(next, slog.New(slog.DiscardHandler), mailer.WithWorkers(1))
	for range 3 {
		_ = q.Send(context.Background(), mailOf(domain.MailVerifyEmail, "jane@example.test"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := q.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v after its deadline", d)
	}
}

// Ensure transient failures are retried, others not, and failure logs carry
// neither the link nor the full address.
func TestQueue_retries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fail      func(call int) error
		wantCalls int
		wantSent  int
		wantLevel string // level of the last log line ("" for none)
	}{
		{name: "transient_then_ok", fail: func(call int) error {
			if call < 3 {
				return unavailable
			}
			return nil
		}, wantCalls: 3, wantSent: 1, wantLevel: "WARN"},
		{name: "transient_always", fail: func(int) error { return unavailable }, wantCalls: 3, wantLevel: "ERROR"},
		{name: "internal_not_retried", fail: func(int) error { return domain.Internal("render", errors.New("boom")) }, wantCalls: 1, wantLevel: "ERROR"},
		{name: "timeout_per_attempt", fail: nil, wantCalls: 3, wantLevel: "ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			next := &fakeMailer{fn: func(ctx context.Context, call int, _ domain.Mail) error {
				if tt.fail == nil {
					<-ctx.Done()
					return &domain.Error{Kind: domain.KindUnavailable, Err: ctx.Err()}
				}
				return tt.fail(call)
			}}
			var logs syncBuffer
			q := mailer.NewQueue(next, slog.New(slog.NewJSONHandler(&logs, nil)),
				mailer.WithRetryDelays(time.Millisecond, 2*time.Millisecond), mailer.WithTimeout(20*time.Millisecond))
			m := mailOf(domain.MailResetPassword, "jane.doe@example.test")
			if err := q.Send(context.Background(), m); err != nil {
				t.Fatalf("Send: %v", err)
			}
			mustClose(t, q)

			if calls, sent := next.counts(); calls != tt.wantCalls || sent != tt.wantSent {
				t.Errorf("calls, sent = %d, %d; want %d, %d", calls, sent, tt.wantCalls, tt.wantSent)
			}
			lines := logs.lines(t)
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
				if got, want := l["to"], "j***@example.test"; got != want {
					t.Errorf("to = %v, want %v", got, want)
				}
			}
		})
	}
}

// Ensure the queue and the SMTP adapter work together end to end.
func TestQueue_over_smtp(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	q := mailer.NewQueue(mustSMTP(t, srv, nil), slog.New(slog.DiscardHandler))
	m := mailOf(domain.MailVerifyEmail, "queued@example.test")
	if err := q.Send(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitFor(t, "queued@example.test", "Verify", 5*time.Second)
	if links := got.Links(); len(links) != 1 || links[0] != m.Link {
		t.Errorf("Links = %v, want [%s]", links, m.Link)
	}
	mustClose(t, q)
}
