package oidc

import (
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/usecase"
)

// tagOAuth groups the OpenID Connect provider's operations.
const tagOAuth = "OAuth 2.1 / OpenID Connect"

// addOAuthRoutes registers the OpenID Connect provider at the paths of
// Better Auth's OAuth provider: authorization (with the consent answer),
// token, userinfo, revocation, introspection and end-session. Token,
// revocation, introspection and userinfo speak OAuth's own error format
// (RFC 6749 §5.2, RFC 6750 §3), not the framework's.
func (s *API) AddOAuthRoutes() {
	type op = huma.Operation
	fw := edge.ContractFramework
	p := func(path string) string { return edge.FrameworkBase + "/oauth2" + path }
	redirect := map[string]*huma.Response{
		"302": {Description: "To the sign-in page, the consent page, or the client's redirect_uri with code, state and iss (or error, error_description, state and iss).",
			Headers: map[string]*huma.Param{"Location": {Schema: &huma.Schema{Type: "string"}}}},
		"400": {Description: "An unknown client_id or an unregistered redirect_uri: an HTML page, never a redirect.",
			Content: map[string]*huma.MediaType{"text/html": {Schema: &huma.Schema{Type: "string"}}}},
	}
	authorizeDoc := "Starts the authorization code flow (PKCE S256 required for public clients). Without a session the browser goes to the hosted " +
		"sign-in page and comes back; a client that is not first-party and lacks the user's consent sends it to the consent page. " +
		"The answer carries iss (RFC 9207). prompt none, login and consent and max_age are honoured."
	// Signing in to a relying party as the user is acting as them there, and
	// its tokens could not say so: an impersonation session may not, not
	// even with a GET (edge.Impersonation), nor answer the consent page.
	authorizeDoc += edge.ImpersonationNote("IMPERSONATION_READ_ONLY")
	edge.Add(s.routes, fw, edge.WithPolicy(op{OperationID: "oauth2Authorize", Method: http.MethodGet, Path: p("/authorize"), Tags: []string{tagOAuth},
		Summary: "Authorization endpoint", Description: authorizeDoc, DefaultStatus: http.StatusFound, Responses: redirect}, edge.RefusedWhileImpersonating),
		s.oauthAuthorize, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(op{OperationID: "oauth2AuthorizePost", Method: http.MethodPost, Path: p("/authorize"), Tags: []string{tagOAuth},
		Summary: "Authorization endpoint (form post)", Description: authorizeDoc + " The parameters arrive as a form.",
		DefaultStatus: http.StatusSeeOther, Responses: withStatus(redirect, "302", "303")}, edge.RefusedWhileImpersonating), s.oauthAuthorizePost, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithForm(op{OperationID: "oauth2Consent", Method: http.MethodPost, Path: p("/consent"), Tags: []string{tagOAuth},
		Summary: "Answer the consent page",
		Description: "Records the signed-in user's consent (accept true) or refusal for the authorization request in oauth_query, and answers " +
			"{redirect:true, url} with a Location header: the client's redirect_uri with a code, or with error access_denied. Accepts JSON or an HTML form (303).",
		Security: edge.SessionSecurity, Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests}}, edge.ConsentForm), s.oauthConsent, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(op{OperationID: "oauth2Token", Method: http.MethodPost, Path: p("/token"), Tags: []string{tagOAuth},
		Summary: "Token endpoint",
		Description: "Grant types authorization_code (with the PKCE code_verifier), refresh_token (rotated on every use; presenting a used one revokes " +
			"the whole grant) and client_credentials (confidential clients). Clients authenticate with client_secret_basic or client_secret_post; " +
			"public clients send client_id only. Access tokens are RS256 JWTs (typ at+jwt, RFC 9068); ID tokens are RS256 JWTs.",
		Errors: []int{http.StatusUnauthorized, http.StatusTooManyRequests}}, edge.OAuthEndpoint, func(p *edge.Policy) { p.Rate = edge.RateOAuthToken }), s.oauthToken, edge.ContractAuth)
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		id := "oauth2UserInfo"
		if method == http.MethodPost {
			id = "oauth2UserInfoPost"
		}
		edge.Add(s.routes, fw, edge.WithPolicy(op{OperationID: id, Method: method, Path: p("/userinfo"), Tags: []string{tagOAuth},
			Summary: "UserInfo endpoint",
			Description: "The signed-in user's claims for an access token with scope openid: sub always, email and email_verified with scope email, " +
				"name, picture and updated_at with scope profile. A revoked, expired or foreign token is 401 with WWW-Authenticate: Bearer error=\"invalid_token\".",
			Security: []map[string][]string{{edge.SchemeOAuthBearer: {}}},
			Errors:   []int{http.StatusUnauthorized, http.StatusForbidden}}, edge.OAuthEndpoint), s.oauthUserInfo, edge.ContractAuth)
	}
	edge.Add(s.routes, fw, edge.WithPolicy(op{OperationID: "oauth2Revoke", Method: http.MethodPost, Path: p("/revoke"), Tags: []string{tagOAuth},
		Summary: "Revocation endpoint",
		Description: "Revokes a refresh token or an access token of the authenticated client, and with it every token of its grant (RFC 7009). " +
			"An unknown token, or another client's, is answered 200 too and changes nothing.",
		DefaultStatus: http.StatusOK, Errors: []int{http.StatusUnauthorized}}, edge.OAuthEndpoint), s.oauthRevoke, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(op{OperationID: "oauth2Introspect", Method: http.MethodPost, Path: p("/introspect"), Tags: []string{tagOAuth},
		Summary:     "Introspection endpoint",
		Description: "Tells a confidential client whether an access or refresh token is active (RFC 7662). Anything unusable is {active:false}.",
		Errors:      []int{http.StatusUnauthorized}}, edge.OAuthEndpoint), s.oauthIntrospect, edge.ContractAuth)
	endDoc := "RP-initiated logout. With a valid id_token_hint (expired is fine) the user's session ends and the browser goes to the client's registered " +
		"post_logout_redirect_uri with state (or to the hosted sign-out page); without one the hosted page asks first and posts back here. " +
		"An unregistered post_logout_redirect_uri is refused with an HTML page, never followed."
	edge.Add(s.routes, fw, op{OperationID: "oauth2EndSession", Method: http.MethodGet, Path: p("/end-session"), Tags: []string{tagOAuth},
		Summary: "End-session endpoint", Description: endDoc, DefaultStatus: http.StatusFound,
		Responses: map[string]*huma.Response{"302": redirect["302"], "400": redirect["400"]}}, s.oauthEndSession, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(edge.WithForm(op{OperationID: "oauth2EndSessionPost", Method: http.MethodPost, Path: p("/end-session"), Tags: []string{tagOAuth},
		Summary: "End-session endpoint (form post)", Description: endDoc + " Answers {redirect:true, url} with a Location header; an HTML form gets 303.",
		Errors: []int{http.StatusForbidden, http.StatusTooManyRequests}}, edge.EndSessionForm), edge.AllowedWhileImpersonating), s.oauthEndSessionPost, edge.ContractAuth)

	s.documentOAuth()
}

