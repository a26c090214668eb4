package account

import (
	"context"
	"errors"
	"net/url"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// RequestPasswordReset asks for a reset link for an address.
type RequestPasswordReset struct {
	Email      string
	RedirectTo string // where the link leads with the token (already validated)
}

// ResetPassword sets a new password with the token from a reset link.
type ResetPassword struct {
	Token       string
	NewPassword string
}

var errInvalidResetToken = domain.Invalid("password_reset.invalid_token", "Invalid token", domain.FieldViolation{Field: "token", Message: "is unknown, used or expired"})

// RequestPasswordReset mails a reset link when the address has an account,
// and answers the same either way. Older reset links stop working.
//
// The request only checks the address and queues the rest: the lookup, the
// link and the mail happen after the answer, so that neither the answer nor
// its timing tells whether the address has an account (ASVS V6.3). A full
// queue refuses every address alike.
func (h *Passwords) RequestPasswordReset(ctx context.Context, cmd RequestPasswordReset) error {
	email, err := domain.NewEmail(cmd.Email)
	if err != nil {
		return err
	}
	return h.jobs.Enqueue(ctx, "request-password-reset", func(ctx context.Context) error {
		if err := h.mailLink(ctx, email, cmd.RedirectTo); !errors.Is(err, usecase.ErrSSORequired) {
			return err
		}
		return nil // refused and audited; the requester was answered as for any address
	})
}

// SendResetLink mails a reset link to email if it has an account, now rather than
// from the queue: for an operator who already knows the account (an
// administrator's "send a password reset"), whose answer reveals nothing.
// Older reset links stop working.
func (h *Passwords) SendResetLink(ctx context.Context, email domain.Email, redirectTo string) error {
	return h.mailLink(ctx, email, redirectTo)
}

// mailLink mails a reset link to email if it has an account, unless the
// address must sign in through its organization's provider
// (usecase.ErrSSORequired).
func (h *Passwords) mailLink(ctx context.Context, email domain.Email, redirectTo string) error {
	if err := h.sso.Check(ctx, email, "", "", "password-reset.sso-required"); err != nil {
		return err
	}
	u, err := h.users.GetByEmail(ctx, email)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := h.verifications.DeleteByUser(ctx, u.ID(), domain.PurposeResetPassword); err != nil {
		return err
	}
	return h.links.Send(ctx, domain.MailResetPassword, domain.PurposeResetPassword, u, email, func(token string) string {
		q := url.Values{}
		if redirectTo != "" {
			q.Set("callbackURL", redirectTo)
		}
		return h.settings.FrameworkURL("/reset-password/"+url.PathEscape(token), q)
	})
}

// ResetPassword sets the new password. The password is checked before the token is
// used up, so a refused password leaves the link working. Every session of
// the user ends: whoever held the old password is signed out, and every
// trusted browser is forgotten (usecase.ForgetTrustedBrowsers). The lockout is
// lifted, and the address counts as verified: the link reached it.
func (h *Passwords) ResetPassword(ctx context.Context, cmd ResetPassword) error {
	if err := h.settings.Passwords.Check("newPassword", cmd.NewPassword, h.blocklist.Contains, h.settings.ProductName); err != nil {
		return err
	}
	if cmd.Token == "" {
		return errInvalidResetToken
	}
	v, err := h.verifications.Consume(ctx, domain.PurposeResetPassword, domain.HashToken(cmd.Token))
	if errors.Is(err, domain.ErrNotFound) {
		return errInvalidResetToken
	}
	if err != nil {
		return err
	}
	if v.IsExpired(h.clock.Now()) {
		return errInvalidResetToken
	}
	u, err := h.checkContext(ctx, v, cmd.NewPassword)
	if err != nil {
		return err
	}
	// A link mailed before the organization required its provider sets no
	// password: it is used up.
	if err := h.sso.Check(ctx, u.Email(), "", u.ID(), "password-reset.sso-required"); err != nil {
		return err
	}
	hash, err := h.hasher.Hash(ctx, cmd.NewPassword)
	if err != nil {
		return domain.Internal("reset-password: hash", err)
	}
	// The new password, the address proven by the link (user.updated when
	// that is news), the trusted browsers forgotten and every session ended
	// (session.revoked) go together.
	return h.events.Do(ctx, func(ctx context.Context, emit usecase.Emit) error {
		if err := h.setPassword(ctx, v.UserID(), hash); err != nil {
			return err
		}
		var verified *domain.User
		if err := h.users.Update(ctx, v.UserID(), func(u *domain.User) error {
			if u.Email() == v.Email() && !u.EmailVerified() {
				u.MarkEmailVerified(h.clock.Now())
				verified = u
			}
			return nil
		}); err != nil && !errors.Is(err, domain.ErrNotFound) {
			return err
		}
		if verified != nil {
			emit(domain.EventUserUpdated, verified)
		}
		if err := usecase.ForgetTrustedBrowsers(ctx, h.verifications, v.UserID()); err != nil {
			return err
		}
		return h.revoker.RevokeAll(ctx, v.UserID(), "")
	})
}

// setPassword stores hash as user's password: an account created without
// a password (by an administrator or the command line) gets its first one
// through a reset link.
func (h *Passwords) setPassword(ctx context.Context, user domain.UserID, hash string) error {
	err := h.credentials.Update(ctx, user, func(c *domain.Credential) error {
		c.SetHash(hash, h.clock.Now())
		return nil
	})
	if errors.Is(err, domain.ErrNotFound) {
		err = h.credentials.Put(ctx, domain.NewCredential(user, hash, h.clock.Now()))
		if errors.Is(err, domain.ErrNotFound) {
			return errInvalidResetToken
		}
	}
	return err
}

// checkContext refuses the user's own address or name as the new password,
// and returns the user.
// Only now, with the link used up, is the user known: a refusal puts the
// link back, so the user can try another password.
func (h *Passwords) checkContext(ctx context.Context, v *domain.Verification, password string) (*domain.User, error) {
	u, err := h.users.Get(ctx, v.UserID())
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errInvalidResetToken
	}
	if err != nil {
		return nil, err
	}
	refusal := h.settings.Passwords.Check("newPassword", password, nil, h.settings.PasswordContext(u.Email(), u.Name())...)
	if refusal == nil {
		return u, nil
	}
	if err := h.verifications.Create(ctx, v); err != nil {
		return nil, err
	}
	return nil, refusal
}

// SetPasswordToken records a reset link for u without mailing it and
// returns its token: the command line prints it for an administrator who
// has no password yet.
func (h *Passwords) SetPasswordToken(ctx context.Context, u *domain.User) (string, error) {
	if _, err := h.verifications.DeleteByUser(ctx, u.ID(), domain.PurposeResetPassword); err != nil {
		return "", err
	}
	return h.links.Create(ctx, domain.PurposeResetPassword, u, u.Email())
}
