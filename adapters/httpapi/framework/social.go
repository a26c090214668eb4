package framework

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// Social sign-in and linked accounts on Better Auth's wire (design note
// better-auth-social-wire): sign-in/social and its callback, link-social,
// list-accounts, unlink-account, get-access-token, refresh-token and
// account-info. The state parameter travels in the signed <prefix>.state
// cookie too, so a callback is honoured only in the browser that started
// the sign-in; errors of the callback are redirects with ?error=<code>.

// The callback URL refusals (Better Auth's origin check).
var (
	errInvalidErrorCallback   = domain.NewError(domain.KindForbidden, "INVALID_ERROR_CALLBACK_URL", "Invalid errorCallbackURL")
	errInvalidNewUserCallback = domain.NewError(domain.KindForbidden, "INVALID_NEW_USER_CALLBACK_URL", "Invalid newUserCallbackURL")
)

// callbackErrors maps the neutral codes a callback ends with to Better
// Auth's ?error= codes; anything else is internal_server_error.
var callbackErrors = map[string]string{ // #nosec G101 -- error codes, no credentials
	"federation.state_missing":          "state_not_found",
	"federation.state_mismatch":         "state_mismatch",
	"identity_provider.not_found":       "oauth_provider_not_found",
	"federation.no_code":                "no_code",
	"federation.issuer_mismatch":        "issuer_mismatch",
	"federation.issuer_missing":         "issuer_missing",
	"federation.invalid_code":           "invalid_code",
	"federation.invalid_id_token":       "unable_to_get_user_info",
	"federation.user_info_failed":       "unable_to_get_user_info",
	"federation.discovery_failed":       "unable_to_get_user_info",
	"federation.email_not_found":        "email_not_found",
	"federation.account_not_linked":     "account_not_linked",
	"federation.link_failed":            "unable_to_link_account",
	"federation.link_email_mismatch":    "email_does_not_match",
	"federation.linked_to_another_user": "account_already_linked_to_different_user",
	"user.banned":                       "banned",
	"auth.email_not_verified":           "email_not_verified",
	"federation.email_not_verified":     "email_not_verified",
	"user.invalid_name":                 "unable_to_create_user",
	"email.invalid":                     "email_not_found",
	"email.invisible_characters":        "email_not_found",
	"email.mixed_script":                "email_not_found",
	"email.not_normalized":              "email_not_found",
	"federation.sso_required":           "sso_required",
	"federation.email_outside_domains":  "email_outside_sso_domains",
	"linked_account.exists":             "account_already_linked_to_different_user",
	"federation.id_token_not_supported": "oauth_provider_not_found",
	"identity_provider.invalid":         "oauth_provider_not_found",
}

// callbackErrorCode is the ?error= code of a failed callback.
func callbackErrorCode(err error, res federation.CallbackResult) string {
	if errors.Is(err, federation.ErrUpstreamDenied) && res.UpstreamError != "" {
		return res.UpstreamError
	}
	var de *domain.Error
	if errors.As(err, &de) {
		if c, ok := callbackErrors[de.Code]; ok {
			return c
		}
	}
	return "internal_server_error"
}

// SSOSignInInput starts an enterprise sign-in (@better-auth/sso's
// signIn.sso): exactly one of email, domain, organizationSlug and
// providerId names the provider.
type SSOSignInInput struct {
	Body struct {
		_                  struct{} `additionalProperties:"true"`
		Email              string   `json:"email,omitempty" maxLength:"254" doc:"Routed by its domain; also sent as login_hint." example:"ada@acme.example"`
		Domain             string   `json:"domain,omitempty" maxLength:"253" example:"acme.example"`
		OrganizationSlug   string   `json:"organizationSlug,omitempty" maxLength:"128"`
		ProviderID         string   `json:"providerId,omitempty" maxLength:"64"`
		CallbackURL        string   `json:"callbackURL,omitempty" maxLength:"2048" doc:"Where the browser goes after signing in (default /)."`
		ErrorCallbackURL   string   `json:"errorCallbackURL,omitempty" maxLength:"2048"`
		NewUserCallbackURL string   `json:"newUserCallbackURL,omitempty" maxLength:"2048"`
		Scopes             []string `json:"scopes,omitempty" maxItems:"32"`
		LoginHint          string   `json:"loginHint,omitempty" maxLength:"254"`
		DisableRedirect    bool     `json:"disableRedirect,omitempty"`
	}
}

