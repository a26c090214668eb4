package ports

import "github.com/gatehouse/gatehouse/domain"

// JOSE makes signing keys and signs and verifies compact JSON Web Signatures
// (RFC 7515) with them. It keeps the cryptography, and the JOSE library, out
// of the application. Implementations must be safe for concurrent use.
type JOSE interface {
	// Generate makes a key pair of alg named id. The result has its public
	// JWK (kid, alg, use "sig", public members only) and its private key
	// sealed under the service secret; the caller sets the times.
	Generate(id domain.SigningKeyID, alg domain.SigningAlgorithm) (domain.SigningKey, error)
	// Open unseals k's private key, trying every configured secret. A key
	// sealed under none of them, or altered, is domain.KindInternal.
	Open(k domain.SigningKey) (JWSSigner, error)
	// Public parses k's public JWK, checking that it names k (kid, alg) and
	// holds a public key of the algorithm's type.
	Public(k domain.SigningKey) (JWSVerifier, error)
	// Header parses token as a compact JWS signed with alg, and no other
	// algorithm ("none" included), without verifying it. Any failure is
	// domain.KindUnauthenticated.
	Header(token string, alg domain.SigningAlgorithm) (JWSHeader, error)
}

// JWSHeader is what the application reads of a token's protected header.
type JWSHeader struct {
	KeyID domain.SigningKeyID
	// Type is the "typ" header, such as "JWT" or "at+jwt" ("" when absent).
	Type string
}

// JWSSigner signs with one private key.
type JWSSigner interface {
	// Sign returns the compact JWS of payload with the header {alg, kid,
	// typ}; typ is left out when empty.
	Sign(typ string, payload []byte) (string, error)
}

// JWSVerifier verifies with one public key.
type JWSVerifier interface {
	// Verify checks token's signature with the key, accepting only the
	// key's algorithm, and returns the payload. Any failure is
	// domain.KindUnauthenticated.
	Verify(token string) ([]byte, error)
}
