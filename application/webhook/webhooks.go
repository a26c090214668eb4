package webhook

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Settings are the rules of webhook delivery.
type Settings struct {
	// AllowPrivate lets endpoints use http and private, loopback and
	// link-local addresses: for tests and internal networks only.
	AllowPrivate bool
	// Schedule is the wait before each retry (domain.DefaultWebhookSchedule
	// when empty); a delivery fails after len(Schedule)+1 attempts.
	Schedule []time.Duration
	// DisableAfter disables an endpoint that has been failing, with no
	// success, for this long (default 5 days).
	DisableAfter time.Duration
	// SecretOverlap is how long a rotated-out secret still signs (default
	// 24 hours).
	SecretOverlap time.Duration
	// Timeout bounds one attempt (default 15 s).
	Timeout time.Duration
	// Batch is how many deliveries one sender pass claims and sends at once
	// (default 16).
	Batch int
	// Retention is how long messages and their attempts are kept (default
	// 30 days).
	Retention time.Duration
}

// The defaults of Settings.
const (
	DefaultDisableAfter  = 5 * 24 * time.Hour
	DefaultSecretOverlap = 24 * time.Hour
	DefaultTimeout       = 15 * time.Second
	DefaultBatch         = 16
	DefaultRetention     = 30 * 24 * time.Hour
)