func (s *API) ssoSignIn(ctx context.Context, in *SSOSignInInput) (*SocialSignInOutput, error) {
	b := &in.Body
	if err := s.checkSocialTargets(b.CallbackURL, b.ErrorCallbackURL, b.NewUserCallbackURL); err != nil {
		return nil, err
	}
	cb := b.CallbackURL
	if cb == "" {
		cb = "/"
	}
	st, err := s.Federation.StartSSO(ctx, federation.SSOStart{Email: b.Email, Domain: b.Domain, OrganizationSlug: b.OrganizationSlug,
		ProviderID: b.ProviderID, Start: federation.Start{CallbackURL: cb, ErrorURL: b.ErrorCallbackURL, NewUserURL: b.NewUserCallbackURL,
			Scopes: b.Scopes, LoginHint: b.LoginHint}})
	if err != nil {
		return nil, err
	}
	out := &SocialSignInOutput{}
	s.started(out, st, b.DisableRedirect)
	return out, nil
}

// IDTokenJSON is a native app's ID token (Better Auth's idToken body).
type IDTokenJSON struct {
	Token        string  `json:"token" minLength:"1" maxLength:"16384" doc:"The ID token the app got from the provider."`
	Nonce        string  `json:"nonce,omitempty" maxLength:"512" doc:"The nonce the app sent; checked against the token's."`
	AccessToken  string  `json:"accessToken,omitempty" maxLength:"16384"`
	RefreshToken string  `json:"refreshToken,omitempty" maxLength:"16384"`
	ExpiresAt    float64 `json:"expiresAt,omitempty" doc:"When the access token expires, in milliseconds since 1970."`
	User         *struct {
		Name *struct {
			FirstName string `json:"firstName,omitempty" maxLength:"256"`
			LastName  string `json:"lastName,omitempty" maxLength:"256"`
		} `json:"name,omitempty"`
		Email string `json:"email,omitempty" maxLength:"254"`
	} `json:"user,omitempty" doc:"Accepted and ignored (Apple's first sign-in): the token says who signed in."`
}

// SocialSignInInput starts a sign-in at a provider.
type SocialSignInInput struct {
	Body struct {
		_                  struct{}          `additionalProperties:"true"`
		Provider           string            `json:"provider" minLength:"1" maxLength:"64" doc:"The identity provider's id." example:"google"`
		CallbackURL        string            `json:"callbackURL,omitempty" maxLength:"2048" doc:"Where the browser goes after signing in (default /)."`
		NewUserCallbackURL string            `json:"newUserCallbackURL,omitempty" maxLength:"2048" doc:"Where a newly created user goes instead."`
		ErrorCallbackURL   string            `json:"errorCallbackURL,omitempty" maxLength:"2048" doc:"Where errors go, with ?error=<code> (default: the error page)."`
		DisableRedirect    bool              `json:"disableRedirect,omitempty" doc:"Answer {redirect:false} and no Location."`
		Scopes             []string          `json:"scopes,omitempty" maxItems:"32" doc:"Scopes to ask for instead of the provider's."`
		LoginHint          string            `json:"loginHint,omitempty" maxLength:"254" doc:"Sent as login_hint."`
		RequestSignUp      bool              `json:"requestSignUp,omitempty" doc:"Accepted; every enabled provider may sign new users up."`
		IDToken            *IDTokenJSON      `json:"idToken,omitempty" doc:"Sign in with an ID token instead of a redirect (native apps)."`
		AdditionalData     map[string]any    `json:"additionalData,omitempty" doc:"Accepted and ignored."`
		AdditionalParams   map[string]string `json:"additionalParams,omitempty" doc:"Refused when not empty: the authorization request's parameters are Gatehouse's."`
	}
}

