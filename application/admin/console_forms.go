package admin

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// ErrFormTokenSpent refuses a console form whose token was used already.
var ErrFormTokenSpent = domain.NewError(domain.KindForbidden, "console.form_token_spent",
	"This form was sent already. Reload the page and try again.")

// ConsoleForms spends the admin console's single-use form tokens. The
// edge mints and checks the tokens (signed, bound to the session and the
// form's action, expiring); this remembers the spent ones in the store, by
// hash, so that a token is refused the second time on every replica.
type ConsoleForms struct {
	spent ports.SpentTokens
	clock ports.Clock
}

// NewConsoleForms returns the console's form tokens on spent.
func NewConsoleForms(spent ports.SpentTokens, clock ports.Clock) *ConsoleForms {
	usecase.MustHave(spent, clock)
	return &ConsoleForms{spent: spent, clock: clock}
}

// Now is the time the tokens' expiry is measured by.
func (f *ConsoleForms) Now() time.Time { return f.clock.Now() }

// Spend spends the token whose nonce is nonce, valid until expiresAt, or
// returns ErrFormTokenSpent when it was spent already.
func (f *ConsoleForms) Spend(ctx context.Context, nonce string, expiresAt time.Time) error {
	h := sha256.Sum256([]byte("console-form:" + nonce))
	ok, err := f.spent.Spend(ctx, h[:], expiresAt, f.clock.Now())
	if err != nil {
		return err
	}
	if !ok {
		return ErrFormTokenSpent
	}
	return nil
}
