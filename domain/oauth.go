package domain

import (
	"time"
)

// This file holds the entities of the OpenID Connect provider and of token
// signing: signing keys, OAuth clients, authorization codes, grants (one per
// sign-in of a user at a client, or per client-credentials token), refresh
// tokens and consents. They are records with exported fields; the rules that
// govern them live in their constructors and in application/oidc.

// SigningAlgorithm is a JWS algorithm Gatehouse signs with.
type SigningAlgorithm string

// The algorithms: EdDSA (Ed25519) signs the framework's tokens (Better Auth's
// JWT plugin); RS256 (RSA, at least 2048 bits) signs OpenID Connect ID tokens
// and OAuth access tokens, as OpenID Connect requires.
const (
	AlgEdDSA SigningAlgorithm = "EdDSA"
	AlgRS256 SigningAlgorithm = "RS256"
)

// SigningAlgorithms lists the algorithms a key can have.
var SigningAlgorithms = []SigningAlgorithm{AlgEdDSA, AlgRS256}

// SigningKeyID is a key's "kid": unique and never reused.
type SigningKeyID string

// SigningKey is one key pair. The private key is kept only sealed (encrypted
// with a key derived from the service secret); the public key is a JWK.
type SigningKey struct {
	ID  SigningKeyID
	Alg SigningAlgorithm
	// PublicJWK is the public key as a JSON Web Key (with kid, alg and use).
	PublicJWK []byte
	// SealedPrivate is the private key, encrypted; only the signing-key use
	// cases can open it.
	SealedPrivate []byte
	CreatedAt     time.Time
	// ActivatesAt is when the key starts signing. A key is published at
	// once but, unless rotated in a hurry, signs only once every instance
	// has reloaded the key set and published it too.
	ActivatesAt time.Time
	// RetiredAt is when a newer key of the same algorithm replaces this one
	// (zero while nothing does); it may lie ahead, at the newer key's
	// ActivatesAt. A retired key signs nothing more but stays published
	// until every token it signed has expired.
	RetiredAt time.Time
}

// SignsAt reports whether k is the one to sign with at t, as far as its own
// times go: activated, and not yet retired.
func (k SigningKey) SignsAt(t time.Time) bool {
	return !t.Before(k.ActivatesAt) && (k.RetiredAt.IsZero() || t.Before(k.RetiredAt))
}

// OAuthClientID is a client's client_id.
type OAuthClientID string

// OAuthClientType says whether a client can keep a secret.
type OAuthClientType string

// The client types (RFC 6749 §2.1).
const (
	// OAuthClientPublic runs where it cannot keep a secret (a browser or
	// native app): PKCE with S256 is required and it has no secret.
	OAuthClientPublic OAuthClientType = "public"
	// OAuthClientConfidential authenticates with its secret at the token,
	// revocation and introspection endpoints and may use client credentials.
	OAuthClientConfidential OAuthClientType = "confidential"
)

