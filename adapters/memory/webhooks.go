package memory

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var (
	_ ports.WebhookEndpointRepository = (*WebhookEndpointRepository)(nil)
	_ ports.WebhookQueue              = (*WebhookQueue)(nil)
	_ ports.WebhookLog                = (*WebhookQueue)(nil)
)

// webhookTables are the webhook rows of the shared DB: endpoints, messages,
// one delivery per message and endpoint, and the attempts of each
// delivery. Deleting an endpoint or purging a message removes its
// deliveries and their attempts, as the SQL foreign keys' cascades do.
// Every write goes through set and unset, and stored values are replaced,
// never changed in place, so a unit of work can undo them.
type webhookTables struct {
	endpoints  map[domain.WebhookEndpointID]domain.WebhookEndpoint
	messages   map[string]domain.WebhookMessage
	deliveries map[deliveryKey]domain.WebhookDelivery
	attempts   map[deliveryKey][]domain.WebhookAttempt
}

// deliveryKey is the primary key of a delivery.
type deliveryKey struct {
	endpoint domain.WebhookEndpointID
	message  string
}

func newWebhookTables() webhookTables {
	return webhookTables{
		endpoints:  map[domain.WebhookEndpointID]domain.WebhookEndpoint{},
		messages:   map[string]domain.WebhookMessage{},
		deliveries: map[deliveryKey]domain.WebhookDelivery{},
		attempts:   map[deliveryKey][]domain.WebhookAttempt{},
	}
}

// WebhookEndpointRepository keeps webhook endpoints in the shared DB.
type WebhookEndpointRepository struct{ db *DB }

// NewWebhookEndpointRepository returns a WebhookEndpointRepository on db.
func NewWebhookEndpointRepository(db *DB) *WebhookEndpointRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &WebhookEndpointRepository{db: db}
}

// storedEndpoint returns an independent copy of e as the SQL stores keep
// it: times in UTC at microsecond precision, empty slices nil.
func storedEndpoint(e domain.WebhookEndpoint) domain.WebhookEndpoint {
	if len(e.EventTypes) == 0 {
		e.EventTypes = nil
	} else {
		e.EventTypes = slices.Clone(e.EventTypes)
	}
	e.SealedSecret = cloneBytes(e.SealedSecret)
	e.SealedPreviousSecret = cloneBytes(e.SealedPreviousSecret)
	e.DisabledAt = timestampOrZero(e.DisabledAt)
	e.PreviousSecretExpiresAt = timestampOrZero(e.PreviousSecretExpiresAt)
	e.LastSuccessAt = timestampOrZero(e.LastSuccessAt)
	e.FailingSince = timestampOrZero(e.FailingSince)
	e.CreatedAt = timestampOrZero(e.CreatedAt)
	e.UpdatedAt = timestampOrZero(e.UpdatedAt)
	return e
}

// Create implements ports.WebhookEndpointRepository.
func (r *WebhookEndpointRepository) Create(ctx context.Context, e domain.WebhookEndpoint) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.webhooks.endpoints[e.ID]; ok {
		return domain.NewError(domain.KindConflict, "webhook.exists", "A webhook endpoint with this id exists")
	}
	set(r.db, r.db.webhooks.endpoints, e.ID, storedEndpoint(e))
	return nil
}

// Get implements ports.WebhookEndpointRepository.
func (r *WebhookEndpointRepository) Get(ctx context.Context, id domain.WebhookEndpointID) (domain.WebhookEndpoint, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	e, ok := r.db.webhooks.endpoints[id]
	if !ok {
		return domain.WebhookEndpoint{}, domain.ErrWebhookNotFound
	}
	return storedEndpoint(e), nil
}

