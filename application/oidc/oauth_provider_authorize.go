package oidc

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// authRequest is a validated authorization request.
type authRequest struct {
	client      domain.OAuthClient
	redirectURI string
	state       string
	scopes      []string
	nonce       string
	challenge   string
	prompt      []string
	maxAge      time.Duration // < 0 when absent
	acrValues   []string      // the known classes of acr_values, in the client's order of preference
	params      url.Values
}

// errorRedirect is an error the client learns through its redirect URI.
type errorRedirect struct{ err *domain.Error }

func (e errorRedirect) Error() string { return e.err.Error() }

// authorizationClient checks client_id and redirect_uri, the two errors
// that must not redirect (RFC 6749 §4.1.2.1): an unknown client or an
// unregistered redirect URI is shown to the person, never sent anywhere.
func (p *OAuthProvider) authorizationClient(ctx context.Context, params url.Values) (domain.OAuthClient, string, error) {
	id := params.Get("client_id")
	if id == "" || len(params["client_id"]) > 1 || len(id) > 256 {
		return domain.OAuthClient{}, "", oauthError("invalid_request", "The request has no valid client_id.")
	}
	client, err := p.clients.Get(ctx, domain.OAuthClientID(id))
	if errors.Is(err, domain.ErrNotFound) {
		return domain.OAuthClient{}, "", oauthError("invalid_request", "No client has this client_id.")
	}
	if err != nil {
		return domain.OAuthClient{}, "", err
	}
	uri := params.Get("redirect_uri")
	if uri == "" || len(params["redirect_uri"]) > 1 {
		return domain.OAuthClient{}, "", oauthError("invalid_request", "The request has no redirect_uri.")
	}
	if !slices.Contains(client.RedirectURIs, uri) {
		return domain.OAuthClient{}, "", oauthError("invalid_request", "The redirect_uri is not registered for this client.")
	}
	return client, uri, nil
}

// authorizationRequest validates every parameter. Its error is either an
// error for the person (client or redirect URI) or an errorRedirect.
func (p *OAuthProvider) authorizationRequest(ctx context.Context, params url.Values) (*authRequest, error) {
	client, uri, err := p.authorizationClient(ctx, params)
	if err != nil {
		return nil, err
	}
	req := &authRequest{client: client, redirectURI: uri, state: params.Get("state"), nonce: params.Get("nonce"), maxAge: -1, params: params}
	fail := func(code, desc string) (*authRequest, error) { return req, errorRedirect{oauthError(code, desc)} }
	for k, v := range params {
		if len(v) > 1 {
			return fail("invalid_request", "The parameter "+quoteSafe(k)+" is repeated.")
		}
	}
	switch {
	case len(req.state) > 2048:
		return fail("invalid_request", "state is too long.")
	case len(req.nonce) > 512:
		return fail("invalid_request", "nonce is too long.")
	case params.Has("request"):
		return fail("request_not_supported", "Request objects are not supported.")
	case params.Has("request_uri"):
		return fail("request_uri_not_supported", "request_uri is not supported.")
	case params.Get("response_type") == "":
		return fail("invalid_request", "response_type is required.")
	case params.Get("response_type") != "code":
		return fail("unsupported_response_type", "Only the response_type code is supported.")
	case params.Has("response_mode") && params.Get("response_mode") != "query":
		return fail("invalid_request", "Only the response_mode query is supported.")
	}
	if req.scopes, err = parseScope(params.Get("scope")); err != nil {
		var de *domain.Error
		errors.As(err, &de)
		return req, errorRedirect{de}
	}
	if len(req.scopes) == 0 {
		return fail("invalid_scope", "scope is required.")
	}
	method, challenge := params.Get("code_challenge_method"), params.Get("code_challenge")
	switch {
	case challenge == "" && method != "":
		return fail("invalid_request", "code_challenge_method without code_challenge.")
	case challenge == "":
		// PKCE for every client, confidential ones too (OAuth 2.1, ASVS
		// V10.4.6): it is what binds a code to the client that asked for it.
		return fail("invalid_request", "PKCE is required: send code_challenge with code_challenge_method S256.")
	case challenge != "" && method != "S256":
		return fail("invalid_request", "code_challenge_method must be S256; plain is not supported.")
	case challenge != "" && !isChallenge(challenge):
		return fail("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters).")
	}
	req.challenge = challenge
	if raw := params.Get("prompt"); raw != "" {
		for v := range strings.SplitSeq(raw, " ") {
			switch v {
			case "":
			case "none", "login", "consent", "select_account":
				req.prompt = append(req.prompt, v)
			default:
				return fail("invalid_request", "prompt "+quoteSafe(v)+" is not supported.")
			}
		}
		if slices.Contains(req.prompt, "none") && len(req.prompt) > 1 {
			return fail("invalid_request", "prompt none cannot be combined with other values.")
		}
	}
	if raw := params.Get("max_age"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 32)
		if err != nil || n < 0 {
			return fail("invalid_request", "max_age must be a non-negative number of seconds.")
		}
		req.maxAge = time.Duration(n) * time.Second
	}
	if raw := params.Get("acr_values"); raw != "" {
		if len(raw) > 1024 {
			return fail("invalid_request", "acr_values is too long.")
		}
		// Unknown classes are ignored (OpenID Connect Core §3.1.2.1: the
		// request is voluntary; the ID token's acr says what was met).
		for v := range strings.SplitSeq(raw, " ") {
			if domain.KnownACR(v) && !slices.Contains(req.acrValues, v) {
				req.acrValues = append(req.acrValues, v)
			}
		}
	}
	return req, nil
}

