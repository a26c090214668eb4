package usecase

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// AuthSettings are the rules of the authentication framework.
type AuthSettings struct {
	// BaseURL is the public origin links are built on, such as https://id.example.com.
	BaseURL string
	// ProductName is named in mails and refused as a password.
	ProductName string
	Sessions    domain.SessionPolicy
	Passwords   domain.PasswordPolicy
	Lockout     domain.LockoutPolicy
	// RequireEmailVerification refuses sign-in until the address is verified.
	// It also keeps sign-up from revealing which addresses have accounts:
	// every sign-up answers alike and nobody is signed in by it.
	RequireEmailVerification bool
	// LinkTTL is how long a one-time link in a mail works (default 1 hour).
	LinkTTL time.Duration
	// StepUpWindow is how long a second factor proven in a session counts
	// as fresh for sensitive actions (StepUp).
	StepUpWindow time.Duration
}

// The framework's error codes (Better Auth's, so its client recognises them).
var (
	ErrInvalidCredentials = domain.NewError(domain.KindUnauthenticated, "auth.invalid_credentials", "Invalid email or password")
	ErrInvalidPassword    = domain.Invalid("auth.wrong_password", "Invalid password", domain.FieldViolation{Field: "password", Message: "is not the account's password"})
	ErrEmailNotVerified   = domain.NewError(domain.KindForbidden, "auth.email_not_verified", "Email not verified")
	ErrUserExists         = domain.NewError(domain.KindConflict, "user.email_exists", "User already exists. Use another email.")
	ErrSessionNotFresh    = domain.NewError(domain.KindForbidden, "auth.session_not_fresh", "Session is not fresh")
	ErrUnauthorized       = domain.NewError(domain.KindUnauthenticated, "UNAUTHORIZED", "Unauthorized")
)

// SSOPolicy says which addresses must sign in with their organization's
// identity provider (enterprise SSO), never with a password.
type SSOPolicy interface {
	// SSORequired reports whether email must, and through which provider.
	SSORequired(ctx context.Context, email domain.Email) (domain.IdentityProviderID, bool, error)
}

// ErrSSORequired refuses a way in (a password, a passkey, another
// provider, a reset link) of an address whose organization requires its
// identity provider.
var ErrSSORequired = domain.NewError(domain.KindForbidden, "federation.sso_required", "This address signs in with its organization's identity provider")

// ErrSSOPassword refuses a password that an operator (an administrator, a
// trusted backend) sets for an address whose organization requires its
// identity provider: it could never be used. field names the password.
func ErrSSOPassword(field string) error {
	return domain.Invalid("federation.sso_password", "This address signs in with its organization's identity provider and takes no password",
		domain.FieldViolation{Field: field, Message: "is refused: the address signs in with its organization's identity provider"})
}

// SSOSessions ends the sessions that a change of routing brings under "SSO
// required".
type SSOSessions interface {
	// DomainVerified ends, in the unit of work of ctx, the sessions of the
	// users at d (now verified, or moved) whose address the provider bound
	// to d requires SSO for, each with its session.revoked event.
	DomainVerified(ctx context.Context, d *domain.Domain) error
}

// SSOGate is the one check of "SSO required" that every way in, and every
// way to create or recover an account, goes through. The zero SSOGate
// requires nothing.
type SSOGate struct {
	policy SSOPolicy
	audit  Auditor
}

// NewSSOGate checks addresses against policy, each refusal audited.
func NewSSOGate(policy SSOPolicy, audit Auditor) SSOGate {
	MustHave(policy)
	return SSOGate{policy: policy, audit: audit}
}

// Required reports whether email must sign in through its organization's
// provider, and which.
func (g SSOGate) Required(ctx context.Context, email domain.Email) (domain.IdentityProviderID, bool, error) {
	if g.policy == nil {
		return "", false, nil
	}
	return g.policy.SSORequired(ctx, email)
}

