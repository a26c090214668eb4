package command

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// SignIn starts a session with an e-mail address and a password.
type SignIn struct {
	Email       string
	Password    string
	RememberMe  bool
	CallbackURL string // for the verification mail re-sent to unverified users
	Client      Client
}

// SignInResult is the signed-in user, their new session and its token.
type SignInResult struct {
	User    *domain.User
	Session *domain.Session
	Token   string
}

// SignInHandler handles SignIn.
type SignInHandler struct {
	users       ports.UserRepository
	credentials ports.CredentialRepository
	hasher      ports.PasswordHasher
	issuer      sessionIssuer
	links       linkSender
	check       passwordCheck
	settings    AuthSettings
}

// NewSignInHandler returns a SignInHandler.
func NewSignInHandler(users ports.UserRepository, credentials ports.CredentialRepository, sessions ports.SessionRepository,
	verifications ports.VerificationRepository, hasher ports.PasswordHasher, mailer ports.Mailer, tokens ports.TokenGenerator,
	ids ports.IDGenerator, clock ports.Clock, settings AuthSettings) *SignInHandler {
	mustHave(users, credentials, sessions, verifications, hasher, mailer, tokens, ids, clock)
	return &SignInHandler{
		users: users, credentials: credentials, hasher: hasher, settings: settings,
		issuer: sessionIssuer{sessions, tokens, ids, clock, settings.Sessions},
		links:  linkSender{verifications, mailer, tokens, ids, clock, settings},
		check:  passwordCheck{credentials, hasher, clock, settings.Lockout},
	}
}

// Handle checks the password and starts a session. Every refusal before the
// password is known to be right (no such user, no password, a locked
// account, a wrong password) answers alike and costs one hash, so neither the
// answer nor its timing reveals whether the address has an account.
func (h *SignInHandler) Handle(ctx context.Context, cmd SignIn) (*SignInResult, error) {
	email, err := domain.NewEmail(cmd.Email)
	if err != nil {
		return nil, err
	}
	u, cred, err := h.lookup(ctx, email)
	if err != nil {
		return nil, err
	}
	ok, rehash, err := h.check.verify(ctx, cred, cmd.Password)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errInvalidCredentials
	}
	if err := h.recordSuccess(ctx, cred, cmd.Password, rehash); err != nil {
		return nil, err
	}
	// Only someone who knows the password learns that the account is banned.
	if u.IsBanned(h.issuer.clock.Now()) {
		return nil, errBannedUser
	}
	if h.settings.RequireEmailVerification && !u.EmailVerified() {
		if err := h.links.send(ctx, domain.MailVerifyEmail, domain.PurposeVerifyEmail, u, u.Email(), func(token string) string {
			return h.settings.verifyEmailLink(token, cmd.CallbackURL)
		}); err != nil {
			return nil, err
		}
		return nil, errEmailNotVerified
	}
	s, token, err := h.issuer.start(ctx, u.ID(), cmd.RememberMe, cmd.Client)
	if err != nil {
		return nil, err
	}
	return &SignInResult{User: u, Session: s, Token: token}, nil
}

// lookup returns the user and credential for email, or nils when either is missing.
func (h *SignInHandler) lookup(ctx context.Context, email domain.Email) (*domain.User, *domain.Credential, error) {
	u, err := h.users.GetByEmail(ctx, email)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	cred, err := h.credentials.Get(ctx, u.ID())
	if errors.Is(err, domain.ErrNotFound) {
		return u, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return u, cred, nil
}

// recordSuccess forgets earlier failures and, when the stored hash is an
// import (Better Auth scrypt, bcrypt) or has older parameters, replaces it
// with a fresh argon2id hash of the password just proven.
func (h *SignInHandler) recordSuccess(ctx context.Context, cred *domain.Credential, password string, rehash bool) error {
	if !rehash && cred.FailedAttempts() == 0 && cred.LockedUntil().IsZero() {
		return nil // nothing to write: the hot path stays read-only
	}
	var fresh string
	if rehash {
		var err error
		if fresh, err = h.hasher.Hash(ctx, password); err != nil {
			return domain.Internal("sign-in: rehash", err)
		}
	}
	return h.credentials.Update(ctx, cred.UserID(), func(c *domain.Credential) error {
		now := h.issuer.clock.Now()
		if fresh != "" {
			c.SetHash(fresh, now)
		}
		c.RecordSuccess(now)
		return nil
	})
}
