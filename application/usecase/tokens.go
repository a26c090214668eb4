package usecase

import "time"

// TokenSettings are the rules of the tokens Gatehouse signs: the framework's
// JWTs (Better Auth's JWT plugin) and the OpenID Connect provider's codes,
// access, ID and refresh tokens.
type TokenSettings struct {
	// Issuer is the base URL with the framework's base path, such as
	// https://id.example.com/api/auth: exactly the discovery documents'
	// issuer and every OpenID Connect token's iss.
	Issuer string
	// BaseURL is the public origin, such as https://id.example.com.
	BaseURL string
	// Secrets are the service secrets: the sealing key of private signing
	// keys is derived from the first; every one is tried when opening.
	Secrets []string

	// JWTIssuer and JWTAudience are the iss and aud of framework tokens
	// (defaults: Issuer, and BaseURL as Better Auth does).
	JWTIssuer   string
	JWTAudience []string
	// JWTLifetime is a framework token's lifetime (default 15 minutes).
	JWTLifetime time.Duration

	// CodeLifetime is an authorization code's lifetime (default 1 minute;
	// at most 10).
	CodeLifetime time.Duration
	// AccessTokenLifetime (default 15 minutes), IDTokenLifetime (default 1
	// hour) and RefreshTokenLifetime (default 30 days, the grant's absolute
	// end: rotation never extends it).
	AccessTokenLifetime  time.Duration
	IDTokenLifetime      time.Duration
	RefreshTokenLifetime time.Duration
	// AccessTokenAudience is the aud of access tokens, by default Issuer;
	// configuration keeps it out of JWTAudience.
	AccessTokenAudience string

	// JWKSMaxAge is the Cache-Control max-age of the key set (default 5
	// minutes). Retired keys stay published for the longest token lifetime
	// plus this.
	JWKSMaxAge time.Duration
	// KeyReloadInterval is how often every instance reloads the signing
	// keys (default 1 minute). A rotated key signs only after two of them:
	// one for every instance to publish it, one as margin.
	KeyReloadInterval time.Duration
}

// KeyActivationDelay is how long after a rotation its new key starts
// signing: by then every instance has reloaded and publishes it.
func (s TokenSettings) KeyActivationDelay() time.Duration {
	if s.KeyReloadInterval <= 0 {
		return 2 * time.Minute
	}
	return 2 * s.KeyReloadInterval
}

// MaxTokenLifetime is the longest a signed token lives: how long a retired
// key must stay published.
func (s TokenSettings) MaxTokenLifetime() time.Duration {
	return max(s.JWTLifetime, s.AccessTokenLifetime, s.IDTokenLifetime)
}