// OAuthClient is an application registered by an administrator to sign users
// in through Gatehouse.
type OAuthClient struct {
	ID   OAuthClientID
	Name string
	Type OAuthClientType
	// RedirectURIs are compared exactly, character for character.
	RedirectURIs []string
	// PostLogoutRedirectURIs are where end-session may send the browser
	// afterwards, also compared exactly.
	PostLogoutRedirectURIs []string
	// FirstParty clients skip the consent page.
	FirstParty bool
	// SecretHash is the SHA-256 of a confidential client's secret (empty for
	// public clients); the secret itself is shown once, at creation or
	// rotation.
	SecretHash TokenHash
	// SecretLast4 are the last four characters of the secret, for display.
	SecretLast4 string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// GrantID identifies a grant: the family of tokens issued from one
// authorization (or one client-credentials request).
type GrantID string

// OAuthGrant is what a user (or, for client credentials, a client on its own
// behalf) granted a client. Access and refresh tokens carry or point at it;
// revoking it revokes them all.
type OAuthGrant struct {
	ID       GrantID
	ClientID OAuthClientID
	// UserID is the user who signed in, or "" for client credentials.
	UserID UserID
	// Scopes granted, such as openid, profile, email, offline_access.
	Scopes []string
	// AuthTime is when the user authenticated (the session's start).
	AuthTime time.Time
	// AMR are the methods the user authenticated with (RFC 8176) and ACR
	// the class they met, as the authorization saw them: refreshed ID
	// tokens repeat them. Empty for client credentials.
	AMR []AuthMethod
	ACR string
	// Nonce of the authorization request, repeated in refreshed ID tokens.
	Nonce     string
	CreatedAt time.Time
	// ExpiresAt is the absolute end of the grant: no refresh extends it.
	ExpiresAt time.Time
	// RevokedAt is set when the grant was revoked (by the user, the client,
	// an administrator, or reuse of a rotated refresh token).
	RevokedAt time.Time
}

// Active reports whether the grant can still be used at now.
func (g OAuthGrant) Active(now time.Time) bool {
	return g.RevokedAt.IsZero() && now.Before(g.ExpiresAt)
}

// AuthorizationCode is a one-time code of the authorization code flow. Only
// its hash is stored.
type AuthorizationCode struct {
	Hash        TokenHash
	ClientID    OAuthClientID
	UserID      UserID
	RedirectURI string
	Scopes      []string
	Nonce       string
	// CodeChallenge and its method (only "S256") from PKCE; empty when a
	// confidential client did not use PKCE.
	CodeChallenge       string
	CodeChallengeMethod string
	AuthTime            time.Time
	// AMR are the session's methods (RFC 8176) and ACR the class it met
	// when the code was issued, for the ID token.
	AMR       []AuthMethod
	ACR       string
	CreatedAt time.Time
	ExpiresAt time.Time
	// ConsumedAt is set when the code was exchanged; GrantID is the grant the
	// exchange created, revoked if the code is presented again.
	ConsumedAt time.Time
	GrantID    GrantID
}

// RefreshToken is one refresh token of a grant. Only its hash is stored.
// Exchanging it marks it used and issues its successor; presenting a used one
// again is reuse, and revokes the whole grant.
type RefreshToken struct {
	Hash      TokenHash
	GrantID   GrantID
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time
}

// Consent records the scopes a user allowed a client, so the consent page is
// not shown again for them.
type Consent struct {
	UserID    UserID
	ClientID  OAuthClientID
	Scopes    []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Errors of the OAuth storage.
var (
	ErrOAuthClientNotFound = NotFound("oauth_client.not_found", "OAuth client")
	ErrGrantNotFound       = NotFound("oauth_grant.not_found", "Grant")
	ErrCodeNotFound        = NotFound("oauth_code.not_found", "Authorization code")
	ErrRefreshNotFound     = NotFound("oauth_refresh_token.not_found", "Refresh token")
	ErrConsentNotFound     = NotFound("oauth_consent.not_found", "Consent")
	ErrSigningKeyNotFound  = NotFound("signing_key.not_found", "Signing key")
)

// The errors the stores return for this aggregate, created once so that
// every store answers each condition with the same kind, code and message.
var (
	ErrSigningKeyExists        = NewError(KindConflict, "signing_key.exists", "a signing key with this id already exists")
	ErrOAuthClientExists       = NewError(KindConflict, "oauth_client.exists", "an OAuth client with this id already exists")
	ErrOAuthCodeExists         = NewError(KindConflict, "oauth_code.exists", "an authorization code with this hash already exists")
	ErrOAuthGrantExists        = NewError(KindConflict, "oauth_grant.exists", "a grant or refresh token with this key already exists")
	ErrOAuthRefreshTokenExists = NewError(KindConflict, "oauth_refresh_token.exists", "a refresh token with this hash already exists")
	// ErrCodeConsumed is ConsumeCode of a code already consumed.
	ErrCodeConsumed = NewError(KindConflict, "oauth_code.consumed", "The authorization code was already used")
	// ErrRefreshTokenUsed is RotateRefreshToken of a token already rotated.
	ErrRefreshTokenUsed = NewError(KindConflict, "oauth_refresh_token.used", "The refresh token was already used")
)
