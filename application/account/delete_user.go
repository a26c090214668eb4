package account

import (
	"context"
	"errors"
	"net/url"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// DeleteUser deletes the signed-in user's account, proven by their password
// or by a token from a confirmation mail; with neither, a confirmation mail
// is sent.
type DeleteUser struct {
	Principal   usecase.Principal
	Password    string
	Token       string
	CallbackURL string
}

// DeleteUserResult says whether the account is gone or a mail was sent.
type DeleteUserResult struct {
	Deleted  bool
	MailSent bool
}

// DeleteUser deletes the account (its sessions, password and links go with it)
// or mails a confirmation link. A user with a second factor must have
// proven it recently (step-up), on every path: before the password is
// tried, the token used up or the mail sent.
func (h *Profile) DeleteUser(ctx context.Context, cmd DeleteUser) (*DeleteUserResult, error) {
	u := cmd.Principal.User
	if err := h.stepUp.Require(ctx, cmd.Principal); err != nil {
		return nil, err
	}
	switch {
	case cmd.Password != "":
		if err := usecase.NewPasswordCheck(h.credentials, h.hasher, h.clock, h.settings.Lockout).Prove(ctx, u.ID(), cmd.Password); err != nil {
			return nil, err
		}
	case cmd.Token != "":
		if err := h.consume(ctx, u.ID(), cmd.Token); err != nil {
			return nil, err
		}
	default:
		if _, err := h.verifications.DeleteByUser(ctx, u.ID(), domain.PurposeDeleteUser); err != nil {
			return nil, err
		}
		err := h.links.Send(ctx, domain.MailDeleteUser, domain.PurposeDeleteUser, u, u.Email(), func(token string) string {
			q := url.Values{"token": {token}}
			if cmd.CallbackURL != "" {
				q.Set("callbackURL", cmd.CallbackURL)
			}
			return h.settings.FrameworkURL("/delete-user/callback", q)
		})
		if err != nil {
			return nil, err
		}
		return &DeleteUserResult{MailSent: true}, nil
	}
	if err := h.delete(ctx, u); err != nil {
		return nil, err
	}
	return &DeleteUserResult{Deleted: true}, nil
}

// delete deletes u with its user.deleted event, whose data is u as it was.
// Its sessions go with it, without events of their own.
func (h *Profile) delete(ctx context.Context, u *domain.User) error {
	return h.events.Do(ctx, func(ctx context.Context, emit usecase.Emit) error {
		emit(domain.EventUserDeleted, u)
		return h.users.Delete(ctx, u.ID())
	})
}

// consume uses up a confirmation token, which must be the user's own.
func (h *Profile) consume(ctx context.Context, userID domain.UserID, token string) error {
	v, err := h.verifications.Consume(ctx, domain.PurposeDeleteUser, domain.HashToken(token))
	if errors.Is(err, domain.ErrNotFound) {
		return errInvalidDeleteToken
	}
	if err != nil {
		return err
	}
	if v.UserID() != userID || v.IsExpired(h.clock.Now()) {
		return errInvalidDeleteToken
	}
	return nil
}

var errInvalidDeleteToken = domain.NewError(domain.KindNotFound, "account_deletion.invalid_token", "Invalid token")
