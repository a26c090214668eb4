package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/adapters/webhookclient"
	"github.com/gatehouse/gatehouse/application/outbox"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/application/webhook"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// world is the webhook use cases on the use-case world's in-memory store,
// its fake clock and outbox, with a receiver on loopback.
type world struct {
	*usecasetest.AdminWorld
	hooks    *webhook.Webhooks
	fanout   *webhook.Fanout
	sender   *webhook.Sender
	queue    *memory.WebhookQueue
	key      usecase.TrustedRequest
	observed *observer
	recv     *receiver
}

// observer counts the sender's outcomes.
type observer struct {
	mu  sync.Mutex
	got map[string]int
}

func (o *observer) WebhookDelivery(outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got[outcome]++
}

// receiver records requests and answers with the next of its statuses
// (the last one once they run out).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	got      []*http.Request
	bodies   []string
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got, r.bodies = append(r.got, req), append(r.bodies, string(b))
		status := r.statuses[min(len(r.got)-1, len(r.statuses)-1)]
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "answer "+strconv.Itoa(status))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func newWorld(t *testing.T, settings webhook.Settings, statuses ...int) *world {
	t.Helper()
	w := &world{AdminWorld: usecasetest.NewAdminWorld(t), observed: &observer{got: map[string]int{}}, recv: newReceiver(t, statuses...)}
	sealer, err := signingkeys.NewSecretSealer(signingkeys.Secrets{"webhook-test-secret-0123456789-abcdefghijklmnop"})
	if err != nil {
		t.Fatal(err)
	}
	endpoints := memory.NewWebhookEndpointRepository(w.DB)
	w.queue = memory.NewWebhookQueue(w.DB)
	wake := webhook.NewWake()
	ids := system.NewIDGenerator()
	admin := usecase.AdminSettings{Admins: w.Admins}
	w.hooks = webhook.NewWebhooks(endpoints, w.queue, w.queue, sealer, system.NewTokenGenerator(), ids, w.Clock, w.Auditor,
		memory.NewPasskeyRepository(w.DB), wake, admin, w.Settings, settings)
	w.fanout = webhook.NewFanout(memory.NewUnitOfWork(w.DB), w.Outbox, endpoints, w.queue, w.Clock, wake)
	poster := webhookclient.New(webhookclient.Config{AllowPrivate: settings.AllowPrivate, Timeout: 5 * time.Second})
	w.sender = webhook.NewSender(memory.NewUnitOfWork(w.DB), endpoints, w.queue, poster, sealer, w.Users, w.Mail, w.Auditor, ids, w.Clock,
		w.observed, wake, admin, settings)
	k, err := w.Keys.Create(t.Context(), usecase.KeyRequest{Actor: usecase.CLIActor}, servicekeyCommand())
	if err != nil {
		t.Fatal(err)
	}
	w.key = usecase.TrustedRequest{Key: k.Key}
	return w
}

// register adds an endpoint at the receiver for eventTypes.
func (w *world) register(t *testing.T, path string, eventTypes ...string) webhook.IssuedWebhook {
	t.Helper()
	issued, err := w.hooks.Create(t.Context(), w.key, webhook.CreateWebhook{URL: w.recv.URL + path, EventTypes: eventTypes})
	if err != nil {
		t.Fatal(err)
	}
	return issued
}

// fanOut runs fan-out passes until the outbox's events are gone.
func (w *world) fanOut(t *testing.T) {
	t.Helper()
	if _, err := fanoutRelay(w, w.fanout).Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st, _ := w.Outbox.Stats(t.Context()); st[ports.OutboxEvents].Depth != 0 {
		t.Fatalf("%d events left in the outbox after fan-out", st[ports.OutboxEvents].Depth)
	}
}

