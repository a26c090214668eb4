package bootstrap

import (
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/application/command"
)

// FrameworkBasePath is where the authentication framework is mounted; the
// issuer is the base URL followed by it.
const FrameworkBasePath = "/api/auth"

// Issuer is the OpenID Connect issuer: the base URL with the framework's
// base path, no trailing slash. Every discovery document and token carries
// exactly this string.
func (c Config) Issuer() string { return c.BaseURL + FrameworkBasePath }

// loadTokens reads the settings of signed tokens and the OpenID provider.
// The defaults follow the base URL; when it is wrong they stay empty and
// are not checked.
func (c *Config) loadTokens(get func(string) string, p *problems) {
	base := c.BaseURL != ""
	c.JWTIssuer = get("GATEHOUSE_JWT_ISSUER")
	if c.JWTIssuer == "" && base {
		c.JWTIssuer = c.Issuer()
	}
	c.JWTAudience = splitList(get("GATEHOUSE_JWT_AUDIENCE"))
	if len(c.JWTAudience) == 0 && base {
		c.JWTAudience = []string{c.BaseURL}
	}
	// Access tokens and framework tokens carry the same user as sub and
	// are published in one key set, so their audiences must differ: an API
	// that accepts one must never accept the other.
	c.AccessTokenAudience = get("GATEHOUSE_OAUTH_ACCESS_TOKEN_AUDIENCE")
	if c.AccessTokenAudience == "" && base {
		c.AccessTokenAudience = c.Issuer()
	}
	if c.AccessTokenAudience != "" && slices.Contains(c.JWTAudience, c.AccessTokenAudience) {
		p.add("GATEHOUSE_OAUTH_ACCESS_TOKEN_AUDIENCE", "must differ from every GATEHOUSE_JWT_AUDIENCE: an API accepting framework tokens would accept access tokens too")
	}
	for _, s := range []struct{ env, v string }{{"GATEHOUSE_JWT_ISSUER", c.JWTIssuer}, {"GATEHOUSE_OAUTH_ACCESS_TOKEN_AUDIENCE", c.AccessTokenAudience}} {
		if s.v == "" || p.has(s.env) {
			continue
		}
		if u, err := url.Parse(s.v); err != nil || u.Scheme == "" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			p.add(s.env, "must be an absolute URL without query or fragment")
		}
	}
	durations := []struct {
		env      string
		dst      *time.Duration
		min, max time.Duration
	}{
		{"GATEHOUSE_JWT_LIFETIME", &c.JWTLifetime, 10 * time.Second, 24 * time.Hour},
		{"GATEHOUSE_OAUTH_CODE_LIFETIME", &c.CodeLifetime, time.Second, 10 * time.Minute},
		{"GATEHOUSE_OAUTH_ACCESS_TOKEN_LIFETIME", &c.AccessTokenLifetime, time.Second, 24 * time.Hour},
		{"GATEHOUSE_OAUTH_ID_TOKEN_LIFETIME", &c.IDTokenLifetime, time.Second, 24 * time.Hour},
		{"GATEHOUSE_OAUTH_REFRESH_TOKEN_LIFETIME", &c.RefreshTokenLifetime, time.Minute, 365 * 24 * time.Hour},
		// At most the key set's max-age: an instance that missed a rotation
		// must follow it before clients refetch the key set.
		{"GATEHOUSE_SIGNING_KEY_RELOAD_INTERVAL", &c.SigningKeyReloadInterval, time.Second, jwksMaxAge},
	}
	for _, d := range durations {
		v, err := time.ParseDuration(get(d.env))
		if err != nil || v < d.min || v > d.max {
			p.add(d.env, fmt.Sprintf("must be a duration from %s to %s, such as 15m", d.min, d.max))
			continue
		}
		*d.dst = v
	}
}

// jwksMaxAge is how long clients may cache the key set.
const jwksMaxAge = 5 * time.Minute

func tokenSettings(c Config) command.TokenSettings {
	return command.TokenSettings{
		Issuer: c.Issuer(), BaseURL: c.BaseURL, Secrets: c.Secrets,
		JWTIssuer: c.JWTIssuer, JWTAudience: c.JWTAudience, JWTLifetime: c.JWTLifetime,
		CodeLifetime: c.CodeLifetime, AccessTokenLifetime: c.AccessTokenLifetime, IDTokenLifetime: c.IDTokenLifetime,
		RefreshTokenLifetime: c.RefreshTokenLifetime, AccessTokenAudience: c.AccessTokenAudience, JWKSMaxAge: jwksMaxAge,
		KeyReloadInterval: c.SigningKeyReloadInterval,
	}
}
