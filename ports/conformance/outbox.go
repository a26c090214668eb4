package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunOutbox runs the Outbox contract. newStores must return empty
// repositories sharing one fresh database each time it is called; Outbox
// and UnitOfWork are used.
func RunOutbox(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"append_then_claim_round_trips", testOutboxRoundTrip},
		{"duplicate_id_is_conflict", testOutboxDuplicate},
		{"claim_takes_due_messages_of_its_topic_oldest_first", testOutboxClaimOrder},
		{"claimed_message_is_hidden_until_its_lease_ends", testOutboxLease},
		{"retry_makes_it_due_again_with_its_error", testOutboxRetry},
		{"done_removes_it_and_missing_is_no_error", testOutboxDone},
		{"stats_count_each_topic", testOutboxStats},
		{"append_in_an_undone_unit_leaves_nothing", testOutboxUnit},
		{"concurrent_claims_never_overlap", testOutboxClaimParallel},
		{"non_utc_times_are_the_same_instant", testOutboxTimezones},
		{"returned_payload_is_a_copy", testOutboxCopies},
		{"appended_signals_after_commit", testOutboxAppended},
	}
	for _, tt := range tests {
		t.Run("contract=Outbox/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// outboxMessage returns message id of topic created at at, with a payload
// that names it.
func outboxMessage(id string, topic ports.OutboxTopic, at time.Time) ports.OutboxMessage {
	return ports.OutboxMessage{ID: id, Topic: topic, Type: "user.created", Payload: []byte(`{"id":"` + id + `"}`),
		CreatedAt: at, AvailableAt: at}
}

func mustAppendOutbox(t *testing.T, s Stores, msgs ...ports.OutboxMessage) {
	t.Helper()
	for _, m := range msgs {
		if err := s.Outbox.Append(context.Background(), m); err != nil {
			t.Fatalf("Append %s: %v", m.ID, err)
		}
	}
}

func mustClaim(t *testing.T, s Stores, topic ports.OutboxTopic, now time.Time, lease time.Duration, limit int) []ports.OutboxMessage {
	t.Helper()
	got, err := s.Outbox.Claim(context.Background(), topic, now, lease, limit)
	if err != nil {
		t.Fatalf("Claim %s at %s: %v", topic, now, err)
	}
	return got
}

func outboxIDs(msgs []ports.OutboxMessage) []string {
	ids := make([]string, 0, len(msgs))
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	return ids
}

func mustOutboxDepth(t *testing.T, s Stores, topic ports.OutboxTopic) int {
	t.Helper()
	st, err := s.Outbox.Stats(context.Background())
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	return st[topic].Depth
}

func testOutboxRoundTrip(t *testing.T, s Stores) {
	m := outboxMessage("m1", ports.OutboxMail, baseTime)
	m.Payload = []byte{0, 1, 2, 0xff, 'x'} // sealed mail is binary
	m.Type = "reset-password"
	mustAppendOutbox(t, s, m)
	const lease = 90 * time.Second
	now := baseTime.Add(time.Second)
	got := mustClaim(t, s, ports.OutboxMail, now, lease, 10)
	if len(got) != 1 {
		t.Fatalf("Claim = %v, want m1", outboxIDs(got))
	}
	g := got[0]
	if g.ID != "m1" || g.Topic != ports.OutboxMail || g.Type != "reset-password" || !bytes.Equal(g.Payload, m.Payload) {
		t.Fatalf("claimed %+v, want %+v", g, m)
	}
	assertTime(t, "CreatedAt", g.CreatedAt, baseTime)
	assertTime(t, "AvailableAt", g.AvailableAt, now.Add(lease))
	if g.Attempts != 1 || g.LastError != "" {
		t.Fatalf("Attempts, LastError = %d, %q; want 1 and none", g.Attempts, g.LastError)
	}
	// A zero AvailableAt means the creation.
	m2 := outboxMessage("m2", ports.OutboxMail, baseTime)
	m2.AvailableAt = time.Time{}
	mustAppendOutbox(t, s, m2)
	if got := mustClaim(t, s, ports.OutboxMail, baseTime, lease, 10); !slices.Equal(outboxIDs(got), []string{"m2"}) {
		t.Fatalf("Claim of a message with no AvailableAt = %v, want m2", outboxIDs(got))
	}
}

func testOutboxDuplicate(t *testing.T, s Stores) {
	mustAppendOutbox(t, s, outboxMessage("m1", ports.OutboxEvents, baseTime))
	err := s.Outbox.Append(context.Background(), outboxMessage("m1", ports.OutboxMail, baseTime))
	if !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("Append of a taken id = %v, want conflict", err)
	}
}

func testOutboxClaimOrder(t *testing.T, s Stores) {
	mustAppendOutbox(t, s,
		outboxMessage("later", ports.OutboxEvents, baseTime.Add(2*time.Minute)),
		outboxMessage("b", ports.OutboxEvents, baseTime),
		outboxMessage("a", ports.OutboxEvents, baseTime.Add(time.Minute)),
		outboxMessage("c", ports.OutboxEvents, baseTime.Add(time.Minute)),
		outboxMessage("mail", ports.OutboxMail, baseTime),
	)
	now := baseTime.Add(time.Minute)
	if got := mustClaim(t, s, ports.OutboxEvents, now, time.Hour, 2); !slices.Equal(outboxIDs(got), []string{"b", "a"}) {
		t.Fatalf("first Claim of 2 = %v, want [b a]", outboxIDs(got))
	}
	if got := mustClaim(t, s, ports.OutboxEvents, now, time.Hour, 10); !slices.Equal(outboxIDs(got), []string{"c"}) {
		t.Fatalf("second Claim = %v, want [c]: later is not due, mail is another topic", outboxIDs(got))
	}
	if got := mustClaim(t, s, ports.OutboxMail, now, time.Hour, 10); !slices.Equal(outboxIDs(got), []string{"mail"}) {
		t.Fatalf("Claim of mail = %v, want [mail]", outboxIDs(got))
	}
}

func testOutboxLease(t *testing.T, s Stores) {
	mustAppendOutbox(t, s, outboxMessage("m1", ports.OutboxEvents, baseTime))
	const lease = time.Minute
	if got := mustClaim(t, s, ports.OutboxEvents, baseTime, lease, 10); len(got) != 1 {
		t.Fatalf("first Claim = %v", outboxIDs(got))
	}
	if got := mustClaim(t, s, ports.OutboxEvents, baseTime.Add(lease-time.Second), lease, 10); len(got) != 0 {
		t.Fatalf("Claim during the lease = %v, want nothing", outboxIDs(got))
	}
	// The claimer died: once its lease ends the message is claimed again,
	// with one more attempt counted.
	got := mustClaim(t, s, ports.OutboxEvents, baseTime.Add(lease), lease, 10)
	if len(got) != 1 || got[0].Attempts != 2 {
		t.Fatalf("Claim after the lease = %+v, want m1 at attempt 2", got)
	}
	assertTime(t, "AvailableAt", got[0].AvailableAt, baseTime.Add(2*lease))
}

func testOutboxRetry(t *testing.T, s Stores) {
	ctx := context.Background()
	mustAppendOutbox(t, s, outboxMessage("m1", ports.OutboxMail, baseTime))
	mustClaim(t, s, ports.OutboxMail, baseTime, time.Minute, 10)
	if err := s.Outbox.Retry(ctx, "m1", baseTime.Add(5*time.Minute), "smtp: connection refused"); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	// The retry time replaces the lease, later as here or sooner.
	if got := mustClaim(t, s, ports.OutboxMail, baseTime.Add(4*time.Minute), time.Minute, 10); len(got) != 0 {
		t.Fatalf("Claim before the retry = %v, want nothing", outboxIDs(got))
	}
	got := mustClaim(t, s, ports.OutboxMail, baseTime.Add(5*time.Minute), time.Minute, 10)
	if len(got) != 1 || got[0].Attempts != 2 || got[0].LastError != "smtp: connection refused" {
		t.Fatalf("Claim at the retry = %+v, want m1 at attempt 2 with its error", got)
	}
	if err := s.Outbox.Retry(ctx, "m1", baseTime.Add(5*time.Minute), "again"); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	if got := mustClaim(t, s, ports.OutboxMail, baseTime.Add(5*time.Minute), time.Minute, 10); len(got) != 1 || got[0].LastError != "again" {
		t.Fatalf("Claim after a retry sooner than the lease = %+v, want m1", got)
	}
	if err := s.Outbox.Retry(ctx, "missing", baseTime, "x"); err != nil {
		t.Fatalf("Retry of a missing message = %v, want no error", err)
	}
}

func testOutboxDone(t *testing.T, s Stores) {
	ctx := context.Background()
	mustAppendOutbox(t, s, outboxMessage("m1", ports.OutboxEvents, baseTime), outboxMessage("m2", ports.OutboxEvents, baseTime))
	mustClaim(t, s, ports.OutboxEvents, baseTime, time.Minute, 1)
	if err := s.Outbox.Done(ctx, "m1"); err != nil {
		t.Fatalf("Done: %v", err)
	}
	if err := s.Outbox.Done(ctx, "m1"); err != nil {
		t.Fatalf("Done again = %v, want no error", err)
	}
	if got := mustClaim(t, s, ports.OutboxEvents, baseTime.Add(time.Hour), time.Minute, 10); !slices.Equal(outboxIDs(got), []string{"m2"}) {
		t.Fatalf("Claim after Done = %v, want only m2", outboxIDs(got))
	}
	if got := mustOutboxDepth(t, s, ports.OutboxEvents); got != 1 {
		t.Fatalf("depth = %d, want 1", got)
	}
}

func testOutboxStats(t *testing.T, s Stores) {
	st, err := s.Outbox.Stats(context.Background())
	if err != nil || len(st) != 0 {
		t.Fatalf("Stats of an empty outbox = %v, %v; want nothing", st, err)
	}
	mustAppendOutbox(t, s,
		outboxMessage("e1", ports.OutboxEvents, baseTime.Add(time.Minute)),
		outboxMessage("e2", ports.OutboxEvents, baseTime),
		outboxMessage("e3", ports.OutboxEvents, baseTime.Add(2*time.Minute)),
		outboxMessage("m1", ports.OutboxMail, baseTime.Add(time.Hour)),
	)
	// A claimed message still waits: it is not delivered yet.
	mustClaim(t, s, ports.OutboxEvents, baseTime.Add(time.Hour), time.Minute, 1)
	st, err = s.Outbox.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 || st[ports.OutboxEvents].Depth != 3 || st[ports.OutboxMail].Depth != 1 {
		t.Fatalf("Stats = %+v, want 3 events and 1 mail", st)
	}
	assertTime(t, "events' oldest", st[ports.OutboxEvents].Oldest, baseTime)
	assertTime(t, "mail's oldest", st[ports.OutboxMail].Oldest, baseTime.Add(time.Hour))
}

func testOutboxUnit(t *testing.T, s Stores) {
	err := s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		if err := s.Outbox.Append(ctx, outboxMessage("m1", ports.OutboxMail, baseTime)); err != nil {
			return err
		}
		return errUnitBoom
	})
	if !errors.Is(err, errUnitBoom) {
		t.Fatalf("Do = %v", err)
	}
	if got := mustClaim(t, s, ports.OutboxMail, baseTime.Add(time.Hour), time.Minute, 10); len(got) != 0 {
		t.Fatalf("Claim after the undone unit = %v, want nothing", outboxIDs(got))
	}
	if got := mustOutboxDepth(t, s, ports.OutboxMail); got != 0 {
		t.Fatalf("depth after the undone unit = %d", got)
	}
	err = s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		return s.Outbox.Append(ctx, outboxMessage("m1", ports.OutboxMail, baseTime))
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if got := mustClaim(t, s, ports.OutboxMail, baseTime.Add(time.Hour), time.Minute, 10); !slices.Equal(outboxIDs(got), []string{"m1"}) {
		t.Fatalf("Claim after the unit = %v, want m1", outboxIDs(got))
	}
}