// List implements ports.WebhookEndpointRepository.
func (r *WebhookEndpointRepository) List(ctx context.Context) ([]domain.WebhookEndpoint, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	out := make([]domain.WebhookEndpoint, 0, len(r.db.webhooks.endpoints))
	for _, e := range r.db.webhooks.endpoints {
		out = append(out, storedEndpoint(e))
	}
	slices.SortFunc(out, func(a, b domain.WebhookEndpoint) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Update implements ports.WebhookEndpointRepository.
func (r *WebhookEndpointRepository) Update(ctx context.Context, id domain.WebhookEndpointID, fn func(e *domain.WebhookEndpoint) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	old, ok := r.db.webhooks.endpoints[id]
	if !ok {
		return domain.ErrWebhookNotFound
	}
	e := storedEndpoint(old)
	if err := fn(&e); err != nil {
		return err
	}
	e.ID, e.CreatedAt = id, old.CreatedAt
	set(r.db, r.db.webhooks.endpoints, id, storedEndpoint(e))
	return nil
}

// Delete implements ports.WebhookEndpointRepository.
func (r *WebhookEndpointRepository) Delete(ctx context.Context, id domain.WebhookEndpointID) error {
	defer r.db.unlock(r.db.lock(ctx))
	w := &r.db.webhooks
	if _, ok := w.endpoints[id]; !ok {
		return domain.ErrWebhookNotFound
	}
	unset(r.db, w.endpoints, id)
	for k := range w.deliveries {
		if k.endpoint == id {
			r.db.unsetDelivery(k)
		}
	}
	return nil
}

// WebhookQueue keeps webhook messages, deliveries and attempts in the
// shared DB. The write lock makes each claim exclusive.
type WebhookQueue struct{ db *DB }

// NewWebhookQueue returns a WebhookQueue on db.
func NewWebhookQueue(db *DB) *WebhookQueue {
	if db == nil {
		panic("memory: nil db")
	}
	return &WebhookQueue{db: db}
}

// copyDelivery returns an independent copy of d.
func copyDelivery(d domain.WebhookDelivery) domain.WebhookDelivery {
	if d.LastAttempt != nil {
		a := *d.LastAttempt
		d.LastAttempt = &a
	}
	return d
}

// unsetDelivery removes a delivery and its attempts. The caller holds the
// write lock.
func (db *DB) unsetDelivery(k deliveryKey) {
	unset(db, db.webhooks.deliveries, k)
	unset(db, db.webhooks.attempts, k)
}

// Enqueue implements ports.WebhookQueue.
func (q *WebhookQueue) Enqueue(ctx context.Context, m domain.WebhookMessage, endpoints []domain.WebhookEndpointID, now time.Time) error {
	defer q.db.unlock(q.db.lock(ctx))
	w := &q.db.webhooks
	for _, e := range endpoints {
		if _, ok := w.endpoints[e]; !ok {
			return domain.Internal("memory: webhook enqueue", domain.ErrWebhookNotFound) // the foreign key
		}
	}
	if _, ok := w.messages[m.ID]; !ok {
		m.Payload = slices.Clone(m.Payload)
		m.CreatedAt = domain.Timestamp(m.CreatedAt)
		set(q.db, w.messages, m.ID, m)
	}
	stored := w.messages[m.ID]
	for _, e := range endpoints {
		k := deliveryKey{e, m.ID}
		if _, ok := w.deliveries[k]; !ok {
			set(q.db, w.deliveries, k, domain.WebhookDelivery{EndpointID: e, MessageID: m.ID, EventType: stored.Type, Status: domain.WebhookPending,
				NextAttemptAt: domain.Timestamp(now), CreatedAt: stored.CreatedAt})
		}
	}
	return nil
}

// Claim implements ports.WebhookQueue.
func (q *WebhookQueue) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]ports.ClaimedDelivery, error) {
	defer q.db.unlock(q.db.lock(ctx))
	w := &q.db.webhooks
	now = domain.Timestamp(now)
	var due []domain.WebhookDelivery
	for _, d := range w.deliveries {
		if d.Status == domain.WebhookPending && !d.NextAttemptAt.After(now) {
			due = append(due, d)
		}
	}
	slices.SortFunc(due, func(a, b domain.WebhookDelivery) int {
		return cmp.Or(a.NextAttemptAt.Compare(b.NextAttemptAt), cmp.Compare(a.EndpointID, b.EndpointID), cmp.Compare(a.MessageID, b.MessageID))
	})
	due = due[:min(len(due), max(limit, 0))]
	out := make([]ports.ClaimedDelivery, 0, len(due))
	for _, d := range due {
		d.NextAttemptAt = domain.Timestamp(now.Add(lease))
		set(q.db, w.deliveries, deliveryKey{d.EndpointID, d.MessageID}, d)
		m := w.messages[d.MessageID]
		m.Payload = slices.Clone(m.Payload)
		out = append(out, ports.ClaimedDelivery{Delivery: copyDelivery(d), Message: m})
	}
	return out, nil
}

// Record implements ports.WebhookQueue.
func (q *WebhookQueue) Record(ctx context.Context, a domain.WebhookAttempt, claimed time.Time, status domain.WebhookDeliveryStatus, next time.Time) error {
	defer q.db.unlock(q.db.lock(ctx))
	w := &q.db.webhooks
	k := deliveryKey{a.EndpointID, a.MessageID}
	d, ok := w.deliveries[k]
	if !ok {
		return domain.ErrWebhookMessageNotFound
	}
	a.At = domain.Timestamp(a.At)
	a.Latency = max(a.Latency.Truncate(time.Millisecond), 0)
	set(q.db, w.attempts, k, slices.Concat(w.attempts[k], []domain.WebhookAttempt{a}))
	if d.Status == domain.WebhookPending && d.NextAttemptAt.Equal(domain.Timestamp(claimed)) {
		d.Status, d.Attempts, d.NextAttemptAt = status, d.Attempts+1, time.Time{}
		if status == domain.WebhookPending {
			d.NextAttemptAt = domain.Timestamp(next)
		}
	}
	d.LastAttempt = &a
	set(q.db, w.deliveries, k, d)
	return nil
}

