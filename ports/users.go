package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// UserRepository stores users. Implementations are safe for concurrent use and
// store and return copies: changing a returned *domain.User changes nothing
// until it goes through Update.
type UserRepository interface {
	// Create stores u. It returns an error of kind domain.KindConflict when the
	// id or the e-mail address is taken.
	Create(ctx context.Context, u *domain.User) error
	// Get returns the user with id, or an error of kind domain.KindNotFound.
	Get(ctx context.Context, id domain.UserID) (*domain.User, error)
	// GetByEmail returns the user with the normalised address email, or an
	// error of kind domain.KindNotFound.
	GetByEmail(ctx context.Context, email domain.Email) (*domain.User, error)
	// Update loads the user, applies fn and saves the result atomically: no
	// concurrent Update is lost. If fn returns an error nothing is saved and
	// that error is returned. fn may run more than once. A missing user is an
	// error of kind domain.KindNotFound; an e-mail taken by another user is
	// domain.KindConflict.
	Update(ctx context.Context, id domain.UserID, fn func(u *domain.User) error) error
	// Delete removes the user, or returns an error of kind domain.KindNotFound.
	// Their sessions, credential, links and memberships go with them.
	Delete(ctx context.Context, id domain.UserID) error
	// List returns one page of the users matching q, and how many match in
	// all. Search values are literal text: % and _ match only themselves.
	List(ctx context.Context, q UserQuery) ([]*domain.User, int, error)
	// Page returns one page of the users matching q, newest first (created
	// at, then id, both descending; ids compare byte by byte), and where the
	// next page starts. Unfiltered, from a cursor or not, a page reads
	// through the index on (created_at, id) and an e-mail lookup through the
	// unique index on email, so such a page costs the same at any depth and
	// size. A bad limit is an error of kind domain.KindInvalid.
	Page(ctx context.Context, q UserPageQuery) (UserPage, error)
	// Count returns how many users there are, in one statement.
	Count(ctx context.Context) (int, error)
}

// UserPageQuery selects one page of users. Every filter set must hold.
type UserPageQuery struct {
	// Email, when set, matches only the user with this normalised address.
	Email domain.Email
	// EmailContains and NameContains match text within the address or the
	// name, case-insensitively and literally: % and _ match only themselves.
	EmailContains string
	NameContains  string
	// Banned, when set, matches users whose stored ban flag equals it.
	Banned *bool
	// EmailVerified, when set, matches users whose address's verification
	// equals it.
	EmailVerified *bool
	// OrganizationID, when set, matches the organization's members.
	OrganizationID domain.OrganizationID
	// CreatedAfter and CreatedBefore, when not zero, match users created
	// strictly after or strictly before the instant.
	CreatedAfter  time.Time
	CreatedBefore time.Time
	// After, when set, starts the page strictly after this position (older
	// than it), whether or not a user is still there.
	After *domain.Position
	// Limit is the page size, 1 to 1000.
	Limit int
}

// UserPage is one page of users and the position of its last user when
// more follow (nil on the last page).
type UserPage struct {
	Users []*domain.User
	// Passkeys[i] is how many passkeys Users[i] has, read in the same
	// statement as the page.
	Passkeys []int
	Next     *domain.Position
}

// UserField is a user attribute that can be searched, filtered or sorted on.
type UserField string

// The fields of UserQuery.
const (
	UserFieldEmail     UserField = "email"
	UserFieldName      UserField = "name"
	UserFieldRole      UserField = "role"
	UserFieldBanned    UserField = "banned"
	UserFieldVerified  UserField = "emailVerified"
	UserFieldCreatedAt UserField = "createdAt"
	UserFieldUpdatedAt UserField = "updatedAt"
	UserFieldID        UserField = "id"
)

// Operator compares a field with a value.
type Operator string

// The operators. Contains, StartsWith and EndsWith are case-insensitive.
const (
	OpEq         Operator = "eq"
	OpNe         Operator = "ne"
	OpLt         Operator = "lt"
	OpLte        Operator = "lte"
	OpGt         Operator = "gt"
	OpGte        Operator = "gte"
	OpContains   Operator = "contains"
	OpStartsWith Operator = "starts_with"
	OpEndsWith   Operator = "ends_with"
)

// UserCondition is one condition on a field. Value is a string for email,
// name, id and role (role matches any one of a user's comma-separated roles
// with eq and ne), a bool for banned and emailVerified, and a time.Time for
// createdAt and updatedAt. The application validates the combination; a
// store may return an error of kind domain.KindInvalid for one it does not
// support.
type UserCondition struct {
	Field    UserField
	Operator Operator
	Value    any
}

// UserQuery selects, sorts and pages users. Every condition must hold.
type UserQuery struct {
	Conditions []UserCondition
	// SortBy is one of email, name, createdAt, updatedAt; empty means
	// createdAt. Ties are broken by id in the same direction.
	SortBy   UserField
	SortDesc bool
	// Limit is the page size (1 to 1000); Offset skips that many matches.
	Limit  int
	Offset int
}
