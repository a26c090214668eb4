package bootstrap

import (
	"context"
	"log/slog"
	"net/mail"
	"time"

	"github.com/gatehouse/gatehouse/adapters/mailer"
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
	Queue        int // mails that may wait to be delivered
}

var mailSettingList settingList

var (
	settingSMTPHost     = mailSettingList.add("GATEHOUSE_SMTP_HOST", "smtp-host", "", "SMTP server for mail; empty logs the links instead (development only)")
	settingSMTPPort     = mailSettingList.add("GATEHOUSE_SMTP_PORT", "smtp-port", "587", "SMTP port")
	settingSMTPTLS      = mailSettingList.add("GATEHOUSE_SMTP_TLS", "smtp-tls", "starttls", "starttls, tls (implicit) or none (no encryption: any host in development, a loopback host only in production)")
	settingSMTPUsername = mailSettingList.add("GATEHOUSE_SMTP_USERNAME", "smtp-username", "", "SMTP user name (no authentication when empty)")
	settingSMTPPassword = mailSettingList.addSecret("GATEHOUSE_SMTP_PASSWORD", "smtp-password", "SMTP password")
	settingMailFrom     = mailSettingList.add("GATEHOUSE_MAIL_FROM", "mail-from", "Gatehouse <no-reply@localhost>", "sender of every mail")
	settingMailQueue    = mailSettingList.add("GATEHOUSE_MAIL_QUEUE_SIZE", "mail-queue-size", "1000", "mails that may wait for the SMTP server; when it is full, sign-up answers 503 whether or not the address has an account")
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

// newMailer returns the queued mailer: SMTP when a host is configured, else
// the development mailer that logs the links. The cleanup drains the queue.
func newMailer(c Config, logger *slog.Logger) (ports.Mailer, func(), error) {
	var next ports.Mailer
	if c.Mail.SMTPHost == "" {
		next = mailer.NewLog(logger)
	} else {
		smtp, err := mailer.NewSMTP(c.Mail.smtp(c.Env))
		if err != nil {
			return nil, nil, &ConfigError{Var: settingSMTPHost.env, Msg: err.Error()}
		}
		next = smtp
	}
	q := mailer.NewQueue(next, logger, mailer.WithCapacity(c.Mail.Queue))
	return q, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Close(ctx)
	}, nil
}