// Replay implements ports.WebhookQueue.
func (q *WebhookQueue) Replay(ctx context.Context, endpoint domain.WebhookEndpointID, message string, now time.Time) error {
	defer q.db.unlock(q.db.lock(ctx))
	k := deliveryKey{endpoint, message}
	d, ok := q.db.webhooks.deliveries[k]
	if !ok {
		return domain.ErrWebhookMessageNotFound
	}
	d.Status, d.Attempts, d.NextAttemptAt = domain.WebhookPending, 0, domain.Timestamp(now)
	set(q.db, q.db.webhooks.deliveries, k, d)
	return nil
}

// ReplaySince implements ports.WebhookQueue.
func (q *WebhookQueue) ReplaySince(ctx context.Context, endpoint domain.WebhookEndpointID, since time.Time, types []domain.EventType, now time.Time) (int, error) {
	defer q.db.unlock(q.db.lock(ctx))
	w := &q.db.webhooks
	since = domain.Timestamp(since)
	n := 0
	for _, m := range w.messages {
		if m.CreatedAt.Before(since) || (len(types) > 0 && !slices.Contains(types, m.Type)) {
			continue
		}
		if _, ok := w.endpoints[endpoint]; !ok {
			return 0, domain.ErrWebhookNotFound
		}
		k := deliveryKey{endpoint, m.ID}
		d, ok := w.deliveries[k]
		if !ok {
			d = domain.WebhookDelivery{EndpointID: endpoint, MessageID: m.ID, EventType: m.Type, CreatedAt: m.CreatedAt}
		}
		d.Status, d.Attempts, d.NextAttemptAt = domain.WebhookPending, 0, domain.Timestamp(now)
		set(q.db, w.deliveries, k, d)
		n++
	}
	return n, nil
}

// Purge implements ports.WebhookQueue.
func (q *WebhookQueue) Purge(ctx context.Context, before time.Time) (int, error) {
	defer q.db.unlock(q.db.lock(ctx))
	w := &q.db.webhooks
	before = domain.Timestamp(before)
	n := 0
	for id, m := range w.messages {
		if m.CreatedAt.Before(before) {
			unset(q.db, w.messages, id)
			n++
		}
	}
	for k := range w.deliveries {
		if _, ok := w.messages[k.message]; !ok {
			q.db.unsetDelivery(k)
		}
	}
	return n, nil
}

// ListDeliveries implements ports.WebhookLog.
func (q *WebhookQueue) ListDeliveries(ctx context.Context, f ports.WebhookDeliveryQuery) ([]domain.WebhookDelivery, *domain.Position, error) {
	defer q.db.runlock(q.db.rlock(ctx))
	var after domain.Position
	if f.After != nil {
		after = domain.Position{At: domain.Timestamp(f.After.At), ID: f.After.ID}
	}
	var out []domain.WebhookDelivery
	for k, d := range q.db.webhooks.deliveries {
		if k.endpoint != f.Endpoint || (f.Status != "" && d.Status != f.Status) {
			continue
		}
		if f.After != nil && (d.CreatedAt.After(after.At) || d.CreatedAt.Equal(after.At) && d.MessageID >= after.ID) {
			continue
		}
		out = append(out, copyDelivery(d))
	}
	slices.SortFunc(out, func(a, b domain.WebhookDelivery) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.MessageID, a.MessageID))
	})
	var next *domain.Position
	if len(out) > f.Limit {
		out = out[:f.Limit]
		last := out[len(out)-1]
		next = &domain.Position{At: last.CreatedAt, ID: last.MessageID}
	}
	return out, next, nil
}

// ListAttempts implements ports.WebhookLog.
func (q *WebhookQueue) ListAttempts(ctx context.Context, endpoint domain.WebhookEndpointID, message string) ([]domain.WebhookAttempt, error) {
	defer q.db.runlock(q.db.rlock(ctx))
	k := deliveryKey{endpoint, message}
	if _, ok := q.db.webhooks.deliveries[k]; !ok {
		return nil, domain.ErrWebhookMessageNotFound
	}
	out := slices.Clone(q.db.webhooks.attempts[k])
	slices.SortStableFunc(out, func(a, b domain.WebhookAttempt) int { return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}
