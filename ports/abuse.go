package ports

import (
	"context"
	"time"
)

// RateLimiter counts requests per key in fixed windows. Implementations are
// safe for concurrent use; those over a shared store (Redis, PostgreSQL)
// count every replica's requests together.
type RateLimiter interface {
	// Allow counts one request for key, allowed at most limit times per
	// window. When the request is over the limit it reports false and how long
	// until the key may be used again: whole seconds, at least one, at most
	// the window rounded up. Refused requests are counted too,
	// so hammering a closed key keeps it closed until its window ends. A key
	// names a rule and a client (an address, an id), never a secret: stores
	// may keep it as it is, and keep long keys as a digest.
	Allow(ctx context.Context, key string, limit int, window time.Duration) (ok bool, retryAfter time.Duration, err error)
}

// PasswordBlocklist knows common passwords that may not be chosen.
type PasswordBlocklist interface {
	// Contains reports whether the lower-cased password is on the list.
	Contains(lowerPassword string) bool
}

// TokenGenerator creates bearer secrets: session tokens and one-time link
// tokens.
type TokenGenerator interface {
	// NewToken returns 32 characters from [A-Za-z0-9] drawn from a CSPRNG
	// (about 190 bits), the shape of a Better Auth session token.
	NewToken() string
	// NewSecret returns n characters from [A-Za-z0-9] drawn from a CSPRNG
	// (n × 5.95 bits).
	NewSecret(n int) string
}
