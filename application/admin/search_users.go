package admin

import (
	"context"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// SearchUsers is PageUsers for a person typing a search (the console's
// Users section): a search within addresses that is a whole address is
// first looked up as one (the unique index: one row, whatever the table's
// size), then, when no account has it, searched within addresses as typed.
// A search within addresses reads every row when few match: the exact
// lookup keeps the common "find this user" cheap at any size. Only a first
// page is looked up; a cursor continues the search as typed.
func (a *Administration) SearchUsers(ctx context.Context, req usecase.Caller, q ListUsersPage) (UsersPage, error) {
	if q.EmailContains != "" && q.Cursor == "" {
		if addr, err := domain.NewEmail(q.EmailContains); err == nil {
			exact := q
			exact.EmailContains, exact.Email = "", string(addr)
			page, err := a.PageUsers(ctx, req, exact)
			if err != nil || len(page.Users) > 0 {
				return page, err
			}
		}
	}
	return a.PageUsers(ctx, req, q)
}