// withStatus copies responses, renaming status from to to.
func withStatus(rs map[string]*huma.Response, from, to string) map[string]*huma.Response {
	out := map[string]*huma.Response{}
	for k, v := range rs {
		if k == from {
			k = to
		}
		out[k] = v
	}
	return out
}

// AuthorizeInput are the authorization request's parameters (RFC 6749
// §4.1.1, OpenID Connect Core §3.1.2.1, RFC 7636). The handler reads the raw
// query, so repeated parameters are caught.
type AuthorizeInput struct {
	ResponseType        string `query:"response_type" doc:"code (the only type supported)." example:"code"`
	ClientID            string `query:"client_id" doc:"The registered client's id."`
	RedirectURI         string `query:"redirect_uri" doc:"One of the client's registered redirect URIs, exactly."`
	Scope               string `query:"scope" doc:"Space-separated: openid, profile, email, offline_access." example:"openid profile email"`
	State               string `query:"state" doc:"Returned unchanged."`
	Nonce               string `query:"nonce" doc:"Repeated in the ID token."`
	CodeChallenge       string `query:"code_challenge" doc:"base64url(SHA-256(code_verifier)); required for public clients."`
	CodeChallengeMethod string `query:"code_challenge_method" doc:"S256 (plain is refused)." example:"S256"`
	Prompt              string `query:"prompt" doc:"none, login or consent."`
	MaxAge              string `query:"max_age" doc:"Seconds since the user signed in after which they must sign in again."`
}

