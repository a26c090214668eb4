package bootstrap

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehouse/gatehouse/adapters/jobs"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// ProductName is named in mails and refused as a password.
const ProductName = "Gatehouse"

// AuthConfig is the section of sign-in: sessions, passwords, lockout and
// e-mail verification.
type AuthConfig struct {
	SessionLifetime  time.Duration
	SessionUpdateAge time.Duration
	SessionFreshAge  time.Duration
	SessionCacheTTL  time.Duration
	PasswordMin      int
	PasswordMax      int
	LockoutThreshold int
	LockoutCooldown  time.Duration
	RequireVerified  bool
	StepUpWindow     time.Duration
}

var authSettingList settingList

var (
	settingSessionLifetime   = authSettingList.add("GATEHOUSE_SESSION_LIFETIME", "session-lifetime", "168h", "how long a remembered session lives, pushed forward as it is used")
	settingSessionUpdateAge  = authSettingList.add("GATEHOUSE_SESSION_UPDATE_AGE", "session-update-age", "24h", "how often a used session's expiry is pushed forward")
	settingSessionFreshAge   = authSettingList.add("GATEHOUSE_SESSION_FRESH_AGE", "session-fresh-age", "24h", "how recent a sign-in must be for sensitive changes such as change-email (0 disables)")
	settingSessionCacheTTL   = authSettingList.add("GATEHOUSE_SESSION_CACHE_TTL", "session-cache-ttl", "500ms", "how long a replica may reuse a session check without asking the database (0 disables, at most 1s): a session revoked or a user banned by another process (another replica, the command line) is refused by this one within it; changes made through this replica are seen at once")
	settingPasswordMinLength = authSettingList.add("GATEHOUSE_PASSWORD_MIN_LENGTH", "password-min-length", "8", "shortest password accepted, in characters")
	settingPasswordMaxLength = authSettingList.add("GATEHOUSE_PASSWORD_MAX_LENGTH", "password-max-length", "128", "longest password accepted, in characters")
	settingLockoutThreshold  = authSettingList.add("GATEHOUSE_LOCKOUT_THRESHOLD", "lockout-threshold", "10", "consecutive wrong passwords or second-factor codes that lock an account's password and second factor (0 disables)")
	settingLockoutCooldown   = authSettingList.add("GATEHOUSE_LOCKOUT_COOLDOWN", "lockout-cooldown", "15m", "how long a locked account stays locked (a password reset lifts it)")
	settingStepUpWindow      = authSettingList.add("GATEHOUSE_STEP_UP_WINDOW", "step-up-window", "10m", "how long a second factor proven in a session lets a user with one make sensitive changes (e-mail, password, deleting the account, turning factors off, service keys)")
	settingRequireVerified   = authSettingList.addBool("GATEHOUSE_REQUIRE_EMAIL_VERIFICATION", "require-email-verification", "true", "true: sign-in waits for a verified address, and sign-up never reveals taken addresses")
)

func (a *AuthConfig) load(r *reader) {
	const day = 24 * time.Hour
	a.SessionLifetime = r.duration(settingSessionLifetime, time.Minute, 400*day, "24h")
	a.SessionUpdateAge = r.duration(settingSessionUpdateAge, 0, 400*day, "24h")
	a.SessionFreshAge = r.duration(settingSessionFreshAge, 0, 400*day, "24h")
	a.SessionCacheTTL = r.duration(settingSessionCacheTTL, 0, usecase.MaxSessionCacheTTL, "1s")
	a.PasswordMin = r.integer(settingPasswordMinLength, 8, 64)
	a.PasswordMax = r.integer(settingPasswordMaxLength, 64, 1024)
	a.LockoutThreshold = r.integer(settingLockoutThreshold, 0, 100)
	a.LockoutCooldown = r.duration(settingLockoutCooldown, time.Second, 30*day, "24h")
	a.RequireVerified = r.boolean(settingRequireVerified)
	a.StepUpWindow = r.duration(settingStepUpWindow, time.Minute, day, "24h")
}