// SocialSignInOutput is where to send the browser, or (with an ID token)
// the new session.
type SocialSignInOutput struct {
	edge.SessionHeaders
	Location string `header:"Location" doc:"The provider's authorization URL, unless disableRedirect."`
	Body     struct {
		URL      string    `json:"url,omitempty" doc:"The provider's authorization URL (absent after an ID-token sign-in)."`
		Redirect bool      `json:"redirect"`
		Token    string    `json:"token,omitempty" doc:"After an ID-token sign-in: the session token."`
		User     *UserJSON `json:"user,omitempty"`
	}
}

func (s *API) checkSocialTargets(callback, errorCallback, newUser string) error {
	if err := s.CheckTarget(callback, edge.ErrInvalidCallback); err != nil {
		return err
	}
	if err := s.CheckTarget(errorCallback, errInvalidErrorCallback); err != nil {
		return err
	}
	return s.CheckTarget(newUser, errInvalidNewUserCallback)
}

var errAdditionalParams = domain.Invalid("federation.additional_params", "additionalParams are not accepted",
	domain.FieldViolation{Field: "body.additionalParams", Message: "must be empty"})

func (s *API) socialSignIn(ctx context.Context, in *SocialSignInInput) (*SocialSignInOutput, error) {
	b := &in.Body
	if err := s.checkSocialTargets(b.CallbackURL, b.ErrorCallbackURL, b.NewUserCallbackURL); err != nil {
		return nil, err
	}
	if len(b.AdditionalParams) > 0 {
		return nil, errAdditionalParams
	}
	ri := edge.RequestInfoFrom(ctx)
	out := &SocialSignInOutput{}
	if b.IDToken != nil {
		res, err := s.Federation.SignInWithIDToken(ctx, federation.IDTokenSignIn{Provider: b.Provider, IDToken: b.IDToken.Token,
			Nonce: b.IDToken.Nonce, AccessToken: b.IDToken.AccessToken, RefreshToken: b.IDToken.RefreshToken,
			ExpiresAt: msTime(b.IDToken.ExpiresAt), Client: ri.Client()})
		if err != nil {
			return nil, err
		}
		if res.TwoFactorChallenge != "" {
			return nil, errSecondFactorNeeded
		}
		u := userJSON(res.User)
		out.Body.Token, out.Body.User = res.Token, &u
		out.SignIn(s.Cookies, res.Token, res.Session)
		return out, nil
	}
	cb := b.CallbackURL
	if cb == "" {
		cb = "/"
	}
	st, err := s.Federation.Start(ctx, federation.Start{Provider: b.Provider, CallbackURL: cb, ErrorURL: b.ErrorCallbackURL,
		NewUserURL: b.NewUserCallbackURL, Scopes: b.Scopes, LoginHint: b.LoginHint, RequestSignUp: b.RequestSignUp})
	if err != nil {
		return nil, err
	}
	s.started(out, st, b.DisableRedirect)
	return out, nil
}

// errSecondFactorNeeded refuses an ID-token sign-in of a user with a second
// factor: a native app must sign them in with a redirect, where the hosted
// second-factor page asks for it.
var errSecondFactorNeeded = domain.NewError(domain.KindForbidden, "SECOND_FACTOR_REQUIRED",
	"This account has a second factor: sign in with a redirect, where it is asked for")

// started fills a start's answer: the URL, the Location unless disabled,
// and the state cookie.
func (s *API) started(out *SocialSignInOutput, st federation.Started, disableRedirect bool) {
	out.Body.URL, out.Body.Redirect = st.URL, !disableRedirect
	if !disableRedirect {
		out.Location = st.URL
	}
	out.SetCookie = append(out.SetCookie, s.Cookies.OAuthStateCookie(st.State, domain.FederationStateTTL))
}

