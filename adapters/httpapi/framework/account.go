package framework

import (
	"context"
	"errors"
	"html"
	"net/http"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/domain"
)

// UpdateUserInput changes the profile. The address cannot be changed here.
type UpdateUserInput struct {
	Body struct {
		Name  *string `json:"name,omitempty" minLength:"1" maxLength:"256" doc:"New display name."`
		Image *string `json:"image,omitempty" maxLength:"2048" nullable:"true" doc:"New avatar URL (an absolute http or https URL); null or \"\" clears it."`
		Email *string `json:"email,omitempty" doc:"Refused with EMAIL_CAN_NOT_BE_UPDATED: use change-email."`
	}
}

var errEmailCannotBeUpdated = domain.Invalid("EMAIL_CAN_NOT_BE_UPDATED", "Email can not be updated",
	domain.FieldViolation{Field: "body.email", Message: "cannot be changed here; use change-email"})

func (s *API) updateUser(ctx context.Context, in *UpdateUserInput) (*edge.StatusOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	if in.Body.Email != nil {
		return nil, errEmailCannotBeUpdated
	}
	if _, err := s.Profile.UpdateUser(ctx, account.UpdateUser{UserID: p.User.ID(), Name: in.Body.Name, Image: in.Body.Image}); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}

// ChangePasswordInput changes the password, proven by the current one.
type ChangePasswordInput struct {
	Body struct {
		CurrentPassword     string `json:"currentPassword" maxLength:"4096"`
		NewPassword         string `json:"newPassword" doc:"8 to 128 characters, not a common password."`
		RevokeOtherSessions bool   `json:"revokeOtherSessions,omitempty" doc:"End every other session; this device gets a new one."`
	}
}

// ChangePasswordOutput carries the replacement session when others were revoked.
type ChangePasswordOutput struct {
	edge.SessionHeaders
	Body struct {
		Token *string  `json:"token" nullable:"true" doc:"The new session token when revokeOtherSessions was true, else null."`
		User  UserJSON `json:"user"`
	}
}

func (s *API) changePassword(ctx context.Context, in *ChangePasswordInput) (*ChangePasswordOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.Passwords.ChangePassword(ctx, account.ChangePassword{Principal: p, CurrentPassword: in.Body.CurrentPassword,
		NewPassword: in.Body.NewPassword, RevokeOtherSessions: in.Body.RevokeOtherSessions, Client: edge.RequestInfoFrom(ctx).Client()})
	if err != nil {
		return nil, err
	}
	out := &ChangePasswordOutput{}
	out.Body.User = userJSON(p.User)
	if res.Session != nil {
		out.Body.Token = &res.Token
		out.SignIn(s.Cookies, res.Token, res.Session)
	}
	return out, nil
}

// ChangeEmailInput asks to move the account to a new address.
type ChangeEmailInput struct {
	Body struct {
		NewEmail    string `json:"newEmail" maxLength:"254" example:"ada@new.example.com"`
		CallbackURL string `json:"callbackURL,omitempty" maxLength:"2048" doc:"Where the verification link leads afterwards."`
	}
}

func (s *API) changeEmail(ctx context.Context, in *ChangeEmailInput) (*edge.StatusOutput, error) {
	if err := s.CheckTarget(in.Body.CallbackURL, edge.ErrInvalidCallback); err != nil {
		return nil, err
	}
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Profile.ChangeEmail(ctx, account.ChangeEmail{Principal: p, NewEmail: in.Body.NewEmail, CallbackURL: in.Body.CallbackURL}); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}

// DeleteUserInput deletes the account: with the password, with a token from
// the confirmation mail, or (with neither) by sending that mail.
type DeleteUserInput struct {
	Body *struct {
		Password    string `json:"password,omitempty" maxLength:"4096"`
		Token       string `json:"token,omitempty" maxLength:"256" doc:"The token from the confirmation mail."`
		CallbackURL string `json:"callbackURL,omitempty" maxLength:"2048" doc:"Where the confirmation link leads afterwards."`
	}
}

// DeleteUserOutput says what happened.
type DeleteUserOutput struct {
	edge.SessionHeaders
	Body struct {
		Success bool   `json:"success" example:"true"`
		Message string `json:"message" enum:"User deleted,Verification email sent" example:"User deleted"`
	}
}

