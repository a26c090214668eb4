package bootstrap

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/webhookclient"
	"github.com/gatehouse/gatehouse/application/outbox"
	"github.com/gatehouse/gatehouse/application/webhook"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// WebhookConfig is the section of webhook delivery.
type WebhookConfig struct {
	AllowPrivate  bool
	Schedule      []time.Duration
	DisableAfter  time.Duration
	SecretOverlap time.Duration
	Timeout       time.Duration
	PollInterval  time.Duration
	Retention     time.Duration
}

var webhookSettingList settingList

var (
	settingWebhookAllowPrivate  = webhookSettingList.addBool("GATEHOUSE_WEBHOOK_ALLOW_PRIVATE", "webhook-allow-private", "false", "true lets webhook endpoints use http and private, loopback, link-local and reserved addresses (tests and internal networks only; refused otherwise at registration and again at every connection)")
	settingWebhookSchedule      = webhookSettingList.add("GATEHOUSE_WEBHOOK_RETRY_SCHEDULE", "webhook-retry-schedule", durationsText(domain.DefaultWebhookSchedule), "comma-separated waits before each retry of a failed webhook delivery (each ±10 %); the delivery fails when the last retry fails (1 to 20 waits, each 10ms to 48h)")
	settingWebhookDisableAfter  = webhookSettingList.add("GATEHOUSE_WEBHOOK_DISABLE_AFTER", "webhook-disable-after", durationText(webhook.DefaultDisableAfter), "a webhook endpoint failing with no success for this long is disabled at its next failure, audited and mailed to the platform administrators")
	settingWebhookSecretOverlap = webhookSettingList.add("GATEHOUSE_WEBHOOK_SECRET_OVERLAP", "webhook-secret-overlap", durationText(webhook.DefaultSecretOverlap), "how long a rotated-out webhook secret still signs deliveries (a second signature)")
	settingWebhookTimeout       = webhookSettingList.add("GATEHOUSE_WEBHOOK_TIMEOUT", "webhook-timeout", durationText(webhook.DefaultTimeout), "longest a webhook delivery attempt may take; past it the attempt fails")
	settingWebhookPollInterval  = webhookSettingList.add("GATEHOUSE_WEBHOOK_POLL_INTERVAL", "webhook-poll-interval", "1s", "how often each instance looks for events to fan out and deliveries that are due (an event made on this instance is sent at once)")
	settingWebhookRetention     = webhookSettingList.add("GATEHOUSE_WEBHOOK_RETENTION", "webhook-retention", durationText(webhook.DefaultRetention), "how long webhook messages and their attempts are kept (and can be replayed)")
)

func (w *WebhookConfig) load(r *reader) {
	w.AllowPrivate = r.boolean(settingWebhookAllowPrivate)
	w.Schedule = parsed(r, settingWebhookSchedule, parseSchedule)
	const day = 24 * time.Hour
	w.DisableAfter = r.duration(settingWebhookDisableAfter, 0, 90*day, settingWebhookDisableAfter.def)
	w.SecretOverlap = r.duration(settingWebhookSecretOverlap, 0, 30*day, settingWebhookSecretOverlap.def)
	w.Timeout = r.duration(settingWebhookTimeout, 100*time.Millisecond, 5*time.Minute, settingWebhookTimeout.def)
	w.PollInterval = r.duration(settingWebhookPollInterval, 10*time.Millisecond, time.Hour, settingWebhookPollInterval.def)
	w.Retention = r.duration(settingWebhookRetention, time.Hour, 365*day, settingWebhookRetention.def)
	if !r.failed(settingWebhookSchedule, settingWebhookRetention) && w.Retention < scheduleSpan(w.Schedule) {
		r.fail(settingWebhookRetention, "must be at least as long as "+settingWebhookSchedule.env+" in all")
	}
}

