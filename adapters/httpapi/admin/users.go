package admin

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/domain"
)

// ResetFactorsInput names the user whose factors to reset.
type ResetFactorsInput struct {
	ID string `path:"id" minLength:"1" maxLength:"128" doc:"The user's id."`
}

func (s *API) resetUserFactors(ctx context.Context, in *ResetFactorsInput) (*edge.NoContentOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Factors.ResetFactors(ctx, req, domain.UserID(in.ID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// sendPasswordReset mails the user a reset link leading to the hosted
// reset page, as the console's "send a password reset" does.
func (s *API) sendPasswordReset(ctx context.Context, in *ResetFactorsInput) (*edge.NoContentOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Factors.SendPasswordReset(ctx, req, domain.UserID(in.ID), s.Config.BaseURL+edge.ResetPasswordForm.Page); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// UnlinkAccountInput names one of a user's linked accounts.
type UnlinkAccountInput struct {
	ID        string `path:"id" minLength:"1" maxLength:"128" doc:"The user's id."`
	AccountID string `path:"accountId" minLength:"1" maxLength:"128" doc:"The linked account's id."`
}

func (s *API) unlinkUserAccount(ctx context.Context, in *UnlinkAccountInput) (*edge.NoContentOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.LinkedAccounts.UnlinkFor(ctx, req, domain.UserID(in.ID), in.AccountID); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// AddUserFactorRoutes registers the administrators' reset of a user's
// second factors (the trusted API has the same for service keys).
func (s *API) AddUserFactorRoutes() {
	edge.Add(s.routes, edge.ContractAuth, huma.Operation{OperationID: "adminResetUserFactors", Method: http.MethodPost,
		Path: edge.AdminBase + "/users/{id}/factors/reset", Tags: []string{"Users"}, Security: edge.SessionSecurity,
		Summary: "Reset a user's second factors", DefaultStatus: http.StatusNoContent,
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
		Description: "For a user who lost their authenticator or passkeys: removes their TOTP factor, backup codes, passkeys, pending " +
			"second-factor challenges and trusted browsers, turns twoFactorEnabled off, ends all their sessions, and mails them that it " +
			"happened. Idempotent: a user without factors has their sessions ended and is not mailed. 404 request.user_not_found. " +
			"Needs a platform administrator's session with the user:update permission: 401 without a session, 403 for anyone else. " +
			"Audited with the administrator as the actor."},
		s.resetUserFactors)
	edge.Add(s.routes, edge.ContractAuth, huma.Operation{OperationID: "adminSendPasswordReset", Method: http.MethodPost,
		Path: edge.AdminBase + "/users/{id}/password-reset", Tags: []string{"Users"}, Security: edge.SessionSecurity,
		Summary: "Send a user a password reset link", DefaultStatus: http.StatusNoContent,
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
		Description: "Mails the user a link to choose a new password on the hosted reset page, as \"forgot password\" does: older reset " +
			"links stop working, and their password keeps working until they use the link. 404 request.user_not_found. Needs a platform " +
			"administrator's session with the user:update permission: 401 without a session, 403 for anyone else. Audited with the " +
			"administrator as the actor (admin.send-password-reset)."},
		s.sendPasswordReset)
	edge.Add(s.routes, edge.ContractAuth, huma.Operation{OperationID: "adminUnlinkUserAccount", Method: http.MethodDelete,
		Path: edge.AdminBase + "/users/{id}/linked-accounts/{accountId}", Tags: []string{"Users"}, Security: edge.SessionSecurity,
		Summary: "Unlink a user's account", DefaultStatus: http.StatusNoContent,
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict},
		Description: "Removes one of the user's linked accounts with its upstream tokens. Their last way to sign in (no password, no passkey, " +
			"no other linked account) is refused: 409. Needs a platform administrator's session: 401 without a session, 403 for anyone else. " +
			"Audited with the administrator as the actor."},
		s.unlinkUserAccount)
}