// Check returns ErrSSORequired, audited as action by user ("" when not
// known), when email must sign in through its organization's provider and
// via is not that provider (via is "" for a way in that is no provider: a
// password, a passkey, a reset link). It depends on the address's domain
// only, never on whether an account exists.
func (g SSOGate) Check(ctx context.Context, email domain.Email, via domain.IdentityProviderID, user domain.UserID, action string) error {
	provider, required, err := g.Required(ctx, email)
	if err != nil || !required || provider == via {
		return err
	}
	return g.audit.Record(ctx, Actor{Type: domain.ActorUser, ID: string(user)}, action,
		Target{Type: "identity_provider", ID: string(provider)}, ErrSSORequired)
}

// Principal is who a request acts for: a live session and its user.
type Principal struct {
	Session *domain.Session
	User    *domain.User
}

// SessionIssuer starts sessions. Several use cases sign people in.
type SessionIssuer struct {
	sessions ports.SessionRepository
	events   *Events
	Tokens   ports.TokenGenerator
	IDs      ports.IDGenerator
	Clock    ports.Clock
	policy   domain.SessionPolicy
}

// Client describes where a request came from, kept with the sessions it starts.
type Client struct {
	IPAddress string
	UserAgent string
}

// Start creates a session for userID, signed in as auth says, with its
// session.created event, and returns its bearer token, which exists only in
// the answer: storage keeps its hash.
func (si SessionIssuer) Start(ctx context.Context, userID domain.UserID, rememberMe bool, c Client, auth domain.Authentication) (*domain.Session, string, error) {
	token := si.Tokens.NewToken()
	s := domain.NewSession(domain.SessionID(si.IDs.NewID()), userID, domain.HashToken(token), rememberMe,
		c.IPAddress, c.UserAgent, si.policy, si.Clock.Now())
	s.Authenticate(auth)
	if err := si.Create(ctx, s); err != nil {
		return nil, "", err
	}
	return s, token, nil
}

// Events returns the events writer of the issuer's sessions, for a use
// case that starts a session within a larger change.
func (si SessionIssuer) Events() *Events { return si.events }

// Create stores the new session s with its session.created event (an
// impersonation, say, which Start does not build).
func (si SessionIssuer) Create(ctx context.Context, s *domain.Session) error {
	return si.events.Do(ctx, func(ctx context.Context, emit Emit) error {
		if err := si.sessions.Create(ctx, s); err != nil {
			return err
		}
		emit(domain.EventSessionCreated, s)
		return nil
	})
}

// LinkSender mails one-time links.
type LinkSender struct {
	Verifications ports.VerificationRepository
	mailer        ports.Mailer
	tokens        ports.TokenGenerator
	ids           ports.IDGenerator
	Clock         ports.Clock
	settings      AuthSettings
}

// Send records a one-time link for u (sent to email) and mails it. The link
// is built by link from the token, which is mailed once and never stored.
func (ls LinkSender) Send(ctx context.Context, kind domain.MailKind, purpose domain.VerificationPurpose, u *domain.User, email domain.Email, link func(token string) string) error {
	return ls.SendVia(ctx, ls.mailer, kind, purpose, u, email, link)
}

// mailSender is a ports.Mailer or a place reserved in one.
type mailSender interface {
	Send(ctx context.Context, m domain.Mail) error
}

// SendVia is send through out, such as a reserved ports.MailSlot.
func (ls LinkSender) SendVia(ctx context.Context, out mailSender, kind domain.MailKind, purpose domain.VerificationPurpose, u *domain.User, email domain.Email, link func(token string) string) error {
	token, err := ls.Create(ctx, purpose, u, email)
	if err != nil {
		return err
	}
	return out.Send(ctx, domain.Mail{Kind: kind, To: email, Name: u.Name(), Link: link(token), ExpiresIn: ls.settings.LinkTTL})
}

// Create records a one-time link for u and returns its token.
func (ls LinkSender) Create(ctx context.Context, purpose domain.VerificationPurpose, u *domain.User, email domain.Email) (string, error) {
	token := ls.tokens.NewToken()
	v := domain.NewVerification(ls.ids.NewID(), purpose, domain.HashToken(token), u.ID(), email, ls.settings.LinkTTL, ls.Clock.Now())
	if err := ls.Verifications.Create(ctx, v); err != nil {
		return "", err
	}
	return token, nil
}

