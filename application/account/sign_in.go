package account

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// SignIn starts a session with an e-mail address and a password.
type SignIn struct {
	Email       string
	Password    string
	RememberMe  bool
	CallbackURL string // for the verification mail re-sent to unverified users
	// TrustedDevice is the token of the browser's trust_device cookie: a
	// live one of this user skips the second factor.
	TrustedDevice string
	Client        usecase.Client
}

// SignInResult is the signed-in user, their new session and its token. For
// a user with two-factor on there is no session yet: TwoFactorChallenge is
// the id of the challenge the second factor answers (mfa.TwoFactor).
type SignInResult struct {
	User               *domain.User
	Session            *domain.Session
	Token              string
	TwoFactorChallenge string
	// TrustToken replaces the trust_device token that skipped the second
	// factor; TrustRefused says the one sent was not (or no longer) valid.
	TrustToken   string
	TrustRefused bool
}

// SignIn checks the password and starts a session. Every refusal before the
// password is known to be right (no such user, no password, a locked
// account, a wrong password) answers alike and costs one hash and one read
// (CredentialRepository.GetByEmail, the same work for an unknown address),
// and a wrong password is counted after the
// answer, so neither the answer nor its timing reveals whether the address
// has an account.
func (h *SignIns) SignIn(ctx context.Context, cmd SignIn) (res *SignInResult, err error) {
	locked := false // the password was refused because the account is locked
	if h.observer != nil || h.counter != nil {
		defer func() {
			switch {
			case locked:
				usecase.CountSignIn(ctx, h.observer, h.counter, ports.SignInPassword, ports.SignInLocked)
			case err == nil && res.TwoFactorChallenge != "":
				usecase.CountSignIn(ctx, h.observer, h.counter, ports.SignInPassword, ports.SignInSecondFactorRequired)
			default:
				usecase.ObserveSignIn(ctx, h.observer, h.counter, ports.SignInPassword, err)
			}
		}()
	}
	email, err := domain.NewEmail(cmd.Email)
	if err != nil {
		return nil, err
	}
	if err := h.sso.Check(ctx, email, "", "", "sign-in.sso-required"); err != nil {
		return nil, err
	}
	u, cred, err := h.lookup(ctx, email)
	if err != nil {
		return nil, err
	}
	cred, ok, rehash, err := h.verify(ctx, cred, cmd.Password)
	if err != nil {
		return nil, err
	}
	if !ok {
		locked = cred != nil && cred.IsLocked(h.issuer.Clock.Now())
		return nil, usecase.ErrInvalidCredentials
	}
	// With two-factor on, the password alone proves nothing yet: earlier
	// failures (wrong codes count too) are forgotten only when the second
	// factor is answered, else each sign-in would reset the lockout.
	if !u.TwoFactorEnabled() {
		if err := h.recordSuccess(ctx, cred, cmd.Password, rehash); err != nil {
			return nil, err
		}
	}
	// Only someone who knows the password learns that the account is banned.
	if u.IsBanned(h.issuer.Clock.Now()) {
		return nil, usecase.ErrBannedUser
	}
	if h.settings.RequireEmailVerification && !u.EmailVerified() {
		if err := h.links.Send(ctx, domain.MailVerifyEmail, domain.PurposeVerifyEmail, u, u.Email(), func(token string) string {
			return h.settings.VerifyEmailLink(token, cmd.CallbackURL)
		}); err != nil {
			return nil, err
		}
		return nil, usecase.ErrEmailNotVerified
	}
	res = &SignInResult{User: u}
	if u.TwoFactorEnabled() {
		if h.challenges == nil {
			return nil, domain.Internal("sign-in: two-factor user without challenge store", errors.New("no MFAChallengeRepository"))
		}
		trusted := false
		if cmd.TrustedDevice != "" {
			if res.TrustToken, trusted, err = usecase.UseTrustedBrowser(ctx, h.links.Verifications, h.issuer, u, cmd.TrustedDevice); err != nil {
				return nil, err
			}
			res.TrustRefused = !trusted
		}
		if !trusted {
			if res.TwoFactorChallenge, err = usecase.StartMFAChallenge(ctx, h.challenges, h.issuer.Tokens, h.issuer.Clock.Now(), u.ID(), cmd.RememberMe); err != nil {
				return nil, err
			}
			return res, nil
		}
		// The second factor is proven by the trusted browser: forget
		// earlier failures as its answer would.
		if err := h.recordSuccess(ctx, cred, cmd.Password, rehash); err != nil {
			return nil, err
		}
	}
	if res.Session, res.Token, err = h.issuer.Start(ctx, u.ID(), cmd.RememberMe, cmd.Client, domain.PasswordAuthentication()); err != nil {
		return nil, err
	}
	return res, nil
}

// Wait waits until the failed attempts still being written are written, or
// ctx ends. Call it before the stores close.
func (h *SignIns) Wait(ctx context.Context) error { return h.failures.wait(ctx) }

// lookup returns the user and credential for email, or nils when either is
// missing, in one read that costs the same for an unknown address.
func (h *SignIns) lookup(ctx context.Context, email domain.Email) (*domain.User, *domain.Credential, error) {
	u, cred, err := h.credentials.GetByEmail(ctx, email)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return u, cred, nil
}

// verify reports whether password is cred's, as passwordCheck.verify does,
// but counts a wrong password after the answer (see failureRecorder). Only
// a right password waits for this user's failures still being written and
// reads the credential again: one of them may have locked it, and then even
// the right password is refused. It returns the credential as last read.
func (h *SignIns) verify(ctx context.Context, cred *domain.Credential, password string) (_ *domain.Credential, ok, rehash bool, err error) {
	now := h.issuer.Clock.Now()
	if cred == nil || cred.IsLocked(now) {
		if err := h.hasher.VerifyNothing(ctx, password); err != nil {
			return nil, false, false, domain.Internal("password: dummy verify", err)
		}
		return cred, false, false, nil
	}
	ok, rehash, err = h.hasher.Verify(ctx, cred.Hash(), password)
	if err != nil {
		return nil, false, false, domain.Internal("password: verify", err)
	}
	if !ok {
		h.failures.record(ctx, cred.UserID())
		return cred, false, false, nil
	}
	// Whoever knows the password learns nothing from the time this takes.
	if err := h.failures.settle(ctx, cred.UserID()); err != nil {
		return nil, false, false, err
	}
	if cred, err = h.credentials.Get(ctx, cred.UserID()); errors.Is(err, domain.ErrNotFound) {
		return nil, false, false, nil // the user or the password went meanwhile
	} else if err != nil {
		return nil, false, false, err
	}
	if cred.IsLocked(now) {
		return cred, false, false, nil
	}
	return cred, true, rehash, nil
}

// recordSuccess forgets earlier failures and, when the stored hash is an
// import (Better Auth scrypt, bcrypt) or has older parameters, replaces it
// with a fresh argon2id hash of the password just proven.
func (h *SignIns) recordSuccess(ctx context.Context, cred *domain.Credential, password string, rehash bool) error {
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
		now := h.issuer.Clock.Now()
		if fresh != "" {
			c.SetHash(fresh, now)
		}
		c.RecordSuccess(now)
		return nil
	})
}
