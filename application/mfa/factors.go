package mfa

import (
	"context"
	"encoding/base64"
	"errors"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Factors is what operators see and do of a user's sign-in factors: a
// platform administrator (the admin API) or a trusted backend (a service
// key with the users scopes) reads whether a user has two-factor on and how
// many passkeys, never a secret, resets the second factors when the user
// has lost them, and mails a password reset link. The administration of
// users (Operators) authorises, audits and looks the user up, as for its
// own use cases.
type Factors struct {
	ops      Operators
	users    ports.UserRepository
	factors  ports.TwoFactorRepository
	passkeys ports.PasskeyRepository
	trust    ports.VerificationRepository
	mailer   ports.Mailer
	resets   ResetLinks
	revoker  usecase.SessionRevoker
	clock    ports.Clock
}

// Operators is what Factors needs of the administration of users
// (admin.Administration, bound in bootstrap): an operator's authorised read
// of a user, and the authorised, audited frame of an operator's change to
// one.
type Operators interface {
	// GetUser returns the user id, authorised for req (refusals audited).
	GetUser(ctx context.Context, req usecase.Caller, id domain.UserID) (*domain.User, error)
	// ChangeUser runs fn on the user id, authorised with the user-update
	// permission and audited as action, refusals included.
	ChangeUser(ctx context.Context, req usecase.Caller, action string, id domain.UserID,
		fn func(ctx context.Context, emit usecase.Emit, u *domain.User) error) error
}

// ResetLinks is what Factors needs of the password reset (the account
// context's Passwords, bound in bootstrap): mailing a user a
// reset link, as "forgot password" does.
type ResetLinks interface {
	SendResetLink(ctx context.Context, email domain.Email, redirectTo string) error
}

// NewFactors returns the operators' factor use cases.
func NewFactors(ops Operators, users ports.UserRepository, factors ports.TwoFactorRepository, passkeys ports.PasskeyRepository,
	verifications ports.VerificationRepository, sessions ports.SessionRepository, mailer ports.Mailer, resets ResetLinks,
	audit usecase.Auditor, clock ports.Clock) *Factors {
	usecase.MustHave(ops, users, factors, passkeys, verifications, sessions, mailer, resets, clock)
	return &Factors{ops: ops, users: users, factors: factors, passkeys: passkeys, trust: verifications, mailer: mailer, resets: resets,
		revoker: usecase.NewSessionRevoker(sessions, audit.Events(), clock), clock: clock}
}

// SendPasswordReset mails the user id a password reset link, as "forgot
// password" would (older links stop working; their password keeps working
// until they use the link), leading back to redirectTo (already validated,
// or empty). It is audited (admin.send-password-reset for an
// administrator, users.send-password-reset for a service key), refusals
// included, and needs the user:update permission.
func (f *Factors) SendPasswordReset(ctx context.Context, req usecase.Caller, id domain.UserID, redirectTo string) error {
	return f.ops.ChangeUser(ctx, req, usecase.ActionOf(req, "admin.send-password-reset", "users.send-password-reset"), id,
		func(ctx context.Context, _ usecase.Emit, u *domain.User) error {
			return f.resets.SendResetLink(ctx, u.Email(), redirectTo)
		})
}

// UserWithFactors is a user and how many passkeys they have; whether
// two-factor is on is the user's own flag.
type UserWithFactors struct {
	User     *domain.User
	Passkeys int
}

// GetUser returns the user with id and their passkey count, as
// Operators.GetUser authorises and answers.
func (f *Factors) GetUser(ctx context.Context, req usecase.Caller, id domain.UserID) (UserWithFactors, error) {
	u, err := f.ops.GetUser(ctx, req, id)
	if err != nil {
		return UserWithFactors{}, err
	}
	n, err := f.passkeys.CountByUser(ctx, id)
	if err != nil {
		return UserWithFactors{}, err
	}
	return UserWithFactors{User: u, Passkeys: n}, nil
}

// ResetFactors removes every second factor of the user id: the TOTP factor,
// the backup codes, the passkeys, the pending challenges and every trusted
// browser. It turns two-factor off and ends all the user's sessions, so
// whoever held a factor is signed out too. Then the user can sign in with
// the password alone and enrol again.
//
// It is idempotent: a user without factors still has their sessions ended,
// and every call is audited (users.reset-factors for a service key,
// admin.reset-user-factors for an administrator), refusals included, since
// an operator touching an account's sign-in is worth a line even when it
// changed nothing. The user is mailed (domain.MailFactorsReset) only when a
// factor was removed, so an operator's retry mails no one twice.
func (f *Factors) ResetFactors(ctx context.Context, req usecase.Caller, id domain.UserID) error {
	return f.ops.ChangeUser(ctx, req, usecase.ActionOf(req, "admin.reset-user-factors", "users.reset-factors"), id, f.reset)
}

// reset removes u's factors, each with its factor.disabled event, and ends
// their sessions (session.revoked).
func (f *Factors) reset(ctx context.Context, emit usecase.Emit, u *domain.User) error {
	id := u.ID()
	removed, err := f.factorsOf(ctx, u)
	if err != nil {
		return err
	}
	if err := f.factors.DeleteAll(ctx, id); err != nil {
		return usecase.AdminUserErr(err)
	}
	trusted, err := f.trust.DeleteByUser(ctx, id, domain.PurposeTrustDevice)
	if err != nil {
		return err
	}
	if u.TwoFactorEnabled() {
		if err := usecase.AdminUserErr(f.users.Update(ctx, id, func(x *domain.User) error {
			x.SetTwoFactorEnabled(false, f.clock.Now())
			return nil
		})); err != nil {
			return err
		}
	}
	for _, c := range removed {
		emit(domain.EventFactorDisabled, c)
	}
	if err := f.revoker.RevokeAll(ctx, id, ""); err != nil {
		return err
	}
	if len(removed) == 0 && trusted == 0 {
		return nil
	}
	return f.mailer.Send(ctx, domain.Mail{Kind: domain.MailFactorsReset, To: u.Email(), Name: u.Name()})
}

// factorsOf lists u's second factors, as their factor events name them:
// two-factor on (totp, or email_otp without a TOTP factor) or a TOTP factor
// (even unconfirmed), unused backup codes, and each passkey.
func (f *Factors) factorsOf(ctx context.Context, u *domain.User) ([]domain.FactorChange, error) {
	var out []domain.FactorChange
	_, err := f.factors.GetTOTP(ctx, u.ID())
	switch {
	case err == nil:
		out = append(out, domain.FactorChange{UserID: u.ID(), Factor: domain.FactorTOTP})
	case !errors.Is(err, domain.ErrNotFound):
		return nil, err
	case u.TwoFactorEnabled():
		out = append(out, domain.FactorChange{UserID: u.ID(), Factor: domain.FactorEmailOTP})
	}
	if n, err := f.factors.CountUnusedBackupCodes(ctx, u.ID()); err != nil {
		return nil, err
	} else if n > 0 {
		out = append(out, domain.FactorChange{UserID: u.ID(), Factor: domain.FactorBackupCodes})
	}
	passkeys, err := f.passkeys.ListByUser(ctx, u.ID())
	if err != nil {
		return nil, err
	}
	for _, p := range passkeys {
		out = append(out, domain.FactorChange{UserID: u.ID(), Factor: domain.FactorPasskey, PasskeyID: base64.RawURLEncoding.EncodeToString(p.ID)})
	}
	return out, nil
}

// PasskeysOf returns how many passkeys u has, for the answer of a use case
// that has just authorised its caller for u (create, update, ban…).
func (f *Factors) PasskeysOf(ctx context.Context, u *domain.User) (int, error) {
	return f.passkeys.CountByUser(ctx, u.ID())
}
