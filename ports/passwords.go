package ports

import "context"

// PasswordHasher hashes and verifies passwords. Implementations bound how
// many hashes run at once (each one costs tens of MiB), so a burst of sign-ins
// queues instead of exhausting memory. Implementations are safe for
// concurrent use.
type PasswordHasher interface {
	// Hash returns an encoded hash of password with its parameters, or an
	// error when ctx ends while waiting for a hashing slot.
	Hash(ctx context.Context, password string) (string, error)
	// Verify reports whether password matches encoded, and whether encoded
	// should be replaced by a fresh Hash (an imported or older format, or
	// weaker parameters). A malformed or unknown encoding is a mismatch.
	Verify(ctx context.Context, encoded, password string) (ok, rehash bool, err error)
	// VerifyNothing does the work of one Verify and reports nothing, so that a
	// sign-in for an unknown account takes as long as one for a known account.
	VerifyNothing(ctx context.Context, password string) error
}