// authSettings turns the configuration into the framework's rules.
func authSettings(c Config) usecase.AuthSettings {
	a := c.Auth
	return usecase.AuthSettings{
		BaseURL:     c.HTTP.BaseURL,
		ProductName: ProductName,
		Sessions: domain.SessionPolicy{
			Lifetime: a.SessionLifetime, ShortLifetime: min(24*time.Hour, a.SessionLifetime),
			UpdateAge: a.SessionUpdateAge, FreshAge: a.SessionFreshAge,
		},
		Passwords:                domain.PasswordPolicy{MinLength: a.PasswordMin, MaxLength: a.PasswordMax},
		Lockout:                  domain.LockoutPolicy{Threshold: a.LockoutThreshold, Cooldown: a.LockoutCooldown},
		RequireEmailVerification: a.RequireVerified,
		LinkTTL:                  time.Hour,
		StepUpWindow:             a.StepUpWindow,
	}
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

// passkeys is mfa.NewPasskeys refusing the passkey sign-ins of addresses
// whose organization requires its identity provider.
func passkeys(users ports.UserRepository, passkeys ports.PasskeyRepository, challenges ports.WebAuthnChallengeRepository,
	sessions ports.SessionRepository, audit usecase.Auditor, tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock,
	auth usecase.AuthSettings, settings mfa.PasskeySettings, router *federation.Router) (*mfa.Passkeys, error) {
	h, err := mfa.NewPasskeys(users, passkeys, challenges, sessions, audit, tokens, ids, clock, auth, settings)
	if err != nil {
		return nil, err
	}
	return h.UseSSO(router), nil
}

// passwords is account.NewPasswords mailing no reset link to, and setting
// no password for, addresses whose organization requires its identity
// provider.
func passwords(users ports.UserRepository, credentials ports.CredentialRepository, sessions ports.SessionRepository,
	verifications ports.VerificationRepository, hasher ports.PasswordHasher, blocklist ports.PasswordBlocklist, mailer ports.Mailer,
	passkeys ports.PasskeyRepository, tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, jobs ports.Jobs,
	settings usecase.AuthSettings, router *federation.Router, audit usecase.Auditor) *account.Passwords {
	return account.NewPasswords(users, credentials, sessions, verifications, hasher, blocklist, mailer, passkeys, audit.Events(), tokens, ids, clock, jobs, settings).
		UseSSO(router, audit)
}

// profile is account.NewProfile refusing to move an account to an address
// whose organization requires its identity provider.
func profile(users ports.UserRepository, credentials ports.CredentialRepository, verifications ports.VerificationRepository,
	hasher ports.PasswordHasher, mailer ports.Mailer, passkeys ports.PasskeyRepository, tokens ports.TokenGenerator, ids ports.IDGenerator,
	clock ports.Clock, settings usecase.AuthSettings, router *federation.Router, audit usecase.Auditor) *account.Profile {
	return account.NewProfile(users, credentials, verifications, hasher, mailer, passkeys, audit.Events(), tokens, ids, clock, settings).UseSSO(router, audit)
}

// domains is hostdomain.NewDomains ending, with a domain that turns
// verified, the sessions its provider's "SSO required" now covers.
func domains(repo ports.DomainRepository, orgs ports.OrganizationRepository, resolver ports.DNSResolver, audit usecase.Auditor,
	tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, settings hostdomain.DomainSettings, admins usecase.AdminSettings,
	providers *federation.Providers) *hostdomain.Domains {
	return hostdomain.NewDomains(repo, orgs, resolver, audit, tokens, ids, clock, settings, admins).UseSSO(providers)
}

// administration is admin.NewAdministration refusing the passwords set for
// addresses whose organization requires its identity provider.
func administration(users ports.UserRepository, credentials ports.CredentialRepository, verifications ports.VerificationRepository, sessions ports.SessionRepository,
	hasher ports.PasswordHasher, blocklist ports.PasswordBlocklist, audit usecase.Auditor, passkeys ports.PasskeyRepository, tokens ports.TokenGenerator,
	ids ports.IDGenerator, clock ports.Clock, settings usecase.AuthSettings, admins usecase.AdminSettings, router *federation.Router) *admin.Administration {
	return admin.NewAdministration(users, credentials, verifications, sessions, hasher, blocklist, audit, passkeys, tokens, ids, clock, settings, admins).UseSSO(router)
}

// registration is the password sign-up and the verification links; the
// sign-up refuses the addresses of organizations that require their
// identity provider.
func registration(users ports.UserRepository, credentials ports.CredentialRepository, sessions ports.SessionRepository,
	verifications ports.VerificationRepository, hasher ports.PasswordHasher, blocklist ports.PasswordBlocklist, mailer ports.Mailer,
	tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, jobs ports.Jobs, settings usecase.AuthSettings,
	router *federation.Router, audit usecase.Auditor) *account.Registration {
	return account.NewRegistration(users, credentials, sessions, verifications, hasher, blocklist, mailer, audit.Events(), tokens, ids, clock, jobs, settings).
		UseSSO(router, audit)
}

// signIns is account.NewSignIns with a cleanup that lets the failed
// attempts still being written (sign-in writes them after the answer)
// reach the stores before they close.
func signIns(credentials ports.CredentialRepository, sessions ports.SessionRepository,
	verifications ports.VerificationRepository, hasher ports.PasswordHasher, mailer ports.Mailer, tokens ports.TokenGenerator,
	ids ports.IDGenerator, clock ports.Clock, limiter ports.RateLimiter, settings usecase.AuthSettings, logger *slog.Logger,
	challenges ports.MFAChallengeRepository, router *federation.Router, audit usecase.Auditor) (*account.SignIns, func()) {
	h := account.NewSignIns(credentials, sessions, verifications, hasher, mailer, audit.Events(), tokens, ids, clock, limiter, settings, logger).
		UseSecondFactor(challenges).UseSSO(router, audit)
	return h, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Wait(ctx); err != nil {
			logger.Warn("sign-in: failed attempts not written before stopping", slog.String("error", err.Error()))
		}
	}
}