// msTime is a JavaScript time (milliseconds), or zero.
func msTime(ms float64) time.Time {
	if ms <= 0 || ms > 1e15 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// CallbackInput is the provider's answer, in the query (GET) or a form
// (POST, response_mode=form_post).
type CallbackInput struct {
	ProviderID       string `path:"providerId" maxLength:"64" doc:"The identity provider's id."`
	Code             string `query:"code" maxLength:"4096"`
	State            string `query:"state" maxLength:"256"`
	Error            string `query:"error" maxLength:"256"`
	ErrorDescription string `query:"error_description" maxLength:"1024" doc:"Not shown: the provider's words are not repeated."`
	Iss              string `query:"iss" maxLength:"2048" doc:"The issuer (RFC 9207); required when the provider's discovery promises it."`
}

// CallbackOutput is a redirect.
type CallbackOutput struct {
	edge.SessionHeaders
	Status   int
	Location string `header:"Location"`
}

// callbackGet finishes a sign-in or link and redirects: to the sign-in's
// callbackURL (newUserCallbackURL for a new user), to the second-factor page
// when the user has one the provider did not prove, or with ?error=<code>
// to errorCallbackURL or the error page.
func (s *API) callbackGet(ctx context.Context, in *CallbackInput) (*CallbackOutput, error) {
	ri := edge.RequestInfoFrom(ctx)
	res, err := s.Federation.Callback(ctx, federation.Callback{Provider: in.ProviderID, State: in.State,
		StateCookie: s.Cookies.OAuthState(ri.Request), Code: in.Code, Error: in.Error,
		Issuer: in.Iss, HasIssuer: ri.Request.URL.Query().Has("iss"), Client: ri.Client()})
	out := &CallbackOutput{Status: http.StatusFound}
	if !errors.Is(err, federation.ErrStateMismatch) && !errors.Is(err, federation.ErrStateMissing) {
		out.SetCookie = append(out.SetCookie, s.Cookies.ClearOAuthState())
	}
	if err != nil {
		if domain.KindOf(err) == domain.KindInternal || domain.KindOf(err) == domain.KindUnavailable {
			s.Logger.ErrorContext(ctx, "federation callback", "provider", in.ProviderID, "err", err)
		}
		target := res.ErrorURL
		if target == "" {
			target = edge.FrameworkBase + "/error"
		}
		out.Location = s.Origins.Absolute(edge.WithQuery(target, "error", callbackErrorCode(err, res)))
		return out, nil
	}
	switch {
	case res.TwoFactorChallenge != "":
		out.SetCookie = append(out.SetCookie, s.Cookies.TwoFactorCookie(res.TwoFactorChallenge, usecase.MFAChallengeTTL))
		out.Location = s.Origins.Absolute(edge.PageURL(edge.TwoFactorPath, url.Values{"callbackURL": {res.RedirectURL}}))
	case res.Session != nil:
		out.SignIn(s.Cookies, res.Token, res.Session)
		out.Location = s.Origins.Absolute(res.RedirectURL)
	default:
		out.Location = s.Origins.Absolute(res.RedirectURL)
	}
	return out, nil
}

// callbackPost turns a form_post answer into the GET callback, where the
// browser sends its SameSite=Lax cookies again (a cross-site POST does not
// carry them).
func (s *API) callbackPost(ctx context.Context, in *CallbackInput) (*CallbackOutput, error) {
	r := edge.RequestInfoFrom(ctx).Request
	q := url.Values{}
	for _, k := range []string{"code", "state", "error", "error_description", "iss"} {
		if v := r.URL.Query().Get(k); v != "" {
			q.Set(k, v)
		}
	}
	if edge.IsFormBody(r) {
		raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			return nil, domain.Invalid("federation.invalid_callback", "The callback's form could not be read", domain.FieldViolation{Field: "body", Message: "could not be read"})
		}
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			return nil, domain.Invalid("federation.invalid_callback", "The callback's form is malformed", domain.FieldViolation{Field: "body", Message: "is not a valid form"})
		}
		for _, k := range []string{"code", "state", "error", "error_description", "iss"} {
			if v := form.Get(k); v != "" && len(v) <= 4096 {
				q.Set(k, v)
			}
		}
	}
	return &CallbackOutput{Status: http.StatusFound, Location: edge.PageURL(s.Settings.FrameworkURL("/callback/"+url.PathEscape(in.ProviderID), nil), q)}, nil
}

