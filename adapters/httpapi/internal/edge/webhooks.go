package edge

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/application/webhook"
	"github.com/gatehouse/gatehouse/domain"
)

// The webhook routes the trusted API (/api/webhooks, a service key) and the
// admin API (/api/admin/webhooks, a platform administrator's session)
// share: their inputs, outputs and handlers. Each contract registers them
// with its own policy and its own way of naming the caller (WebhookCaller).

// EventTypeList is a list of event types of the catalogue.
type EventTypeList []string

// Schema documents an array of the catalogue's event types.
func (EventTypeList) Schema(huma.Registry) *huma.Schema {
	enum := make([]any, len(domain.EventTypes))
	for i, t := range domain.EventTypes {
		enum[i] = string(t)
	}
	n := len(domain.EventTypes)
	return &huma.Schema{Type: huma.TypeArray, MaxItems: &n, UniqueItems: true,
		Items: &huma.Schema{Type: huma.TypeString, Enum: enum}}
}

var _ huma.SchemaProvider = EventTypeList(nil)

// WebhookJSON is an endpoint as the APIs show it: never its secret.
type WebhookJSON struct {
	ID          string   `json:"id"`
	URL         string   `json:"url" example:"https://api.example.com/gatehouse/webhooks"`
	Description string   `json:"description"`
	EventTypes  []string `json:"eventTypes" nullable:"false" doc:"The event types it receives; empty: every event."`
	Enabled     bool     `json:"enabled"`
	// DisabledReason is null while enabled.
	DisabledReason *string    `json:"disabledReason" nullable:"true" enum:"disabled,failing" doc:"Why it is disabled: disabled (by its owner or an administrator) or failing (every attempt failed for GATEHOUSE_WEBHOOK_DISABLE_AFTER); null while enabled."`
	DisabledAt     *time.Time `json:"disabledAt" nullable:"true"`
	// PreviousSecretExpiresAt is set while a rotated-out secret still signs.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt" nullable:"true" doc:"Until when the secret before the last rotation still signs each delivery (a second v1 signature); null when it no longer does."`
	LastSuccessAt           *time.Time `json:"lastSuccessAt" nullable:"true" doc:"When a delivery last succeeded (written at most once a minute); null if never."`
	FailingSince            *time.Time `json:"failingSince" nullable:"true" doc:"When its deliveries started failing, with no success since; null when not failing."`
	CreatedAt               time.Time  `json:"createdAt"`
	UpdatedAt               time.Time  `json:"updatedAt"`
}