// Six claimers take batches of five from sixty messages until none is
// left; every message is claimed exactly once.
func testOutboxClaimParallel(t *testing.T, s Stores) {
	const n, claimers, batch = 60, 6, 5
	for i := range n {
		mustAppendOutbox(t, s, outboxMessage(fmt.Sprintf("m%02d", i), ports.OutboxEvents, baseTime.Add(time.Duration(i%7)*time.Second)))
	}
	var mu sync.Mutex
	seen := map[string]int{}
	errs := runParallel(claimers, func(int) error {
		for range n {
			got, err := s.Outbox.Claim(context.Background(), ports.OutboxEvents, baseTime.Add(time.Minute), time.Hour, batch)
			if err != nil {
				return err
			}
			if len(got) == 0 {
				return nil
			}
			mu.Lock()
			for _, m := range got {
				seen[m.ID]++
			}
			mu.Unlock()
		}
		return errors.New("claims never ran dry")
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("claimer %d: %v", i, err)
		}
	}
	if len(seen) != n {
		t.Fatalf("claimed %d distinct messages, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("%s claimed %d times, want once", id, c)
		}
	}
}

func testOutboxTimezones(t *testing.T, s Stores) {
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	m := outboxMessage("m1", ports.OutboxEvents, baseTime.In(zone))
	mustAppendOutbox(t, s, m)
	got := mustClaim(t, s, ports.OutboxEvents, baseTime.Add(time.Second).In(zone), time.Minute, 1)
	if len(got) != 1 {
		t.Fatalf("Claim = %v", outboxIDs(got))
	}
	assertTime(t, "CreatedAt", got[0].CreatedAt, baseTime)
	assertTime(t, "AvailableAt", got[0].AvailableAt, baseTime.Add(time.Second+time.Minute))
}

