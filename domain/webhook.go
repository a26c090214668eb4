package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// WebhookEndpointID identifies a WebhookEndpoint.
type WebhookEndpointID string

// WebhookEndpoint is a URL of a trusted backend that receives the
// deployment's events, signed as the Standard Webhooks specification says.
// Endpoints belong to the deployment: service keys with the webhooks scopes
// and platform administrators manage them.
type WebhookEndpoint struct {
	ID          WebhookEndpointID
	URL         string
	Description string
	// EventTypes are the events it receives; empty receives every event.
	EventTypes []EventType
	Enabled    bool
	// DisabledReason says why a disabled endpoint was disabled ("" when
	// enabled): WebhookDisabledByCaller or WebhookDisabledFailing.
	DisabledReason string
	DisabledAt     time.Time
	// SealedSecret is the signing secret sealed under the service secrets
	// (purpose SealWebhookSecret, id the endpoint's id); it is shown once.
	SealedSecret []byte
	// SealedPreviousSecret is the secret before the last rotation, which
	// still signs until PreviousSecretExpiresAt; nil when there is none.
	SealedPreviousSecret    []byte
	PreviousSecretExpiresAt time.Time
	CreatedAt               time.Time
	UpdatedAt               time.Time
	// LastSuccessAt is when a delivery last succeeded; FailingSince is when
	// the first failed attempt after it happened (zero while not failing).
	LastSuccessAt time.Time
	FailingSince  time.Time
}

// The purpose webhook secrets are sealed for (ports.SecretSealer).
const SealWebhookSecret = "webhook-secret"

// The reasons an endpoint is disabled.
const (
	WebhookDisabledByCaller = "disabled"
	WebhookDisabledFailing  = "failing"
)

// Bounds of an endpoint.
const (
	MaxWebhookURLLength         = 2048
	MaxWebhookDescriptionLength = 500
)

// WebhookSecretPrefix starts every webhook signing secret, as the Standard
// Webhooks specification writes them: whsec_ and the base64 of the key.
const WebhookSecretPrefix = "whsec_"

// WebhookKeyLength is the length of a signing key in bytes: 43 characters
// of [A-Za-z0-9] drawn from a CSPRNG, about 256 bits.
const WebhookKeyLength = 43