// WebhookJSONOf is e as the APIs show it, at now.
func WebhookJSONOf(e domain.WebhookEndpoint, now time.Time) WebhookJSON {
	types := make([]string, 0, len(e.EventTypes))
	for _, t := range e.EventTypes {
		types = append(types, string(t))
	}
	out := WebhookJSON{ID: string(e.ID), URL: e.URL, Description: e.Description, EventTypes: types, Enabled: e.Enabled,
		DisabledAt: OptionalTime(e.DisabledAt), LastSuccessAt: OptionalTime(e.LastSuccessAt), FailingSince: OptionalTime(e.FailingSince),
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	if !e.Enabled {
		r := e.DisabledReason
		out.DisabledReason = &r
	}
	if len(e.SealedPreviousSecret) > 0 && now.Before(e.PreviousSecretExpiresAt) {
		out.PreviousSecretExpiresAt = OptionalTime(e.PreviousSecretExpiresAt)
	}
	return out
}

// WebhookOutput is one endpoint.
type WebhookOutput struct {
	Body WebhookJSON
}

// IssuedWebhookJSON is an endpoint with its secret, shown once.
type IssuedWebhookJSON struct {
	WebhookJSON
	Secret string `json:"secret" doc:"The signing secret, shown this one time (it is kept sealed): whsec_ and the base64 of the key, as the Standard Webhooks libraries take it." example:"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"`
}

// IssuedWebhookOutput answers creation and rotation.
type IssuedWebhookOutput struct {
	Status int
	Body   IssuedWebhookJSON
}

// WebhooksOutput lists the endpoints.
type WebhooksOutput struct {
	Body struct {
		Data []WebhookJSON `json:"data" nullable:"false" doc:"Every endpoint, oldest first."`
	}
}

// CreateWebhookInput registers an endpoint.
type CreateWebhookInput struct {
	Body struct {
		URL         string        `json:"url" minLength:"1" maxLength:"2048" doc:"Where deliveries are posted: an absolute https URL without credentials or fragment, whose host is a DNS name or a public IP address (private, loopback, link-local and reserved addresses are refused, and checked again on every connection). http and private addresses are allowed only with GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=true." example:"https://api.example.com/gatehouse/webhooks"`
		Description string        `json:"description,omitempty" maxLength:"500" doc:"A note for people (at most 500 characters)."`
		EventTypes  EventTypeList `json:"eventTypes,omitempty" doc:"The event types to receive; absent or empty: every event, those added to the catalogue later included."`
		Enabled     *bool         `json:"enabled,omitempty" doc:"false registers it disabled; default true."`
	}
}

// WebhookIDInput names an endpoint in the path.
type WebhookIDInput struct {
	ID string `path:"id" minLength:"1" maxLength:"128" doc:"The endpoint's id."`
}

// UpdateWebhookInput changes an endpoint.
type UpdateWebhookInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"128" doc:"The endpoint's id."`
	Body struct {
		URL         *string        `json:"url,omitempty" minLength:"1" maxLength:"2048" doc:"A new URL, checked as at creation."`
		Description *string        `json:"description,omitempty" maxLength:"500"`
		EventTypes  *EventTypeList `json:"eventTypes,omitempty" doc:"The new filter; empty: every event."`
		Enabled     *bool          `json:"enabled,omitempty" doc:"true enables it (and forgets its past failures); false disables it. Its pending deliveries fail when next due while it is disabled."`
	}
}

// AttemptJSON is one attempt at a delivery.
type AttemptJSON struct {
	ID          string    `json:"id"`
	AttemptedAt time.Time `json:"attemptedAt"`
	StatusCode  *int      `json:"statusCode" nullable:"true" doc:"The response's status; null when no response came (error says why)."`
	Error       *string   `json:"error" nullable:"true" doc:"Why the attempt failed: the status, a refusal (a private address), a timeout, a TLS or connection error; null on success." example:"status 500"`
	LatencyMS   int64     `json:"latencyMs" doc:"From sending the request to reading the start of the response, in milliseconds."`
	Response    string    `json:"response" doc:"The start of the response body: at most 1 KiB, control characters replaced."`
}

// AttemptJSONOf is a as the APIs show it.
func AttemptJSONOf(a domain.WebhookAttempt) AttemptJSON {
	out := AttemptJSON{ID: a.ID, AttemptedAt: a.At, LatencyMS: a.Latency.Milliseconds(), Response: a.Response}
	if a.StatusCode != 0 {
		c := a.StatusCode
		out.StatusCode = &c
	}
	if !a.Succeeded() && a.Error != "" {
		e := a.Error
		out.Error = &e
	}
	return out
}

// MessageJSON is one message's delivery to an endpoint.
type MessageJSON struct {
	MessageID     string       `json:"messageId" doc:"The message's id: the webhook-id header of every attempt." example:"msg_2mXcR8pL1sN7bY4wZ6hJ0aE5dF"`
	EventType     string       `json:"eventType" example:"user.created"`
	Status        string       `json:"status" enum:"pending,succeeded,failed" doc:"pending: waiting for its next attempt (or being attempted); succeeded: an attempt got a 2xx; failed: every attempt of the schedule failed, or the endpoint was disabled."`
	Attempts      int          `json:"attempts" doc:"Attempts since the message was created or last replayed."`
	NextAttemptAt *time.Time   `json:"nextAttemptAt" nullable:"true" doc:"When it is next attempted while pending; null once finished."`
	CreatedAt     time.Time    `json:"createdAt" doc:"When the event happened."`
	LastAttempt   *AttemptJSON `json:"lastAttempt" doc:"The latest attempt; null before the first."`
}

// MessageJSONOf is d as the APIs show it.
func MessageJSONOf(d domain.WebhookDelivery) MessageJSON {
	out := MessageJSON{MessageID: d.MessageID, EventType: string(d.EventType), Status: string(d.Status), Attempts: d.Attempts,
		NextAttemptAt: OptionalTime(d.NextAttemptAt), CreatedAt: d.CreatedAt}
	if d.LastAttempt != nil {
		a := AttemptJSONOf(*d.LastAttempt)
		out.LastAttempt = &a
	}
	return out
}

// ListMessagesInput filters and pages an endpoint's messages.
type ListMessagesInput struct {
	ID     string `path:"id" minLength:"1" maxLength:"128" doc:"The endpoint's id."`
	Status string `query:"status" enum:"pending,succeeded,failed" doc:"Only messages in this status."`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size."`
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page; absent for the first page."`
}