// LinkSocialInput starts linking a provider's account to the signed-in user.
type LinkSocialInput struct {
	Body struct {
		_                struct{}          `additionalProperties:"true"`
		Provider         string            `json:"provider" minLength:"1" maxLength:"64" example:"github"`
		CallbackURL      string            `json:"callbackURL,omitempty" maxLength:"2048" doc:"Where the browser goes once linked (default /)."`
		ErrorCallbackURL string            `json:"errorCallbackURL,omitempty" maxLength:"2048"`
		DisableRedirect  bool              `json:"disableRedirect,omitempty"`
		Scopes           []string          `json:"scopes,omitempty" maxItems:"32"`
		LoginHint        string            `json:"loginHint,omitempty" maxLength:"254"`
		RequestSignUp    bool              `json:"requestSignUp,omitempty" doc:"Accepted and ignored."`
		IDToken          *IDTokenJSON      `json:"idToken,omitempty" doc:"Not supported for linking: link with a redirect."`
		AdditionalData   map[string]any    `json:"additionalData,omitempty" doc:"Accepted and ignored."`
		AdditionalParams map[string]string `json:"additionalParams,omitempty" doc:"Refused when not empty."`
	}
}

// LinkSocialOutput is where to send the browser.
type LinkSocialOutput struct {
	SetCookie []http.Cookie `header:"Set-Cookie"`
	Location  string        `header:"Location"`
	Body      struct {
		URL      string `json:"url"`
		Redirect bool   `json:"redirect"`
	}
}

var errLinkIDToken = domain.NewError(domain.KindInvalid, "ID_TOKEN_LINKING_NOT_SUPPORTED", "Linking with an ID token is not supported: link with a redirect")

func (s *API) linkSocial(ctx context.Context, in *LinkSocialInput) (*LinkSocialOutput, error) {
	b := &in.Body
	if err := s.checkSocialTargets(b.CallbackURL, b.ErrorCallbackURL, ""); err != nil {
		return nil, err
	}
	if len(b.AdditionalParams) > 0 {
		return nil, errAdditionalParams
	}
	if b.IDToken != nil {
		return nil, errLinkIDToken
	}
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	cb := b.CallbackURL
	if cb == "" {
		cb = "/"
	}
	st, err := s.Federation.Start(ctx, federation.Start{Provider: b.Provider, CallbackURL: cb, ErrorURL: b.ErrorCallbackURL,
		Scopes: b.Scopes, LoginHint: b.LoginHint, Link: &p})
	if err != nil {
		return nil, err
	}
	var tmp SocialSignInOutput
	s.started(&tmp, st, b.DisableRedirect)
	out := &LinkSocialOutput{SetCookie: tmp.SetCookie, Location: tmp.Location}
	out.Body.URL, out.Body.Redirect = tmp.Body.URL, tmp.Body.Redirect
	return out, nil
}

// AccountJSON is one way the user signs in, as list-accounts shows it.
type AccountJSON struct {
	ID         string   `json:"id" doc:"The account's id (unlink-account and get-access-token take it)."`
	ProviderID string   `json:"providerId" example:"github" doc:"\"credential\" for the password."`
	AccountID  string   `json:"accountId" doc:"The provider's id of the person (its subject)."`
	UserID     string   `json:"userId"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"createdAt" format:"date-time"`
	UpdatedAt  string   `json:"updatedAt" format:"date-time"`
}

// ListAccountsOutput is the user's accounts.
type ListAccountsOutput struct {
	Body []AccountJSON
}

func (s *API) listAccounts(ctx context.Context, _ *struct{}) (*ListAccountsOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	views, err := s.LinkedAccounts.List(ctx, p.User.ID())
	if err != nil {
		return nil, err
	}
	out := &ListAccountsOutput{Body: make([]AccountJSON, 0, len(views))}
	for _, v := range views {
		out.Body = append(out.Body, AccountJSON{ID: v.ID, ProviderID: v.ProviderID, AccountID: v.Subject, UserID: string(v.UserID),
			Scopes: v.Scopes, CreatedAt: edge.JSDate(v.CreatedAt), UpdatedAt: edge.JSDate(v.UpdatedAt)})
	}
	return out, nil
}