// isChallenge reports whether s has the shape of an S256 challenge.
func isChallenge(s string) bool {
	if len(s) != 43 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Authorize handles an authorization request (GET or POST
// /oauth2/authorize) for the signed-in principal (nil when nobody is). It
// returns where to send the browser: the sign-in page, the consent page, or
// the client's redirect URI with a code or an error. An error return is
// for the person (an unknown client or an unregistered redirect URI) and
// must not redirect.
func (p *OAuthProvider) Authorize(ctx context.Context, params url.Values, principal *usecase.Principal) (string, error) {
	req, err := p.authorizationRequest(ctx, params)
	if err != nil {
		return p.redirectError(req, err)
	}
	now := p.clock.Now()
	hasPrompt := func(v string) bool { return slices.Contains(req.prompt, v) }
	stale := principal != nil && req.maxAge >= 0 && now.Sub(principal.Session.CreatedAt()) > req.maxAge
	if principal == nil || hasPrompt("login") || stale {
		if hasPrompt("none") {
			return p.errorTo(req, oauthError("login_required", "The user is not signed in.")), nil
		}
		return p.signInURL(params), nil
	}
	if p.needsStepUp(req, principal) {
		if hasPrompt("none") {
			return p.errorTo(req, oauthError("interaction_required", "The session does not meet the requested acr_values.")), nil
		}
		return p.stepUpURL(params), nil
	}
	// First-party clients skip the consent page unless the request asks
	// for it (prompt=consent, OpenID Connect Core §3.1.2.1).
	if !req.client.FirstParty || hasPrompt("consent") {
		consented, err := p.consented(ctx, principal.User.ID(), req)
		if err != nil {
			return "", err
		}
		if !consented || hasPrompt("consent") {
			if hasPrompt("none") {
				return p.errorTo(req, oauthError("consent_required", "The user has not consented to this client.")), nil
			}
			return p.settings.BaseURL + "/consent?" + params.Encode(), nil
		}
	}
	return p.issueCode(ctx, req, principal)
}

// consented reports whether the user's stored consent covers the request.
func (p *OAuthProvider) consented(ctx context.Context, user domain.UserID, req *authRequest) (bool, error) {
	c, err := p.grants.GetConsent(ctx, user, req.client.ID)
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return covers(c.Scopes, req.scopes), nil
}

// needsStepUp reports whether the session must prove a second factor
// before a code is issued: acr_values lists the classes the client wants,
// most preferred first, and the first that the session meets or that the
// hosted pages can bring it to decides. A session that meets it goes on;
// the multi-factor class for a user with a second factor sends them to the
// second-factor page. A class the user cannot reach there (no second
// factor, or phishing-resistant, which only a passkey sign-in gives) is
// passed over; when none is left the code is issued anyway and the ID
// token's acr says what was met (OpenID Connect Core §3.1.2.1: acr_values
// is a voluntary request, and the client checks acr).
func (p *OAuthProvider) needsStepUp(req *authRequest, principal *usecase.Principal) bool {
	auth := principal.Session.Authentication()
	for _, v := range req.acrValues {
		if auth.Meets(v) {
			return false
		}
		if v == domain.ACRMultiFactor && principal.User.TwoFactorEnabled() {
			return true
		}
	}
	return false
}

// stepUpURL is the hosted second-factor page, for the signed-in session,
// returning to this request.
func (p *OAuthProvider) stepUpURL(params url.Values) string {
	return p.settings.BaseURL + "/two-factor?callbackURL=" + url.QueryEscape("/api/auth/oauth2/authorize?"+params.Encode())
}

// signInURL is the hosted sign-in page, returning to this request without
// prompt=login and max_age: the sign-in satisfies both, and asking again
// would loop (max_age=0 is never met by a session, however new).
func (p *OAuthProvider) signInURL(params url.Values) string {
	back := url.Values{}
	for k, v := range params {
		back[k] = slices.Clone(v)
	}
	back.Del("max_age")
	if prompt := params.Get("prompt"); prompt != "" {
		var keep []string
		for v := range strings.SplitSeq(prompt, " ") {
			if v != "login" && v != "" {
				keep = append(keep, v)
			}
		}
		if len(keep) == 0 {
			back.Del("prompt")
		} else {
			back.Set("prompt", strings.Join(keep, " "))
		}
	}
	return p.settings.BaseURL + "/sign-in?callbackURL=" + url.QueryEscape("/api/auth/oauth2/authorize?"+back.Encode())
}

// redirectError turns a validation error into the browser's next stop.
func (p *OAuthProvider) redirectError(req *authRequest, err error) (string, error) {
	var er errorRedirect
	if errors.As(err, &er) {
		return p.errorTo(req, er.err), nil
	}
	return "", err
}

// errorTo is the client's redirect URI carrying an error (RFC 6749
// §4.1.2.1), the state and the issuer (RFC 9207).
func (p *OAuthProvider) errorTo(req *authRequest, err *domain.Error) string {
	q := url.Values{"error": {err.Code}, "iss": {p.settings.Issuer}}
	if err.Message != "" {
		q.Set("error_description", err.Message)
	}
	if req.state != "" {
		q.Set("state", req.state)
	}
	return appendQuery(req.redirectURI, q)
}

// appendQuery adds q to uri's query, keeping the query it has.
func appendQuery(uri string, q url.Values) string {
	sep := "?"
	if strings.Contains(uri, "?") {
		sep = "&"
	}
	return uri + sep + q.Encode()
}

// issueCode stores a one-time code and returns the redirect carrying it.
func (p *OAuthProvider) issueCode(ctx context.Context, req *authRequest, principal *usecase.Principal) (string, error) {
	now := p.clock.Now()
	secret := p.tokens.NewSecret(43)
	auth := principal.Session.Authentication()
	code := domain.AuthorizationCode{
		Hash: domain.HashToken(secret), ClientID: req.client.ID, UserID: principal.User.ID(), RedirectURI: req.redirectURI,
		Scopes: req.scopes, Nonce: req.nonce, AuthTime: principal.Session.CreatedAt(), AMR: auth.Methods, ACR: auth.ACR(),
		CreatedAt: now, ExpiresAt: now.Add(p.codeLifetime()),
	}
	if req.challenge != "" {
		code.CodeChallenge, code.CodeChallengeMethod = req.challenge, "S256"
	}
	if err := p.grants.CreateCode(ctx, code); err != nil {
		return "", err
	}
	q := url.Values{"code": {secret}, "iss": {p.settings.Issuer}}
	if req.state != "" {
		q.Set("state", req.state)
	}
	return appendQuery(req.redirectURI, q), nil
}

func (p *OAuthProvider) codeLifetime() time.Duration {
	if d := p.settings.CodeLifetime; d > 0 && d <= 10*time.Minute {
		return d
	}
	return time.Minute
}

// ConsentDecision is the person's answer on the consent page.
type ConsentDecision struct {
	Principal usecase.Principal
	Accept    bool
	// Query is the authorization request's query string, as the consent
	// page received it.
	Query string
}

// Consent records (or refuses) consent for an authorization request and
// returns where to send the browser: the client's redirect URI with a code,
// or with access_denied. The request is validated again as a whole.
func (p *OAuthProvider) Consent(ctx context.Context, d ConsentDecision) (string, error) {
	params, err := url.ParseQuery(strings.TrimPrefix(d.Query, "?"))
	if err != nil || len(d.Query) > 8192 {
		return "", oauthError("invalid_request", "oauth_query is not a valid query string.")
	}
	req, err := p.authorizationRequest(ctx, params)
	if err != nil {
		return p.redirectError(req, err)
	}
	if d.Principal.User == nil || d.Principal.Session == nil {
		return "", usecase.ErrUnauthorized
	}
	if !d.Accept {
		return p.errorTo(req, oauthError("access_denied", "The user denied the request.")), nil
	}
	if p.needsStepUp(req, &d.Principal) {
		return p.stepUpURL(params), nil
	}
	now := p.clock.Now()
	c := domain.Consent{UserID: d.Principal.User.ID(), ClientID: req.client.ID, Scopes: req.scopes, CreatedAt: now, UpdatedAt: now}
	prev, err := p.grants.GetConsent(ctx, c.UserID, c.ClientID)
	switch {
	case err == nil:
		c.Scopes, c.CreatedAt = union(prev.Scopes, req.scopes), prev.CreatedAt
	case !errors.Is(err, domain.ErrNotFound):
		return "", err
	}
	if err := p.grants.PutConsent(ctx, c); err != nil {
		return "", err
	}
	return p.issueCode(ctx, req, &d.Principal)
}
