package ports

// SecretSealer encrypts small secrets kept at rest (a user's TOTP secret)
// under the service secrets, as signing keys are sealed: authenticated
// encryption that binds each sealed value to a purpose ("totp") and the id of
// what owns it (a user ID), so a value copied to another row, user or purpose
// does not open. The first configured secret seals; every one is tried when
// opening, so the service secrets can rotate. Implementations are safe for
// concurrent use.
type SecretSealer interface {
	// Seal encrypts plaintext for purpose and id, with a fresh random nonce,
	// so sealing the same plaintext twice gives different results. An empty
	// purpose or id is domain.KindInternal.
	Seal(purpose, id string, plaintext []byte) ([]byte, error)
	// Open decrypts what Seal returned for the same purpose and id. A value
	// sealed for another purpose or id, altered, or sealed under none of the
	// configured secrets is domain.KindInternal: stored data the service
	// can no longer read is a fault of ours, never the client's.
	Open(purpose, id string, sealed []byte) ([]byte, error)
}
