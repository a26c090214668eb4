package bootstrap

import (
	"net/url"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
)

// FrameworkBasePath is where the authentication framework is mounted; the
// issuer is the base URL followed by it.
const FrameworkBasePath = "/api/auth"

// TokenConfig is the section of signed tokens and the OpenID provider.
type TokenConfig struct {
	JWTIssuer            string   // iss of framework tokens (default: Issuer())
	JWTAudience          []string // aud of framework tokens (default: the base URL)
	JWTLifetime          time.Duration
	CodeLifetime         time.Duration
	AccessTokenLifetime  time.Duration
	IDTokenLifetime      time.Duration
	RefreshTokenLifetime time.Duration
	AccessTokenAudience  string // aud of OAuth access tokens (default: Issuer())
	// SigningKeyReloadInterval is how often each instance reloads the
	// signing keys; a rotated key signs two of these after the rotation.
	SigningKeyReloadInterval time.Duration
}

var tokenSettingList settingList

var (
	settingJWTIssuer                = tokenSettingList.add("GATEHOUSE_JWT_ISSUER", "jwt-issuer", "", "iss of the framework's JWTs (/api/auth/token, set-auth-jwt); default: the issuer, BASE_URL/api/auth")
	settingJWTAudience              = tokenSettingList.add("GATEHOUSE_JWT_AUDIENCE", "jwt-audience", "", "comma-separated aud of the framework's JWTs; default: BASE_URL, as Better Auth")
	settingJWTLifetime              = tokenSettingList.add("GATEHOUSE_JWT_LIFETIME", "jwt-lifetime", "15m", "lifetime of the framework's JWTs")
	settingCodeLifetime             = tokenSettingList.add("GATEHOUSE_OAUTH_CODE_LIFETIME", "oauth-code-lifetime", "1m", "lifetime of an OAuth authorization code (at most 10m)")
	settingAccessTokenLifetime      = tokenSettingList.add("GATEHOUSE_OAUTH_ACCESS_TOKEN_LIFETIME", "oauth-access-token-lifetime", "15m", "lifetime of an OAuth access token (a JWT APIs verify without calling Gatehouse)")
	settingIDTokenLifetime          = tokenSettingList.add("GATEHOUSE_OAUTH_ID_TOKEN_LIFETIME", "oauth-id-token-lifetime", "1h", "lifetime of an OpenID Connect ID token")
	settingRefreshTokenLifetime     = tokenSettingList.add("GATEHOUSE_OAUTH_REFRESH_TOKEN_LIFETIME", "oauth-refresh-token-lifetime", "720h", "absolute lifetime of a grant's refresh tokens: rotation never extends it")
	settingAccessTokenAudience      = tokenSettingList.add("GATEHOUSE_OAUTH_ACCESS_TOKEN_AUDIENCE", "oauth-access-token-audience", "", "aud of OAuth access tokens; default: the issuer, BASE_URL/api/auth (must differ from GATEHOUSE_JWT_AUDIENCE)")
	settingSigningKeyReloadInterval = tokenSettingList.add("GATEHOUSE_SIGNING_KEY_RELOAD_INTERVAL", "signing-key-reload-interval", "1m", "how often each instance reloads the signing keys (1s to 5m, the same on every instance); a rotated key signs two intervals after the rotation")
)

// Issuer is the OpenID Connect issuer: the base URL with the framework's
// base path, no trailing slash. Every discovery document and token carries
// exactly this string.
func (c Config) Issuer() string { return issuer(c.HTTP.BaseURL) }

func issuer(baseURL string) string { return baseURL + FrameworkBasePath }

// load reads the section. The defaults follow baseURL; when the base URL
// is wrong (baseURL "") they stay empty and are not checked.
func (t *TokenConfig) load(r *reader, baseURL string) {
	base := baseURL != ""
	t.JWTIssuer = r.text(settingJWTIssuer)
	if t.JWTIssuer == "" && base {
		t.JWTIssuer = issuer(baseURL)
	}
	t.JWTAudience = r.list(settingJWTAudience)
	if len(t.JWTAudience) == 0 && base {
		t.JWTAudience = []string{baseURL}
	}
	// Access tokens and framework tokens carry the same user as sub and
	// are published in one key set, so their audiences must differ: an API
	// that accepts one must never accept the other.
	t.AccessTokenAudience = r.text(settingAccessTokenAudience)
	if t.AccessTokenAudience == "" && base {
		t.AccessTokenAudience = issuer(baseURL)
	}
	if t.AccessTokenAudience != "" && slices.Contains(t.JWTAudience, t.AccessTokenAudience) {
		r.fail(settingAccessTokenAudience, "must differ from every "+settingJWTAudience.env+": an API accepting framework tokens would accept access tokens too")
	}
	for _, s := range []struct {
		setting *setting
		v       string
	}{{settingJWTIssuer, t.JWTIssuer}, {settingAccessTokenAudience, t.AccessTokenAudience}} {
		if s.v == "" || r.failed(s.setting) {
			continue
		}
		if u, err := url.Parse(s.v); err != nil || u.Scheme == "" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			r.fail(s.setting, "must be an absolute URL without query or fragment")
		}
	}
	t.JWTLifetime = r.duration(settingJWTLifetime, 10*time.Second, 24*time.Hour, "15m")
	t.CodeLifetime = r.duration(settingCodeLifetime, time.Second, 10*time.Minute, "15m")
	t.AccessTokenLifetime = r.duration(settingAccessTokenLifetime, time.Second, 24*time.Hour, "15m")
	t.IDTokenLifetime = r.duration(settingIDTokenLifetime, time.Second, 24*time.Hour, "15m")
	t.RefreshTokenLifetime = r.duration(settingRefreshTokenLifetime, time.Minute, 365*24*time.Hour, "15m")
	// At most the key set's max-age: an instance that missed a rotation
	// must follow it before clients refetch the key set.
	t.SigningKeyReloadInterval = r.duration(settingSigningKeyReloadInterval, time.Second, jwksMaxAge, "15m")
}

// jwksMaxAge is how long clients may cache the key set.
const jwksMaxAge = 5 * time.Minute

func tokenSettings(c Config) usecase.TokenSettings {
	t := c.Tokens
	return usecase.TokenSettings{
		Issuer: c.Issuer(), BaseURL: c.HTTP.BaseURL, Secrets: c.Secrets,
		JWTIssuer: t.JWTIssuer, JWTAudience: t.JWTAudience, JWTLifetime: t.JWTLifetime,
		CodeLifetime: t.CodeLifetime, AccessTokenLifetime: t.AccessTokenLifetime, IDTokenLifetime: t.IDTokenLifetime,
		RefreshTokenLifetime: t.RefreshTokenLifetime, AccessTokenAudience: t.AccessTokenAudience, JWKSMaxAge: jwksMaxAge,
		KeyReloadInterval: t.SigningKeyReloadInterval,
	}
}