// AuthorizeForm is the form body of POST /oauth2/authorize: the same
// parameters as the query of GET.
type AuthorizeForm struct {
	ResponseType        string `json:"response_type" example:"code"`
	ClientID            string `json:"client_id"`
	RedirectURI         string `json:"redirect_uri"`
	Scope               string `json:"scope,omitempty" example:"openid profile email"`
	State               string `json:"state,omitempty"`
	Nonce               string `json:"nonce,omitempty"`
	CodeChallenge       string `json:"code_challenge,omitempty"`
	CodeChallengeMethod string `json:"code_challenge_method,omitempty" example:"S256"`
	Prompt              string `json:"prompt,omitempty"`
	MaxAge              string `json:"max_age,omitempty"`
}

// BrowserRedirect is a redirect for a browser, or an HTML error page.
type BrowserRedirect struct {
	edge.SessionHeaders
	Status                int
	Location              string `header:"Location"`
	ContentType           string `header:"Content-Type"`
	ContentSecurityPolicy string `header:"Content-Security-Policy"`
	Body                  []byte
}

// found is a redirect to target.
func found(status int, target string) *BrowserRedirect {
	return &BrowserRedirect{Status: status, Location: target}
}

func (s *API) oauthAuthorize(ctx context.Context, _ *AuthorizeInput) (*BrowserRedirect, error) {
	return s.authorize(ctx, edge.RequestInfoFrom(ctx).Request.URL.Query(), http.StatusFound)
}

func (s *API) oauthAuthorizePost(ctx context.Context, _ *struct{}) (*BrowserRedirect, error) {
	form, err := readForm(edge.RequestInfoFrom(ctx).Request)
	if err != nil {
		return oauthPage(err), nil
	}
	return s.authorize(ctx, form, http.StatusSeeOther)
}

// authorize runs an authorization request for whoever is signed in.
func (s *API) authorize(ctx context.Context, params url.Values, status int) (*BrowserRedirect, error) {
	p, err := s.optionalPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	target, err := s.OAuthProvider.Authorize(ctx, params, p)
	if err != nil {
		if _, _, ok := oidc.IsOAuthError(err); ok {
			return oauthPage(err), nil
		}
		return nil, err
	}
	return found(status, target), nil
}

