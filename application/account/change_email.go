package account

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// ChangeEmail asks to move the signed-in user's account to a new address.
// Nothing changes until the owner of the new address follows the link mailed
// there.
type ChangeEmail struct {
	Principal   usecase.Principal
	NewEmail    string
	CallbackURL string
}

// ChangeEmailHandler handles ChangeEmail.
type ChangeEmailHandler struct {
	users    ports.UserRepository
	links    usecase.LinkSender
	stepUp   usecase.StepUp
	settings usecase.AuthSettings
	sso      usecase.SSOGate
}

// UseSSO refuses to move an account to an address that policy sends to its
// organization's identity provider: the account would come to that address
// with a password and a session the organization never vouched for.
func (h *ChangeEmailHandler) UseSSO(policy usecase.SSOPolicy, audit usecase.Auditor) *ChangeEmailHandler {
	h.sso = usecase.NewSSOGate(policy, audit)
	return h
}

// NewChangeEmailHandler returns a ChangeEmailHandler.
func NewChangeEmailHandler(users ports.UserRepository, verifications ports.VerificationRepository, mailer ports.Mailer,
	passkeys ports.PasskeyRepository, tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, settings usecase.AuthSettings) *ChangeEmailHandler {
	usecase.MustHave(users, verifications, mailer, passkeys, tokens, ids, clock)
	return &ChangeEmailHandler{users: users, settings: settings, links: usecase.NewLinkSender(verifications, mailer, tokens, ids, clock, settings),
		stepUp: usecase.NewStepUp(passkeys, clock, settings.StepUpWindow)}
}

var errEmailIsTheSame = domain.Invalid("email_change.same_address", "Email is the same",
	domain.FieldViolation{Field: "newEmail", Message: "is the account's current address"})

// Handle mails a verification link to the new address. The session must be
// fresh (a recent sign-in), and a user with a second factor must have proven
// it recently (step-up): moving the account's address moves who can reset
// its password. An address that already has an account gets no mail, and
// the caller is not told.
func (h *ChangeEmailHandler) Handle(ctx context.Context, cmd ChangeEmail) error {
	email, err := domain.NewEmail(cmd.NewEmail)
	if err != nil {
		var de *domain.Error
		if errors.As(err, &de) {
			de.Fields = []domain.FieldViolation{{Field: "newEmail", Message: "must be a valid e-mail address"}}
		}
		return err
	}
	u := cmd.Principal.User
	if email == u.Email() {
		return errEmailIsTheSame
	}
	if !cmd.Principal.Session.IsFresh(h.links.Clock.Now(), h.settings.Sessions) {
		return usecase.ErrSessionNotFresh
	}
	if err := h.stepUp.Require(ctx, cmd.Principal); err != nil {
		return err
	}
	if err := h.sso.Check(ctx, email, "", u.ID(), "change-email.sso-required"); err != nil {
		return err
	}
	if _, err := h.users.GetByEmail(ctx, email); err == nil {
		return nil
	} else if !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	if _, err := h.links.Verifications.DeleteByUser(ctx, u.ID(), domain.PurposeChangeEmail); err != nil {
		return err
	}
	return h.links.Send(ctx, domain.MailChangeEmail, domain.PurposeChangeEmail, u, email, func(token string) string {
		return h.settings.VerifyEmailLink(token, cmd.CallbackURL)
	})
}