func (w *world) send(t *testing.T) webhook.SendReport {
	t.Helper()
	rep, err := w.sender.Pass(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func (w *world) deliveries(t *testing.T, id domain.WebhookEndpointID) []domain.WebhookDelivery {
	t.Helper()
	page, err := w.hooks.Messages(t.Context(), w.key, id, webhook.ListMessages{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Deliveries
}

// mustVerify checks a received request's signatures against secrets, each
// of which must match one.
func mustVerify(t *testing.T, r *http.Request, body string, secrets ...string) {
	t.Helper()
	ts, err := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
	if err != nil {
		t.Fatalf("webhook-timestamp %q", r.Header.Get("webhook-timestamp"))
	}
	sigs := strings.Split(r.Header.Get("webhook-signature"), " ")
	if len(sigs) != len(secrets) {
		t.Fatalf("%d signatures, want %d", len(sigs), len(secrets))
	}
	for i, s := range secrets {
		key, ok := domain.ParseWebhookSecret(s)
		if !ok {
			t.Fatalf("secret %q does not parse", s)
		}
		if want := domain.SignWebhook(key, r.Header.Get("webhook-id"), time.Unix(ts, 0), []byte(body)); sigs[i] != want {
			t.Fatalf("signature %d = %s, want %s", i, sigs[i], want)
		}
	}
}

func settings() webhook.Settings {
	return webhook.Settings{AllowPrivate: true, Schedule: []time.Duration{5 * time.Second, 5 * time.Minute}, DisableAfter: time.Hour}
}

// Ensure an event reaches the endpoints that want it and no other, signed,
// once fanned out; failures are retried on the schedule with the same id
// and a current timestamp, until one succeeds.
func TestSender_retries_with_the_same_id_until_success(t *testing.T) {
	w := newWorld(t, settings(), 500, 503, 204)
	hook := w.register(t, "/users", "user.created")
	other := w.register(t, "/domains", "domain.verified")
	w.MustSignUp(t, "ada@example.com")
	w.fanOut(t)
	if len(w.deliveries(t, other.Endpoint.ID)) != 0 {
		t.Fatal("an endpoint that does not want user.created got a delivery")
	}

	start := w.Clock.Now()
	if rep := w.send(t); rep.Claimed != 1 || rep.Retrying != 1 {
		t.Fatalf("first pass = %+v", rep)
	}
	d := w.deliveries(t, hook.Endpoint.ID)[0]
	if d.Status != domain.WebhookPending || d.Attempts != 1 || d.LastAttempt.StatusCode != 500 {
		t.Fatalf("after the first attempt: %+v", d)
	}
	if wait := d.NextAttemptAt.Sub(start); wait < 4500*time.Millisecond || wait > 5500*time.Millisecond {
		t.Fatalf("the first retry is due after %s, want 5 s ± 10 %%", wait)
	}
	if rep := w.send(t); rep.Claimed != 0 {
		t.Fatalf("a delivery was claimed before it was due: %+v", rep)
	}
	w.Clock.Advance(6 * time.Second)
	w.send(t)
	w.Clock.Advance(6 * time.Minute)
	if rep := w.send(t); rep.Succeeded != 1 {
		t.Fatalf("third pass = %+v", rep)
	}
	d = w.deliveries(t, hook.Endpoint.ID)[0]
	if d.Status != domain.WebhookSucceeded || d.Attempts != 3 || !d.NextAttemptAt.IsZero() {
		t.Fatalf("after success: %+v", d)
	}

	if w.recv.count() != 3 {
		t.Fatalf("the receiver got %d requests, want 3", w.recv.count())
	}
	var stamps []int64
	for i, r := range w.recv.got {
		if r.Header.Get("webhook-id") != d.MessageID || !strings.HasPrefix(d.MessageID, "msg_") {
			t.Fatalf("attempt %d carried webhook-id %q, want %s", i, r.Header.Get("webhook-id"), d.MessageID)
		}
		mustVerify(t, r, w.recv.bodies[i], hook.Secret)
		ts, _ := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
		stamps = append(stamps, ts)
		if r.Header.Get("Content-Type") != "application/json" || !strings.Contains(w.recv.bodies[i], `"type":"user.created"`) {
			t.Fatalf("attempt %d: %s %s", i, r.Header.Get("Content-Type"), w.recv.bodies[i])
		}
	}
	if stamps[0] != start.Unix() || stamps[1] <= stamps[0] || stamps[2] <= stamps[1] {
		t.Fatalf("timestamps %v: each attempt must be signed when sent", stamps)
	}
	attempts, err := w.hooks.Attempts(t.Context(), w.key, hook.Endpoint.ID, d.MessageID)
	if err != nil || len(attempts) != 3 || attempts[1].StatusCode != 503 || attempts[1].Response != "answer 503" || attempts[1].Error != "status 503" {
		t.Fatalf("attempts = %+v, %v", attempts, err)
	}
	if w.observed.got["retrying"] != 2 || w.observed.got["succeeded"] != 1 {
		t.Fatalf("observed %v", w.observed.got)
	}
}

// Ensure a delivery fails once the schedule is spent, and that a replay
// sends it again with the same id and a fresh schedule.
func TestSender_fails_after_the_schedule_and_replays(t *testing.T) {
	s := settings()
	s.DisableAfter = 24 * time.Hour
	w := newWorld(t, s, 500, 500, 500, 200)
	hook := w.register(t, "/users", "user.created")
	w.MustSignUp(t, "ada@example.com")
	w.fanOut(t)
	w.send(t)
	w.Clock.Advance(time.Minute)
	w.send(t)
	w.Clock.Advance(time.Hour)
	if rep := w.send(t); rep.Failed != 1 {
		t.Fatalf("last pass = %+v, want the delivery failed", rep)
	}
	d := w.deliveries(t, hook.Endpoint.ID)[0]
	if d.Status != domain.WebhookFailed || d.Attempts != 3 {
		t.Fatalf("after the schedule: %+v", d)
	}
	if err := w.hooks.Replay(t.Context(), w.key, hook.Endpoint.ID, d.MessageID); err != nil {
		t.Fatal(err)
	}
	if rep := w.send(t); rep.Succeeded != 1 {
		t.Fatalf("pass after replay = %+v", rep)
	}
	if got := w.recv.got[3].Header.Get("webhook-id"); got != d.MessageID {
		t.Fatalf("the replay carried %s, want %s", got, d.MessageID)
	}
	err := w.hooks.Replay(t.Context(), w.key, hook.Endpoint.ID, "msg_nope")
	usecasetest.MustCode(t, err, "webhook.message_not_found")
}

// Ensure an endpoint failing with no success for DisableAfter is disabled
// at its next failure, in one unit of work with its audit entry, and the
// platform administrators get a mail; its pending deliveries then fail
// without an attempt.
func TestSender_disables_an_endpoint_failing_for_too_long(t *testing.T) {
	s := settings()
	s.Schedule = []time.Duration{time.Hour, time.Hour, time.Hour}
	w := newWorld(t, s, 500)
	hook := w.register(t, "/down", "user.created")
	w.MustSignUp(t, "ada@example.com")
	w.MustSignUp(t, "bob@example.com")
	w.fanOut(t)
	w.send(t) // two failures: failing since now
	if e, _ := w.hooks.Get(t.Context(), w.key, hook.Endpoint.ID); !e.Enabled || e.FailingSince.IsZero() {
		t.Fatalf("after the first failures: %+v", e)
	}
	w.Clock.Advance(67 * time.Minute) // past the retry (1 h ± 10 %) and the threshold
	rep := w.send(t)
	if len(rep.Disabled) != 1 || rep.Disabled[0].ID != hook.Endpoint.ID {
		t.Fatalf("pass past the threshold = %+v", rep)
	}
	e, _ := w.hooks.Get(t.Context(), w.key, hook.Endpoint.ID)
	if e.Enabled || e.DisabledReason != domain.WebhookDisabledFailing {
		t.Fatalf("endpoint = %+v", e)
	}
	m := w.Mail.Last(t, domain.MailWebhookDisabled)
	if m.To != "boss@example.com" || m.WebhookID != string(hook.Endpoint.ID) || m.WebhookURL != hook.Endpoint.URL {
		t.Fatalf("mail = %+v", m)
	}
	entries, err := w.Audit.List(t.Context(), ports.AuditQuery{Action: "webhooks.disable", Limit: 10})
	if err != nil || len(entries) != 1 || entries[0].ActorType != domain.ActorSystem || entries[0].TargetID != string(hook.Endpoint.ID) {
		t.Fatalf("audit = %+v, %v", entries, err)
	}
	// A new event does not reach it; its pending deliveries fail unattempted.
	n := w.recv.count()
	w.MustSignUp(t, "cy@example.com")
	w.fanOut(t)
	w.Clock.Advance(2 * time.Hour)
	if rep := w.send(t); rep.Failed == 0 || w.recv.count() != n {
		t.Fatalf("after disabling: %+v, receiver %d → %d", rep, n, w.recv.count())
	}
	for _, d := range w.deliveries(t, hook.Endpoint.ID) {
		if d.Status != domain.WebhookFailed {
			t.Fatalf("delivery %+v of a disabled endpoint", d)
		}
	}
	if w.Mail.Count(domain.MailWebhookDisabled) != 1 {
		t.Fatal("the administrators were told twice")
	}
}

// Ensure that after a rotation both secrets sign, until the overlap ends.
func TestSender_signs_with_both_secrets_during_the_overlap(t *testing.T) {
	s := settings()
	s.SecretOverlap = time.Hour
	w := newWorld(t, s, 204)
	hook := w.register(t, "/rotate", "user.created")
	rotated, err := w.hooks.RotateSecret(t.Context(), w.key, hook.Endpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	w.MustSignUp(t, "ada@example.com")
	w.fanOut(t)
	w.send(t)
	mustVerify(t, w.recv.got[0], w.recv.bodies[0], rotated.Secret, hook.Secret)

	w.Clock.Advance(time.Hour)
	w.MustSignUp(t, "bob@example.com")
	w.fanOut(t)
	w.send(t)
	mustVerify(t, w.recv.got[1], w.recv.bodies[1], rotated.Secret)
}

// Ensure a name that resolves to loopback is refused when connecting,
// unless private targets are allowed: the attempt fails, nothing is sent.
func TestSender_refuses_private_addresses_when_connecting(t *testing.T) {
	s := settings()
	s.AllowPrivate = false
	w := newWorld(t, s, 204)
	url := strings.Replace(w.recv.URL, "http://127.0.0.1", "https://localhost", 1)
	hook, err := w.hooks.Create(t.Context(), w.key, webhook.CreateWebhook{URL: url, EventTypes: []string{"user.created"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.hooks.Create(t.Context(), w.key, webhook.CreateWebhook{URL: w.recv.URL})
	usecasetest.MustCode(t, err, "webhook.invalid")
	w.MustSignUp(t, "ada@example.com")
	w.fanOut(t)
	w.send(t)
	d := w.deliveries(t, hook.Endpoint.ID)[0]
	if d.LastAttempt == nil || !strings.HasPrefix(d.LastAttempt.Error, "refused: ") || d.LastAttempt.StatusCode != 0 || w.recv.count() != 0 {
		t.Fatalf("delivery = %+v (receiver got %d)", d.LastAttempt, w.recv.count())
	}
}

// failingQueue stores what Enqueue asks and then fails, as a database that
// breaks before the commit would.
type failingQueue struct{ ports.WebhookQueue }

func (q failingQueue) Enqueue(ctx context.Context, m domain.WebhookMessage, endpoints []domain.WebhookEndpointID, now time.Time) error {
	if err := q.WebhookQueue.Enqueue(ctx, m, endpoints, now); err != nil {
		return err
	}
	return errors.New("disk full")
}

// Ensure the fan-out keeps the event in the outbox, and no delivery, when
// writing the deliveries fails; and that fanning out again after success
// adds nothing.
func TestFanout_is_one_unit_of_work(t *testing.T) {
	w := newWorld(t, settings(), 204)
	hook := w.register(t, "/users", "user.created")
	w.MustSignUp(t, "ada@example.com") // user.created and session.created
	endpoints := memory.NewWebhookEndpointRepository(w.DB)
	broken := webhook.NewFanout(memory.NewUnitOfWork(w.DB), w.Outbox, endpoints, failingQueue{w.queue}, w.Clock, webhook.NewWake())
	rep, err := fanoutRelay(w, broken).Pass(t.Context())
	if err != nil || rep.Claimed == 0 || rep.Retried != rep.Claimed {
		t.Fatalf("broken pass = %+v, %v", rep, err)
	}
	if st, _ := w.Outbox.Stats(t.Context()); st[ports.OutboxEvents].Depth != rep.Claimed {
		t.Fatal("the event left the outbox though its deliveries were not written")
	}
	if got := w.deliveries(t, hook.Endpoint.ID); len(got) != 0 {
		t.Fatalf("a failed fan-out left deliveries: %+v", got)
	}
	w.Clock.Advance(time.Hour) // past the relay's retry
	w.fanOut(t)
	if got := w.deliveries(t, hook.Endpoint.ID); len(got) != 1 {
		t.Fatalf("deliveries after fan-out = %d, want 1", len(got))
	}
}

// Ensure only the webhooks scopes and platform administrators manage
// endpoints, and that every change is audited.
func TestWebhooks_authorization(t *testing.T) {
	w := newWorld(t, settings(), 204)
	ctx := t.Context()
	k, err := w.Keys.Create(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, servicekeyCommand("webhooks:read"))
	if err != nil {
		t.Fatal(err)
	}
	reader := usecase.TrustedRequest{Key: k.Key}
	_, err = w.hooks.Create(ctx, reader, webhook.CreateWebhook{URL: "https://hooks.example.com/"})
	usecasetest.MustCode(t, err, "auth.insufficient_scope")
	if _, err := w.hooks.List(ctx, reader); err != nil {
		t.Fatal(err)
	}
	someone := usecase.AdminRequest{Principal: w.SignedIn(t, "someone@example.com")}
	_, err = w.hooks.List(ctx, someone)
	usecasetest.MustCode(t, err, "auth.not_platform_admin")
	boss := usecase.AdminRequest{Principal: w.SignedIn(t, "boss@example.com")}
	if _, err := w.hooks.Create(ctx, boss, webhook.CreateWebhook{URL: "https://hooks.example.com/"}); err != nil {
		t.Fatal(err)
	}
	entries, _ := w.Audit.List(ctx, ports.AuditQuery{TargetType: "webhook", Limit: 10})
	var got []string
	for _, e := range entries {
		got = append(got, e.Action+" "+string(e.Outcome))
	}
	if strings.Join(got, ",") != "admin.create-webhook success,webhooks.create denied" {
		t.Fatalf("audit = %v", got)
	}
}

// servicekeyCommand issues a key with scopes (the webhooks scopes when
// none are given).
func servicekeyCommand(scopes ...string) servicekey.CreateServiceKey {
	if len(scopes) == 0 {
		scopes = []string{"webhooks:read", "webhooks:write"}
	}
	return servicekey.CreateServiceKey{Name: "hooks", Scopes: scopes}
}

// fanoutRelay is the events topic's relay running f, as bootstrap's job
// list runs it.
func fanoutRelay(w *world, f *webhook.Fanout) outbox.Relay {
	return outbox.Relay{Outbox: w.Outbox, Clock: w.Clock, Topic: ports.OutboxEvents, Handle: f.Handle, Lease: webhook.FanoutLease, Batch: webhook.FanoutBatch}
}