func testOutboxCopies(t *testing.T, s Stores) {
	m := outboxMessage("m1", ports.OutboxEvents, baseTime)
	mustAppendOutbox(t, s, m)
	m.Payload[0] = 'X'
	got := mustClaim(t, s, ports.OutboxEvents, baseTime, time.Minute, 1)
	if len(got) != 1 || got[0].Payload[0] != '{' {
		t.Fatalf("payload after the caller changed its own = %q", got[0].Payload)
	}
	got[0].Payload[0] = 'Y'
	again := mustClaim(t, s, ports.OutboxEvents, baseTime.Add(time.Hour), time.Minute, 1)
	if len(again) != 1 || again[0].Payload[0] != '{' {
		t.Fatalf("payload after the caller changed a claimed one = %q", again[0].Payload)
	}
}

func testOutboxAppended(t *testing.T, s Stores) {
	ch := s.Outbox.Appended(ports.OutboxMail)
	signalled := func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	if signalled() {
		t.Fatal("a signal before anything was appended")
	}
	// Outside a unit: at once. Signals do not pile up or block the writer.
	mustAppendOutbox(t, s, outboxMessage("m1", ports.OutboxMail, baseTime), outboxMessage("m2", ports.OutboxMail, baseTime))
	if !signalled() {
		t.Fatal("no signal after an Append")
	}
	if signalled() {
		t.Fatal("two signals wait; want one at most")
	}
	mustAppendOutbox(t, s, outboxMessage("e1", ports.OutboxEvents, baseTime))
	if signalled() {
		t.Fatal("an event signalled the mail topic")
	}
	// Inside a unit: once it has committed, not before, and never for one
	// undone.
	err := s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		if err := s.Outbox.Append(ctx, outboxMessage("m3", ports.OutboxMail, baseTime)); err != nil {
			return err
		}
		if signalled() {
			t.Error("a signal before the unit committed: the relay would claim nothing")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if !signalled() {
		t.Fatal("no signal after the unit committed")
	}
	err = s.UnitOfWork.Do(context.Background(), func(ctx context.Context) error {
		if err := s.Outbox.Append(ctx, outboxMessage("m4", ports.OutboxMail, baseTime)); err != nil {
			return err
		}
		return errUnitBoom
	})
	if !errors.Is(err, errUnitBoom) {
		t.Fatalf("Do = %v", err)
	}
	if signalled() {
		t.Fatal("a signal for an undone unit")
	}
}
