package framework

import (
	"context"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/usecase"
)

// SignUpInput is the sign-up request (JSON, or an HTML form).
type SignUpInput struct {
	Body struct {
		Name        string `json:"name" minLength:"1" maxLength:"256" doc:"Display name." example:"Ada Lovelace"`
		Email       string `json:"email" maxLength:"254" doc:"E-mail address; lower-cased." example:"ada@example.com"`
		Password    string `json:"password" doc:"8 to 128 characters, not a common password. No composition rules." example:"correct horse battery staple"`
		Image       string `json:"image,omitempty" maxLength:"2048" doc:"Avatar URL: an absolute http or https URL."`
		CallbackURL string `json:"callbackURL,omitempty" maxLength:"2048" doc:"Where the verification link leads afterwards: a path here or a URL on a trusted origin."`
		RememberMe  *bool  `json:"rememberMe,omitempty" doc:"false starts a session that ends with the browser session (default true)."`
	}
}

// SignUpOutput is the new user and, when nobody must verify first, a session token.
type SignUpOutput struct {
	edge.SessionHeaders
	Body struct {
		Token *string  `json:"token" nullable:"true" doc:"The session token, or null when the address must be verified before signing in."`
		User  UserJSON `json:"user"`
	}
}

func (s *API) signUp(ctx context.Context, in *SignUpInput) (*SignUpOutput, error) {
	if err := s.CheckTarget(in.Body.CallbackURL, edge.ErrInvalidCallback); err != nil {
		return nil, err
	}
	ri := edge.RequestInfoFrom(ctx)
	res, err := s.Registration.SignUp(ctx, account.SignUp{Name: in.Body.Name, Email: in.Body.Email, Password: in.Body.Password,
		Image: in.Body.Image, RememberMe: in.Body.RememberMe == nil || *in.Body.RememberMe, CallbackURL: in.Body.CallbackURL, Client: ri.Client()})
	if err != nil {
		return nil, err
	}
	out := &SignUpOutput{}
	out.Body.User = userJSON(res.User)
	if res.Session != nil {
		out.Body.Token = &res.Token
		out.SignIn(s.Cookies, res.Token, res.Session)
	}
	return out, nil
}

// SignInInput is the sign-in request (JSON, or an HTML form).
type SignInInput struct {
	Body struct {
		Email       string `json:"email" maxLength:"254" example:"ada@example.com"`
		Password    string `json:"password" maxLength:"4096" example:"correct horse battery staple"`
		CallbackURL string `json:"callbackURL,omitempty" maxLength:"2048" doc:"Where the client should go next: answered as {redirect:true, url} and a Location header (still 200)."`
		RememberMe  *bool  `json:"rememberMe,omitempty" doc:"false starts a session that ends with the browser session (default true)."`
	}
}

// SignInOutput is the signed-in user and their session token; for a user
// with two-factor on, only {twoFactorRedirect:true, twoFactorMethods} and
// the two_factor cookie (two-factor plugin).
type SignInOutput struct {
	edge.SessionHeaders
	Location string `header:"Location" doc:"The callbackURL, when one was given."`
	Body     struct {
		Redirect *bool     `json:"redirect,omitempty" doc:"true when the client should go to url. Absent in a two-factor answer."`
		Token    string    `json:"token,omitempty" doc:"The session token (also set as a cookie). Absent in a two-factor answer."`
		URL      string    `json:"url,omitempty" doc:"The callbackURL, when one was given."`
		User     *UserJSON `json:"user,omitempty" doc:"The user. Absent in a two-factor answer."`
		// The two-factor plugin's answer: no session yet.
		TwoFactorRedirect bool     `json:"twoFactorRedirect,omitempty" doc:"true when the user must answer a second factor (verify-totp, verify-backup-code); no session was started."`
		TwoFactorMethods  []string `json:"twoFactorMethods,omitempty" doc:"The second factors the user can answer with." example:"[\"totp\"]"`
	}
}

func (s *API) signIn(ctx context.Context, in *SignInInput) (*SignInOutput, error) {
	if err := s.CheckTarget(in.Body.CallbackURL, edge.ErrInvalidCallback); err != nil {
		return nil, err
	}
	ri := edge.RequestInfoFrom(ctx)
	res, err := s.SignIns.SignIn(ctx, account.SignIn{Email: in.Body.Email, Password: in.Body.Password,
		RememberMe: in.Body.RememberMe == nil || *in.Body.RememberMe, CallbackURL: in.Body.CallbackURL,
		TrustedDevice: s.Cookies.TrustedDevice(ri.Request), Client: ri.Client()})
	if err != nil {
		return nil, err
	}
	out := &SignInOutput{}
	switch {
	case res.TrustToken != "":
		out.SetCookie = append(out.SetCookie, s.Cookies.TrustDeviceCookie(res.TrustToken, usecase.TrustDeviceTTL))
	case res.TrustRefused:
		out.SetCookie = append(out.SetCookie, s.Cookies.ClearTrustDevice())
	}
	if res.TwoFactorChallenge != "" {
		out.Body.TwoFactorRedirect, out.Body.TwoFactorMethods = true, twoFactorMethods
		out.SetCookie = append(out.SetCookie, s.Cookies.TwoFactorCookie(res.TwoFactorChallenge, usecase.MFAChallengeTTL))
		return out, nil
	}
	u, redirect := userJSON(res.User), false
	out.Body.Token, out.Body.User, out.Body.Redirect = res.Token, &u, &redirect
	if in.Body.CallbackURL != "" {
		redirect = true
		out.Body.URL, out.Location = in.Body.CallbackURL, s.Origins.Absolute(in.Body.CallbackURL)
	}
	out.SignIn(s.Cookies, res.Token, res.Session)
	return out, nil
}

