package domain

import (
	"crypto/sha256"
	"encoding/base64"
)

// TokenHash is the SHA-256 of a bearer secret (a session token or a one-time
// link token), base64url without padding. Only hashes are stored, so a leaked
// database holds no usable session or link. A plain hash suffices: the secrets
// carry at least 128 random bits, so there is nothing to guess.
type TokenHash string

// HashToken returns the hash under which token is stored and looked up.
func HashToken(token string) TokenHash {
	sum := sha256.Sum256([]byte(token))
	return TokenHash(base64.RawURLEncoding.EncodeToString(sum[:]))
}

// String returns the hash.
func (h TokenHash) String() string { return string(h) }