// parseSchedule reads the retry waits.
func parseSchedule(s string) ([]time.Duration, error) {
	parts := splitList(s)
	bad := errors.New("must be 1 to 20 comma-separated durations, each from 10ms to 48h, such as 5s,5m,30m")
	if len(parts) == 0 || len(parts) > 20 {
		return nil, bad
	}
	out := make([]time.Duration, 0, len(parts))
	for _, p := range parts {
		d, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil || d < 10*time.Millisecond || d > 48*time.Hour {
			return nil, bad
		}
		out = append(out, d)
	}
	return out, nil
}

// scheduleSpan is the time from a first attempt to the last retry.
func scheduleSpan(s []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return sum
}

// webhookSettings turns the configuration into the rules of delivery.
func webhookSettings(c Config) webhook.Settings {
	w := c.Webhooks
	return webhook.Settings{AllowPrivate: w.AllowPrivate, Schedule: w.Schedule, DisableAfter: w.DisableAfter,
		SecretOverlap: w.SecretOverlap, Timeout: w.Timeout, Retention: w.Retention}
}

// newWebhookPoster returns the HTTP client of the deliveries.
func newWebhookPoster(c Config) ports.WebhookPoster {
	return webhookclient.New(webhookclient.Config{AllowPrivate: c.Webhooks.AllowPrivate, Timeout: c.Webhooks.Timeout})
}

// webhookObserver counts the deliveries in the metrics (a no-op when they
// are off).
func webhookObserver(o ports.Observer) ports.WebhookObserver { return o }

// maxWebhookPasses bounds the passes one tick runs back to back while full
// batches wait.
const maxWebhookPasses = 50

// webhookFanoutJob moves the outbox's events to the webhook endpoints'
// deliveries (webhook.Fanout is the events topic's handler): every poll
// interval (several instances may run it: claims never overlap) and at once
// when a change of this instance wrote events, pass after pass while full
// batches wait.
func (a *App) webhookFanoutJob(interval time.Duration, logger *slog.Logger) job {
	fanout := a.fanout
	return relay{name: "webhook fan-out", every: interval, wake: a.Outbox.Appended(ports.OutboxEvents), passes: maxWebhookPasses,
		relay: outbox.Relay{Outbox: a.Outbox, Clock: a.clock, Topic: ports.OutboxEvents, Handle: fanout.Handle,
			Lease: webhook.FanoutLease, Batch: webhook.FanoutBatch},
		dropped: func(d outbox.Dropped) {
			logger.Error("webhook fan-out dropped an event", slog.String("event_id", d.ID), slog.String("type", d.Type), slog.String("error", d.Err.Error()))
		},
	}.job()
}

// webhookSendJob delivers the due webhook deliveries: every poll interval
// and at once when this instance fanned out an event or replayed messages.
// Endpoints it disables are logged at warn.
func (a *App) webhookSendJob(interval time.Duration, logger *slog.Logger) job {
	sender := a.sender
	return job{name: "webhook sender", every: interval, atStart: true,
		wake: sender.Woken(),
		run: func(ctx context.Context) error {
			for range maxWebhookPasses {
				rep, err := sender.Pass(ctx)
				for _, e := range rep.Disabled {
					logger.Warn("webhook endpoint disabled after failing", slog.String("webhook_id", string(e.ID)), slog.String("url", e.URL))
				}
				for _, err := range rep.MailErrors {
					logger.Warn("webhook disabled: mail to an administrator failed", slog.String("error", err.Error()))
				}
				if err != nil || !rep.Full || ctx.Err() != nil {
					return err
				}
			}
			return nil
		}}
}

// webhookPurgeJob removes the webhook messages older than the retention
// period, with their deliveries and attempts, every hour, on one replica at
// a time (the webhook-purge lease, as the purge's).
func (a *App) webhookPurgeJob(retention time.Duration) job {
	return job{name: "webhook purge", every: purgeInterval, atStart: true, lease: leaseWebhookPurge, run: a.singleton(leaseWebhookPurge, 2*purgeInterval, func(ctx context.Context) error {
		_, err := a.sender.Purge(gormstore.WithTimeout(ctx, purgeTimeout), retention)
		return err
	})}
}