// MessagesOutput is a page of an endpoint's messages.
type MessagesOutput struct {
	Body struct {
		Data       []MessageJSON `json:"data" nullable:"false" doc:"The page's messages, newest first."`
		NextCursor *string       `json:"nextCursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last."`
	}
}

// MessageInput names one message of an endpoint.
type MessageInput struct {
	ID        string `path:"id" minLength:"1" maxLength:"128" doc:"The endpoint's id."`
	MessageID string `path:"messageId" minLength:"1" maxLength:"128" doc:"The message's id (its webhook-id)."`
}

// AttemptsOutput lists a message's attempts.
type AttemptsOutput struct {
	Body struct {
		Data []AttemptJSON `json:"data" nullable:"false" doc:"Every attempt, oldest first."`
	}
}

// ReplaySinceInput replays what an endpoint was sent, or should have been,
// since a time.
type ReplaySinceInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"128" doc:"The endpoint's id."`
	Body struct {
		Since time.Time `json:"since" doc:"Replay every message created at or after this time (RFC 3339) that the endpoint's filter wants; not in the future."`
	}
}

// ReplayOutput says how many messages are on their way again.
type ReplayOutput struct {
	Status int
	Body   struct {
		Replayed int `json:"replayed" doc:"How many messages are pending again."`
	}
}

// WebhookCaller names the caller of a webhook route and refuses one who may
// not use scope: a service key (the trusted API) or a signed-in user (the
// admin API, whose use case checks the platform administrator).
type WebhookCaller func(ctx context.Context, scope domain.Scope) (usecase.Caller, error)

// WebhookHandlers are the webhook routes' handlers for one contract.
type WebhookHandlers struct {
	Webhooks *webhook.Webhooks
	Caller   WebhookCaller
}

func (h WebhookHandlers) hooks() *webhook.Webhooks { return h.Webhooks }

// Create registers an endpoint: 201 with its secret.
func (h WebhookHandlers) Create(ctx context.Context, in *CreateWebhookInput) (*IssuedWebhookOutput, error) {
	req, err := h.Caller(ctx, domain.ScopeWebhooksWrite)
	if err != nil {
		return nil, err
	}
	b := in.Body
	issued, err := h.hooks().Create(ctx, req, webhook.CreateWebhook{URL: b.URL, Description: b.Description, EventTypes: b.EventTypes,
		Disabled: b.Enabled != nil && !*b.Enabled})
	if err != nil {
		return nil, err
	}
	return h.issued(http.StatusCreated, issued), nil
}

func (h WebhookHandlers) issued(status int, w webhook.IssuedWebhook) *IssuedWebhookOutput {
	return &IssuedWebhookOutput{Status: status, Body: IssuedWebhookJSON{WebhookJSON: WebhookJSONOf(w.Endpoint, time.Now()), Secret: w.Secret}}
}

// List lists the endpoints.
func (h WebhookHandlers) List(ctx context.Context, _ *struct{}) (*WebhooksOutput, error) {
	req, err := h.Caller(ctx, domain.ScopeWebhooksRead)
	if err != nil {
		return nil, err
	}
	all, err := h.hooks().List(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &WebhooksOutput{}
	out.Body.Data = make([]WebhookJSON, 0, len(all))
	for _, e := range all {
		out.Body.Data = append(out.Body.Data, WebhookJSONOf(e, time.Now()))
	}
	return out, nil
}

// Get returns one endpoint.
func (h WebhookHandlers) Get(ctx context.Context, in *WebhookIDInput) (*WebhookOutput, error) {
	req, err := h.Caller(ctx, domain.ScopeWebhooksRead)
	if err != nil {
		return nil, err
	}
	e, err := h.hooks().Get(ctx, req, domain.WebhookEndpointID(in.ID))
	if err != nil {
		return nil, err
	}
	return &WebhookOutput{Body: WebhookJSONOf(e, time.Now())}, nil
}

// Update changes an endpoint.
func (h WebhookHandlers) Update(ctx context.Context, in *UpdateWebhookInput) (*WebhookOutput, error) {
	req, err := h.Caller(ctx, domain.ScopeWebhooksWrite)
	if err != nil {
		return nil, err
	}
	b := in.Body
	cmd := webhook.UpdateWebhook{URL: b.URL, Description: b.Description, Enabled: b.Enabled}
	if b.EventTypes != nil {
		types := []string(*b.EventTypes)
		cmd.EventTypes = &types
	}
	e, err := h.hooks().Update(ctx, req, domain.WebhookEndpointID(in.ID), cmd)
	if err != nil {
		return nil, err
	}
	return &WebhookOutput{Body: WebhookJSONOf(e, time.Now())}, nil
}

// Delete removes an endpoint: 204.
func (h WebhookHandlers) Delete(ctx context.Context, in *WebhookIDInput) (*NoContentOutput, error) {
	req, err := h.Caller(ctx, domain.ScopeWebhooksWrite)
	if err != nil {
		return nil, err
	}
	if err := h.hooks().Delete(ctx, req, domain.WebhookEndpointID(in.ID)); err != nil {
		return nil, err
	}
	return &NoContentOutput{Status: http.StatusNoContent}, nil
}

// RotateSecret gives an endpoint a new secret: 200 with it.
func (h WebhookHandlers) RotateSecret(ctx context.Context, in *WebhookIDInput) (*IssuedWebhookOutput, error) {
	req, err := h.Caller(ctx, domain.ScopeWebhooksWrite)
	if err != nil {
		return nil, err
	}
	issued, err := h.hooks().RotateSecret(ctx, req, domain.WebhookEndpointID(in.ID))
	if err != nil {
		return nil, err
	}
	return h.issued(http.StatusOK, issued), nil
}

// Messages pages an endpoint's messages.
func (h WebhookHandlers) Messages(ctx context.Context, in *ListMessagesInput) (*MessagesOutput, error) {
	req, err := h.Caller(ctx, domain.ScopeWebhooksRead)
	if err != nil {
		return nil, err
	}
	page, err := h.hooks().Messages(ctx, req, domain.WebhookEndpointID(in.ID),
		webhook.ListMessages{Status: domain.WebhookDeliveryStatus(in.Status), Limit: in.Limit, Cursor: in.Cursor})
	if err != nil {
		return nil, err
	}
	out := &MessagesOutput{}
	out.Body.Data = make([]MessageJSON, 0, len(page.Deliveries))
	for _, d := range page.Deliveries {
		out.Body.Data = append(out.Body.Data, MessageJSONOf(d))
	}
	if page.NextCursor != "" {
		out.Body.NextCursor = &page.NextCursor
	}
	return out, nil
}

// Attempts lists a message's attempts.
func (h WebhookHandlers) Attempts(ctx context.Context, in *MessageInput) (*AttemptsOutput, error) {
	req, err := h.Caller(ctx, domain.ScopeWebhooksRead)
	if err != nil {
		return nil, err
	}
	list, err := h.hooks().Attempts(ctx, req, domain.WebhookEndpointID(in.ID), in.MessageID)
	if err != nil {
		return nil, err
	}
	out := &AttemptsOutput{}
	out.Body.Data = make([]AttemptJSON, 0, len(list))
	for _, a := range list {
		out.Body.Data = append(out.Body.Data, AttemptJSONOf(a))
	}
	return out, nil
}

// Replay sends one message again: 202.
func (h WebhookHandlers) Replay(ctx context.Context, in *MessageInput) (*ReplayOutput, error) {
	req, err := h.Caller(ctx, domain.ScopeWebhooksWrite)
	if err != nil {
		return nil, err
	}
	if err := h.hooks().Replay(ctx, req, domain.WebhookEndpointID(in.ID), in.MessageID); err != nil {
		return nil, err
	}
	out := &ReplayOutput{Status: http.StatusAccepted}
	out.Body.Replayed = 1
	return out, nil
}

// ReplaySince sends every message since a time again: 202.
func (h WebhookHandlers) ReplaySince(ctx context.Context, in *ReplaySinceInput) (*ReplayOutput, error) {
	req, err := h.Caller(ctx, domain.ScopeWebhooksWrite)
	if err != nil {
		return nil, err
	}
	n, err := h.hooks().ReplaySince(ctx, req, domain.WebhookEndpointID(in.ID), in.Body.Since)
	if err != nil {
		return nil, err
	}
	out := &ReplayOutput{Status: http.StatusAccepted}
	out.Body.Replayed = n
	return out, nil
}

// WebhookOperations are the webhook routes' operations under base, their
// ids prefixed with prefix ("" or "admin"), described alike in both
// contracts; each contract adds its own security and policy.
type WebhookOperations struct {
	Create, List, Get, Update, Delete, RotateSecret, Messages, Attempts, Replay, ReplaySince huma.Operation
}

// NewWebhookOperations returns the operations of the webhook routes under
// base, named "<prefix><Name>" (the first letter of Name upper-cased after
// a prefix).
func NewWebhookOperations(base, prefix string) WebhookOperations {
	const (
		tag      = "Webhooks"
		notFound = " An unknown endpoint is 404 webhook.not_found."
		audited  = " Audited, refusals included."
		msgGone  = " A message the endpoint never had (or one purged after the retention period) is 404 webhook.message_not_found."
	)
	id := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + string(name[0]-'a'+'A') + name[1:]
	}
	item := base + "/{id}"
	op := func(name, method, path, summary, desc string, status int, errs ...int) huma.Operation {
		return huma.Operation{OperationID: id(name), Method: method, Path: path, Tags: []string{tag}, Summary: summary,
			Description: desc, DefaultStatus: status, Errors: errs}
	}
	return WebhookOperations{
		Create: op("createWebhook", http.MethodPost, base, "Register a webhook endpoint",
			"Registers an endpoint and answers 201 with it and its signing secret, shown this once (only a sealed copy is kept). Every event the "+
				"filter wants is posted to it as {type, timestamp, data} with the Standard Webhooks headers webhook-id, webhook-timestamp and "+
				"webhook-signature (v1,<base64 HMAC-SHA256 of id.timestamp.body>); see the contract's webhooks section for each event. A URL that "+
				"is not https, holds credentials or a fragment, or names a private, loopback, link-local or reserved address is 400 naming body.url; "+
				"an unknown event type is 400 naming it. A deployment has at most 50 endpoints (409 webhook.too_many)."+audited,
			http.StatusCreated, http.StatusConflict),
		List: op("listWebhooks", http.MethodGet, base, "List webhook endpoints",
			"Every endpoint, oldest first, with whether it is enabled and how its deliveries go; never a secret.", 0),
		Get: op("getWebhook", http.MethodGet, item, "Get a webhook endpoint", "The endpoint."+notFound, 0, http.StatusNotFound),
		Update: op("updateWebhook", http.MethodPatch, item, "Change a webhook endpoint",
			"Changes the url, description, eventTypes or enabled, atomically, and answers 200 with the endpoint. enabled: true enables it "+
				"and forgets its failures; enabled: false stops new deliveries (those pending fail when next due; replay them once enabled). "+
				"A body changing nothing is 400."+notFound+audited, 0, http.StatusNotFound),
		Delete: op("deleteWebhook", http.MethodDelete, item, "Delete a webhook endpoint",
			"Deletes the endpoint with its messages' deliveries and attempts. Answers 204."+notFound+audited, http.StatusNoContent, http.StatusNotFound),
		RotateSecret: op("rotateWebhookSecret", http.MethodPost, item+"/rotate-secret", "Rotate a webhook endpoint's secret",
			"Answers 200 with a new secret, shown this once. For GATEHOUSE_WEBHOOK_SECRET_OVERLAP (default 24 h) every delivery carries two "+
				"signatures, one per secret, separated by a space, so the receiver can switch when it likes; a secret rotated out earlier stops "+
				"signing at once."+notFound+audited, 0, http.StatusNotFound),
		Messages: op("listWebhookMessages", http.MethodGet, item+"/messages", "List a webhook endpoint's messages",
			"One page of the messages sent (or to be sent) to the endpoint, newest first, each with its status (pending, succeeded, failed), "+
				"its attempts and its latest attempt's status code or error, latency and the start of the response (1 KiB). Messages are kept "+
				"for GATEHOUSE_WEBHOOK_RETENTION (default 30 days). A malformed cursor is 400 naming query.cursor."+notFound, 0, http.StatusNotFound),
		Attempts: op("listWebhookAttempts", http.MethodGet, item+"/messages/{messageId}/attempts", "List a message's attempts",
			"Every attempt at delivering the message to the endpoint, oldest first, with its time, status code or error, latency and the start "+
				"of the response."+notFound+msgGone, 0, http.StatusNotFound),
		Replay: op("replayWebhookMessage", http.MethodPost, item+"/messages/{messageId}/replay", "Replay one message",
			"Sends the message to the endpoint again at once, with the same webhook-id, whatever became of it; its attempts are counted afresh "+
				"with the whole retry schedule. Answers 202."+notFound+msgGone+audited, http.StatusAccepted, http.StatusNotFound),
		ReplaySince: op("replayWebhookMessages", http.MethodPost, item+"/replay", "Replay every message since a time",
			"Sends the endpoint again, at once, every message kept that was created at or after since and that its filter wants: those it had "+
				"(whatever became of them) and those it never had (created while it was disabled, or before it existed). Answers 202 with how "+
				"many. A since in the future is 400 naming body.since."+notFound+audited, http.StatusAccepted, http.StatusNotFound),
	}
}
