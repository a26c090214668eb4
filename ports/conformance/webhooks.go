package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// WebhookStores are one store's webhook ports, sharing one database.
type WebhookStores struct {
	Endpoints ports.WebhookEndpointRepository
	Queue     ports.WebhookQueue
	Log       ports.WebhookLog
	// UnitOfWork is the store's, which the webhook stores join.
	UnitOfWork ports.UnitOfWork
}

// RunWebhookStores runs the contracts of the webhook endpoints, queue and
// log. newStores must return empty stores sharing one fresh database each
// time it is called.
func RunWebhookStores(t *testing.T, newStores func(t *testing.T) WebhookStores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s WebhookStores)
	}{
		{"endpoint_create_then_get_round_trips_every_field", testWebhookEndpointRoundTrip},
		{"endpoint_missing_is_not_found", testWebhookEndpointNotFound},
		{"endpoint_taken_id_is_conflict", testWebhookEndpointConflict},
		{"endpoint_list_is_oldest_first", testWebhookEndpointList},
		{"endpoint_update_saves_what_fn_did_and_nothing_when_it_fails", testWebhookEndpointUpdate},
		{"endpoint_concurrent_updates_are_not_lost", testWebhookEndpointUpdateParallel},
		{"endpoint_returned_values_are_copies", testWebhookEndpointCopies},
		{"enqueue_stores_the_message_once_and_a_pending_delivery_per_endpoint", testWebhookEnqueue},
		{"claim_takes_due_deliveries_longest_due_first_and_hides_them_for_the_lease", testWebhookClaim},
		{"concurrent_claims_never_take_the_same_delivery", testWebhookClaimParallel},
		{"record_counts_the_attempt_and_moves_the_delivery", testWebhookRecord},
		{"record_of_a_deleted_endpoint_is_not_found", testWebhookRecordDeleted},
		{"record_leaves_a_delivery_replayed_or_claimed_again_since_its_claim", testWebhookRecordAfterChange},
		{"replay_makes_one_delivery_due_again", testWebhookReplay},
		{"replay_since_resets_and_creates_deliveries_of_matching_messages", testWebhookReplaySince},
		{"purge_removes_old_messages_with_their_deliveries", testWebhookPurge},
		{"deliveries_page_newest_first_by_cursor_and_status", testWebhookListDeliveries},
		{"deleting_an_endpoint_deletes_its_deliveries", testWebhookEndpointDeleteCascade},
		{"writes_join_the_unit_of_work", testWebhookUnitOfWork},
	}
	for _, tt := range tests {
		t.Run("contract=Webhooks/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// webhookT0 is the suite's reference time, in a zone other than UTC.
var webhookT0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.FixedZone("CET", 3600))

func newEndpoint(id string, at time.Time) domain.WebhookEndpoint {
	return domain.WebhookEndpoint{ID: domain.WebhookEndpointID(id), URL: "https://hooks.example.com/" + id, Enabled: true,
		SealedSecret: []byte("sealed-" + id), CreatedAt: at, UpdatedAt: at}
}

func mustCreateEndpoint(t *testing.T, s WebhookStores, e domain.WebhookEndpoint) {
	t.Helper()
	if err := s.Endpoints.Create(context.Background(), e); err != nil {
		t.Fatalf("Create endpoint %s: %v", e.ID, err)
	}
}

func mustGetEndpoint(t *testing.T, s WebhookStores, id domain.WebhookEndpointID) domain.WebhookEndpoint {
	t.Helper()
	e, err := s.Endpoints.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get endpoint %s: %v", id, err)
	}
	return e
}

func testWebhookEndpointRoundTrip(t *testing.T, s WebhookStores) {
	e := newEndpoint("e1", webhookT0)
	e.Description = "billing backend"
	e.EventTypes = []domain.EventType{domain.EventUserCreated, domain.EventDomainVerified}
	e.Enabled, e.DisabledReason, e.DisabledAt = false, domain.WebhookDisabledFailing, webhookT0.Add(time.Hour)
	e.SealedPreviousSecret, e.PreviousSecretExpiresAt = []byte("previous"), webhookT0.Add(24*time.Hour)
	e.LastSuccessAt, e.FailingSince = webhookT0.Add(-time.Hour), webhookT0.Add(-time.Minute)
	e.UpdatedAt = webhookT0.Add(2 * time.Hour)
	mustCreateEndpoint(t, s, e)
	assertSameEndpoint(t, mustGetEndpoint(t, s, "e1"), e)

	// Zero times and no previous secret come back as such.
	bare := newEndpoint("e2", webhookT0)
	mustCreateEndpoint(t, s, bare)
	assertSameEndpoint(t, mustGetEndpoint(t, s, "e2"), bare)
}

