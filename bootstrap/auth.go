package bootstrap

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehouse/gatehouse/adapters/jobs"
	"github.com/gatehouse/gatehouse/adapters/mailer"
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// ProductName is named in mails and refused as a password.
const ProductName = "Gatehouse"

// authSettings turns the configuration into the framework's rules.
func authSettings(c Config) command.AuthSettings {
	return command.AuthSettings{
		BaseURL:     c.BaseURL,
		ProductName: ProductName,
		Sessions: domain.SessionPolicy{
			Lifetime: c.SessionLifetime, ShortLifetime: min(24*time.Hour, c.SessionLifetime),
			UpdateAge: c.SessionUpdateAge, FreshAge: c.SessionFreshAge,
		},
		Passwords:                domain.PasswordPolicy{MinLength: c.PasswordMin, MaxLength: c.PasswordMax},
		Lockout:                  domain.LockoutPolicy{Threshold: c.LockoutThreshold, Cooldown: c.LockoutCooldown},
		RequireEmailVerification: c.RequireVerified,
		LinkTTL:                  time.Hour,
	}
}

// adminSettings turns the configuration into the rules of administration.
func adminSettings(c Config) command.AdminSettings {
	return command.AdminSettings{Admins: platformAdmins(c), ImpersonationTTL: c.ImpersonationTTL}
}

// platformAdmins are the administrators named by the configuration.
func platformAdmins(c Config) domain.PlatformAdmins {
	var a domain.PlatformAdmins
	for _, e := range c.AdminEmails {
		a.Emails = append(a.Emails, domain.Email(e))
	}
	for _, id := range c.AdminUserIDs {
		a.UserIDs = append(a.UserIDs, domain.UserID(id))
	}
	return a
}

// organizationSettings turns the configuration into the rules of organizations.
func organizationSettings(c Config) command.OrganizationSettings {
	return command.OrganizationSettings{
		InvitationTTL: c.InvitationTTL, InvitationLimit: c.InvitationLimit, MembershipLimit: c.MembershipLimit,
		OrganizationLimit: c.OrganizationLimit, InvitationURL: c.InvitationURL,
	}
}

// smtpConfig is the SMTP mailer's configuration. TLS mode none (no
// encryption) is allowed to any host in development, where a mail catcher
// on the next container is common, and only to loopback in production.
func smtpConfig(c Config) mailer.Config {
	return mailer.Config{Host: c.SMTPHost, Port: c.SMTPPort, TLSMode: c.SMTPTLS, AllowInsecure: c.Env != Production,
		Username: c.SMTPUsername, Password: c.SMTPPassword, From: c.MailFrom, ProductName: ProductName}
}

// newMailer returns the queued mailer: SMTP when a host is configured, else
// the development mailer that logs the links. The cleanup drains the queue.
func newMailer(c Config, logger *slog.Logger) (ports.Mailer, func(), error) {
	var next ports.Mailer
	if c.SMTPHost == "" {
		next = mailer.NewLog(logger)
	} else {
		smtp, err := mailer.NewSMTP(smtpConfig(c))
		if err != nil {
			return nil, nil, &ConfigError{Var: "GATEHOUSE_SMTP_HOST", Msg: err.Error()}
		}
		next = smtp
	}
	q := mailer.NewQueue(next, logger, mailer.WithCapacity(c.MailQueue))
	return q, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Close(ctx)
	}, nil
}

// newJobs returns the queue of work done after the answer (looking up the
// address of a reset or verification request and mailing its link). Its
// size is fixed: it empties at the speed of the database, not of the SMTP
// server, and a small mail queue must not make it refuse a burst. It takes
// the mailer and the users, which its jobs use, so that the cleanup drains
// it before either is closed.
func newJobs(logger *slog.Logger, _ ports.Mailer, _ ports.UserRepository) (ports.Jobs, func()) {
	q := jobs.NewQueue(jobs.DefaultCapacity, jobs.DefaultDelay, logger)
	return q, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Close(ctx); err != nil {
			logger.Warn("close job queue", slog.String("error", err.Error()))
		}
	}
}

// signInHandler is command.NewSignInHandler with a cleanup that lets the
// failed attempts still being written (sign-in writes them after the
// answer) reach the stores before they close.
func signInHandler(users ports.UserRepository, credentials ports.CredentialRepository, sessions ports.SessionRepository,
	verifications ports.VerificationRepository, hasher ports.PasswordHasher, mailer ports.Mailer, tokens ports.TokenGenerator,
	ids ports.IDGenerator, clock ports.Clock, settings command.AuthSettings, logger *slog.Logger) (*command.SignInHandler, func()) {
	h := command.NewSignInHandler(users, credentials, sessions, verifications, hasher, mailer, tokens, ids, clock, settings, logger)
	return h, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Wait(ctx); err != nil {
			logger.Warn("sign-in: failed attempts not written before stopping", slog.String("error", err.Error()))
		}
	}
}
