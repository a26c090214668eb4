package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// SpentTokens remembers which single-use tokens were spent (the console's
// form tokens), by their hash, until they expire, so that every replica
// sharing the store refuses a second use. Times are the callers' clocks.
// Implementations are safe for concurrent use, from this process and from
// every process sharing the store.
type SpentTokens interface {
	// Spend records hash as spent until expiresAt and reports whether it
	// was unspent: false when it was spent already and that entry has not
	// expired at now. An expired entry is replaced. Of concurrent calls
	// with one hash, one gets true. An empty hash is domain.KindInvalid.
	Spend(ctx context.Context, hash []byte, expiresAt, now time.Time) (bool, error)
	// DeleteExpired deletes the entries that expired at or before before,
	// and returns how many.
	DeleteExpired(ctx context.Context, before time.Time) (int, error)
}

// errSpendEmpty is a token spent without a hash.
var errSpendEmpty = domain.Invalid("spent_token.invalid", "A spent token needs a hash")

// ValidateSpend returns an error of kind domain.KindInvalid for an empty hash.
func ValidateSpend(hash []byte) error {
	if len(hash) == 0 {
		return errSpendEmpty
	}
	return nil
}