func (s *API) deleteUser(ctx context.Context, in *DeleteUserInput) (*DeleteUserOutput, error) {
	cmd := account.DeleteUser{}
	if in.Body != nil {
		cmd.Password, cmd.Token, cmd.CallbackURL = in.Body.Password, in.Body.Token, in.Body.CallbackURL
	}
	if err := s.CheckTarget(cmd.CallbackURL, edge.ErrInvalidCallback); err != nil {
		return nil, err
	}
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	cmd.Principal = p
	res, err := s.Profile.DeleteUser(ctx, cmd)
	if err != nil {
		return nil, err
	}
	out := &DeleteUserOutput{}
	out.Body.Success, out.Body.Message = true, "Verification email sent"
	if res.Deleted {
		out.Body.Message = "User deleted"
		out.SignOut(s.Cookies)
	}
	return out, nil
}

// LinkInput is a one-time link followed from a mail.
type LinkInput struct {
	Token       string `query:"token" maxLength:"256" doc:"The link's token."`
	CallbackURL string `query:"callbackURL" maxLength:"2048" doc:"Where to go afterwards: a path here or a URL on a trusted origin. Errors arrive there as ?error=CODE."`
}

// RedirectOrJSON is a 302 to the callback, or JSON when there is none.
type RedirectOrJSON[T any] struct {
	edge.SessionHeaders
	Status   int
	Location string `header:"Location"`
	Body     *T
}

func redirectTo[T any](s *API, target string) *RedirectOrJSON[T] {
	return &RedirectOrJSON[T]{Status: http.StatusFound, Location: s.Origins.Absolute(target)}
}

