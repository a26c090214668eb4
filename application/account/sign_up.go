package account

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// SignUp creates an account with an e-mail address and a password.
type SignUp struct {
	Name        string
	Email       string
	Password    string
	Image       string
	RememberMe  bool
	CallbackURL string // where the verification link leads afterwards (already validated)
	Client      usecase.Client
}

// SignUpResult is the new user and, unless e-mail verification is required,
// their first session and its token.
type SignUpResult struct {
	User    *domain.User
	Session *domain.Session // nil when nobody was signed in
	Token   string
}

// SignUp creates the user (user.created) and, unless verification is
// required, its first session (session.created). The password is hashed before anything else, so a
// sign-up for a taken address costs the same time as one for a free address.
// When verification is required a taken address is not revealed: the answer
// has the same shape, and the address's owner gets a mail saying someone
// tried to sign up with it.
//
// Either way a sign-up ends with a mail, so it first reserves a place in the
// mail queue: when the queue is full the sign-up is refused (503) before
// anything is stored, for a free and a taken address alike, rather than
// leaving an account whose verification mail was dropped.
func (h *Registration) SignUp(ctx context.Context, cmd SignUp) (*SignUpResult, error) {
	email, err := domain.NewEmail(cmd.Email)
	if err != nil {
		return nil, err
	}
	if err := h.sso.Check(ctx, email, "", "", "sign-up.sso-required"); err != nil {
		return nil, err
	}
	now := h.issuer.Clock.Now()
	u, err := domain.NewUser(domain.UserID(h.issuer.IDs.NewID()), cmd.Name, email, now)
	if err != nil {
		return nil, err
	}
	if err := u.SetImage(cmd.Image, now); err != nil {
		return nil, err
	}
	if err := h.settings.Passwords.Check("password", cmd.Password, h.blocklist.Contains, h.settings.PasswordContext(email, u.Name())...); err != nil {
		return nil, err
	}
	hash, err := h.hasher.Hash(ctx, cmd.Password)
	if err != nil {
		return nil, domain.Internal("sign-up: hash", err)
	}
	slot, err := h.mailer.Reserve(ctx)
	if err != nil {
		return nil, err
	}
	defer slot.Release()
	err = h.events.Do(ctx, func(ctx context.Context, emit usecase.Emit) error {
		if err := h.credentials.CreateUser(ctx, u, domain.NewCredential(u.ID(), hash, now)); err != nil {
			return err
		}
		emit(domain.EventUserCreated, u)
		return nil
	})
	if errors.Is(err, domain.ErrConflict) {
		if !h.settings.RequireEmailVerification {
			return nil, usecase.ErrUserExists
		}
		// The owner learns of the attempt; the caller learns nothing.
		if err := slot.Send(ctx, domain.Mail{Kind: domain.MailAccountExists, To: email}); err != nil {
			return nil, err
		}
		return &SignUpResult{User: u}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := h.links.SendVia(ctx, slot, domain.MailVerifyEmail, domain.PurposeVerifyEmail, u, email, func(token string) string {
		return h.settings.VerifyEmailLink(token, cmd.CallbackURL)
	}); err != nil {
		return nil, err
	}
	if h.settings.RequireEmailVerification {
		return &SignUpResult{User: u}, nil
	}
	s, token, err := h.issuer.Start(ctx, u.ID(), cmd.RememberMe, cmd.Client, domain.PasswordAuthentication())
	if err != nil {
		return nil, err
	}
	return &SignUpResult{User: u, Session: s, Token: token}, nil
}
