package federation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// tokenResponse is a token endpoint's answer (RFC 6749 §5.1 and §5.2).
// refresh_token_expires_in is GitHub's.
type tokenResponse struct {
	AccessToken           string  `json:"access_token"`
	RefreshToken          string  `json:"refresh_token"`
	IDToken               string  `json:"id_token"`
	ExpiresIn             seconds `json:"expires_in"`
	RefreshTokenExpiresIn seconds `json:"refresh_token_expires_in"`
	Scope                 string  `json:"scope"`
	Error                 string  `json:"error"`
}

// seconds is a lifetime in seconds, sent as a number or (by some
// providers) a string of digits. Anything else, or a lifetime beyond
// maxLifetime, is unknown (0), not an error: a token is not refused for a
// strange lifetime.
type seconds int64

// maxLifetime bounds a lifetime a provider may announce.
const maxLifetime = 10 * 365 * 24 * 60 * 60

// UnmarshalJSON implements json.Unmarshaler.
func (s *seconds) UnmarshalJSON(b []byte) error {
	*s = 0
	text := strings.Trim(string(b), `"`)
	if n, err := strconv.ParseFloat(text, 64); err == nil && n > 0 && n <= maxLifetime {
		*s = seconds(n)
	}
	return nil
}

// token posts form to p's token endpoint, authenticated with its client
// secret, and returns the tokens. An answer that is not a success (an
// error, a redirect, no access token, nonsense) is refused.
// client_secret_basic is used unless discovery's authMethods lack it and
// list client_secret_post; GitHub always takes client_secret_post.
func (c *Client) token(ctx context.Context, p ports.UpstreamProvider, endpoint string, authMethods []string, form url.Values, refused *domain.Error) (ports.UpstreamTokens, error) {
	if endpoint == "" {
		return ports.UpstreamTokens{}, fail(domain.ErrUpstreamDiscovery, errors.New("no token endpoint"))
	}
	github := !p.Provider.Preset.IsOIDC()
	post := github || (len(authMethods) > 0 && !slices.Contains(authMethods, "client_secret_basic") && slices.Contains(authMethods, "client_secret_post"))
	form = maps.Clone(form)
	if post {
		form.Set("client_id", p.Provider.ClientID)
		form.Set("client_secret", p.ClientSecret)
	}
	req, err := postForm(endpoint, form)
	if err != nil {
		return ports.UpstreamTokens{}, fail(domain.ErrUpstreamDiscovery, fmt.Errorf("token endpoint: %w", err))
	}
	if !post {
		req.Header.Set("Authorization", basicAuth(p.Provider.ClientID, p.ClientSecret))
	}
	resp, err := c.send(ctx, req, refused, "token endpoint")
	if err != nil {
		return ports.UpstreamTokens{}, err
	}
	var tr tokenResponse
	switch resp.mediaType() {
	case "application/x-www-form-urlencoded", "text/plain":
		// GitHub's answer when not asked for JSON.
		q, err := url.ParseQuery(string(resp.body))
		if err != nil {
			return ports.UpstreamTokens{}, fail(refused, fmt.Errorf("token endpoint: status %d, not a form", resp.status))
		}
		tr = tokenResponse{AccessToken: q.Get("access_token"), RefreshToken: q.Get("refresh_token"), IDToken: q.Get("id_token"), Scope: q.Get("scope"), Error: q.Get("error")}
		_ = tr.ExpiresIn.UnmarshalJSON([]byte(q.Get("expires_in")))
		_ = tr.RefreshTokenExpiresIn.UnmarshalJSON([]byte(q.Get("refresh_token_expires_in")))
	default:
		if err := json.Unmarshal(resp.body, &tr); err != nil {
			return ports.UpstreamTokens{}, fail(refused, fmt.Errorf("token endpoint: status %d, not a JSON object", resp.status))
		}
	}
	switch {
	case tr.Error != "":
		// GitHub says so with a 200.
		return ports.UpstreamTokens{}, fail(refused, fmt.Errorf("token endpoint: status %d, error %q", resp.status, truncate(tr.Error, 64)))
	case !resp.ok():
		return ports.UpstreamTokens{}, fail(refused, fmt.Errorf("token endpoint: status %d", resp.status))
	case tr.AccessToken == "":
		return ports.UpstreamTokens{}, fail(refused, errors.New("token endpoint: no access_token"))
	}
	now := c.clock.Now()
	t := ports.UpstreamTokens{AccessToken: tr.AccessToken, RefreshToken: tr.RefreshToken, IDToken: tr.IDToken}
	if tr.ExpiresIn > 0 {
		t.AccessTokenExpiresAt = now.Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	if tr.RefreshTokenExpiresIn > 0 {
		t.RefreshTokenExpiresAt = now.Add(time.Duration(tr.RefreshTokenExpiresIn) * time.Second)
	}
	sep := func(r rune) bool { return r == ' ' || (github && r == ',') } // GitHub separates with commas
	for _, sc := range strings.FieldsFunc(tr.Scope, sep) {
		if isScopeToken(sc) && !slices.Contains(t.Scopes, sc) {
			t.Scopes = append(t.Scopes, sc)
		}
	}
	if len(t.Scopes) == 0 {
		t.Scopes = slices.Clone(p.Provider.Scopes)
	}
	return t, nil
}

// isScopeToken reports whether s is an RFC 6749 §3.3 scope-token of at
// most 256 bytes (%x21 / %x23-5B / %x5D-7E): anything else a provider
// grants is dropped, not stored and listed (a NUL byte was refused by
// PostgreSQL and served back by the other stores).
func isScopeToken(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// truncate cuts s to at most n bytes, for a provider's word in a log.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