// withDefaults fills the unset settings.
func (s Settings) withDefaults() Settings {
	if len(s.Schedule) == 0 {
		s.Schedule = domain.DefaultWebhookSchedule
	}
	if s.DisableAfter <= 0 {
		s.DisableAfter = DefaultDisableAfter
	}
	if s.SecretOverlap <= 0 {
		s.SecretOverlap = DefaultSecretOverlap
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.Batch <= 0 {
		s.Batch = DefaultBatch
	}
	if s.Retention <= 0 {
		s.Retention = DefaultRetention
	}
	return s
}

// MaxEndpoints bounds the endpoints of a deployment: every event is
// written once per endpoint that wants it.
const MaxEndpoints = 50

// Webhooks is the management of webhook endpoints, their deliveries and
// replays. Service keys need webhooks:read to read and webhooks:write to
// change; signed-in users must be platform administrators. Every change,
// and every refused one, is audited.
type Webhooks struct {
	endpoints ports.WebhookEndpointRepository
	queue     ports.WebhookQueue
	log       ports.WebhookLog
	sealer    ports.SecretSealer
	tokens    ports.TokenGenerator
	ids       ports.IDGenerator
	clock     ports.Clock
	audit     usecase.Auditor
	admins    domain.PlatformAdmins
	stepUp    usecase.StepUp
	settings  Settings
	wake      *Wake
}

// NewWebhooks returns the management use cases.
func NewWebhooks(endpoints ports.WebhookEndpointRepository, queue ports.WebhookQueue, log ports.WebhookLog, sealer ports.SecretSealer,
	tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, audit usecase.Auditor, passkeys ports.PasskeyRepository,
	wake *Wake, admin usecase.AdminSettings, auth usecase.AuthSettings, settings Settings) *Webhooks {
	usecase.MustHave(endpoints, queue, log, sealer, tokens, ids, clock, passkeys, wake)
	return &Webhooks{endpoints: endpoints, queue: queue, log: log, sealer: sealer, tokens: tokens, ids: ids, clock: clock,
		audit: audit, admins: admin.Admins, stepUp: usecase.NewStepUp(passkeys, clock, auth.StepUpWindow),
		settings: settings.withDefaults(), wake: wake}
}

// Wake tells the sender of this process that deliveries became due now (an
// event fanned out, a replay), so it sends them without waiting for its
// next tick. Senders in other processes find them on their next tick.
type Wake struct{ ch chan struct{} }

// NewWake returns a Wake.
func NewWake() *Wake { return &Wake{ch: make(chan struct{}, 1)} }

// Signal wakes the sender, or leaves it woken.
func (w *Wake) Signal() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

func (w *Webhooks) wakeSender() { w.wake.Signal() }

// authorize refuses a caller who may not use scope: a service key without
// it, a signed-in user who is not a platform administrator. handsSecret
// asks a platform administrator with a second factor to have proven it
// recently (step-up), as for service keys.
func (w *Webhooks) authorize(ctx context.Context, req usecase.Caller, scope domain.Scope, handsSecret bool) error {
	switch r := req.(type) {
	case usecase.TrustedRequest:
		return r.Need(scope)
	case usecase.AdminRequest:
		if r.Principal.User == nil || !w.admins.IsAdmin(r.Principal.User) {
			return domain.ErrNotPlatformAdmin
		}
		if handsSecret {
			return w.stepUp.Require(ctx, r.Principal)
		}
		return nil
	}
	return domain.ErrForbidden
}

// change runs fn, the action verb of req on endpoint id, in one unit of
// work with its audit entry, named for the caller's log
// ("admin.<verb>-webhook" for an administrator, "webhooks.<verb>" for a
// service key); a refusal or failure is audited on its own.
func (w *Webhooks) change(ctx context.Context, req usecase.Caller, verb string, id domain.WebhookEndpointID, fn func(ctx context.Context) error) error {
	action := usecase.ActionOf(req, "admin."+verb+"-webhook", "webhooks."+verb)
	t := usecase.Target{Type: "webhook", ID: string(id)}
	return w.audit.Change(ctx, req.Actor(), action, &t, func(ctx context.Context, _ usecase.Emit) error { return fn(ctx) })
}

// IssuedWebhook is an endpoint with its signing secret, shown once.
type IssuedWebhook struct {
	Endpoint domain.WebhookEndpoint
	Secret   string
}

// CreateWebhook registers an endpoint.
type CreateWebhook struct {
	URL         string
	Description string
	// EventTypes filter the events; empty receives every event.
	EventTypes []string
	// Disabled registers it turned off.
	Disabled bool
}

var errTooManyEndpoints = domain.NewError(domain.KindConflict, "webhook.too_many", "The deployment has the most webhook endpoints it may have")

// Create registers an endpoint with a fresh secret, returned once. The
// URL must be https and public (CheckWebhookURL), the event types from
// the catalogue. Audited as webhooks.create.
func (w *Webhooks) Create(ctx context.Context, req usecase.Caller, cmd CreateWebhook) (IssuedWebhook, error) {
	var out IssuedWebhook
	id := domain.WebhookEndpointID(w.ids.NewID())
	err := w.change(ctx, req, "create", id, func(ctx context.Context) error {
		if err := w.authorize(ctx, req, domain.ScopeWebhooksWrite, true); err != nil {
			return err
		}
		now := w.clock.Now()
		e, err := w.checked(domain.WebhookEndpoint{ID: id, Enabled: !cmd.Disabled, CreatedAt: now, UpdatedAt: now}, &cmd.URL, &cmd.Description, &cmd.EventTypes)
		if err != nil {
			return err
		}
		if cmd.Disabled {
			e.Disable(domain.WebhookDisabledByCaller, now)
		}
		all, err := w.endpoints.List(ctx)
		if err != nil {
			return err
		}
		if len(all) >= MaxEndpoints {
			return errTooManyEndpoints
		}
		secret, sealed, err := w.newSecret(id)
		if err != nil {
			return err
		}
		e.SealedSecret = sealed
		if err := w.endpoints.Create(ctx, e); err != nil {
			return err
		}
		out = IssuedWebhook{Endpoint: e, Secret: secret}
		return nil
	})
	return out, err
}

// newSecret draws a signing key for endpoint id and returns its secret and
// the key sealed.
func (w *Webhooks) newSecret(id domain.WebhookEndpointID) (string, []byte, error) {
	key := []byte(w.tokens.NewSecret(domain.WebhookKeyLength))
	sealed, err := w.sealer.Seal(domain.SealWebhookSecret, string(id), key)
	if err != nil {
		return "", nil, err
	}
	return domain.WebhookSecret(key), sealed, nil
}

// checked returns e with the fields a caller set checked and set, as
// domain.WebhookEndpoint.Changed does, under this deployment's URL rule.
func (w *Webhooks) checked(e domain.WebhookEndpoint, url, description *string, types *[]string) (domain.WebhookEndpoint, error) {
	return e.Changed(domain.WebhookEndpointChange{URL: url, Description: description, EventTypes: types, AllowPrivate: w.settings.AllowPrivate})
}

// List returns every endpoint, oldest first.
func (w *Webhooks) List(ctx context.Context, req usecase.Caller) ([]domain.WebhookEndpoint, error) {
	if err := w.authorize(ctx, req, domain.ScopeWebhooksRead, false); err != nil {
		return nil, err
	}
	return w.endpoints.List(ctx)
}

// Get returns endpoint id, or webhook.not_found.
func (w *Webhooks) Get(ctx context.Context, req usecase.Caller, id domain.WebhookEndpointID) (domain.WebhookEndpoint, error) {
	if err := w.authorize(ctx, req, domain.ScopeWebhooksRead, false); err != nil {
		return domain.WebhookEndpoint{}, err
	}
	return w.endpoints.Get(ctx, id)
}

// UpdateWebhook changes the parts that are not nil.
type UpdateWebhook struct {
	URL         *string
	Description *string
	EventTypes  *[]string
	// Enabled turns the endpoint on (forgetting its failures) or off.
	Enabled *bool
}

var errEmptyPatch = domain.Invalid("request.empty_patch", "Nothing to update",
	domain.FieldViolation{Field: "", Message: "must set url, description, eventTypes or enabled"})

// Update changes endpoint id atomically and returns it. Audited as
// webhooks.update.
func (w *Webhooks) Update(ctx context.Context, req usecase.Caller, id domain.WebhookEndpointID, cmd UpdateWebhook) (domain.WebhookEndpoint, error) {
	var out domain.WebhookEndpoint
	err := w.change(ctx, req, "update", id, func(ctx context.Context) error {
		if err := w.authorize(ctx, req, domain.ScopeWebhooksWrite, false); err != nil {
			return err
		}
		if cmd.URL == nil && cmd.Description == nil && cmd.EventTypes == nil && cmd.Enabled == nil {
			return errEmptyPatch
		}
		return w.endpoints.Update(ctx, id, func(e *domain.WebhookEndpoint) error {
			next, err := w.checked(*e, cmd.URL, cmd.Description, cmd.EventTypes)
			if err != nil {
				return err
			}
			*e = next
			now := w.clock.Now()
			switch {
			case cmd.Enabled == nil:
			case *cmd.Enabled:
				e.Enable()
			default:
				e.Disable(domain.WebhookDisabledByCaller, now)
			}
			e.UpdatedAt = now
			out = *e
			return nil
		})
	})
	return out, err
}

// Delete removes endpoint id with its deliveries. Audited as
// webhooks.delete.
func (w *Webhooks) Delete(ctx context.Context, req usecase.Caller, id domain.WebhookEndpointID) error {
	return w.change(ctx, req, "delete", id, func(ctx context.Context) error {
		if err := w.authorize(ctx, req, domain.ScopeWebhooksWrite, false); err != nil {
			return err
		}
		return w.endpoints.Delete(ctx, id)
	})
}

// RotateSecret gives endpoint id a new secret, returned once. The current
// one keeps signing beside it for the overlap (a second v1 signature); a
// secret rotated out earlier stops at once. Audited as
// webhooks.rotate-secret.
func (w *Webhooks) RotateSecret(ctx context.Context, req usecase.Caller, id domain.WebhookEndpointID) (IssuedWebhook, error) {
	var out IssuedWebhook
	err := w.change(ctx, req, "rotate-secret", id, func(ctx context.Context) error {
		if err := w.authorize(ctx, req, domain.ScopeWebhooksWrite, true); err != nil {
			return err
		}
		secret, sealed, err := w.newSecret(id)
		if err != nil {
			return err
		}
		return w.endpoints.Update(ctx, id, func(e *domain.WebhookEndpoint) error {
			now := w.clock.Now()
			e.SealedPreviousSecret, e.PreviousSecretExpiresAt = e.SealedSecret, now.Add(w.settings.SecretOverlap)
			e.SealedSecret, e.UpdatedAt = sealed, now
			out = IssuedWebhook{Endpoint: *e, Secret: secret}
			return nil
		})
	})
	return out, err
}
