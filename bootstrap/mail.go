package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"time"

	"github.com/gatehouse/gatehouse/adapters/httpapi"
	"go.opentelemetry.io/otel/propagation"

	"github.com/gatehouse/gatehouse/adapters/mailer"
	"github.com/gatehouse/gatehouse/application/outbox"
	"github.com/gatehouse/gatehouse/ports"
)

// MailConfig is the section of outgoing mail. With no SMTP host,
// development logs the links instead; production refuses.
type MailConfig struct {
	SMTPHost     string
	SMTPPort     int
	SMTPTLS      string
	SMTPUsername string
	SMTPPassword string
	From         string
	Queue        int // mails that may wait in the outbox to be delivered
}

var mailSettingList settingList

var (
	settingSMTPHost     = mailSettingList.add("GATEHOUSE_SMTP_HOST", "smtp-host", "", "SMTP server for mail; empty logs the links instead (development only)")
	settingSMTPPort     = mailSettingList.add("GATEHOUSE_SMTP_PORT", "smtp-port", "587", "SMTP port")
	settingSMTPTLS      = mailSettingList.add("GATEHOUSE_SMTP_TLS", "smtp-tls", "starttls", "starttls, tls (implicit) or none (no encryption: any host in development, a loopback host only in production)")
	settingSMTPUsername = mailSettingList.add("GATEHOUSE_SMTP_USERNAME", "smtp-username", "", "SMTP user name (no authentication when empty)")
	settingSMTPPassword = mailSettingList.addSecret("GATEHOUSE_SMTP_PASSWORD", "smtp-password", "SMTP password")
	settingMailFrom     = mailSettingList.add("GATEHOUSE_MAIL_FROM", "mail-from", "Gatehouse <no-reply@localhost>", "sender of every mail")
	settingMailQueue    = mailSettingList.add("GATEHOUSE_MAIL_QUEUE_SIZE", "mail-queue-size", "1000", "mails that may wait in the outbox for the SMTP server; when that many wait, sign-up answers 503 whether or not the address has an account")
)

func (m *MailConfig) load(r *reader) {
	m.SMTPPort = r.integer(settingSMTPPort, 1, 65535)
	m.Queue = r.integer(settingMailQueue, 1, 1000000)
	m.SMTPHost, m.SMTPUsername, m.SMTPPassword, m.From = r.text(settingSMTPHost), r.text(settingSMTPUsername), r.text(settingSMTPPassword), r.text(settingMailFrom)
	switch m.SMTPTLS = r.text(settingSMTPTLS); m.SMTPTLS {
	case "starttls", "tls", "none":
	default:
		r.fail(settingSMTPTLS, "must be starttls, tls or none")
	}
	if _, err := mail.ParseAddress(m.From); err != nil {
		r.fail(settingMailFrom, `must be an address, optionally as "Name <address>"`)
	}
	if m.SMTPPassword != "" && m.SMTPUsername == "" {
		r.fail(settingSMTPUsername, "must be set when "+settingSMTPPassword.env+" is")
	}
	switch {
	case m.SMTPHost == "" && r.production():
		r.fail(settingSMTPHost, "must be set in production: verification and reset mails must reach people")
	case m.SMTPHost == "" || r.failed(settingSMTPTLS, settingSMTPPort, settingMailFrom, settingSMTPUsername):
	case m.SMTPTLS == "none" && r.production() && !mailer.IsLoopback(m.SMTPHost):
		// Credentials and reset links would cross the network in clear text.
		r.fail(settingSMTPTLS, "none is allowed in production only with a loopback "+settingSMTPHost.env+" (localhost, 127.0.0.1 or ::1); use starttls or tls")
	default:
		if _, err := mailer.NewSMTP(m.smtp(r.env)); err != nil {
			r.fail(settingSMTPHost, err.Error())
		}
	}
}

// smtp is the SMTP mailer's configuration. TLS mode none (no encryption)
// is allowed to any host in development, where a mail catcher on the next
// container is common, and only to loopback in production.
func (m MailConfig) smtp(env Environment) mailer.Config {
	return mailer.Config{Host: m.SMTPHost, Port: m.SMTPPort, TLSMode: m.SMTPTLS, AllowInsecure: env != Production,
		Username: m.SMTPUsername, Password: m.SMTPPassword, From: m.From, ProductName: ProductName}
}

// mailDelivery is the durable mailer and the relay that delivers its mail:
// Send seals each mail into the outbox (inside the caller's unit of work),
// and the relay, a job of StartJobs, claims it and sends it through SMTP,
// or through the development mailer that logs the links when no SMTP host
// is configured. The relay wakes when this process appends a mail and
// polls for the rest (other replicas' mail, retries that come due).
type mailDelivery struct {
	mailer *mailer.Outbox
	relay  outbox.Relay
	wake   <-chan struct{}
}

// mailPollInterval is how often the mail relay looks for mail it was not
// woken for: appended by another process, or whose retry has come due.
const mailPollInterval = 5 * time.Second

func newMailDelivery(c Config, logger *slog.Logger, store ports.Outbox, sealer ports.SecretSealer, clock ports.Clock,
	ids ports.IDGenerator) (*mailDelivery, error) {
	var next mailer.Sender
	if c.Mail.SMTPHost == "" {
		next = mailer.NewLog(logger)
	} else {
		smtp, err := mailer.NewSMTP(c.Mail.smtp(c.Env))
		if err != nil {
			return nil, &ConfigError{Var: settingSMTPHost.env, Msg: err.Error()}
		}
		next = smtp
	}
	m := mailer.NewOutbox(store, sealer, clock, ids, next, logger, mailer.OutboxConfig{Capacity: c.Mail.Queue,
		Carry: carryRequest, Restore: restoreRequest})
	return &mailDelivery{mailer: m, wake: store.Appended(ports.OutboxMail), relay: outbox.Relay{
		Outbox: store, Clock: clock, Topic: ports.OutboxMail,
		// One mail per claim: the lease covers one attempt, so a mail
		// being sent is never claimed again unless this process died.
		Batch: 1, Lease: m.Lease(),
		Handle: func(ctx context.Context, msg ports.OutboxMessage) error {
			err := m.Deliver(ctx, msg)
			if errors.Is(err, mailer.ErrUndeliverable) {
				return fmt.Errorf("%w: %w", outbox.ErrGiveUp, err)
			}
			return err
		},
	}}, nil
}

// newMailer returns the durable mailer.
func newMailer(d *mailDelivery) ports.Mailer { return d.mailer }

// carryRequest returns what a mail's delivery keeps of the requesting
// context: its request id, and its trace as a W3C traceparent.
func carryRequest(ctx context.Context) map[string]string {
	values := map[string]string{}
	if id := httpapi.RequestIDFrom(ctx); id != "" {
		values["request_id"] = id
	}
	propagation.TraceContext{}.Inject(ctx, propagation.MapCarrier(values))
	return values
}

// restoreRequest puts carryRequest's values back on ctx.
func restoreRequest(ctx context.Context, values map[string]string) context.Context {
	ctx = httpapi.WithRequestID(ctx, values["request_id"])
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier(values))
}
