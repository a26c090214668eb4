package admin

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// errUserFilterEmail refuses a listing whose email filter is not an address.
var errUserFilterEmail = domain.Invalid("user.invalid_email_filter", "Invalid email",
	domain.FieldViolation{Field: "email", Message: "must be a valid e-mail address"})

// ListUsersPage asks for one page of users, newest first: Limit users (1
// to 100; 0 means DefaultUsersPageLimit) after the cursor of the page
// before ("" for the first), matching every filter given.
type ListUsersPage struct {
	Limit  int
	Cursor string
	// Email is an exact address, compared after normalisation, so in any case.
	Email          string
	EmailContains  string
	NameContains   string
	Banned         *bool
	EmailVerified  *bool
	OrganizationID domain.OrganizationID
	CreatedAfter   time.Time
	CreatedBefore  time.Time
}

// UsersPage is one page of users and the cursor of the next ("" on the
// last page).
type UsersPage struct {
	Users []*domain.User
	// Passkeys[i] is how many passkeys Users[i] has.
	Passkeys   []int
	NextCursor string
}

// DefaultUsersPageLimit is the page size of a listing that names none.
const DefaultUsersPageLimit = 20

// PageUsers returns one page of the users matching q. Every page costs the
// same, however deep. It needs the list permission (a key: users:read).
func (a *Administration) PageUsers(ctx context.Context, req usecase.Caller, q ListUsersPage) (UsersPage, error) {
	if err := a.authorize(req, permListUsers); err != nil {
		return UsersPage{}, a.audit.Record(ctx, req.Actor(), usecase.ActionOf(req, "admin.list-users", "users.list"), usecase.Target{Type: "user"}, err)
	}
	if q.Limit == 0 {
		q.Limit = DefaultUsersPageLimit
	}
	after, err := usecase.PageRequest(q.Limit, q.Cursor)
	if err != nil {
		return UsersPage{}, err
	}
	pq := ports.UserPageQuery{Limit: q.Limit, After: after, EmailContains: q.EmailContains, NameContains: q.NameContains, Banned: q.Banned, EmailVerified: q.EmailVerified,
		OrganizationID: q.OrganizationID, CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore}
	if q.Email != "" {
		email, err := domain.NewEmail(q.Email)
		if err != nil {
			return UsersPage{}, errUserFilterEmail
		}
		pq.Email = email
	}
	page, err := a.users.Page(ctx, pq)
	if err != nil {
		return UsersPage{}, err
	}
	return UsersPage{Users: page.Users, Passkeys: page.Passkeys, NextCursor: usecase.NextCursor(page.Next)}, nil
}

// parseMetadata parses one optional metadata object of a request, its
// refusals naming field.
func parseMetadata(raw []byte, field string) (*domain.Metadata, error) {
	if raw == nil {
		return nil, nil
	}
	m, err := domain.NewMetadata(field, raw)
	if err != nil {
		return nil, err
	}
	return &m, nil
}
