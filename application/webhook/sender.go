package webhook

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Sender delivers the due webhook deliveries. Each pass claims a batch
// (several processes may run passes at once: claims never overlap, and
// the deliveries of a process that died are claimed again once their lease
// ends), posts each with its Standard Webhooks headers, at once, and
// records the attempt: a 2xx succeeds; anything else is retried after the
// schedule's next wait, with jitter, until the schedule ends and the
// delivery fails. Delivery is so at least once, with the same webhook-id
// each time, and in no promised order.
type Sender struct {
	uow       ports.UnitOfWork
	endpoints ports.WebhookEndpointRepository
	queue     ports.WebhookQueue
	poster    ports.WebhookPoster
	sealer    ports.SecretSealer
	users     ports.UserRepository
	mailer    ports.Mailer
	clock     ports.Clock
	ids       ports.IDGenerator
	audit     usecase.Auditor
	admins    domain.PlatformAdmins
	observer  ports.WebhookObserver
	settings  Settings
	wake      *Wake
}

// NewSender returns the sender.
func NewSender(uow ports.UnitOfWork, endpoints ports.WebhookEndpointRepository, queue ports.WebhookQueue, poster ports.WebhookPoster,
	sealer ports.SecretSealer, users ports.UserRepository, mailer ports.Mailer, audit usecase.Auditor, ids ports.IDGenerator, clock ports.Clock,
	observer ports.WebhookObserver, wake *Wake, admin usecase.AdminSettings, settings Settings) *Sender {
	usecase.MustHave(uow, endpoints, queue, poster, sealer, users, mailer, ids, clock, observer, wake)
	return &Sender{uow: uow, endpoints: endpoints, queue: queue, poster: poster, sealer: sealer, users: users, mailer: mailer, clock: clock,
		ids: ids, audit: audit, admins: admin.Admins, observer: observer, settings: settings.withDefaults(), wake: wake}
}

// Woken receives when deliveries became due now in this process (an event
// fanned out, a replay), so its sender need not wait for its next tick.
func (s *Sender) Woken() <-chan struct{} { return s.wake.ch }

// Purge removes the messages older than retention, with their deliveries
// and attempts, and returns how many messages.
func (s *Sender) Purge(ctx context.Context, retention time.Duration) (int, error) {
	return s.queue.Purge(ctx, s.clock.Now().Add(-retention))
}

// lease is how long a claimed batch stays hidden from other senders: the
// batch is posted at once, each attempt bounded by the timeout.
func (s *Sender) lease() time.Duration { return s.settings.Timeout + 30*time.Second }

// SendReport says what one pass did.
type SendReport struct {
	Claimed, Succeeded, Retrying, Failed int
	// Disabled are the endpoints this pass disabled for failing.
	Disabled []domain.WebhookEndpoint
	// MailErrors are the mails to administrators that could not be sent.
	MailErrors []error
	// Full is true when the pass claimed a whole batch: more may be due.
	Full bool
}

// outcome is one delivery's result, for its endpoint's bookkeeping.
type outcome struct {
	endpoint domain.WebhookEndpointID
	at       time.Time
	// result is what the observer is told: succeeded, retrying, failed or
	// skipped.
	result string
}

// attempted reports whether the outcome is an attempt's (not skipped).
func (o outcome) attempted() bool { return o.endpoint != "" && o.result != ports.WebhookSkipped }

// Pass claims one batch of due deliveries and sends it. The error is the
// store's; the endpoints' failures are in the report.
func (s *Sender) Pass(ctx context.Context) (SendReport, error) {
	var rep SendReport
	claimed, err := s.queue.Claim(ctx, s.clock.Now(), s.lease(), s.settings.Batch)
	if err != nil || len(claimed) == 0 {
		return rep, err
	}
	rep.Claimed, rep.Full = len(claimed), len(claimed) == s.settings.Batch
	all, err := s.endpoints.List(ctx)
	if err != nil {
		return rep, err // the lease brings the batch back
	}
	byID := make(map[domain.WebhookEndpointID]domain.WebhookEndpoint, len(all))
	for _, e := range all {
		byID[e.ID] = e
	}
	outcomes := make([]outcome, len(claimed))
	errs := make([]error, len(claimed))
	var wg sync.WaitGroup
	for i, c := range claimed {
		e, ok := byID[c.Delivery.EndpointID]
		if !ok {
			continue // deleted meanwhile, with its deliveries
		}
		wg.Go(func() { outcomes[i], errs[i] = s.deliver(ctx, e, c) })
	}
	wg.Wait()
	for i, o := range outcomes {
		if errs[i] != nil {
			err = errs[i]
			continue
		}
		switch o.result {
		case ports.WebhookSucceeded:
			rep.Succeeded++
		case ports.WebhookRetrying:
			rep.Retrying++
		case ports.WebhookFailed, ports.WebhookSkipped:
			rep.Failed++
		}
	}
	if err != nil {
		return rep, err
	}
	return rep, s.bookkeep(ctx, byID, outcomes, &rep)
}