// deleteUserCallback follows the confirmation link: the signed-in user's
// account is deleted.
func (s *API) deleteUserCallback(ctx context.Context, in *LinkInput) (*RedirectOrJSON[DeleteUserBody], error) {
	if err := s.CheckTarget(in.CallbackURL, edge.ErrInvalidCallback); err != nil {
		return nil, err
	}
	p, err := s.Principal(ctx)
	if err == nil {
		_, err = s.Profile.DeleteUser(ctx, account.DeleteUser{Principal: p, Token: in.Token})
	}
	if in.CallbackURL != "" {
		if err != nil {
			return redirectTo[DeleteUserBody](s, edge.WithQuery(in.CallbackURL, "error", ErrorCode(err))), nil
		}
		out := redirectTo[DeleteUserBody](s, in.CallbackURL)
		out.SignOut(s.Cookies)
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	out := &RedirectOrJSON[DeleteUserBody]{Status: http.StatusOK, Body: &DeleteUserBody{Success: true, Message: "User deleted"}}
	out.SignOut(s.Cookies)
	return out, nil
}

// DeleteUserBody is the JSON answer of a confirmed deletion.
type DeleteUserBody struct {
	Success bool   `json:"success" example:"true"`
	Message string `json:"message" example:"User deleted"`
}

// RequestPasswordResetInput asks for a reset link.
type RequestPasswordResetInput struct {
	Body struct {
		Email      string `json:"email" maxLength:"254" example:"ada@example.com"`
		RedirectTo string `json:"redirectTo,omitempty" maxLength:"2048" doc:"Your page that asks for the new password; the link leads there with ?token=…"`
	}
}

// MessageStatusOutput is {status:true, message}.
type MessageStatusOutput struct {
	Body struct {
		Status  bool   `json:"status" example:"true"`
		Message string `json:"message"`
	}
}

func (s *API) requestPasswordReset(ctx context.Context, in *RequestPasswordResetInput) (*MessageStatusOutput, error) {
	if err := s.CheckTarget(in.Body.RedirectTo, edge.ErrInvalidRedirect); err != nil {
		return nil, err
	}
	if err := s.Passwords.RequestPasswordReset(ctx, account.RequestPasswordReset{Email: in.Body.Email, RedirectTo: in.Body.RedirectTo}); err != nil {
		return nil, err
	}
	out := &MessageStatusOutput{}
	out.Body.Status, out.Body.Message = true, "If this email exists in our system, check your email for the reset link"
	return out, nil
}

// ResetPasswordLinkInput is the reset link followed from the mail.
type ResetPasswordLinkInput struct {
	Token       string `path:"token" maxLength:"256" doc:"The link's token."`
	CallbackURL string `query:"callbackURL" required:"true" maxLength:"2048" doc:"Your page that asks for the new password."`
}

// RedirectOutput is a 302.
type RedirectOutput struct {
	Status   int
	Location string `header:"Location"`
}

// resetPasswordLink sends the browser on to the application's page with the
// token; the token is checked (and used up) by reset-password.
func (s *API) resetPasswordLink(_ context.Context, in *ResetPasswordLinkInput) (*RedirectOutput, error) {
	if !s.Origins.SafeTarget(in.CallbackURL) {
		return nil, edge.ErrInvalidCallback
	}
	return &RedirectOutput{Status: http.StatusFound, Location: s.Origins.Absolute(edge.WithQuery(in.CallbackURL, "token", in.Token))}, nil
}

// ResetPasswordInput sets a new password with a reset token.
type ResetPasswordInput struct {
	Token string `query:"token" maxLength:"256" doc:"The token, when not in the body."`
	Body  struct {
		NewPassword string `json:"newPassword" doc:"8 to 128 characters, not a common password."`
		Token       string `json:"token,omitempty" maxLength:"256" doc:"The token from the reset link."`
	}
}

func (s *API) resetPassword(ctx context.Context, in *ResetPasswordInput) (*edge.StatusOutput, error) {
	token := in.Body.Token
	if token == "" {
		token = in.Token
	}
	if err := s.Passwords.ResetPassword(ctx, account.ResetPassword{Token: token, NewPassword: in.Body.NewPassword}); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}

// SendVerificationEmailInput asks for a new verification link.
type SendVerificationEmailInput struct {
	Body struct {
		Email       string `json:"email" maxLength:"254" example:"ada@example.com"`
		CallbackURL string `json:"callbackURL,omitempty" maxLength:"2048" doc:"Where the link leads afterwards."`
	}
}

func (s *API) sendVerificationEmail(ctx context.Context, in *SendVerificationEmailInput) (*edge.StatusOutput, error) {
	if err := s.CheckTarget(in.Body.CallbackURL, edge.ErrInvalidCallback); err != nil {
		return nil, err
	}
	cmd := account.SendVerificationEmail{Email: in.Body.Email, CallbackURL: in.Body.CallbackURL}
	if p, err := s.Principal(ctx); err == nil {
		cmd.Principal = &p
	} else if !edge.IsUnauthenticated(err) {
		return nil, err
	}
	if err := s.Registration.SendVerificationEmail(ctx, cmd); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}

// VerifyEmailBody is the JSON answer of a followed verification link.
type VerifyEmailBody struct {
	Status bool     `json:"status" example:"true"`
	User   UserJSON `json:"user"`
}

func (s *API) verifyEmail(ctx context.Context, in *LinkInput) (*RedirectOrJSON[VerifyEmailBody], error) {
	if err := s.CheckTarget(in.CallbackURL, edge.ErrInvalidCallback); err != nil {
		return nil, err
	}
	u, err := s.Registration.VerifyEmail(ctx, in.Token)
	if in.CallbackURL != "" {
		if err != nil {
			return redirectTo[VerifyEmailBody](s, edge.WithQuery(in.CallbackURL, "error", ErrorCode(err))), nil
		}
		return redirectTo[VerifyEmailBody](s, in.CallbackURL), nil
	}
	if err != nil {
		return nil, err
	}
	return &RedirectOrJSON[VerifyEmailBody]{Status: http.StatusOK, Body: &VerifyEmailBody{Status: true, User: userJSON(u)}}, nil
}

// ErrorPageInput is what the error page is asked to show.
type ErrorPageInput struct {
	Error       string `query:"error" maxLength:"128" doc:"An error code: a code Gatehouse redirects here with shows Gatehouse's words for it; any other shows a generic message."`
	Description string `query:"error_description" maxLength:"512" doc:"Accepted, never shown: the page shows only words Gatehouse wrote."`
}

// ErrorPageOutput is a small HTML page.
type ErrorPageOutput struct {
	ContentType string `header:"Content-Type"`
	Body        []byte
}

// errorPage shows an error to a person whose browser landed here from a
// flow, in Gatehouse's words only: a code it sends here shows its message
// (errorPageMessages) and the code; anything else, a generic message and
// no code. The query's error_description is never shown: anyone can craft
// a link to this page, and the page would lend the words Gatehouse's name.
func (s *API) errorPage(_ context.Context, in *ErrorPageInput) (*ErrorPageOutput, error) {
	page := "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Error</title></head><body><h1>Something went wrong</h1>"
	if msg, ok := errorPageMessages[in.Error]; ok {
		page += "<p>" + html.EscapeString(msg) + "</p><p>Error code: <code>" + html.EscapeString(in.Error) + "</code></p>"
	} else {
		page += "<p>" + html.EscapeString(errorPageGeneric) + "</p>"
	}
	page += "</body></html>"
	return &ErrorPageOutput{ContentType: "text/html; charset=utf-8", Body: []byte(page)}, nil
}

// ErrorCode is the code a redirect carries as ?error=: the framework's code
// of err (codes.go), or INTERNAL_SERVER_ERROR for a condition the
// framework has no code for.
func ErrorCode(err error) string {
	var de *domain.Error
	if errors.As(err, &de) {
		if w, ok := frameworkCodes[de.Code]; ok {
			return w.Code
		}
		if edge.IsWireCode(de.Code) {
			return de.Code
		}
	}
	return "INTERNAL_SERVER_ERROR"
}
