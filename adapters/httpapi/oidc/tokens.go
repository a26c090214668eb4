package oidc

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/oidc"
)

// clientAuth reads Authorization: Basic. Any other scheme is ignored here.
func clientAuth(r *http.Request) (oidc.ClientAuthentication, error) {
	h := r.Header.Get("Authorization")
	if len(h) < 6 || !strings.EqualFold(h[:6], "basic ") {
		return oidc.ClientAuthentication{}, nil
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		return oidc.ClientAuthentication{HasBasic: true}, edge.OAuthErr("invalid_client", "The Authorization header is malformed.")
	}
	return oidc.ClientAuthentication{HasBasic: true, BasicID: id, BasicSecret: secret}, nil
}

// clientForm reads the form and the client authentication of a token,
// revocation or introspection request.
func clientForm(ctx context.Context) (oidc.ClientAuthentication, url.Values, error) {
	r := edge.RequestInfoFrom(ctx).Request
	auth, err := clientAuth(r)
	if err != nil {
		return auth, nil, err
	}
	form, err := readForm(r)
	return auth, form, err
}

// OAuthClientHeader documents client_secret_basic.
type OAuthClientHeader struct {
	Authorization string `header:"Authorization" doc:"client_secret_basic: Basic base64(urlencode(client_id):urlencode(client_secret)). Or send client_id (and client_secret) in the form."`
}

// TokenForm is the token request (RFC 6749 §4.1.3, §6, §4.4; RFC 7636 §4.5).
type TokenForm struct {
	GrantType    string `json:"grant_type" enum:"authorization_code,refresh_token,client_credentials"`
	Code         string `json:"code,omitempty" doc:"authorization_code: the code."`
	RedirectURI  string `json:"redirect_uri,omitempty" doc:"authorization_code: the redirect_uri of the authorization request."`
	CodeVerifier string `json:"code_verifier,omitempty" doc:"authorization_code: the PKCE verifier, 43 to 128 unreserved characters."`
	RefreshToken string `json:"refresh_token,omitempty" doc:"refresh_token: the refresh token."`
	Scope        string `json:"scope,omitempty" doc:"refresh_token: a narrower scope (never wider)."`
	ClientID     string `json:"client_id,omitempty" doc:"The client, unless it authenticates with Basic."`
	ClientSecret string `json:"client_secret,omitempty" doc:"client_secret_post: a confidential client's secret."`
}

// TokenJSON is a token response (RFC 6749 §5.1).
type TokenJSON struct {
	AccessToken  string `json:"access_token" doc:"An RS256 JWT (typ at+jwt) for the protected resource."`
	TokenType    string `json:"token_type" example:"Bearer"`
	ExpiresIn    int    `json:"expires_in" example:"900"`
	Scope        string `json:"scope" example:"openid profile email offline_access"`
	IDToken      string `json:"id_token,omitempty" doc:"With scope openid: the RS256 ID token."`
	RefreshToken string `json:"refresh_token,omitempty" doc:"With scope offline_access: an opaque token (gh_rt_…), rotated on every use."`
}

// TokenOutput is a token response that no cache keeps.
type TokenOutput struct {
	CacheControl string `header:"Cache-Control"`
	Pragma       string `header:"Pragma"`
	Body         TokenJSON
}

func (s *API) oauthToken(ctx context.Context, _ *OAuthClientHeader) (*TokenOutput, error) {
	auth, form, err := clientForm(ctx)
	if err != nil {
		return nil, s.OAuthFailure(ctx, err, auth.HasBasic, false)
	}
	res, err := s.OAuthProvider.Token(ctx, auth, form)
	if err != nil {
		return nil, s.OAuthFailure(ctx, err, auth.HasBasic, false)
	}
	return &TokenOutput{CacheControl: "no-store", Pragma: "no-cache", Body: TokenJSON(res)}, nil
}

// UserInfoInput carries the access token.
type UserInfoInput struct {
	Authorization string `header:"Authorization" doc:"Bearer <access token>."`
}

