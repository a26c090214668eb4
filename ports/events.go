package ports

import "github.com/gatehouse/gatehouse/domain"

// UserEventData is the data of the user events: the user with what the
// trusted API shows beside it, read in the same unit of work as the change.
type UserEventData struct {
	User *domain.User
	// Passkeys is how many passkeys the user has.
	Passkeys int
	// LinkedAccounts are the user's upstream accounts, oldest first; the
	// encoder never shows their tokens.
	LinkedAccounts []domain.LinkedAccount
}