// FrameworkURL returns the absolute URL of a framework route with query values.
func (s AuthSettings) FrameworkURL(path string, q url.Values) string {
	u := strings.TrimRight(s.BaseURL, "/") + "/api/auth" + path
	if enc := q.Encode(); enc != "" {
		u += "?" + enc
	}
	return u
}

// VerifyEmailLink is the link that verifies an address (or an address change).
func (s AuthSettings) VerifyEmailLink(token, callbackURL string) string {
	q := url.Values{"token": {token}}
	if callbackURL != "" {
		q.Set("callbackURL", callbackURL)
	}
	return s.FrameworkURL("/verify-email", q)
}

// PasswordContext lists what a user's password may not be: their address,
// its local part, their name and the product's name.
func (s AuthSettings) PasswordContext(email domain.Email, name string) []string {
	local, _, _ := strings.Cut(string(email), "@")
	return []string{string(email), local, name, s.ProductName}
}

func MustHave(deps ...any) {
	for _, d := range deps {
		if d == nil {
			panic("command: nil dependency")
		}
	}
}

// PasswordCheck verifies passwords against stored credentials and counts
// wrong ones towards the account lockout. Sign-in, change-password,
// delete-user and the two-factor changes all prove the user's password
// through it (the last two with Prove).
type PasswordCheck struct {
	credentials ports.CredentialRepository
	hasher      ports.PasswordHasher
	clock       ports.Clock
	lockout     domain.LockoutPolicy
}

// Verify reports whether password is cred's. A missing or locked credential
// costs one dummy hash and fails, so it looks like a wrong password from
// outside. rehash says the stored hash should be replaced.
func (pc PasswordCheck) Verify(ctx context.Context, cred *domain.Credential, password string) (ok, rehash bool, err error) {
	if cred == nil || cred.IsLocked(pc.clock.Now()) {
		if err := pc.hasher.VerifyNothing(ctx, password); err != nil {
			return false, false, domain.Internal("password: dummy verify", err)
		}
		return false, false, nil
	}
	ok, rehash, err = pc.hasher.Verify(ctx, cred.Hash(), password)
	if err != nil {
		return false, false, domain.Internal("password: verify", err)
	}
	if ok {
		return true, rehash, nil
	}
	err = pc.credentials.Update(ctx, cred.UserID(), func(c *domain.Credential) error {
		c.RecordFailure(pc.clock.Now(), pc.lockout)
		return nil
	})
	return false, false, err
}

// Prove checks that password is user's: ErrInvalidPassword when it is not,
// or when the user has no password (which costs a dummy hash, like a wrong
// one). A wrong password counts towards the lockout. It is how a signed-in
// user re-proves their password before a sensitive change.
func (pc PasswordCheck) Prove(ctx context.Context, user domain.UserID, password string) error {
	cred, err := pc.credentials.Get(ctx, user)
	if errors.Is(err, domain.ErrNotFound) {
		cred = nil
	} else if err != nil {
		return err
	}
	ok, _, err := pc.Verify(ctx, cred, password)
	if err != nil {
		return err
	}
	if !ok {
		return ErrInvalidPassword
	}
	return nil
}

// NewSessionIssuer starts sessions under policy, each with its event
// written through events.
func NewSessionIssuer(sessions ports.SessionRepository, events *Events, tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, policy domain.SessionPolicy) SessionIssuer {
	if events == nil {
		panic("usecase: nil events")
	}
	return SessionIssuer{sessions, events, tokens, ids, clock, policy}
}

// NewLinkSender mails links whose tokens it keeps in verifications.
func NewLinkSender(verifications ports.VerificationRepository, mailer ports.Mailer, tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, settings AuthSettings) LinkSender {
	return LinkSender{verifications, mailer, tokens, ids, clock, settings}
}

// NewPasswordCheck checks passwords against credentials under the lockout policy.
func NewPasswordCheck(credentials ports.CredentialRepository, hasher ports.PasswordHasher, clock ports.Clock, lockout domain.LockoutPolicy) PasswordCheck {
	return PasswordCheck{credentials, hasher, clock, lockout}
}
