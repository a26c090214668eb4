package federation

import (
	"context"
	"errors"
	"strings"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Enterprise SSO: an organization's provider is bound to some of its
// domains. An address at a bound domain that is verified (DNS) is routed to
// the provider; a domain that stops verifying stops routing. The provider
// may sign in only addresses at its routed domains, so a customer's
// identity provider can never speak for an address outside them.

// The errors of enterprise SSO.
var (
	ErrSSORequired       = usecase.ErrSSORequired
	ErrNoSSOProvider     = domain.NewError(domain.KindNotFound, "federation.sso_not_found", "No identity provider signs in this address")
	ErrEmailOutsideRoute = domain.NewError(domain.KindForbidden, "federation.email_outside_domains", "The identity provider may not sign in this address")
	errSSOSelector       = domain.Invalid("federation.sso_selector", "Name exactly one of email, domain, organizationSlug and providerId",
		domain.FieldViolation{Field: "body", Message: "must name exactly one of email, domain, organizationSlug and providerId"})
)

// maxParentDomains bounds the parent domains an address's domain is looked
// up by (mail.eu.acme.com, eu.acme.com, acme.com).
const maxParentDomains = 4

// Router finds the enterprise provider an address is routed to.
type Router struct {
	providers ports.IdentityProviderRepository
	domains   ports.DomainRepository
}

// NewRouter returns a Router.
func NewRouter(providers ports.IdentityProviderRepository, domains ports.DomainRepository) *Router {
	usecase.MustHave(providers, domains)
	return &Router{providers: providers, domains: domains}
}

// ForHost returns the enabled provider a verified domain hostname (or its
// nearest verified parent) routes to. ok is false when none does.
func (r *Router) ForHost(ctx context.Context, host string) (p domain.IdentityProvider, ok bool, err error) {
	host = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
	for range maxParentDomains {
		if strings.Count(host, ".") < 1 {
			return p, false, nil
		}
		d, err := r.domains.GetByHostname(ctx, host)
		switch {
		case err == nil:
			if d.Status() == domain.DomainVerified {
				p, err = r.providers.GetByDomain(ctx, d.ID())
				if err == nil && p.Enabled && p.OrganizationID == d.OrganizationID() {
					return p, true, nil
				}
				if err != nil && !errors.Is(err, domain.ErrIdentityProviderNotFound) {
					return p, false, err
				}
			}
		case !errors.Is(err, domain.ErrNotFound):
			return p, false, err
		}
		_, host, _ = strings.Cut(host, ".")
	}
	return p, false, nil
}

// ForEmail is ForHost of the address's domain.
func (r *Router) ForEmail(ctx context.Context, email domain.Email) (domain.IdentityProvider, bool, error) {
	_, host, ok := strings.Cut(string(email), "@")
	if !ok {
		return domain.IdentityProvider{}, false, nil
	}
	return r.ForHost(ctx, host)
}

// SSORequired reports whether email must sign in with its organization's
// provider (the provider it routes to requires SSO), and which.
func (r *Router) SSORequired(ctx context.Context, email domain.Email) (domain.IdentityProviderID, bool, error) {
	p, ok, err := r.ForEmail(ctx, email)
	if err != nil || !ok || !p.RequireSSO {
		return "", false, err
	}
	return p.ID, true, nil
}

// SSOStart starts a sign-in at the provider that one selector names: an
// address (routed by its domain), a domain, an organization (its provider)
// or a provider id.
type SSOStart struct {
	Email            string
	Domain           string
	OrganizationSlug string
	ProviderID       string
	Start
}

// StartSSO routes and starts an enterprise sign-in. An address is sent as
// the provider's login_hint.
func (s *SignIns) StartSSO(ctx context.Context, in SSOStart) (Started, error) {
	n := 0
	for _, v := range []string{in.Email, in.Domain, in.OrganizationSlug, in.ProviderID} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return Started{}, errSSOSelector
	}
	var (
		p   domain.IdentityProvider
		ok  bool
		err error
	)
	switch {
	case in.Email != "":
		email, eerr := domain.NewEmail(in.Email)
		if eerr != nil {
			return Started{}, eerr
		}
		p, ok, err = s.router.ForEmail(ctx, email)
		if in.LoginHint == "" {
			in.LoginHint = string(email)
		}
	case in.Domain != "":
		p, ok, err = s.router.ForHost(ctx, in.Domain)
	case in.OrganizationSlug != "":
		p, ok, err = s.orgProvider(ctx, in.OrganizationSlug)
	default:
		p, err = enabledProvider(ctx, s.providers, in.ProviderID)
		ok = err == nil && p.OrganizationID != ""
		if errors.Is(err, domain.ErrIdentityProviderNotFound) {
			err = nil
		}
	}
	if err != nil {
		return Started{}, err
	}
	if !ok {
		return Started{}, ErrNoSSOProvider
	}
	in.Provider = string(p.ID)
	return s.Start(ctx, in.Start)
}

// orgProvider is the enabled provider of the organization with slug that
// routes at least one verified domain.
func (s *SignIns) orgProvider(ctx context.Context, slug string) (domain.IdentityProvider, bool, error) {
	org, err := s.orgs.GetBySlug(ctx, slug)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.IdentityProvider{}, false, nil
	}
	if err != nil {
		return domain.IdentityProvider{}, false, err
	}
	all, err := s.providers.List(ctx)
	if err != nil {
		return domain.IdentityProvider{}, false, err
	}
	for _, p := range all {
		if p.OrganizationID != org.ID() || !p.Enabled {
			continue
		}
		for _, d := range p.Domains {
			dom, err := s.router.domains.Get(ctx, d)
			if err == nil && dom.Status() == domain.DomainVerified {
				return p, true, nil
			}
		}
	}
	return domain.IdentityProvider{}, false, nil
}

// routedHere reports whether email is routed to p (an organization's
// provider may sign in only such addresses).
func (s *SignIns) routedHere(ctx context.Context, p domain.IdentityProvider, email domain.Email) (bool, error) {
	routed, ok, err := s.router.ForEmail(ctx, email)
	return ok && routed.ID == p.ID, err
}

// provision makes u a member of p's organization with its default role,
// unless they are one already (just-in-time provisioning).
func (s *SignIns) provision(ctx context.Context, p domain.IdentityProvider, u *domain.User) error {
	if p.OrganizationID == "" || s.orgs == nil {
		return nil
	}
	_, err := s.orgs.GetMemberByUser(ctx, p.OrganizationID, u.ID())
	if err == nil {
		return nil
	}
	if !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	m, err := domain.NewMember(domain.MemberID(s.issuer.IDs.NewID()), p.OrganizationID, u.ID(), []domain.OrgRole{p.DefaultRole}, s.issuer.Clock.Now())
	if err != nil {
		return err
	}
	actor, t := usecase.Actor{Type: domain.ActorUser, ID: string(u.ID())}, usecase.Target{Type: "organization", ID: string(p.OrganizationID)}
	err = s.audit.Events().Do(ctx, func(ctx context.Context, emit usecase.Emit) error {
		if err := s.orgs.AddMember(ctx, m); err != nil {
			return err
		}
		emit(domain.EventMemberAdded, ports.MemberWithUser{Member: m, User: u})
		return s.audit.Succeeded(ctx, actor, "organization.provision-member", t)
	})
	if errors.Is(err, domain.ErrConflict) {
		return nil // joined meanwhile
	}
	if err != nil {
		_ = s.audit.Record(ctx, actor, "organization.provision-member", t, err)
	}
	return err
}
