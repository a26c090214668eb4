package oidc

import (
	"context"
	"errors"
	"net/url"
	"slices"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// logoutRequest is a validated end-session request (OpenID Connect
// RP-Initiated Logout 1.0 §2).
type logoutRequest struct {
	client *domain.OAuthClient
	// subject is the sub of a valid id_token_hint, or "".
	subject string
	// authTime is the hint's auth_time: the sign-in that the ID token was
	// issued for, which is the session's start.
	authTime    int64
	redirectURI string
	state       string
}

// logoutRequest validates id_token_hint, client_id and
// post_logout_redirect_uri. The hint is verified (an expired one is fine)
// and names the client by its aud; client_id, when also given, must agree.
// A post_logout_redirect_uri must be one the client registered, exactly.
func (p *OAuthProvider) logoutRequest(ctx context.Context, params url.Values) (*logoutRequest, error) {
	for k, v := range params {
		if len(v) > 1 {
			return nil, oauthError("invalid_request", "The parameter "+quoteSafe(k)+" is repeated.")
		}
	}
	req := &logoutRequest{state: params.Get("state"), redirectURI: params.Get("post_logout_redirect_uri")}
	if len(req.state) > 2048 {
		return nil, oauthError("invalid_request", "state is too long.")
	}
	clientID := params.Get("client_id")
	if hint := params.Get("id_token_hint"); hint != "" {
		claims, err := p.keys.Verify(ctx, hint, VerifyOptions{Alg: domain.AlgRS256, Type: "JWT", Issuer: p.settings.Issuer, IgnoreExpiry: true})
		if err != nil && domain.KindOf(err) != domain.KindUnauthenticated {
			return nil, err
		}
		if err != nil {
			return nil, oauthError("invalid_request", "id_token_hint is not an ID token this provider issued.")
		}
		aud := audiences(claims["aud"])
		sub, _ := claims["sub"].(string)
		if len(aud) == 0 || sub == "" {
			return nil, oauthError("invalid_request", "id_token_hint is not an ID token this provider issued.")
		}
		if clientID != "" && !slices.Contains(aud, clientID) {
			return nil, oauthError("invalid_request", "client_id does not match the id_token_hint.")
		}
		if clientID == "" {
			clientID = aud[0]
			if azp, _ := claims["azp"].(string); azp != "" {
				clientID = azp
			}
		}
		req.subject, req.authTime = sub, claimInt(claims["auth_time"])
	}
	if clientID != "" {
		c, err := p.clients.Get(ctx, domain.OAuthClientID(clientID))
		if errors.Is(err, domain.ErrNotFound) {
			return nil, oauthError("invalid_request", "No client has this client_id.")
		}
		if err != nil {
			return nil, err
		}
		req.client = &c
	}
	if req.redirectURI != "" && (req.client == nil || !slices.Contains(req.client.PostLogoutRedirectURIs, req.redirectURI)) {
		return nil, oauthError("invalid_request", "The post_logout_redirect_uri is not registered for this client.")
	}
	return req, nil
}

// audiences reads an aud claim: a string or a list of strings.
func audiences(v any) []string {
	switch a := v.(type) {
	case string:
		return []string{a}
	case []any:
		var out []string
		for _, x := range a {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return a
	}
	return nil
}

// EndSession is a request to the end-session endpoint.
type EndSession struct {
	Params url.Values
	// Principal is the signed-in session, or nil.
	Principal *usecase.Principal
	// Confirmed says the person confirmed on the hosted sign-out page (a
	// same-origin POST, guarded by the origin check).
	Confirmed bool
}

// EndSessionResult says where the browser goes next and whether the session
// (and so its cookies) ended.
type EndSessionResult struct {
	Redirect  string
	SignedOut bool
}

// EndSession handles RP-initiated logout. With a valid id_token_hint the
// session of the hint's user ends at once; without one, a GET leads to the
// hosted confirmation page and its confirming POST ends the session. An
// invalid hint, client or post_logout_redirect_uri is an error for the
// person (never a redirect).
func (p *OAuthProvider) EndSession(ctx context.Context, cmd EndSession) (EndSessionResult, error) {
	req, err := p.logoutRequest(ctx, cmd.Params)
	if err != nil {
		return EndSessionResult{}, err
	}
	var out EndSessionResult
	signedIn := cmd.Principal != nil && cmd.Principal.Session != nil
	switch {
	case req.subject != "" && signedIn && !cmd.Confirmed &&
		(string(cmd.Principal.User.ID()) != req.subject || cmd.Principal.Session.CreatedAt().Unix() != req.authTime):
		// The hint names someone else, or an earlier sign-in than this
		// session's (RP-Initiated Logout §2: ask when the token does not
		// belong to the current session): ask the person in front of the browser.
		return EndSessionResult{Redirect: p.settings.BaseURL + "/sign-out?" + cmd.Params.Encode()}, nil
	case req.subject == "" && !cmd.Confirmed:
		return EndSessionResult{Redirect: p.settings.BaseURL + "/sign-out?" + cmd.Params.Encode()}, nil
	}
	if signedIn {
		s := cmd.Principal.Session
		if err := usecase.IgnoreGone(p.revoker.Revoke(ctx, s)); err != nil {
			return EndSessionResult{}, err
		}
		out.SignedOut = true
	}
	if req.redirectURI == "" {
		out.Redirect = p.settings.BaseURL + "/sign-out?done=1"
		return out, nil
	}
	q := url.Values{}
	if req.state != "" {
		q.Set("state", req.state)
	}
	out.Redirect = req.redirectURI
	if len(q) > 0 {
		out.Redirect = appendQuery(req.redirectURI, q)
	}
	return out, nil
}