// assertSameEndpoint compares every field, times as instants in UTC.
func assertSameEndpoint(t *testing.T, got, want domain.WebhookEndpoint) {
	t.Helper()
	for name, pair := range map[string][2]time.Time{
		"DisabledAt": {got.DisabledAt, want.DisabledAt}, "PreviousSecretExpiresAt": {got.PreviousSecretExpiresAt, want.PreviousSecretExpiresAt},
		"LastSuccessAt": {got.LastSuccessAt, want.LastSuccessAt}, "FailingSince": {got.FailingSince, want.FailingSince},
		"CreatedAt": {got.CreatedAt, want.CreatedAt}, "UpdatedAt": {got.UpdatedAt, want.UpdatedAt},
	} {
		w := pair[1]
		if !w.IsZero() {
			w = domain.Timestamp(w)
		}
		assertTime(t, name, pair[0], w)
	}
	strip := func(e domain.WebhookEndpoint) domain.WebhookEndpoint {
		e.DisabledAt, e.PreviousSecretExpiresAt, e.LastSuccessAt, e.FailingSince, e.CreatedAt, e.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if len(e.EventTypes) == 0 {
			e.EventTypes = nil
		}
		if len(e.SealedPreviousSecret) == 0 {
			e.SealedPreviousSecret = nil
		}
		return e
	}
	if g, w := strip(got), strip(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("endpoint = %+v, want %+v", g, w)
	}
}

func testWebhookEndpointNotFound(t *testing.T, s WebhookStores) {
	ctx := context.Background()
	if _, err := s.Endpoints.Get(ctx, "nope"); !errors.Is(err, domain.ErrWebhookNotFound) {
		t.Fatalf("Get missing = %v, want webhook.not_found", err)
	}
	if err := s.Endpoints.Update(ctx, "nope", func(*domain.WebhookEndpoint) error { return nil }); !errors.Is(err, domain.ErrWebhookNotFound) {
		t.Fatalf("Update missing = %v, want webhook.not_found", err)
	}
	if err := s.Endpoints.Delete(ctx, "nope"); !errors.Is(err, domain.ErrWebhookNotFound) {
		t.Fatalf("Delete missing = %v, want webhook.not_found", err)
	}
}

func testWebhookEndpointConflict(t *testing.T, s WebhookStores) {
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	if err := s.Endpoints.Create(context.Background(), newEndpoint("e1", webhookT0)); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("Create taken id = %v, want a conflict", err)
	}
}

func testWebhookEndpointList(t *testing.T, s WebhookStores) {
	mustCreateEndpoint(t, s, newEndpoint("b", webhookT0.Add(2*time.Second)))
	mustCreateEndpoint(t, s, newEndpoint("c", webhookT0))
	mustCreateEndpoint(t, s, newEndpoint("a", webhookT0.Add(2*time.Second)))
	list, err := s.Endpoints.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range list {
		ids = append(ids, string(e.ID))
	}
	if want := []string{"c", "a", "b"}; !slices.Equal(ids, want) {
		t.Fatalf("List = %v, want %v", ids, want)
	}
}

