// Package signingkeys implements ports.JOSE with go-jose: it makes the
// Ed25519 (EdDSA) and RSA-2048 (RS256) key pairs tokens are signed with,
// publishes their public halves as JSON Web Keys, signs and verifies compact
// JSON Web Signatures, and seals private keys at rest with XChaCha20-Poly1305
// under a key derived (HKDF-SHA256) from the service secret. It implements
// ports.SecretSealer with the same sealing, under keys of its own, for other
// secrets kept at rest (TOTP secrets).
package signingkeys