// UnlinkAccountInput names the account to unlink.
type UnlinkAccountInput struct {
	Body struct {
		_         struct{} `additionalProperties:"true"`
		AccountID string   `json:"accountId" minLength:"1" maxLength:"128" doc:"The account's id, as list-accounts shows it."`
		// ProviderID is Better Auth's older selector.
		ProviderID string `json:"providerId,omitempty" maxLength:"64" doc:"Accepted and ignored: accountId names the account."`
	}
}

func (s *API) unlinkAccount(ctx context.Context, in *UnlinkAccountInput) (*edge.StatusOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.LinkedAccounts.Unlink(ctx, p, edge.Origin(ctx), in.Body.AccountID); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}

// AccountSelectInput names one of the user's accounts.
type AccountSelectInput struct {
	Body struct {
		_                struct{} `additionalProperties:"true"`
		AccountID        string   `json:"accountId,omitempty" maxLength:"128" doc:"The account's id, as list-accounts shows it."`
		ProviderID       string   `json:"providerId,omitempty" maxLength:"64" doc:"Older clients: the user's first account at this provider."`
		UserID           string   `json:"userId,omitempty" maxLength:"128" doc:"Accepted when it is the signed-in user's."`
		UseAccountCookie bool     `json:"useAccountCookie,omitempty" doc:"Not supported: name the account."`
	}
}

// selectAccount resolves the account a request names among the signed-in
// user's (federation.Accounts.Select).
func (s *API) selectAccount(ctx context.Context, accountID, providerID, userID string) (domain.UserID, string, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return "", "", err
	}
	id, err := s.LinkedAccounts.Select(ctx, p.User.ID(), federation.AccountSelection{AccountID: accountID, ProviderID: providerID, UserID: userID})
	if err != nil {
		return "", "", err
	}
	return p.User.ID(), id, nil
}

// AccessTokenOutput is an upstream access token.
type AccessTokenOutput struct {
	Body struct {
		AccessToken          string   `json:"accessToken"`
		AccessTokenExpiresAt *string  `json:"accessTokenExpiresAt" format:"date-time" nullable:"true"`
		Scopes               []string `json:"scopes"`
		IDToken              *string  `json:"idToken" nullable:"true"`
	}
}

func (s *API) getAccessToken(ctx context.Context, in *AccountSelectInput) (*AccessTokenOutput, error) {
	user, id, err := s.selectAccount(ctx, in.Body.AccountID, in.Body.ProviderID, in.Body.UserID)
	if err != nil {
		return nil, err
	}
	tok, err := s.LinkedAccounts.AccessToken(ctx, user, id)
	if err != nil {
		return nil, err
	}
	out := &AccessTokenOutput{}
	out.Body.AccessToken, out.Body.Scopes = tok.AccessToken, nonNil(tok.Account.Scopes)
	out.Body.AccessTokenExpiresAt = optDate(tok.AccessTokenExpiresAt)
	if tok.IDToken != "" {
		out.Body.IDToken = &tok.IDToken
	}
	return out, nil
}

// RefreshTokenOutput is an account's fresh tokens. The refresh token itself
// stays in Gatehouse: refreshToken is always null.
type RefreshTokenOutput struct {
	Body struct {
		AccessToken           string  `json:"accessToken"`
		RefreshToken          *string `json:"refreshToken" nullable:"true" doc:"Always null: the upstream refresh token never leaves Gatehouse."`
		AccessTokenExpiresAt  *string `json:"accessTokenExpiresAt" format:"date-time" nullable:"true"`
		RefreshTokenExpiresAt *string `json:"refreshTokenExpiresAt" format:"date-time" nullable:"true"`
		Scope                 string  `json:"scope" doc:"Comma-joined scopes."`
		IDToken               *string `json:"idToken" nullable:"true"`
		ProviderID            string  `json:"providerId"`
		AccountID             string  `json:"accountId" doc:"The account's id."`
	}
}

