package federation

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// How long discovery is trusted.
const (
	// discoveryTTL is how long a discovery document is used before it is
	// read again; should the provider then not answer, the old one serves
	// on.
	discoveryTTL = time.Hour
	// discoveryBackoff is how long a failed discovery is remembered: the
	// requests in between fail at once instead of each waiting for a
	// provider that is down.
	discoveryBackoff = 10 * time.Second
)

// asymmetricAlgs are the ID token algorithms ever accepted: never none,
// never an HMAC (whose key, the client secret, we hold too).
var asymmetricAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// providerKey names a cache entry: everything discovery depends on, so an
// updated provider is discovered again.
type providerKey struct {
	id                                   domain.IdentityProviderID
	issuer                               string
	authorization, token, userinfo, jwks string
}

// provider is the cache entry of one provider. Its mutex makes concurrent
// requests wait for one discovery instead of each making its own.
type provider struct {
	mu        sync.Mutex
	doc       *discovered // nil until a discovery succeeds
	fetchedAt time.Time
	err       error
	failedAt  time.Time
}

// discovered is what discovery (with the provider's overrides) says.
type discovered struct {
	issuer                               string
	authorization, token, userinfo, jwks string
	algs                                 []string
	authMethods                          []string
	issInResponse                        bool
	keys                                 *keySet
}

// discoveryDocument is the part of an OpenID Provider's metadata the client
// reads.
type discoveryDocument struct {
	Issuer        string   `json:"issuer"`
	Authorization string   `json:"authorization_endpoint"`
	Token         string   `json:"token_endpoint"`
	UserInfo      string   `json:"userinfo_endpoint"`
	JWKS          string   `json:"jwks_uri"`
	Algs          []string `json:"id_token_signing_alg_values_supported"`
	AuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
	IssInResponse bool     `json:"authorization_response_iss_parameter_supported"`
}

// discover returns p's discovery, from the cache when it is fresh.
func (c *Client) discover(ctx context.Context, p domain.IdentityProvider) (*discovered, error) {
	e := c.entry(p)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := c.clock.Now()
	if e.doc != nil && now.Sub(e.fetchedAt) < discoveryTTL {
		return e.doc, nil
	}
	if e.err != nil && now.Sub(e.failedAt) < discoveryBackoff {
		if e.doc != nil {
			return e.doc, nil
		}
		return nil, e.err
	}
	d, err := c.fetchDiscovery(ctx, p)
	if err != nil {
		e.err, e.failedAt = err, now
		if e.doc != nil {
			return e.doc, nil
		}
		return nil, err
	}
	if e.doc != nil && e.doc.jwks == d.jwks {
		d.keys = e.doc.keys
	} else {
		d.keys = &keySet{c: c, url: d.jwks}
	}
	e.doc, e.fetchedAt, e.err = d, now, nil
	return d, nil
}

// entry returns p's cache entry, making it (and dropping the entries of
// p's earlier versions) when there is none.
func (c *Client) entry(p domain.IdentityProvider) *provider {
	o := p.Endpoints
	k := providerKey{id: p.ID, issuer: p.Issuer, authorization: o.Authorization, token: o.Token, userinfo: o.UserInfo, jwks: o.JWKS}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.providers[k]
	if e == nil {
		for old := range c.providers {
			if old.id == p.ID {
				delete(c.providers, old)
			}
		}
		e = &provider{}
		c.providers[k] = e
	}
	return e
}

// fetchDiscovery reads p's discovery document and applies p's overrides.
func (c *Client) fetchDiscovery(ctx context.Context, p domain.IdentityProvider) (*discovered, error) {
	bad := func(format string, args ...any) error {
		return fail(domain.ErrUpstreamDiscovery, fmt.Errorf("discovery of provider %q: "+format, append([]any{p.ID}, args...)...))
	}
	if p.Issuer == "" {
		return nil, bad("no issuer")
	}
	// OpenID Connect Discovery §4: a trailing "/" of the issuer is removed
	// before the well-known path is appended.
	req, err := get(strings.TrimSuffix(p.Issuer, "/")+"/.well-known/openid-configuration", "application/json", "")
	if err != nil {
		return nil, bad("%v", err)
	}
	resp, err := c.send(ctx, req, domain.ErrUpstreamDiscovery, "discovery")
	if err != nil {
		return nil, err
	}
	if !resp.ok() {
		return nil, bad("status %d", resp.status)
	}
	var doc discoveryDocument
	if err := json.Unmarshal(resp.body, &doc); err != nil {
		return nil, bad("not a JSON document: %v", err)
	}
	// OpenID Connect Discovery §4.3: the issuer must be the one asked for,
	// exactly, or another provider could stand in for this one.
	if doc.Issuer != p.Issuer {
		return nil, bad("the document names issuer %q, not the configured %q", doc.Issuer, p.Issuer)
	}
	o := p.Endpoints
	d := &discovered{
		issuer:        doc.Issuer,
		authorization: override(o.Authorization, doc.Authorization),
		token:         override(o.Token, doc.Token),
		userinfo:      override(o.UserInfo, doc.UserInfo),
		jwks:          override(o.JWKS, doc.JWKS),
		authMethods:   doc.AuthMethods,
		issInResponse: doc.IssInResponse,
	}
	for _, e := range []struct{ name, url string }{
		{"authorization_endpoint", d.authorization}, {"token_endpoint", d.token}, {"jwks_uri", d.jwks}, {"userinfo_endpoint", d.userinfo},
	} {
		if e.url == "" && e.name != "userinfo_endpoint" {
			return nil, bad("no %s", e.name)
		}
		if e.url != "" {
			if err := checkEndpoint(e.url); err != nil {
				return nil, bad("%s: %v", e.name, err)
			}
		}
	}
	for _, alg := range doc.Algs {
		if slices.Contains(asymmetricAlgs, alg) && !slices.Contains(d.algs, alg) {
			d.algs = append(d.algs, alg)
		}
	}
	if len(d.algs) == 0 {
		// OpenID Connect Core §15.1: RS256 is the one every provider must
		// support.
		d.algs = []string{"RS256"}
	}
	return d, nil
}

// override returns configured when it is set, else discovered.
func override(configured, discovered string) string {
	if configured != "" {
		return configured
	}
	return discovered
}