// deliver sends one claimed delivery to e and records the attempt.
func (s *Sender) deliver(ctx context.Context, e domain.WebhookEndpoint, c ports.ClaimedDelivery) (outcome, error) {
	d := c.Delivery
	now := s.clock.Now()
	a := domain.WebhookAttempt{ID: s.ids.NewID(), EndpointID: e.ID, MessageID: d.MessageID, At: now}
	if !e.Enabled {
		a.Error = "not attempted: the endpoint is disabled"
		return s.finish(ctx, c, a, ports.WebhookSkipped, domain.WebhookFailed, time.Time{})
	}
	headers, err := s.headers(e, c.Message, now)
	if err != nil {
		a.Error = "the endpoint's signing secret could not be opened"
	} else {
		pctx, cancel := context.WithTimeout(ctx, s.settings.Timeout)
		res, perr := s.poster.Post(pctx, e.URL, headers, c.Message.Payload)
		cancel()
		a.StatusCode, a.Latency, a.Response = res.StatusCode, res.Latency, domain.WebhookSnippet(res.Body)
		if perr != nil {
			a.StatusCode, a.Error = 0, domain.WebhookSnippet([]byte(perr.Error()))
		} else if !a.Succeeded() {
			a.Error = "status " + strconv.Itoa(res.StatusCode)
		}
	}
	switch {
	case a.Succeeded():
		return s.finish(ctx, c, a, ports.WebhookSucceeded, domain.WebhookSucceeded, time.Time{})
	case d.Attempts >= len(s.settings.Schedule):
		return s.finish(ctx, c, a, ports.WebhookFailed, domain.WebhookFailed, time.Time{})
	default:
		return s.finish(ctx, c, a, ports.WebhookRetrying, domain.WebhookPending, now.Add(jitter(s.settings.Schedule[d.Attempts])))
	}
}

// finish records attempt a of claimed delivery c, moving the delivery to
// status unless it was replayed or claimed again meanwhile, and tells the
// observer. The record is written even when ctx ended meanwhile: a delivery
// that was made must not be made again for want of its record. A delivery
// whose endpoint was deleted meanwhile is forgotten.
func (s *Sender) finish(ctx context.Context, c ports.ClaimedDelivery, a domain.WebhookAttempt, result string, status domain.WebhookDeliveryStatus, next time.Time) (outcome, error) {
	err := s.queue.Record(context.WithoutCancel(ctx), a, c.Delivery.NextAttemptAt, status, next)
	if domain.KindOf(err) == domain.KindNotFound {
		return outcome{}, nil
	}
	if err != nil {
		return outcome{}, err
	}
	s.observer.WebhookDelivery(result)
	return outcome{endpoint: a.EndpointID, at: a.At, result: result}, nil
}

// headers returns the Standard Webhooks headers of message m to e, signed
// at now with every key that signs: the current secret, and the previous
// one while its overlap lasts (signatures separated by spaces).
func (s *Sender) headers(e domain.WebhookEndpoint, m domain.WebhookMessage, now time.Time) ([][2]string, error) {
	var sigs []string
	for _, sealed := range e.SigningKeys(now) {
		key, err := s.sealer.Open(domain.SealWebhookSecret, string(e.ID), sealed)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, domain.SignWebhook(key, m.ID, now, m.Payload))
	}
	return [][2]string{
		{"webhook-id", m.ID},
		{"webhook-timestamp", strconv.FormatInt(now.Unix(), 10)},
		{"webhook-signature", strings.Join(sigs, " ")},
		{"Content-Type", "application/json"},
		{"User-Agent", "Gatehouse-Webhooks/1"},
	}, nil
}

// jitter returns d ± 10 %, so the retries of many deliveries spread out.
func jitter(d time.Duration) time.Duration {
	span := int64(d) / 5
	if span <= 0 {
		return d
	}
	return d - time.Duration(span/2) + time.Duration(rand.Int64N(span+1)) // #nosec G404 -- jitter, not a secret
}