func (s *API) refreshToken(ctx context.Context, in *AccountSelectInput) (*RefreshTokenOutput, error) {
	user, id, err := s.selectAccount(ctx, in.Body.AccountID, in.Body.ProviderID, in.Body.UserID)
	if err != nil {
		return nil, err
	}
	r, err := s.LinkedAccounts.Refresh(ctx, user, id)
	if err != nil {
		return nil, err
	}
	out := &RefreshTokenOutput{}
	b := &out.Body
	b.AccessToken, b.Scope, b.ProviderID, b.AccountID = r.AccessToken, strings.Join(r.Account.Scopes, ","), string(r.Account.ProviderID), string(r.Account.ID)
	b.AccessTokenExpiresAt, b.RefreshTokenExpiresAt = optDate(r.Account.AccessTokenExpiresAt), optDate(r.Account.RefreshTokenExpiresAt)
	if r.IDToken != "" {
		b.IDToken = &r.IDToken
	}
	return out, nil
}

// AccountInfoInput names the account, in the query.
type AccountInfoInput struct {
	AccountID  string `query:"accountId" maxLength:"128" doc:"The account's id."`
	ProviderID string `query:"providerId" maxLength:"64" doc:"Older clients: the user's first account at this provider."`
}

// AccountInfoOutput is who the provider says the account is.
type AccountInfoOutput struct {
	Body struct {
		User struct {
			ID            string `json:"id,omitempty"`
			Name          string `json:"name"`
			Email         string `json:"email"`
			Image         string `json:"image,omitempty"`
			EmailVerified bool   `json:"emailVerified"`
		} `json:"user"`
		Data    map[string]any `json:"data" doc:"The provider's profile as it sent it."`
		Account struct {
			ID         string `json:"id"`
			ProviderID string `json:"providerId"`
			AccountID  string `json:"accountId"`
		} `json:"account"`
	}
}