// optionalPrincipal is the signed-in session, or nil when there is none. Any
// other failure (the database is down) is returned: treating it as "nobody
// is signed in" would answer login_required for a signed-in user.
func (s *API) optionalPrincipal(ctx context.Context) (*usecase.Principal, error) {
	p, err := s.Principal(ctx)
	if edge.IsUnauthenticated(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// ConsentInput is the consent page's answer (JSON, or an HTML form).
type ConsentInput struct {
	Body struct {
		Accept     bool   `json:"accept" doc:"true allows the client the requested scopes; false refuses."`
		OAuthQuery string `json:"oauth_query" maxLength:"8192" doc:"The authorization request's query string, as the consent page received it."`
	}
}

// RedirectJSONOutput is {redirect:true, url} with a Location header.
type RedirectJSONOutput struct {
	edge.SessionHeaders
	Location string `header:"Location" doc:"The next URL."`
	Body     struct {
		Redirect bool   `json:"redirect" example:"true"`
		URL      string `json:"url" doc:"Where the browser goes next."`
	}
}

func redirectJSON(target string) *RedirectJSONOutput {
	out := &RedirectJSONOutput{Location: target}
	out.Body.Redirect, out.Body.URL = true, target
	return out
}

func (s *API) oauthConsent(ctx context.Context, in *ConsentInput) (*RedirectJSONOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	target, err := s.OAuthProvider.Consent(ctx, oidc.ConsentDecision{Principal: p, Accept: in.Body.Accept, Query: in.Body.OAuthQuery})
	if err != nil {
		return nil, err
	}
	return redirectJSON(target), nil
}

// EndSessionInput are the end-session parameters (RP-Initiated Logout §2).
type EndSessionInput struct {
	IDTokenHint           string `query:"id_token_hint" doc:"An ID token this provider issued to the client (expired is fine)."`
	ClientID              string `query:"client_id" doc:"The client; must agree with the hint's aud when both are given."`
	PostLogoutRedirectURI string `query:"post_logout_redirect_uri" doc:"One of the client's registered post-logout redirect URIs, exactly."`
	State                 string `query:"state" doc:"Returned unchanged to post_logout_redirect_uri."`
	LogoutHint            string `query:"logout_hint" doc:"Accepted and ignored."`
	UILocales             string `query:"ui_locales" doc:"Accepted and ignored."`
}

// EndSessionPostInput are the same parameters as a JSON body or a form.
type EndSessionPostInput struct {
	Body struct {
		IDTokenHint           string `json:"id_token_hint,omitempty" maxLength:"8192"`
		ClientID              string `json:"client_id,omitempty" maxLength:"256"`
		PostLogoutRedirectURI string `json:"post_logout_redirect_uri,omitempty" maxLength:"2048"`
		State                 string `json:"state,omitempty" maxLength:"2048"`
		LogoutHint            string `json:"logout_hint,omitempty" maxLength:"512"`
		UILocales             string `json:"ui_locales,omitempty" maxLength:"256"`
	}
}

func (s *API) oauthEndSession(ctx context.Context, _ *EndSessionInput) (*BrowserRedirect, error) {
	p, err := s.optionalPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.OAuthProvider.EndSession(ctx, oidc.EndSession{Params: edge.RequestInfoFrom(ctx).Request.URL.Query(), Principal: p})
	if err != nil {
		if _, _, ok := oidc.IsOAuthError(err); ok {
			return oauthPage(err), nil
		}
		return nil, err
	}
	out := found(http.StatusFound, res.Redirect)
	if res.SignedOut {
		out.SignOut(s.Cookies)
	}
	return out, nil
}

func (s *API) oauthEndSessionPost(ctx context.Context, in *EndSessionPostInput) (*RedirectJSONOutput, error) {
	b, params := in.Body, url.Values{}
	for k, v := range map[string]string{"id_token_hint": b.IDTokenHint, "client_id": b.ClientID, "post_logout_redirect_uri": b.PostLogoutRedirectURI,
		"state": b.State, "logout_hint": b.LogoutHint, "ui_locales": b.UILocales} {
		if v != "" {
			params.Set(k, v)
		}
	}
	p, err := s.optionalPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.OAuthProvider.EndSession(ctx, oidc.EndSession{Params: params, Principal: p, Confirmed: true})
	if err != nil {
		return nil, err
	}
	out := redirectJSON(res.Redirect)
	if res.SignedOut {
		out.SignOut(s.Cookies)
	}
	return out, nil
}

// readForm reads a form-encoded request body. A missing or other content
// type, or a malformed body, is invalid_request.
func readForm(r *http.Request) (url.Values, error) {
	if !edge.IsFormBody(r) {
		return nil, edge.OAuthErr("invalid_request", "The body must be application/x-www-form-urlencoded.")
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, edge.OAuthErr("invalid_request", "The body is too large.")
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, edge.OAuthErr("invalid_request", "The body is not a valid form.")
	}
	return form, nil
}
