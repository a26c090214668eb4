package account

import (
	"log/slog"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Registration is the making of accounts: the password sign-up and the
// e-mail verification links, for new accounts and for address changes.
type Registration struct {
	users         ports.UserRepository
	credentials   ports.CredentialRepository
	verifications ports.VerificationRepository
	hasher        ports.PasswordHasher
	blocklist     ports.PasswordBlocklist
	mailer        ports.Mailer
	issuer        usecase.SessionIssuer
	links         usecase.LinkSender
	events        *usecase.Events
	jobs          ports.Jobs
	clock         ports.Clock
	settings      usecase.AuthSettings
	sso           usecase.SSOGate
}

// NewRegistration returns a Registration.
func NewRegistration(users ports.UserRepository, credentials ports.CredentialRepository, sessions ports.SessionRepository,
	verifications ports.VerificationRepository, hasher ports.PasswordHasher, blocklist ports.PasswordBlocklist, mailer ports.Mailer,
	events *usecase.Events, tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, jobs ports.Jobs,
	settings usecase.AuthSettings) *Registration {
	usecase.MustHave(users, credentials, sessions, verifications, hasher, blocklist, mailer, tokens, ids, clock, jobs)
	return &Registration{
		users: users, credentials: credentials, verifications: verifications, hasher: hasher, blocklist: blocklist, mailer: mailer,
		events: events, jobs: jobs, clock: clock, settings: settings,
		issuer: usecase.NewSessionIssuer(sessions, events, tokens, ids, clock, settings.Sessions),
		links:  usecase.NewLinkSender(verifications, mailer, tokens, ids, clock, settings),
	}
}

// UseSSO refuses password sign-ups of the addresses policy sends to their
// organization's identity provider, each refusal audited.
func (h *Registration) UseSSO(policy usecase.SSOPolicy, audit usecase.Auditor) *Registration {
	h.sso = usecase.NewSSOGate(policy, audit)
	return h
}

// SignIns is the password sign-in, the failed attempts it records after
// the answer, and the request throttle the edge counts sign-ins and other
// requests with.
type SignIns struct {
	credentials ports.CredentialRepository
	hasher      ports.PasswordHasher
	issuer      usecase.SessionIssuer
	links       usecase.LinkSender
	failures    *failureRecorder
	limiter     ports.RateLimiter
	settings    usecase.AuthSettings
	challenges  ports.MFAChallengeRepository
	sso         usecase.SSOGate
	observer    ports.Observer         // nil: sign-ins are not counted
	counter     *usecase.SignInCounter // nil: nor recorded
}

// NewSignIns returns a SignIns. logger (slog.Default() when nil) hears of
// the failed attempts that could not be written.
func NewSignIns(credentials ports.CredentialRepository, sessions ports.SessionRepository,
	verifications ports.VerificationRepository, hasher ports.PasswordHasher, mailer ports.Mailer, events *usecase.Events,
	tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, limiter ports.RateLimiter, settings usecase.AuthSettings,
	logger *slog.Logger) *SignIns {
	usecase.MustHave(credentials, sessions, verifications, hasher, mailer, tokens, ids, clock, limiter)
	if logger == nil {
		logger = slog.Default()
	}
	return &SignIns{
		credentials: credentials, hasher: hasher, limiter: limiter, settings: settings,
		issuer:   usecase.NewSessionIssuer(sessions, events, tokens, ids, clock, settings.Sessions),
		links:    usecase.NewLinkSender(verifications, mailer, tokens, ids, clock, settings),
		failures: &failureRecorder{credentials: credentials, clock: clock, lockout: settings.Lockout, logger: logger},
	}
}

// UseSSO refuses password sign-ins of the addresses policy sends to their
// organization's identity provider, each refusal audited.
func (h *SignIns) UseSSO(policy usecase.SSOPolicy, audit usecase.Auditor) *SignIns {
	h.sso = usecase.NewSSOGate(policy, audit)
	return h
}

// UseSecondFactor makes sign-in of a user with two-factor on record a
// challenge in challenges instead of starting a session. Without it such a
// sign-in is refused.
func (h *SignIns) UseSecondFactor(challenges ports.MFAChallengeRepository) *SignIns {
	usecase.MustHave(challenges)
	h.challenges = challenges
	return h
}

// Sessions is what a signed-in user's sessions go through: the check of
// every signed-in request (Authenticate, the hot path) and its refresh,
// signing out, listing and revoking sessions, each revocation with its
// session.revoked event.
type Sessions struct {
	sessions ports.SessionRepository
	cache    *usecase.SessionCache
	revoker  usecase.SessionRevoker
	clock    ports.Clock
	policy   domain.SessionPolicy
}

// NewSessions returns a Sessions. cache may be nil (no cache).
func NewSessions(sessions ports.SessionRepository, cache *usecase.SessionCache, events *usecase.Events, clock ports.Clock,
	settings usecase.AuthSettings) *Sessions {
	usecase.MustHave(sessions, clock)
	return &Sessions{sessions: sessions, cache: cache, clock: clock, policy: settings.Sessions,
		revoker: usecase.NewSessionRevoker(sessions, events, clock)}
}

// Profile is what users change of their own account: their name and
// picture, their e-mail address, and the account itself, deleted.
type Profile struct {
	users         ports.UserRepository
	credentials   ports.CredentialRepository
	verifications ports.VerificationRepository
	hasher        ports.PasswordHasher
	links         usecase.LinkSender
	stepUp        usecase.StepUp
	events        *usecase.Events
	clock         ports.Clock
	settings      usecase.AuthSettings
	sso           usecase.SSOGate
}

// NewProfile returns a Profile.
func NewProfile(users ports.UserRepository, credentials ports.CredentialRepository, verifications ports.VerificationRepository,
	hasher ports.PasswordHasher, mailer ports.Mailer, passkeys ports.PasskeyRepository, events *usecase.Events, tokens ports.TokenGenerator,
	ids ports.IDGenerator, clock ports.Clock, settings usecase.AuthSettings) *Profile {
	usecase.MustHave(users, credentials, verifications, hasher, mailer, passkeys, tokens, ids, clock)
	return &Profile{users: users, credentials: credentials, verifications: verifications, hasher: hasher, events: events,
		clock: clock, settings: settings, links: usecase.NewLinkSender(verifications, mailer, tokens, ids, clock, settings),
		stepUp: usecase.NewStepUp(passkeys, clock, settings.StepUpWindow)}
}

// UseSSO refuses to move an account to an address that policy sends to its
// organization's identity provider: the account would come to that address
// with a password and a session the organization never vouched for.
func (h *Profile) UseSSO(policy usecase.SSOPolicy, audit usecase.Auditor) *Profile {
	h.sso = usecase.NewSSOGate(policy, audit)
	return h
}

// Passwords is the changing and the resetting of passwords, and the
// one-time links that set a first password.
type Passwords struct {
	users         ports.UserRepository
	credentials   ports.CredentialRepository
	verifications ports.VerificationRepository
	hasher        ports.PasswordHasher
	blocklist     ports.PasswordBlocklist
	issuer        usecase.SessionIssuer
	revoker       usecase.SessionRevoker
	check         usecase.PasswordCheck
	stepUp        usecase.StepUp
	links         usecase.LinkSender
	events        *usecase.Events
	jobs          ports.Jobs
	clock         ports.Clock
	settings      usecase.AuthSettings
	sso           usecase.SSOGate
}

// NewPasswords returns a Passwords.
func NewPasswords(users ports.UserRepository, credentials ports.CredentialRepository, sessions ports.SessionRepository,
	verifications ports.VerificationRepository, hasher ports.PasswordHasher, blocklist ports.PasswordBlocklist, mailer ports.Mailer,
	passkeys ports.PasskeyRepository, events *usecase.Events, tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock,
	jobs ports.Jobs, settings usecase.AuthSettings) *Passwords {
	usecase.MustHave(users, credentials, sessions, verifications, hasher, blocklist, mailer, passkeys, tokens, ids, clock, jobs)
	return &Passwords{users: users, credentials: credentials, verifications: verifications, hasher: hasher, blocklist: blocklist,
		events: events, jobs: jobs, clock: clock, settings: settings,
		issuer:  usecase.NewSessionIssuer(sessions, events, tokens, ids, clock, settings.Sessions),
		revoker: usecase.NewSessionRevoker(sessions, events, clock),
		check:   usecase.NewPasswordCheck(credentials, hasher, clock, settings.Lockout),
		stepUp:  usecase.NewStepUp(passkeys, clock, settings.StepUpWindow),
		links:   usecase.NewLinkSender(verifications, mailer, tokens, ids, clock, settings)}
}

// UseSSO keeps passwords from the addresses policy sends to their
// organization's identity provider: no reset link is mailed to them (the
// request answers as for any address), and a link mailed before the
// requirement sets no password.
func (h *Passwords) UseSSO(policy usecase.SSOPolicy, audit usecase.Auditor) *Passwords {
	h.sso = usecase.NewSSOGate(policy, audit)
	return h
}

// Purger is account's one worker, run by bootstrap's purge job: it removes
// expired sessions, one-time links, rotated-out service-key secrets and
// the OpenID provider's expired codes, grants and refresh tokens,
// second-factor and WebAuthn challenges, and the console's spent form
// tokens, so the tables hold only what can still be used; and the sign-in
// counts older than SignInCountRetention. It reaches other contexts' rows
// through their ports only, as one pass over every expiring table.
type Purger struct {
	sessions      ports.SessionRepository
	verifications ports.VerificationRepository
	keys          ports.ServiceKeyRepository
	grants        ports.OAuthGrantRepository
	challenges    ports.MFAChallengeRepository
	webauthn      ports.WebAuthnChallengeRepository
	states        ports.FederationStateRepository
	signIns       ports.SignInStats
	spent         ports.SpentTokens
	clock         ports.Clock
}

// SignInCountRetention is how long the hourly sign-in counts are kept: the
// overview shows 30 days, and the rest leaves room to look back further.
const SignInCountRetention = 90 * 24 * time.Hour

// NewPurger returns a Purger.
func NewPurger(sessions ports.SessionRepository, verifications ports.VerificationRepository, keys ports.ServiceKeyRepository,
	grants ports.OAuthGrantRepository, challenges ports.MFAChallengeRepository, webauthn ports.WebAuthnChallengeRepository,
	states ports.FederationStateRepository, signIns ports.SignInStats, spent ports.SpentTokens, clock ports.Clock) *Purger {
	usecase.MustHave(sessions, verifications, keys, grants, challenges, webauthn, states, signIns, spent, clock)
	return &Purger{sessions: sessions, verifications: verifications, keys: keys, grants: grants, challenges: challenges,
		webauthn: webauthn, states: states, signIns: signIns, spent: spent, clock: clock}
}