func (s *API) accountInfo(ctx context.Context, in *AccountInfoInput) (*AccountInfoOutput, error) {
	user, id, err := s.selectAccount(ctx, in.AccountID, in.ProviderID, "")
	if err != nil {
		return nil, err
	}
	info, err := s.LinkedAccounts.Info(ctx, user, id)
	if err != nil {
		return nil, err
	}
	out := &AccountInfoOutput{}
	b := &out.Body
	b.User.ID, b.User.Name, b.User.Email, b.User.Image, b.User.EmailVerified = info.Identity.Subject, info.Identity.Name, info.Identity.Email, info.Identity.Image, info.Identity.EmailVerified
	b.Data = info.Identity.Profile
	if b.Data == nil {
		b.Data = map[string]any{}
	}
	b.Account.ID, b.Account.ProviderID, b.Account.AccountID = string(info.Account.ID), string(info.Account.ProviderID), info.Account.Subject
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func optDate(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	d := edge.JSDate(t)
	return &d
}

// AddSocialRoutes registers social sign-in and the linked accounts.
func (s *API) AddSocialRoutes() {
	type op = huma.Operation
	const tag = "Social sign-in and linked accounts"
	base := func(o op) op {
		o.Path = edge.FrameworkBase + o.Path
		o.Tags = []string{tag}
		o.Errors = append(o.Errors, http.StatusTooManyRequests)
		return o
	}
	signedIn := func(o op) op {
		o.Security = edge.SessionSecurity
		o.Errors = append(o.Errors, http.StatusUnauthorized, http.StatusForbidden)
		return base(o)
	}
	fw := edge.ContractFramework
	redirect := map[string]*huma.Response{"302": {Description: "To callbackURL, the second-factor page, or with ?error=<code> to errorCallbackURL or the error page."}}

	edge.Add(s.routes, fw, edge.WithPolicy(edge.WithRate(base(op{OperationID: "signInSocial", Method: http.MethodPost, Path: "/sign-in/social",
		Summary: "Sign in with an identity provider",
		Description: "Starts a sign-in at the provider: answers {url, redirect} with a Location header and the signed state cookie. " +
			"PKCE S256, state and (OpenID Connect) nonce are always used. With idToken, a native app signs in with a token it got itself " +
			"(signature, issuer, audience, expiry and nonce are checked) and the answer is the session. An unknown or disabled provider is 404 PROVIDER_NOT_FOUND.",
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}}), edge.RateCredentials), edge.LoginRoute, edge.FormPage(edge.SocialSignInForm)),
		s.socialSignIn, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(edge.WithRate(base(op{OperationID: "signInSSO", Method: http.MethodPost, Path: "/sign-in/sso",
		Summary: "Sign in with an organization's identity provider",
		Description: "Enterprise SSO: exactly one of email, domain, organizationSlug and providerId names the organization's provider. An address is routed by " +
			"its domain, which must be one of the organization's verified domains bound to the provider (a domain that stops verifying stops routing). " +
			"Answers {url, redirect} like sign-in/social; new users join the organization with the provider's default role. No provider: 404 SSO_PROVIDER_NOT_FOUND.",
		Errors: []int{http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound}}), edge.RateCredentials), edge.LoginRoute, edge.FormPage(edge.SocialSignInForm)),
		s.ssoSignIn, edge.ContractAuth)
	edge.Add(s.routes, fw, base(op{OperationID: "socialCallback", Method: http.MethodGet, Path: "/callback/{providerId}",
		Summary: "The provider's callback",
		Description: "Where the provider sends the browser back. The state must match the browser's state cookie and is used once; " +
			"iss must be the provider's (RFC 9207; required when its discovery promises it); the code is redeemed with the PKCE verifier and the ID token verified. " +
			"Errors redirect with Better Auth's codes: state_not_found, state_mismatch, issuer_mismatch, issuer_missing, invalid_code, unable_to_get_user_info, " +
			"email_not_found, account_not_linked, unable_to_link_account, email_does_not_match, account_already_linked_to_different_user, banned, email_not_verified, " +
			"or the provider's own RFC 6749 code.",
		DefaultStatus: http.StatusFound, Responses: redirect}), s.callbackGet, edge.ContractAuth)
	edge.Add(s.routes, fw, base(op{OperationID: "socialCallbackPost", Method: http.MethodPost, Path: "/callback/{providerId}",
		Summary:       "The provider's callback (form_post)",
		Description:   "A provider's form_post answer: redirected to the GET callback with the same parameters, where the browser sends its cookies.",
		DefaultStatus: http.StatusFound, Responses: map[string]*huma.Response{"302": {Description: "To the GET callback."}}}), s.callbackPost, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "linkSocial", Method: http.MethodPost, Path: "/link-social",
		Summary: "Link an identity provider's account",
		Description: "Starts a sign-in at the provider whose account then joins the signed-in user (no new session). The provider must say the address is verified " +
			"(unless it is trusted for linking) and it must be the user's address; an account linked to another user is refused.",
		Errors: []int{http.StatusNotFound}}), s.linkSocial, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "listUserAccounts", Method: http.MethodGet, Path: "/list-accounts",
		Summary: "List the user's accounts", Description: "The password (providerId credential) and every linked account. Tokens are never listed."}),
		s.listAccounts, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "unlinkAccount", Method: http.MethodPost, Path: "/unlink-account",
		Summary: "Unlink an account",
		Description: "Removes a linked account. Needs a fresh session (403 SESSION_NOT_FRESH). The last way to sign in (no password, no passkey, " +
			"no other linked account) is refused: 400 FAILED_TO_UNLINK_LAST_ACCOUNT."}), s.unlinkAccount, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "getAccessToken", Method: http.MethodPost, Path: "/get-access-token",
		Summary:     "An account's upstream access token",
		Description: "Refreshed first when it expires within 5 seconds and a refresh token is kept."}), s.getAccessToken, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "refreshToken", Method: http.MethodPost, Path: "/refresh-token",
		Summary:     "Refresh an account's upstream tokens",
		Description: "Redeems the kept refresh token at the provider. The new refresh token is kept, sealed, and never returned (refreshToken is null)."}),
		s.refreshToken, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "accountInfo", Method: http.MethodGet, Path: "/account-info",
		Summary: "An account's profile at its provider", Description: "Reads userinfo (or GitHub's API) with the account's access token."}),
		s.accountInfo, edge.ContractAuth)
}
