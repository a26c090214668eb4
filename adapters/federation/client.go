package federation

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.FederationClient = (*Client)(nil)

// Client implements ports.FederationClient. It is safe for concurrent use;
// one Client serves every provider and keeps their discovery documents and
// key sets.
type Client struct {
	http  *http.Client
	clock ports.Clock

	mu        sync.Mutex
	providers map[providerKey]*provider

	verifications atomic.Uint64
	fetches       atomic.Uint64
}

// NewClient returns a Client making its upstream calls with httpClient's
// transport (http.DefaultTransport when httpClient is nil or has none) and
// telling the time with clock (the wall clock when nil). The client never
// follows redirects and keeps no cookies, whatever httpClient does.
func NewClient(httpClient *http.Client, clock ports.Clock) *Client {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if httpClient != nil {
		hc.Transport, hc.Timeout = httpClient.Transport, httpClient.Timeout
	}
	if clock == nil {
		clock = wallClock{}
	}
	return &Client{http: hc, clock: clock, providers: map[providerKey]*provider{}}
}

// KeySetStats returns how many ID tokens the client has verified (or tried
// to) and how many times it fetched a key set over HTTP, since it was made:
// 1 - fetches/verifications is the key set cache's hit rate.
func (c *Client) KeySetStats() (verifications, fetches uint64) {
	return c.verifications.Load(), c.fetches.Load()
}

// wallClock is the clock when none is given, at the precision of
// ports.Clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Metadata implements ports.FederationClient.
func (c *Client) Metadata(ctx context.Context, p ports.UpstreamProvider) (ports.UpstreamMetadata, error) {
	if !p.Provider.Preset.IsOIDC() {
		return ports.UpstreamMetadata{AuthorizationEndpoint: p.Provider.Endpoints.Authorization}, nil
	}
	d, err := c.discover(ctx, p.Provider)
	if err != nil {
		return ports.UpstreamMetadata{}, err
	}
	return ports.UpstreamMetadata{Issuer: d.issuer, IssuerInResponse: d.issInResponse, AuthorizationEndpoint: d.authorization}, nil
}

