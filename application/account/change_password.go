package account

import (
	"context"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// ChangePassword replaces the signed-in user's password. The current password
// is required: it re-authenticates the user.
type ChangePassword struct {
	Principal           usecase.Principal
	CurrentPassword     string
	NewPassword         string
	RevokeOtherSessions bool
	Client              usecase.Client
}

// ChangePasswordResult carries the new session that replaces every other one
// when RevokeOtherSessions was asked for.
type ChangePasswordResult struct {
	Session *domain.Session // nil unless sessions were revoked
	Token   string
}

// ChangePassword asks a user with a second factor to have proven it recently
// (step-up, before the password is tried), checks the current password (a
// wrong one counts towards the lockout), checks the new one against the policy, stores its hash,
// forgets every trusted browser of the user (usecase.ForgetTrustedBrowsers) and,
// when asked, ends every session and starts a new one for this device.
func (h *Passwords) ChangePassword(ctx context.Context, cmd ChangePassword) (*ChangePasswordResult, error) {
	u := cmd.Principal.User
	if err := h.settings.Passwords.Check("newPassword", cmd.NewPassword, h.blocklist.Contains, h.settings.PasswordContext(u.Email(), u.Name())...); err != nil {
		return nil, err
	}
	if err := h.stepUp.Require(ctx, cmd.Principal); err != nil {
		return nil, err
	}
	cred, err := h.credentials.Get(ctx, u.ID())
	if err != nil {
		return nil, err
	}
	ok, _, err := h.check.Verify(ctx, cred, cmd.CurrentPassword)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, usecase.ErrInvalidPassword
	}
	hash, err := h.hasher.Hash(ctx, cmd.NewPassword)
	if err != nil {
		return nil, domain.Internal("change-password: hash", err)
	}
	if err := h.issuer.Events().Do(ctx, func(ctx context.Context, _ usecase.Emit) error {
		if err := h.credentials.Update(ctx, u.ID(), func(c *domain.Credential) error {
			c.SetHash(hash, h.issuer.Clock.Now())
			return nil
		}); err != nil {
			return err
		}
		return usecase.ForgetTrustedBrowsers(ctx, h.verifications, u.ID())
	}); err != nil {
		return nil, err
	}
	if !cmd.RevokeOtherSessions {
		return &ChangePasswordResult{}, nil
	}
	res := &ChangePasswordResult{}
	// Every session ends (session.revoked) and this device's new one
	// starts (session.created) together.
	err = h.issuer.Events().Do(ctx, func(ctx context.Context, _ usecase.Emit) error {
		if err := h.revoker.RevokeAll(ctx, u.ID(), ""); err != nil {
			return err
		}
		var err error
		res.Session, res.Token, err = h.issuer.Start(ctx, u.ID(), cmd.Principal.Session.RememberMe(), cmd.Client,
			cmd.Principal.Session.Authentication())
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
