package federation

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Switching "SSO required" on ends the sessions of every user whose
// address it now covers: whatever they signed in with before (a password, a
// passkey, another provider) is no longer a way in, and a session started
// by it must not outlive it. Sessions do not record which provider started
// them, so those started through the organization's own provider end too:
// their users sign in through it once more, which is what the requirement
// asks of them anyway. The sessions end in the unit of work of the change,
// each with its session.revoked event; other replicas refuse them within
// the session cache's bound (usecase.MaxSessionCacheTTL).

// sessionsPage is how many users endSessions reads at a time.
const sessionsPage = 1000

// endSessions ends the sessions of the users whose address the change from
// before to after made subject to after's requirement ("" before: a new
// provider).
func (ps *Providers) endSessions(ctx context.Context, before, after domain.IdentityProvider) error {
	was, err := ps.requiredHosts(ctx, before)
	if err != nil {
		return err
	}
	now, err := ps.requiredHosts(ctx, after)
	if err != nil {
		return err
	}
	for _, host := range now {
		if !slices.Contains(was, host) {
			if err := ps.endSessionsAt(ctx, host, after.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// DomainVerified ends the sessions of the users at d that the provider
// bound to d now requires SSO for: d turned verified (again), or moved to
// the provider's organization, so the requirement covers them from now on.
func (ps *Providers) DomainVerified(ctx context.Context, d *domain.Domain) error {
	if d.Status() != domain.DomainVerified {
		return nil
	}
	p, err := ps.providers.GetByDomain(ctx, d.ID())
	if errors.Is(err, domain.ErrIdentityProviderNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !p.Enabled || !p.RequireSSO || p.OrganizationID != d.OrganizationID() {
		return nil
	}
	return ps.endSessionsAt(ctx, d.Hostname(), p.ID)
}

var _ usecase.SSOSessions = (*Providers)(nil)

// requiredHosts are the hostnames of the verified domains of its
// organization that p requires SSO for.
func (ps *Providers) requiredHosts(ctx context.Context, p domain.IdentityProvider) ([]string, error) {
	if p.ID == "" || !p.Enabled || !p.RequireSSO || p.OrganizationID == "" {
		return nil, nil
	}
	var hosts []string
	for _, id := range p.Domains {
		d, err := ps.domains.Get(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if d.Status() == domain.DomainVerified && d.OrganizationID() == p.OrganizationID {
			hosts = append(hosts, d.Hostname())
		}
	}
	return hosts, nil
}

// endSessionsAt ends the sessions of the users at host (or below it) whose
// address is now routed to provider, which requires SSO.
func (ps *Providers) endSessionsAt(ctx context.Context, host string, provider domain.IdentityProviderID) error {
	routed := map[string]bool{} // an address's domain: whether it requires provider
	q := ports.UserQuery{Conditions: []ports.UserCondition{{Field: ports.UserFieldEmail, Operator: ports.OpEndsWith, Value: host}},
		SortBy: ports.UserFieldCreatedAt, Limit: sessionsPage}
	for {
		users, _, err := ps.users.List(ctx, q)
		if err != nil {
			return err
		}
		for _, u := range users {
			_, at, _ := strings.Cut(string(u.Email()), "@")
			if at != host && !strings.HasSuffix(at, "."+host) {
				continue // notacme.test is not acme.test
			}
			required, seen := routed[at]
			if !seen {
				via, ok, err := ps.router.SSORequired(ctx, u.Email())
				if err != nil {
					return err
				}
				required = ok && via == provider
				routed[at] = required
			}
			if required {
				// Within the change's unit of work: a Do inside another joins it.
				if err := ps.revoker.RevokeAll(ctx, u.ID(), ""); err != nil {
					return err
				}
			}
		}
		if len(users) < q.Limit {
			return nil
		}
		q.Offset += len(users)
	}
}