// AuthorizationURL implements ports.FederationClient. A query already on
// the configured authorization endpoint is kept; the parameters of the
// request replace any of the same name. GitHub takes its login hint as
// login, not login_hint, and no nonce.
func (c *Client) AuthorizationURL(ctx context.Context, p ports.UpstreamProvider, a ports.UpstreamAuthorization) (string, error) {
	if a.State == "" || a.Verifier == "" {
		// A programming error, not the provider's: never send a request
		// without its state or its PKCE challenge.
		return "", domain.Internal("federation: authorization URL", errors.New("no state or no PKCE verifier"))
	}
	isOIDC := p.Provider.Preset.IsOIDC()
	endpoint := p.Provider.Endpoints.Authorization
	if isOIDC {
		d, err := c.discover(ctx, p.Provider)
		if err != nil {
			return "", err
		}
		endpoint = d.authorization
	}
	u, err := url.Parse(endpoint)
	if err != nil || endpoint == "" {
		return "", fail(domain.ErrUpstreamDiscovery, errors.New("authorization endpoint: not a URL"))
	}
	scopes := p.Provider.Scopes
	if len(a.Scopes) > 0 {
		scopes = a.Scopes
	}
	if isOIDC && !slices.Contains(scopes, "openid") {
		scopes = append([]string{"openid"}, scopes...)
	}
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", p.Provider.ClientID)
	q.Set("redirect_uri", a.RedirectURI)
	q.Set("scope", strings.Join(scopes, " "))
	q.Set("state", a.State)
	q.Set("code_challenge", s256(a.Verifier))
	q.Set("code_challenge_method", "S256")
	if isOIDC && a.Nonce != "" {
		q.Set("nonce", a.Nonce)
	}
	if a.LoginHint != "" {
		if isOIDC {
			q.Set("login_hint", a.LoginHint)
		} else {
			q.Set("login", a.LoginHint)
		}
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// s256 is the PKCE S256 challenge of verifier (RFC 7636 §4.2).
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Exchange implements ports.FederationClient.
func (c *Client) Exchange(ctx context.Context, p ports.UpstreamProvider, code, verifier, redirectURI, nonce string) (ports.UpstreamIdentity, ports.UpstreamTokens, error) {
	if verifier == "" {
		return ports.UpstreamIdentity{}, ports.UpstreamTokens{}, domain.Internal("federation: exchange", errors.New("no PKCE verifier"))
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {redirectURI},
		"code_verifier": {verifier},
	}
	if !p.Provider.Preset.IsOIDC() {
		tok, err := c.token(ctx, p, p.Provider.Endpoints.Token, nil, form, domain.ErrUpstreamCode)
		if err != nil {
			return ports.UpstreamIdentity{}, ports.UpstreamTokens{}, err
		}
		id, err := c.github(ctx, p.Provider, tok.AccessToken)
		return id, tok, err
	}
	d, err := c.discover(ctx, p.Provider)
	if err != nil {
		return ports.UpstreamIdentity{}, ports.UpstreamTokens{}, err
	}
	tok, err := c.token(ctx, p, d.token, d.authMethods, form, domain.ErrUpstreamCode)
	if err != nil {
		return ports.UpstreamIdentity{}, ports.UpstreamTokens{}, err
	}
	if tok.IDToken == "" {
		return ports.UpstreamIdentity{}, ports.UpstreamTokens{}, fail(domain.ErrUpstreamIDToken, errors.New("the token response has no ID token"))
	}
	if nonce == "" {
		// The sign-in always sends a nonce; an exchange without one to
		// check would accept a replayed ID token.
		return ports.UpstreamIdentity{}, ports.UpstreamTokens{}, fail(domain.ErrUpstreamIDToken, errors.New("no nonce to check the ID token against"))
	}
	claims, err := c.verifyIDToken(ctx, p.Provider, d, tok.IDToken, nonce, tok.AccessToken)
	if err != nil {
		return ports.UpstreamIdentity{}, ports.UpstreamTokens{}, err
	}
	id, err := c.oidcIdentity(ctx, p.Provider, d, claims, tok.AccessToken)
	return id, tok, err
}

// VerifyIDToken implements ports.FederationClient.
func (c *Client) VerifyIDToken(ctx context.Context, p ports.UpstreamProvider, rawIDToken, nonce string) (ports.UpstreamIdentity, error) {
	if !p.Provider.Preset.IsOIDC() {
		return ports.UpstreamIdentity{}, fail(domain.ErrUpstreamIDToken, errors.New("the provider issues no ID tokens"))
	}
	d, err := c.discover(ctx, p.Provider)
	if err != nil {
		return ports.UpstreamIdentity{}, err
	}
	claims, err := c.verifyIDToken(ctx, p.Provider, d, rawIDToken, nonce, "")
	if err != nil {
		return ports.UpstreamIdentity{}, err
	}
	id := identityFromClaims(claims)
	preferredUsernameFallback(p.Provider.Preset, &id, claims)
	id.Profile = claims
	return id, nil
}

// Refresh implements ports.FederationClient. An ID token the refresh
// returns is verified (nonce aside) before it is handed on.
func (c *Client) Refresh(ctx context.Context, p ports.UpstreamProvider, refreshToken string) (ports.UpstreamTokens, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}}
	if !p.Provider.Preset.IsOIDC() {
		return c.token(ctx, p, p.Provider.Endpoints.Token, nil, form, domain.ErrUpstreamRefresh)
	}
	d, err := c.discover(ctx, p.Provider)
	if err != nil {
		return ports.UpstreamTokens{}, err
	}
	tok, err := c.token(ctx, p, d.token, d.authMethods, form, domain.ErrUpstreamRefresh)
	if err != nil {
		return ports.UpstreamTokens{}, err
	}
	if tok.IDToken != "" {
		if _, err := c.verifyIDToken(ctx, p.Provider, d, tok.IDToken, "", tok.AccessToken); err != nil {
			return ports.UpstreamTokens{}, err
		}
	}
	return tok, nil
}

// UserInfo implements ports.FederationClient.
func (c *Client) UserInfo(ctx context.Context, p ports.UpstreamProvider, accessToken string) (ports.UpstreamIdentity, error) {
	if !p.Provider.Preset.IsOIDC() {
		return c.github(ctx, p.Provider, accessToken)
	}
	d, err := c.discover(ctx, p.Provider)
	if err != nil {
		return ports.UpstreamIdentity{}, err
	}
	if d.userinfo == "" {
		return ports.UpstreamIdentity{}, fail(domain.ErrUpstreamUserInfo, errors.New("the provider has no userinfo endpoint"))
	}
	info, err := c.userInfo(ctx, d.userinfo, accessToken)
	if err != nil {
		return ports.UpstreamIdentity{}, err
	}
	id := identityFromClaims(info)
	if err := domain.CheckSubject(id.Subject); err != nil {
		return ports.UpstreamIdentity{}, fail(domain.ErrUpstreamUserInfo, errors.New("userinfo: no usable sub"))
	}
	preferredUsernameFallback(p.Provider.Preset, &id, info)
	id.Profile = info
	return id, nil
}
