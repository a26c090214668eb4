package account

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// ChangeEmail asks to move the signed-in user's account to a new address.
// Nothing changes until the owner of the new address follows the link mailed
// there.
type ChangeEmail struct {
	Principal   usecase.Principal
	NewEmail    string
	CallbackURL string
}

var errEmailIsTheSame = domain.Invalid("email_change.same_address", "Email is the same",
	domain.FieldViolation{Field: "newEmail", Message: "is the account's current address"})

// ChangeEmail mails a verification link to the new address. The session must be
// fresh (a recent sign-in), and a user with a second factor must have proven
// it recently (step-up): moving the account's address moves who can reset
// its password. An address that already has an account gets no mail, and
// the caller is not told.
func (h *Profile) ChangeEmail(ctx context.Context, cmd ChangeEmail) error {
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
