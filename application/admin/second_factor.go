package admin

import (
	"context"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// ErrAdminMFARequired refuses an administration route to a platform
// administrator without a second factor while AdminSettings.RequireMFA is
// on. Enrolling one (the two-factor and passkey routes) and signing out
// stay open to them.
var ErrAdminMFARequired = domain.NewError(domain.KindForbidden, "admin.mfa_required",
	"Platform administrators must set up a second factor (two-factor or a passkey) before using the administration routes")

// RequireSecondFactor returns ErrAdminMFARequired when RequireMFA is on and
// p's user is a platform administrator without a second factor. Anyone else
// passes: whether they may act is each route's use case's to decide. It
// costs a read (the passkeys) only for an administrator with two-factor off
// whose session was not signed in or stepped up with a passkey.
func (a *Administration) RequireSecondFactor(ctx context.Context, p usecase.Principal) error {
	if !a.admin.RequireMFA || p.User == nil || !a.admin.Admins.IsAdmin(p.User) {
		return nil
	}
	has, err := a.stepUp.Has(ctx, p)
	if err != nil {
		return err
	}
	if !has {
		return ErrAdminMFARequired
	}
	return nil
}