// SignOutOutput answers {success:true} and expires the cookies.
type SignOutOutput struct {
	edge.SessionHeaders
	Body struct {
		Success bool `json:"success" example:"true"`
	}
}

func (s *API) signOut(ctx context.Context, _ *struct{}) (*SignOutOutput, error) {
	token, _ := s.Cookies.Token(edge.RequestInfoFrom(ctx).Request)
	if err := s.Sessions.SignOut(ctx, token); err != nil {
		return nil, err
	}
	out := &SignOutOutput{}
	out.Body.Success = true
	out.SignOut(s.Cookies)
	return out, nil
}

// GetSessionInput are get-session's options.
type GetSessionInput struct {
	DisableCookieCache bool `query:"disableCookieCache" doc:"Accepted for compatibility; there is no cookie cache to skip."`
	DisableRefresh     bool `query:"disableRefresh" doc:"Do not push the session's expiry forward."`
}

// SessionBody is a session and its user.
type SessionBody struct {
	Session SessionJSON `json:"session"`
	User    UserJSON    `json:"user"`
}

// GetSessionOutput is the current session, or null.
type GetSessionOutput struct {
	edge.SessionHeaders
	Pragma string `header:"Pragma"`
	// SetAuthJWT is Better Auth's JWT plugin header: a token of the user,
	// signed from the keys in memory (no database read), or the same token
	// as the last call while nothing it says has changed.
	SetAuthJWT    string   `header:"set-auth-jwt" doc:"With a session: a JWT of the user, as GET /api/auth/token returns."`
	ExposeHeaders []string `header:"Access-Control-Expose-Headers" doc:"Lets browser code read set-auth-jwt."`
	Body          *SessionBody
}

func (s *API) getSession(ctx context.Context, in *GetSessionInput) (*GetSessionOutput, error) {
	out := &GetSessionOutput{Pragma: "no-cache"}
	sess, err := s.Session(ctx)
	if err != nil {
		if edge.IsUnauthenticated(err) {
			if sess.HadCookie {
				out.SignOut(s.Cookies) // a forged or stale cookie is cleared
			}
			return out, nil
		}
		return nil, err
	}
	res := sess.Auth
	if !in.DisableRefresh {
		if err := s.RefreshSession(ctx, res); err != nil {
			return nil, err
		}
	}
	if res.Refreshed && sess.HadCookie {
		out.SetCookie = append(out.SetCookie, s.Cookies.Issue(sess.Token, res.Session)...)
	}
	out.Body = &SessionBody{Session: sessionJSON(res.Session), User: userJSON(res.User)}
	// The token of the last call is handed out again while it would say the
	// same; the session was just checked, so it never outlives a revocation.
	if out.SetAuthJWT, err = s.SigningKeys.SessionFrameworkToken(ctx, &res.Principal, out.Body.User); err != nil {
		return nil, err
	}
	out.ExposeHeaders = []string{"set-auth-jwt"}
	return out, nil
}

// ListSessionsOutput is the user's live sessions.
type ListSessionsOutput struct {
	Body []SessionJSON
}

func (s *API) listSessions(ctx context.Context, _ *struct{}) (*ListSessionsOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	list, err := s.Sessions.ListSessions(ctx, p.User.ID())
	if err != nil {
		return nil, err
	}
	out := &ListSessionsOutput{Body: make([]SessionJSON, len(list))}
	for i, sess := range list {
		out.Body[i] = sessionJSON(sess)
	}
	return out, nil
}

// RevokeSessionInput names the session to end.
type RevokeSessionInput struct {
	Body struct {
		Token string `json:"token" minLength:"1" maxLength:"256" doc:"The session's handle (the token field of list-sessions)."`
	}
}

func (s *API) revokeSession(ctx context.Context, in *RevokeSessionInput) (*edge.StatusOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	current, err := s.Sessions.RevokeSession(ctx, account.RevokeSession{Principal: p, Handle: in.Body.Token})
	if err != nil {
		return nil, err
	}
	out := edge.StatusOK()
	if current {
		out.SignOut(s.Cookies)
	}
	return out, nil
}

func (s *API) revokeSessions(ctx context.Context, _ *struct{}) (*edge.StatusOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Sessions.RevokeAllSessions(ctx, p); err != nil {
		return nil, err
	}
	out := edge.StatusOK()
	out.SignOut(s.Cookies)
	return out, nil
}

func (s *API) revokeOtherSessions(ctx context.Context, _ *struct{}) (*edge.StatusOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Sessions.RevokeOtherSessions(ctx, p); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}
