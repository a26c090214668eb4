package admin

import (
	"context"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Memberships is what operators see of a user's organizations: a platform
// administrator (the console's user page) or a trusted backend reads them
// under the permission to read the user, as Administration.GetUser
// authorises, whose user lookup it shares.
type Memberships struct {
	admin *Administration
	orgs  ports.OrganizationRepository
}

// NewMemberships returns the operators' view of users' organizations.
func NewMemberships(a *Administration, orgs ports.OrganizationRepository) *Memberships {
	usecase.MustHave(a, orgs)
	return &Memberships{admin: a, orgs: orgs}
}

// OfUser returns the organizations the user id belongs to, oldest first:
// 404 admin.user_not_found for no such user, 403 without the permission
// to read users (a key: users:read).
func (m *Memberships) OfUser(ctx context.Context, req usecase.Caller, id domain.UserID) ([]*domain.Organization, error) {
	if err := m.admin.authorize(req, permGetUser); err != nil {
		return nil, err
	}
	if _, err := m.admin.getUser(ctx, id); err != nil {
		return nil, err
	}
	return m.orgs.ListByUser(ctx, id)
}
