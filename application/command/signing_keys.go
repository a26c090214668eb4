package command

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// GROUNDWORK STUB: the signing-key helper replaces this file. The exported
// signatures below are what other parts call; keep them.

// SigningKeys creates, seals, rotates and publishes the key pairs Gatehouse
// signs tokens with, and signs and verifies those tokens. Keys are held in
// memory; no request reads the database for them.
type SigningKeys struct {
	repo     ports.SigningKeyRepository
	settings TokenSettings
}

// NewSigningKeys returns the signing-key use cases.
func NewSigningKeys(repo ports.SigningKeyRepository, ids ports.IDGenerator, clock ports.Clock, audit ports.AuditLog,
	settings TokenSettings, admin AdminSettings) *SigningKeys {
	return &SigningKeys{repo: repo, settings: settings}
}

// SigningKeyView is what administrators see of a key: never private parts.
type SigningKeyView struct {
	ID        domain.SigningKeyID
	Alg       domain.SigningAlgorithm
	CreatedAt time.Time
	RetiredAt time.Time
	// PublishedUntil is when a retired key leaves the key set (zero while
	// it signs).
	PublishedUntil time.Time
}

// VerifyOptions say what a token must be to pass Verify.
type VerifyOptions struct {
	// Alg is the one accepted algorithm; anything else (none included) fails.
	Alg domain.SigningAlgorithm
	// Type, when set, is the required "typ" header, such as "at+jwt".
	Type string
	// Issuer, when set, must equal iss exactly.
	Issuer string
	// Audience, when set, must be one of aud.
	Audience string
	// IgnoreExpiry accepts an expired token (end-session's id_token_hint).
	IgnoreExpiry bool
}

// Ensure loads the keys, creating a key for each algorithm that has none
// signing, and prunes keys no longer published. Run at start.
func (k *SigningKeys) Ensure(ctx context.Context) error { panic("groundwork") }

// Rotate makes a new key for each algorithm in algs (all when empty) and
// retires the key it replaces. A nil Principal is the command line.
func (k *SigningKeys) Rotate(ctx context.Context, req KeyRequest, algs []domain.SigningAlgorithm) ([]SigningKeyView, error) {
	panic("groundwork")
}

// List returns every published key, newest first.
func (k *SigningKeys) List(ctx context.Context, req KeyRequest) ([]SigningKeyView, error) {
	panic("groundwork")
}

// JWKS returns the published key set as JSON: public members only, each with
// kid, alg and use "sig".
func (k *SigningKeys) JWKS(ctx context.Context) ([]byte, error) { panic("groundwork") }

// Sign signs claims with the newest key of alg; typ is the "typ" header
// ("JWT", "at+jwt"). The header carries the key's kid.
func (k *SigningKeys) Sign(ctx context.Context, alg domain.SigningAlgorithm, typ string, claims map[string]any) (string, error) {
	panic("groundwork")
}

// Verify checks token's signature against a published key named by its kid,
// its algorithm, type, issuer, audience, exp and nbf (with 30 s of leeway),
// and returns its claims. Every failure is domain.KindUnauthenticated.
func (k *SigningKeys) Verify(ctx context.Context, token string, opt VerifyOptions) (map[string]any, error) {
	panic("groundwork")
}

// FrameworkToken signs the Better Auth JWT plugin's token for a signed-in
// user: the user object plus iat, sub, exp, iss and aud.
func (k *SigningKeys) FrameworkToken(ctx context.Context, p *Principal) (string, error) {
	panic("groundwork")
}