func testWebhookEndpointUpdate(t *testing.T, s WebhookStores) {
	ctx := context.Background()
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	err := s.Endpoints.Update(ctx, "e1", func(e *domain.WebhookEndpoint) error {
		e.URL, e.EventTypes = "https://other.example.com/hook", []domain.EventType{domain.EventUserDeleted}
		e.Disable(domain.WebhookDisabledByCaller, webhookT0.Add(time.Minute))
		e.ID, e.CreatedAt = "changed", webhookT0.Add(time.Hour) // neither may change
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := mustGetEndpoint(t, s, "e1")
	if got.URL != "https://other.example.com/hook" || !slices.Equal(got.EventTypes, []domain.EventType{domain.EventUserDeleted}) || got.Enabled ||
		got.DisabledReason != domain.WebhookDisabledByCaller {
		t.Fatalf("after Update: %+v", got)
	}
	assertTime(t, "CreatedAt", got.CreatedAt, domain.Timestamp(webhookT0))

	boom := errors.New("boom")
	err = s.Endpoints.Update(ctx, "e1", func(e *domain.WebhookEndpoint) error {
		e.URL = "https://lost.example.com/"
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update with a failing fn = %v, want its error", err)
	}
	if got := mustGetEndpoint(t, s, "e1"); got.URL != "https://other.example.com/hook" {
		t.Fatalf("a failed update saved the URL %s", got.URL)
	}
}

func testWebhookEndpointUpdateParallel(t *testing.T, s WebhookStores) {
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	const n = 20
	errs := runParallel(n, func(int) error {
		return s.Endpoints.Update(context.Background(), "e1", func(e *domain.WebhookEndpoint) error {
			e.Description += "x"
			return nil
		})
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := mustGetEndpoint(t, s, "e1").Description; len(got) != n {
		t.Fatalf("description has %d marks after %d concurrent updates: lost writes", len(got), n)
	}
}

func testWebhookEndpointCopies(t *testing.T, s WebhookStores) {
	e := newEndpoint("e1", webhookT0)
	e.EventTypes = []domain.EventType{domain.EventUserCreated}
	mustCreateEndpoint(t, s, e)
	e.EventTypes[0] = domain.EventUserDeleted
	e.SealedSecret[0] = 'X'
	got := mustGetEndpoint(t, s, "e1")
	if got.EventTypes[0] != domain.EventUserCreated || got.SealedSecret[0] != 's' {
		t.Fatal("mutating the created value changed the stored one")
	}
	got.EventTypes[0] = domain.EventUserDeleted
	if again := mustGetEndpoint(t, s, "e1"); again.EventTypes[0] != domain.EventUserCreated {
		t.Fatal("mutating a returned value changed the stored one")
	}
}

// message returns event id of type typ created at.
func message(id string, typ domain.EventType, at time.Time) domain.WebhookMessage {
	return domain.WebhookMessage{ID: id, Type: typ, Payload: []byte(`{"type":"` + string(typ) + `","id":"` + id + `"}`), CreatedAt: at}
}

func mustEnqueue(t *testing.T, s WebhookStores, m domain.WebhookMessage, now time.Time, endpoints ...domain.WebhookEndpointID) {
	t.Helper()
	if err := s.Queue.Enqueue(context.Background(), m, endpoints, now); err != nil {
		t.Fatalf("Enqueue %s: %v", m.ID, err)
	}
}

func mustClaimDeliveries(t *testing.T, s WebhookStores, now time.Time, lease time.Duration, limit int) []ports.ClaimedDelivery {
	t.Helper()
	c, err := s.Queue.Claim(context.Background(), now, lease, limit)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	return c
}

// claimedKeys names claimed deliveries "endpoint/message", in claim order.
func claimedKeys(c []ports.ClaimedDelivery) []string {
	out := make([]string, 0, len(c))
	for _, d := range c {
		out = append(out, string(d.Delivery.EndpointID)+"/"+d.Delivery.MessageID)
	}
	return out
}

func mustListDeliveries(t *testing.T, s WebhookStores, q ports.WebhookDeliveryQuery) ([]domain.WebhookDelivery, *domain.Position) {
	t.Helper()
	list, next, err := s.Log.ListDeliveries(context.Background(), q)
	if err != nil {
		t.Fatalf("ListDeliveries: %v", err)
	}
	return list, next
}

func mustDelivery(t *testing.T, s WebhookStores, endpoint domain.WebhookEndpointID, msg string) domain.WebhookDelivery {
	t.Helper()
	list, _ := mustListDeliveries(t, s, ports.WebhookDeliveryQuery{Endpoint: endpoint, Limit: 100})
	for _, d := range list {
		if d.MessageID == msg {
			return d
		}
	}
	t.Fatalf("endpoint %s has no delivery of %s", endpoint, msg)
	return domain.WebhookDelivery{}
}

func testWebhookEnqueue(t *testing.T, s WebhookStores) {
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	mustCreateEndpoint(t, s, newEndpoint("e2", webhookT0))
	m := message("msg_1", domain.EventUserCreated, webhookT0)
	mustEnqueue(t, s, m, webhookT0.Add(time.Second), "e1", "e2")
	// Again, with another payload: nothing changes, nothing is doubled.
	again := m
	again.Payload = []byte(`{"other":true}`)
	mustEnqueue(t, s, again, webhookT0.Add(time.Minute), "e1", "e2")
	// A message for no endpoint is kept too (a replay may want it).
	mustEnqueue(t, s, message("msg_2", domain.EventUserDeleted, webhookT0), webhookT0)

	for _, e := range []domain.WebhookEndpointID{"e1", "e2"} {
		list, _ := mustListDeliveries(t, s, ports.WebhookDeliveryQuery{Endpoint: e, Limit: 10})
		if len(list) != 1 {
			t.Fatalf("endpoint %s has %d deliveries, want 1", e, len(list))
		}
		d := list[0]
		if d.MessageID != "msg_1" || d.EventType != domain.EventUserCreated || d.Status != domain.WebhookPending || d.Attempts != 0 || d.LastAttempt != nil {
			t.Fatalf("delivery = %+v", d)
		}
		assertTime(t, "NextAttemptAt", d.NextAttemptAt, domain.Timestamp(webhookT0.Add(time.Second)))
		assertTime(t, "CreatedAt", d.CreatedAt, domain.Timestamp(webhookT0))
	}
	c := mustClaimDeliveries(t, s, webhookT0.Add(time.Hour), time.Minute, 10)
	if len(c) != 2 || string(c[0].Message.Payload) != string(m.Payload) {
		t.Fatalf("claimed %v with payload %s, want both deliveries with the first payload", claimedKeys(c), c[0].Message.Payload)
	}
}

func testWebhookClaim(t *testing.T, s WebhookStores) {
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	mustEnqueue(t, s, message("m-late", domain.EventUserCreated, webhookT0), webhookT0.Add(3*time.Second), "e1")
	mustEnqueue(t, s, message("m-early", domain.EventUserCreated, webhookT0), webhookT0.Add(time.Second), "e1")
	mustEnqueue(t, s, message("m-future", domain.EventUserCreated, webhookT0), webhookT0.Add(time.Hour), "e1")
	mustEnqueue(t, s, message("m-mid", domain.EventUserCreated, webhookT0), webhookT0.Add(2*time.Second), "e1")
	now := webhookT0.Add(10 * time.Second)

	got := claimedKeys(mustClaimDeliveries(t, s, now, time.Minute, 2))
	if want := []string{"e1/m-early", "e1/m-mid"}; !slices.Equal(got, want) {
		t.Fatalf("first claim = %v, want %v", got, want)
	}
	got = claimedKeys(mustClaimDeliveries(t, s, now, time.Minute, 10))
	if want := []string{"e1/m-late"}; !slices.Equal(got, want) {
		t.Fatalf("second claim = %v, want %v (the claimed ones hidden, the future one not due)", got, want)
	}
	if d := mustDelivery(t, s, "e1", "m-early"); !d.NextAttemptAt.Equal(domain.Timestamp(now.Add(time.Minute))) || d.Status != domain.WebhookPending {
		t.Fatalf("a claimed delivery = %+v, want pending until the lease ends", d)
	}
	// The claimer died: once the lease ends the deliveries come back (all
	// due at once: in any order).
	got = claimedKeys(mustClaimDeliveries(t, s, now.Add(time.Minute), time.Minute, 10))
	slices.Sort(got)
	if want := []string{"e1/m-early", "e1/m-late", "e1/m-mid"}; !slices.Equal(got, want) {
		t.Fatalf("claim after the lease = %v, want %v", got, want)
	}
	// A finished delivery is never claimed.
	mustRecord(t, s, attempt("a1", "e1", "m-early", now, 200), domain.WebhookSucceeded, time.Time{})
	got = claimedKeys(mustClaimDeliveries(t, s, now.Add(time.Hour), time.Minute, 10))
	slices.Sort(got)
	if want := []string{"e1/m-future", "e1/m-late", "e1/m-mid"}; !slices.Equal(got, want) {
		t.Fatalf("claim after success = %v, want %v", got, want)
	}
}

func testWebhookClaimParallel(t *testing.T, s WebhookStores) {
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	const n = 40
	for i := range n {
		mustEnqueue(t, s, message(fmt.Sprintf("m%02d", i), domain.EventUserCreated, webhookT0), webhookT0, "e1")
	}
	var mu sync.Mutex
	seen := map[string]int{}
	errs := runParallel(8, func(int) error {
		for {
			c, err := s.Queue.Claim(context.Background(), webhookT0.Add(time.Second), time.Hour, 3)
			if err != nil || len(c) == 0 {
				return err
			}
			mu.Lock()
			for _, k := range claimedKeys(c) {
				seen[k]++
			}
			mu.Unlock()
		}
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != n {
		t.Fatalf("claimed %d distinct deliveries, want %d", len(seen), n)
	}
	for k, c := range seen {
		if c != 1 {
			t.Fatalf("delivery %s was claimed %d times", k, c)
		}
	}
}

func attempt(id, endpoint, msg string, at time.Time, status int) domain.WebhookAttempt {
	a := domain.WebhookAttempt{ID: id, EndpointID: domain.WebhookEndpointID(endpoint), MessageID: msg, At: at, StatusCode: status,
		Latency: 1234 * time.Millisecond, Response: "ok " + id}
	if status == 0 {
		a.Error, a.Response = "connection refused", ""
	}
	return a
}

// mustRecord records a as the attempt of a claim of its delivery as it
// stands (due at its NextAttemptAt).
func mustRecord(t *testing.T, s WebhookStores, a domain.WebhookAttempt, status domain.WebhookDeliveryStatus, next time.Time) {
	t.Helper()
	claimed := mustDelivery(t, s, a.EndpointID, a.MessageID).NextAttemptAt
	if err := s.Queue.Record(context.Background(), a, claimed, status, next); err != nil {
		t.Fatalf("Record %s: %v", a.ID, err)
	}
}

func testWebhookRecord(t *testing.T, s WebhookStores) {
	ctx := context.Background()
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	mustEnqueue(t, s, message("m1", domain.EventUserCreated, webhookT0), webhookT0, "e1")
	mustRecord(t, s, attempt("a1", "e1", "m1", webhookT0.Add(time.Second), 0), domain.WebhookPending, webhookT0.Add(time.Minute))
	d := mustDelivery(t, s, "e1", "m1")
	if d.Status != domain.WebhookPending || d.Attempts != 1 || d.LastAttempt == nil || d.LastAttempt.Error != "connection refused" {
		t.Fatalf("after a failed attempt: %+v", d)
	}
	assertTime(t, "NextAttemptAt", d.NextAttemptAt, domain.Timestamp(webhookT0.Add(time.Minute)))
	mustRecord(t, s, attempt("a2", "e1", "m1", webhookT0.Add(2*time.Minute), 503), domain.WebhookPending, webhookT0.Add(time.Hour))
	mustRecord(t, s, attempt("a3", "e1", "m1", webhookT0.Add(3*time.Minute), 204), domain.WebhookSucceeded, webhookT0.Add(time.Hour))
	d = mustDelivery(t, s, "e1", "m1")
	if d.Status != domain.WebhookSucceeded || d.Attempts != 3 || !d.NextAttemptAt.IsZero() {
		t.Fatalf("after success: %+v, want succeeded after 3 attempts, not due", d)
	}
	want := attempt("a3", "e1", "m1", webhookT0.Add(3*time.Minute), 204)
	want.At = domain.Timestamp(want.At)
	if d.LastAttempt == nil || *d.LastAttempt != want {
		t.Fatalf("last attempt = %+v, want %+v", d.LastAttempt, want)
	}
	attempts, err := s.Log.ListAttempts(ctx, "e1", "m1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range attempts {
		ids = append(ids, a.ID)
	}
	if !slices.Equal(ids, []string{"a1", "a2", "a3"}) || attempts[1].StatusCode != 503 || attempts[0].Latency != 1234*time.Millisecond {
		t.Fatalf("attempts = %+v", attempts)
	}
	if _, err := s.Log.ListAttempts(ctx, "e1", "nope"); !errors.Is(err, domain.ErrWebhookMessageNotFound) {
		t.Fatalf("ListAttempts of an unknown message = %v, want webhook.message_not_found", err)
	}
	// A delivery without attempts has an empty list.
	mustEnqueue(t, s, message("m2", domain.EventUserCreated, webhookT0), webhookT0, "e1")
	if a, err := s.Log.ListAttempts(ctx, "e1", "m2"); err != nil || len(a) != 0 {
		t.Fatalf("ListAttempts before any = %v, %v", a, err)
	}
}

func testWebhookRecordDeleted(t *testing.T, s WebhookStores) {
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	mustEnqueue(t, s, message("m1", domain.EventUserCreated, webhookT0), webhookT0, "e1")
	if err := s.Endpoints.Delete(context.Background(), "e1"); err != nil {
		t.Fatal(err)
	}
	err := s.Queue.Record(context.Background(), attempt("a1", "e1", "m1", webhookT0, 200), webhookT0, domain.WebhookSucceeded, time.Time{})
	if !errors.Is(err, domain.ErrWebhookMessageNotFound) {
		t.Fatalf("Record for a deleted endpoint = %v, want webhook.message_not_found", err)
	}
}

// A replay while an attempt runs is not undone by the attempt's record,
// nor is a later claim's lease by the record of an attempt that outlived
// its own: the attempt is stored, and the delivery stays with the change.
func testWebhookRecordAfterChange(t *testing.T, s WebhookStores) {
	ctx := context.Background()
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	mustEnqueue(t, s, message("m1", domain.EventUserCreated, webhookT0), webhookT0, "e1")
	mustEnqueue(t, s, message("m2", domain.EventUserCreated, webhookT0), webhookT0, "e1")

	// m1: claimed, replayed while its attempt runs, then the attempt is
	// recorded as a success.
	first := mustClaimDeliveries(t, s, webhookT0.Add(time.Second), time.Minute, 2)
	if len(first) != 2 {
		t.Fatalf("claimed %v, want both deliveries", claimedKeys(first))
	}
	byMsg := map[string]ports.ClaimedDelivery{first[0].Delivery.MessageID: first[0], first[1].Delivery.MessageID: first[1]}
	replayed := webhookT0.Add(2 * time.Second)
	if err := s.Queue.Replay(ctx, "e1", "m1", replayed); err != nil {
		t.Fatal(err)
	}
	if err := s.Queue.Record(ctx, attempt("a1", "e1", "m1", webhookT0.Add(3*time.Second), 204), byMsg["m1"].Delivery.NextAttemptAt,
		domain.WebhookSucceeded, time.Time{}); err != nil {
		t.Fatalf("Record after a replay: %v", err)
	}
	d := mustDelivery(t, s, "e1", "m1")
	if d.Status != domain.WebhookPending || d.Attempts != 0 || d.LastAttempt == nil || d.LastAttempt.ID != "a1" {
		t.Fatalf("replayed during its attempt, then recorded: %+v, want pending with no attempt counted and a1 as its last", d)
	}
	assertTime(t, "NextAttemptAt", d.NextAttemptAt, domain.Timestamp(replayed))

	// m2: its first claim's lease ends, a second claim takes it, and the
	// first attempt's record comes late.
	second := mustClaimDeliveries(t, s, webhookT0.Add(2*time.Minute), time.Minute, 10)
	keys := claimedKeys(second)
	if !slices.Contains(keys, "e1/m2") || !slices.Contains(keys, "e1/m1") {
		t.Fatalf("second claim took %v, want the replayed m1 and m2, whose lease ended", keys)
	}
	var again ports.ClaimedDelivery
	for _, c := range second {
		if c.Delivery.MessageID == "m2" {
			again = c
		}
	}
	if err := s.Queue.Record(ctx, attempt("a2", "e1", "m2", webhookT0.Add(2*time.Minute), 0), byMsg["m2"].Delivery.NextAttemptAt,
		domain.WebhookPending, webhookT0.Add(time.Hour)); err != nil {
		t.Fatalf("Record of an attempt that outlived its lease: %v", err)
	}
	d = mustDelivery(t, s, "e1", "m2")
	if d.Status != domain.WebhookPending || d.Attempts != 0 {
		t.Fatalf("after the late record: %+v, want the second claim's delivery untouched", d)
	}
	assertTime(t, "NextAttemptAt", d.NextAttemptAt, again.Delivery.NextAttemptAt)
	if err := s.Queue.Record(ctx, attempt("a3", "e1", "m2", webhookT0.Add(2*time.Minute+time.Second), 204), again.Delivery.NextAttemptAt,
		domain.WebhookSucceeded, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if d = mustDelivery(t, s, "e1", "m2"); d.Status != domain.WebhookSucceeded || d.Attempts != 1 {
		t.Fatalf("after the second claim's record: %+v, want succeeded after 1 counted attempt", d)
	}
	if a, err := s.Log.ListAttempts(ctx, "e1", "m2"); err != nil || len(a) != 2 {
		t.Fatalf("attempts of m2 = %v, %v, want both stored", a, err)
	}
}

func testWebhookReplay(t *testing.T, s WebhookStores) {
	ctx := context.Background()
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	mustEnqueue(t, s, message("m1", domain.EventUserCreated, webhookT0), webhookT0, "e1")
	mustRecord(t, s, attempt("a1", "e1", "m1", webhookT0, 500), domain.WebhookFailed, time.Time{})
	if c := mustClaimDeliveries(t, s, webhookT0.Add(time.Hour), time.Minute, 10); len(c) != 0 {
		t.Fatalf("a failed delivery was claimed: %v", claimedKeys(c))
	}
	now := webhookT0.Add(2 * time.Hour)
	if err := s.Queue.Replay(ctx, "e1", "m1", now); err != nil {
		t.Fatal(err)
	}
	d := mustDelivery(t, s, "e1", "m1")
	if d.Status != domain.WebhookPending || d.Attempts != 0 || d.LastAttempt == nil {
		t.Fatalf("after replay: %+v, want pending, attempts counted afresh, the last attempt kept", d)
	}
	if got := claimedKeys(mustClaimDeliveries(t, s, now, time.Minute, 10)); !slices.Equal(got, []string{"e1/m1"}) {
		t.Fatalf("claim after replay = %v", got)
	}
	if err := s.Queue.Replay(ctx, "e1", "nope", now); !errors.Is(err, domain.ErrWebhookMessageNotFound) {
		t.Fatalf("Replay unknown = %v, want webhook.message_not_found", err)
	}
}

func testWebhookReplaySince(t *testing.T, s WebhookStores) {
	ctx := context.Background()
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	mustCreateEndpoint(t, s, newEndpoint("e2", webhookT0))
	mustEnqueue(t, s, message("m-old", domain.EventUserCreated, webhookT0), webhookT0, "e1")
	mustEnqueue(t, s, message("m-had", domain.EventUserCreated, webhookT0.Add(time.Hour)), webhookT0, "e1")
	mustEnqueue(t, s, message("m-other", domain.EventUserCreated, webhookT0.Add(2*time.Hour)), webhookT0, "e2")
	mustEnqueue(t, s, message("m-type", domain.EventDomainVerified, webhookT0.Add(3*time.Hour)), webhookT0, "e2")
	mustRecord(t, s, attempt("a1", "e1", "m-had", webhookT0, 200), domain.WebhookSucceeded, time.Time{})
	mustRecord(t, s, attempt("a2", "e1", "m-old", webhookT0, 200), domain.WebhookSucceeded, time.Time{})

	now := webhookT0.Add(4 * time.Hour)
	n, err := s.Queue.ReplaySince(ctx, "e1", webhookT0.Add(time.Hour), []domain.EventType{domain.EventUserCreated}, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("ReplaySince = %d, want 2 (m-had reset, m-other created)", n)
	}
	list, _ := mustListDeliveries(t, s, ports.WebhookDeliveryQuery{Endpoint: "e1", Limit: 10})
	got := map[string]domain.WebhookDeliveryStatus{}
	for _, d := range list {
		got[d.MessageID] = d.Status
	}
	want := map[string]domain.WebhookDeliveryStatus{"m-old": domain.WebhookSucceeded, "m-had": domain.WebhookPending, "m-other": domain.WebhookPending}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("deliveries after ReplaySince = %v, want %v", got, want)
	}
	// Every type when none is given.
	if n, err := s.Queue.ReplaySince(ctx, "e1", webhookT0.Add(3*time.Hour), nil, now); err != nil || n != 1 {
		t.Fatalf("ReplaySince every type = %d, %v; want 1", n, err)
	}
	if d := mustDelivery(t, s, "e1", "m-type"); d.EventType != domain.EventDomainVerified || d.Status != domain.WebhookPending {
		t.Fatalf("created delivery = %+v", d)
	}
}

func testWebhookPurge(t *testing.T, s WebhookStores) {
	ctx := context.Background()
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	mustEnqueue(t, s, message("m-old", domain.EventUserCreated, webhookT0), webhookT0, "e1")
	mustEnqueue(t, s, message("m-new", domain.EventUserCreated, webhookT0.Add(time.Hour)), webhookT0, "e1")
	mustRecord(t, s, attempt("a1", "e1", "m-old", webhookT0, 200), domain.WebhookSucceeded, time.Time{})
	n, err := s.Queue.Purge(ctx, webhookT0.Add(time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v; want 1", n, err)
	}
	list, _ := mustListDeliveries(t, s, ports.WebhookDeliveryQuery{Endpoint: "e1", Limit: 10})
	if len(list) != 1 || list[0].MessageID != "m-new" {
		t.Fatalf("deliveries after Purge = %+v, want m-new alone", list)
	}
	if _, err := s.Log.ListAttempts(ctx, "e1", "m-old"); !errors.Is(err, domain.ErrWebhookMessageNotFound) {
		t.Fatalf("attempts of a purged message = %v, want webhook.message_not_found", err)
	}
	// A purged message is gone from replays too.
	if n, err := s.Queue.ReplaySince(ctx, "e1", webhookT0, nil, webhookT0.Add(2*time.Hour)); err != nil || n != 1 {
		t.Fatalf("ReplaySince after Purge = %d, %v; want 1", n, err)
	}
}

func testWebhookListDeliveries(t *testing.T, s WebhookStores) {
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	mustCreateEndpoint(t, s, newEndpoint("e2", webhookT0))
	// Five messages, two at the same instant (ids break the tie, byte
	// order: "m-B" < "m-a"), and one for another endpoint.
	for i, id := range []string{"m-1", "m-2", "m-a", "m-B", "m-5"} {
		at := webhookT0.Add(time.Duration(min(i, 2)) * time.Minute)
		if i == 4 {
			at = webhookT0.Add(time.Hour)
		}
		mustEnqueue(t, s, message(id, domain.EventUserCreated, at), webhookT0, "e1")
	}
	mustEnqueue(t, s, message("m-e2", domain.EventUserCreated, webhookT0.Add(time.Hour)), webhookT0, "e2")
	mustRecord(t, s, attempt("a1", "e1", "m-2", webhookT0, 0), domain.WebhookFailed, time.Time{})

	var pages [][]string
	q := ports.WebhookDeliveryQuery{Endpoint: "e1", Limit: 2}
	for {
		list, next := mustListDeliveries(t, s, q)
		var ids []string
		for _, d := range list {
			ids = append(ids, d.MessageID)
		}
		pages = append(pages, ids)
		if next == nil {
			break
		}
		q.After = next
	}
	if got, want := fmt.Sprint(pages), "[[m-5 m-a] [m-B m-2] [m-1]]"; got != want {
		t.Fatalf("pages = %s, want %s", got, want)
	}
	list, next := mustListDeliveries(t, s, ports.WebhookDeliveryQuery{Endpoint: "e1", Status: domain.WebhookFailed, Limit: 10})
	if len(list) != 1 || list[0].MessageID != "m-2" || next != nil || list[0].LastAttempt == nil ||
		!strings.Contains(list[0].LastAttempt.Error, "refused") {
		t.Fatalf("failed deliveries = %+v", list)
	}
}

func testWebhookEndpointDeleteCascade(t *testing.T, s WebhookStores) {
	ctx := context.Background()
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	mustCreateEndpoint(t, s, newEndpoint("e2", webhookT0))
	mustEnqueue(t, s, message("m1", domain.EventUserCreated, webhookT0), webhookT0, "e1", "e2")
	mustRecord(t, s, attempt("a1", "e1", "m1", webhookT0, 500), domain.WebhookPending, webhookT0)
	if err := s.Endpoints.Delete(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Endpoints.Get(ctx, "e1"); !errors.Is(err, domain.ErrWebhookNotFound) {
		t.Fatalf("Get deleted = %v", err)
	}
	if _, err := s.Log.ListAttempts(ctx, "e1", "m1"); !errors.Is(err, domain.ErrWebhookMessageNotFound) {
		t.Fatalf("attempts of a deleted endpoint = %v, want webhook.message_not_found", err)
	}
	if got := claimedKeys(mustClaimDeliveries(t, s, webhookT0.Add(time.Hour), time.Minute, 10)); !slices.Equal(got, []string{"e2/m1"}) {
		t.Fatalf("claim after deleting e1 = %v, want e2/m1 alone", got)
	}
}

func testWebhookUnitOfWork(t *testing.T, s WebhookStores) {
	ctx := context.Background()
	mustCreateEndpoint(t, s, newEndpoint("e1", webhookT0))
	boom := errors.New("boom")
	err := s.UnitOfWork.Do(ctx, func(ctx context.Context) error {
		if err := s.Queue.Enqueue(ctx, message("m1", domain.EventUserCreated, webhookT0), []domain.WebhookEndpointID{"e1"}, webhookT0); err != nil {
			return err
		}
		if err := s.Endpoints.Update(ctx, "e1", func(e *domain.WebhookEndpoint) error { e.Description = "lost"; return nil }); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Do = %v, want its error", err)
	}
	if list, _ := mustListDeliveries(t, s, ports.WebhookDeliveryQuery{Endpoint: "e1", Limit: 10}); len(list) != 0 {
		t.Fatalf("a rolled-back unit left deliveries: %+v", list)
	}
	if n, err := s.Queue.ReplaySince(ctx, "e1", webhookT0.Add(-time.Hour), nil, webhookT0); err != nil || n != 0 {
		t.Fatalf("a rolled-back unit left its message: ReplaySince = %d, %v", n, err)
	}
	if e := mustGetEndpoint(t, s, "e1"); e.Description != "" {
		t.Fatalf("a rolled-back unit changed the endpoint: %q", e.Description)
	}
	// Committed, it keeps them.
	err = s.UnitOfWork.Do(ctx, func(ctx context.Context) error {
		return s.Queue.Enqueue(ctx, message("m1", domain.EventUserCreated, webhookT0), []domain.WebhookEndpointID{"e1"}, webhookT0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := mustListDeliveries(t, s, ports.WebhookDeliveryQuery{Endpoint: "e1", Limit: 10}); len(list) != 1 {
		t.Fatalf("a committed unit's deliveries: %+v", list)
	}
}