// UserInfoJSON are the user's claims (OpenID Connect Core §5.3.2).
type UserInfoJSON struct {
	Sub           string   `json:"sub" doc:"The user's id."`
	Email         string   `json:"email,omitempty" doc:"With scope email."`
	EmailVerified *bool    `json:"email_verified,omitempty" doc:"With scope email."`
	Name          string   `json:"name,omitempty" doc:"With scope profile."`
	Picture       string   `json:"picture,omitempty" doc:"With scope profile, when the user has an image."`
	UpdatedAt     int64    `json:"updated_at,omitempty" doc:"With scope profile: seconds since the epoch."`
	AMR           []string `json:"amr,omitempty" doc:"How the user signed in for this grant: RFC 8176 methods (pwd, otp, hwk, swk, user, mfa)."`
	ACR           string   `json:"acr,omitempty" doc:"The authentication context class the sign-in met: urn:gatehouse:acr:pwd, :mfa or :phr."`
}

// UserInfoOutput is the claims, never cached.
type UserInfoOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         UserInfoJSON
}

func (s *API) oauthUserInfo(ctx context.Context, in *UserInfoInput) (*UserInfoOutput, error) {
	token := ""
	if h := in.Authorization; len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		token = strings.TrimSpace(h[7:])
	} else if r := edge.RequestInfoFrom(ctx).Request; r.Method == http.MethodPost && edge.IsFormBody(r) {
		// RFC 6750 §2.2: the token in a form body.
		if form, err := readForm(r); err == nil && len(form["access_token"]) == 1 {
			token = form.Get("access_token")
		}
	}
	info, err := s.OAuthProvider.UserInfo(ctx, token)
	if err != nil {
		return nil, s.OAuthFailure(ctx, err, false, true)
	}
	return &UserInfoOutput{CacheControl: "no-store", Body: UserInfoJSON{Sub: info.Subject, Email: info.Email, EmailVerified: info.EmailVerified,
		Name: info.Name, Picture: info.Picture, UpdatedAt: info.UpdatedAt, AMR: info.AMR, ACR: info.ACR}}, nil
}

// RevokeForm is a revocation request (RFC 7009 §2.1).
type RevokeForm struct {
	Token         string `json:"token" doc:"A refresh token or an access token."`
	TokenTypeHint string `json:"token_type_hint,omitempty" enum:"access_token,refresh_token" doc:"Accepted; the token's shape decides."`
	ClientID      string `json:"client_id,omitempty"`
	ClientSecret  string `json:"client_secret,omitempty"`
}

// NoStoreOutput is an empty 200.
type NoStoreOutput struct {
	CacheControl string `header:"Cache-Control"`
}

func (s *API) oauthRevoke(ctx context.Context, _ *OAuthClientHeader) (*NoStoreOutput, error) {
	auth, form, err := clientForm(ctx)
	if err == nil {
		err = s.OAuthProvider.Revoke(ctx, auth, form)
	}
	if err != nil {
		return nil, s.OAuthFailure(ctx, err, auth.HasBasic, false)
	}
	return &NoStoreOutput{CacheControl: "no-store"}, nil
}

// IntrospectForm is an introspection request (RFC 7662 §2.1).
type IntrospectForm = RevokeForm

// IntrospectionJSON is a token's state (RFC 7662 §2.2).
type IntrospectionJSON struct {
	Active    bool   `json:"active"`
	Scope     string `json:"scope,omitempty"`
	ClientID  string `json:"client_id,omitempty"`
	Sub       string `json:"sub,omitempty"`
	Username  string `json:"username,omitempty" doc:"The user's e-mail address."`
	TokenType string `json:"token_type,omitempty" doc:"Bearer for access tokens, refresh_token for refresh tokens."`
	Exp       int64  `json:"exp,omitempty"`
	Iat       int64  `json:"iat,omitempty"`
	Iss       string `json:"iss,omitempty"`
	Aud       string `json:"aud,omitempty"`
}

// IntrospectionOutput is never cached.
type IntrospectionOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         IntrospectionJSON
}

func (s *API) oauthIntrospect(ctx context.Context, _ *OAuthClientHeader) (*IntrospectionOutput, error) {
	auth, form, err := clientForm(ctx)
	var res oidc.Introspection
	if err == nil {
		res, err = s.OAuthProvider.Introspect(ctx, auth, form)
	}
	if err != nil {
		return nil, s.OAuthFailure(ctx, err, auth.HasBasic, false)
	}
	return &IntrospectionOutput{CacheControl: "no-store", Body: IntrospectionJSON{Active: res.Active, Scope: res.Scope, ClientID: res.ClientID,
		Sub: res.Subject, Username: res.Username, TokenType: res.TokenType, Exp: res.ExpiresAt, Iat: res.IssuedAt, Iss: res.Issuer, Aud: res.Audience}}, nil
}
