package account

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// SendVerificationEmail asks for a new verification link.
type SendVerificationEmail struct {
	Email       string
	CallbackURL string
	// Principal is the signed-in caller, or nil. Signed-in callers are told
	// when the address is not theirs or is already verified; anonymous ones
	// are told nothing.
	Principal *usecase.Principal
}

var (
	errEmailMismatch        = domain.Invalid("verification.email_mismatch", "Email mismatch", domain.FieldViolation{Field: "email", Message: "is not the signed-in user's address"})
	errEmailAlreadyVerified = domain.Invalid("verification.already_verified", "Email is already verified")
	errInvalidLink          = domain.NewError(domain.KindUnauthenticated, "verification.invalid_token", "Invalid token")
	errExpiredLink          = domain.NewError(domain.KindUnauthenticated, "verification.token_expired", "Token expired")
	errLinkUserNotFound     = domain.NewError(domain.KindUnauthenticated, "verification.user_not_found", "User not found")
)

// SendVerificationEmail mails a fresh link (older ones stop working) when
// the address belongs to an unverified account.
//
// Past the checks on the signed-in caller's own address, the request only
// queues the rest: the lookup, the link and the mail happen after the
// answer, so that neither the answer nor its timing tells whether the
// address has an account (ASVS V6.3). A full queue refuses every address
// alike.
func (h *Registration) SendVerificationEmail(ctx context.Context, cmd SendVerificationEmail) error {
	email, err := domain.NewEmail(cmd.Email)
	if err != nil {
		return err
	}
	if p := cmd.Principal; p != nil {
		if p.User.Email() != email {
			return errEmailMismatch
		}
		if p.User.EmailVerified() {
			return errEmailAlreadyVerified
		}
	}
	return h.jobs.Enqueue(ctx, "send-verification-email", func(ctx context.Context) error {
		return h.mailLink(ctx, email, cmd.CallbackURL)
	})
}

// mailLink mails a verification link to email if it has an unverified account.
func (h *Registration) mailLink(ctx context.Context, email domain.Email, callbackURL string) error {
	u, err := h.users.GetByEmail(ctx, email)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if u.EmailVerified() {
		return nil
	}
	if _, err := h.verifications.DeleteByUser(ctx, u.ID(), domain.PurposeVerifyEmail); err != nil {
		return err
	}
	return h.links.Send(ctx, domain.MailVerifyEmail, domain.PurposeVerifyEmail, u, email, func(token string) string {
		return h.settings.VerifyEmailLink(token, callbackURL)
	})
}

// VerifyEmail follows a verification link: it marks the address verified, or, for
// an address change, moves the account to the new, verified address
// (user.updated). A link works once.
func (h *Registration) VerifyEmail(ctx context.Context, token string) (*domain.User, error) {
	if token == "" {
		return nil, errInvalidLink
	}
	hash := domain.HashToken(token)
	v, err := h.verifications.Consume(ctx, domain.PurposeVerifyEmail, hash)
	if errors.Is(err, domain.ErrNotFound) {
		v, err = h.verifications.Consume(ctx, domain.PurposeChangeEmail, hash)
	}
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errInvalidLink
	}
	if err != nil {
		return nil, err
	}
	if v.IsExpired(h.clock.Now()) {
		return nil, errExpiredLink
	}
	var out *domain.User
	err = h.events.Do(ctx, func(ctx context.Context, emit usecase.Emit) error {
		err := h.users.Update(ctx, v.UserID(), func(u *domain.User) error {
			now := h.clock.Now()
			switch v.Purpose() {
			case domain.PurposeChangeEmail:
				u.ChangeEmail(v.Email(), true, now)
			default:
				if u.Email() != v.Email() {
					return errInvalidLink // the address changed since the link was sent
				}
				u.MarkEmailVerified(now)
			}
			out = u
			return nil
		})
		if err == nil {
			emit(domain.EventUserUpdated, out)
		}
		return err
	})
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil, errLinkUserNotFound
	case errors.Is(err, domain.ErrConflict):
		return nil, errInvalidLink // someone took the new address meanwhile
	case err != nil:
		return nil, err
	}
	return out, nil
}