// WebhookSecret returns the secret of key as receivers configure it.
func WebhookSecret(key []byte) string {
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// ParseWebhookSecret returns the key of a secret WebhookSecret made, and
// false for anything else.
func ParseWebhookSecret(secret string) ([]byte, bool) {
	raw, ok := strings.CutPrefix(secret, WebhookSecretPrefix)
	if !ok {
		return nil, false
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	return key, err == nil && len(key) > 0
}

// SignWebhook returns the Standard Webhooks signature of one delivery,
// "v1," and the base64 HMAC-SHA256 under key of "id.timestamp.body".
func SignWebhook(key []byte, id string, timestamp time.Time, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(timestamp.Unix(), 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// webhookInvalid refuses a part of an endpoint.
func webhookInvalid(field, msg string) *Error {
	return Invalid("webhook.invalid", "Invalid webhook endpoint", FieldViolation{Field: field, Message: msg})
}

// ErrWebhookNotFound is an unknown endpoint.
var ErrWebhookNotFound = NotFound("webhook.not_found", "Webhook endpoint")

// ErrWebhookMessageNotFound is a message the endpoint does not have.
var ErrWebhookMessageNotFound = NotFound("webhook.message_not_found", "Webhook message")

// NormalizeWebhookDescription trims a description and checks its length.
func NormalizeWebhookDescription(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxWebhookDescriptionLength ||
		strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) >= 0 {
		return "", webhookInvalid("description", "must be at most 500 characters of text")
	}
	if HasBidiControl(s) {
		return "", webhookInvalid("description", bidiMessage)
	}
	return s, nil
}

// ParseWebhookEventTypes checks an endpoint's filter: catalogue names only,
// duplicates dropped, in the catalogue's order. Empty means every event.
func ParseWebhookEventTypes(types []string) ([]EventType, error) {
	out := make([]EventType, 0, len(types))
	for i, s := range types {
		t := EventType(s)
		if !KnownEventType(t) {
			return nil, webhookInvalid("eventTypes["+strconv.Itoa(i)+"]", "is not an event type of the catalogue")
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b EventType) int { return slices.Index(EventTypes, a) - slices.Index(EventTypes, b) })
	return out, nil
}

// WebhookEndpointChange is what a caller sets of an endpoint; nil fields
// stay as they are.
type WebhookEndpointChange struct {
	URL         *string
	Description *string
	EventTypes  *[]string
	// AllowPrivate lets the URL name a private or loopback address
	// (development).
	AllowPrivate bool
}

// Changed returns a copy of e with c's fields checked and set (the URL by
// CheckWebhookURL, the description by NormalizeWebhookDescription, the
// event types by ParseWebhookEventTypes, in that order), or the first
// violation; e itself is not changed.
func (e WebhookEndpoint) Changed(c WebhookEndpointChange) (WebhookEndpoint, error) {
	if c.URL != nil {
		u, err := CheckWebhookURL(*c.URL, c.AllowPrivate)
		if err != nil {
			return WebhookEndpoint{}, err
		}
		e.URL = u
	}
	if c.Description != nil {
		d, err := NormalizeWebhookDescription(*c.Description)
		if err != nil {
			return WebhookEndpoint{}, err
		}
		e.Description = d
	}
	if c.EventTypes != nil {
		t, err := ParseWebhookEventTypes(*c.EventTypes)
		if err != nil {
			return WebhookEndpoint{}, err
		}
		e.EventTypes = t
	}
	return e, nil
}

// Wants reports whether the endpoint receives events of type t: it is in
// its filter, or the filter is empty.
func (e WebhookEndpoint) Wants(t EventType) bool {
	return len(e.EventTypes) == 0 || slices.Contains(e.EventTypes, t)
}

// Disable turns the endpoint off at now for reason.
func (e *WebhookEndpoint) Disable(reason string, now time.Time) {
	if e.Enabled || e.DisabledReason != reason {
		e.Enabled, e.DisabledReason, e.DisabledAt = false, reason, Timestamp(now)
	}
}

// Enable turns the endpoint on and forgets its failures, so that the
// disabling threshold counts again from its next failure.
func (e *WebhookEndpoint) Enable() {
	e.Enabled, e.DisabledReason, e.DisabledAt, e.FailingSince = true, "", time.Time{}, time.Time{}
}

// RecordSuccess notes a successful delivery at now. It reports whether
// anything changed that is worth writing: the end of a failing streak, or
// a success time more than a minute newer than the one kept.
func (e *WebhookEndpoint) RecordSuccess(now time.Time) bool {
	changed := !e.FailingSince.IsZero() || now.Sub(e.LastSuccessAt) > time.Minute
	if changed {
		e.LastSuccessAt, e.FailingSince = Timestamp(now), time.Time{}
	}
	return changed
}

// RecordFailure notes a failed attempt at now and disables the endpoint
// when it has been failing, with no success since, for disableAfter. It
// reports whether anything changed, and whether this failure disabled it.
func (e *WebhookEndpoint) RecordFailure(now time.Time, disableAfter time.Duration) (changed, disabled bool) {
	if e.FailingSince.IsZero() {
		e.FailingSince = Timestamp(now)
		changed = true
	}
	if e.Enabled && now.Sub(e.FailingSince) >= disableAfter && (e.LastSuccessAt.IsZero() || now.Sub(e.LastSuccessAt) >= disableAfter) {
		e.Disable(WebhookDisabledFailing, now)
		return true, true
	}
	return changed, false
}

// SigningKeys lists the sealed secrets that sign a delivery at now: the
// current one, and the previous one while its overlap lasts.
func (e WebhookEndpoint) SigningKeys(now time.Time) [][]byte {
	keys := [][]byte{e.SealedSecret}
	if len(e.SealedPreviousSecret) > 0 && now.Before(e.PreviousSecretExpiresAt) {
		keys = append(keys, e.SealedPreviousSecret)
	}
	return keys
}

// WebhookMessage is one event as the webhooks keep it: its id (the
// webhook-id of every delivery, "msg_…"), type and payload, the body sent.
type WebhookMessage struct {
	ID        string
	Type      EventType
	Payload   []byte
	CreatedAt time.Time
}

// WebhookDeliveryStatus says where one message stands for one endpoint.
type WebhookDeliveryStatus string

// The delivery statuses.
const (
	WebhookPending   WebhookDeliveryStatus = "pending"   // waiting for an attempt, or being attempted
	WebhookSucceeded WebhookDeliveryStatus = "succeeded" // an attempt got a 2xx
	WebhookFailed    WebhookDeliveryStatus = "failed"    // every attempt of the schedule failed, or the endpoint was disabled
)

// WebhookDelivery is one message for one endpoint, with the outcome of its
// latest attempt.
type WebhookDelivery struct {
	EndpointID WebhookEndpointID
	MessageID  string
	EventType  EventType
	Status     WebhookDeliveryStatus
	// Attempts counts the attempts since it was created or last replayed.
	Attempts int
	// NextAttemptAt is when it is next due while pending (while an attempt
	// is under way, the end of that attempt's claim); zero once finished.
	NextAttemptAt time.Time
	// CreatedAt is when the message was created.
	CreatedAt time.Time
	// LastAttempt is the latest attempt, nil before the first.
	LastAttempt *WebhookAttempt
}

// MaxWebhookResponseSnippet bounds the part of a response body kept with
// an attempt, in bytes.
const MaxWebhookResponseSnippet = 1024

// WebhookAttempt is one try at delivering a message to an endpoint.
type WebhookAttempt struct {
	ID         string
	EndpointID WebhookEndpointID
	MessageID  string
	At         time.Time
	// StatusCode is the response's status, 0 when none came (Error says why).
	StatusCode int
	Error      string
	Latency    time.Duration
	// Response is the start of the response body, at most
	// MaxWebhookResponseSnippet bytes of printable UTF-8.
	Response string
}

// Succeeded reports whether the attempt got a 2xx.
func (a WebhookAttempt) Succeeded() bool { return a.StatusCode >= 200 && a.StatusCode < 300 }

// WebhookSnippet makes a response body or error safe to keep and show: at
// most MaxWebhookResponseSnippet bytes of valid UTF-8, control characters
// other than line breaks and tabs replaced by spaces.
func WebhookSnippet(b []byte) string {
	if len(b) > MaxWebhookResponseSnippet {
		b = b[:MaxWebhookResponseSnippet]
	}
	// A rune cut at the end is dropped; no replacement is longer than
	// what it replaces, so the bound holds.
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(string(b), ""))
}

// DefaultWebhookSchedule is the wait before each retry after a failed
// attempt: the first attempt is at once, then 5 s, 5 min, 30 min, 2 h, 5 h,
// 10 h, 14 h, 20 h and 24 h later, about 3 days and 3 hours in all, each
// wait ±10 % (jitter). After the last retry fails the delivery fails.
var DefaultWebhookSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}
