package federation

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Providers are the administrators' use cases for upstream identity
// providers. Only platform administrators (and the command line or the
// providers file, with a nil Principal) may use them; every change, and
// every refusal, is audited. A client secret is sealed at once and never
// shown again.
type Providers struct {
	providers ports.IdentityProviderRepository
	domains   ports.DomainRepository
	orgs      ports.OrganizationRepository
	sealer    ports.SecretSealer
	clock     ports.Clock
	audit     usecase.Auditor
	admins    domain.PlatformAdmins
	users     ports.UserRepository
	revoker   usecase.SessionRevoker
	router    *Router
}

// NewProviders returns the provider use cases.
// The sessions of the users whose address a change newly requires the
// provider for end with the change (see endSessions).
func NewProviders(providers ports.IdentityProviderRepository, domains ports.DomainRepository, orgs ports.OrganizationRepository,
	sealer ports.SecretSealer, audit usecase.Auditor, ids ports.IDGenerator, clock ports.Clock, admin usecase.AdminSettings,
	users ports.UserRepository, sessions ports.SessionRepository, router *Router) *Providers {
	usecase.MustHave(providers, domains, orgs, sealer, ids, clock, users, sessions, router)
	return &Providers{providers: providers, domains: domains, orgs: orgs, sealer: sealer, clock: clock, audit: audit, admins: admin.Admins,
		users: users, revoker: usecase.NewSessionRevoker(sessions, audit.Events(), clock), router: router}
}

// ProviderInput is a provider's registration. On update, nil fields keep
// their values (ClientSecret "" keeps the secret).
type ProviderInput struct {
	ID                string
	Preset            *string
	Name              *string
	Issuer            *string
	ClientID          *string
	ClientSecret      string
	Scopes            *[]string
	Endpoints         *domain.IdentityProviderEndpoints
	TrustedForLinking *bool
	Enabled           *bool
	OrganizationID    *string
	Domains           *[]string
	DefaultRole       *string
	RequireSSO        *bool
}

var errSecretRequired = domain.Invalid("identity_provider.invalid", "Invalid identity provider",
	domain.FieldViolation{Field: "clientSecret", Message: "is required"})

func providerTarget(id string) usecase.Target {
	return usecase.Target{Type: "identity_provider", ID: id}
}

func (ps *Providers) authorize(p *usecase.Principal) error {
	if p == nil || ps.admins.IsAdmin(p.User) {
		return nil
	}
	return domain.ErrNotPlatformAdmin
}

// Create registers a provider.
func (ps *Providers) Create(ctx context.Context, req usecase.KeyRequest, in ProviderInput) (domain.IdentityProvider, error) {
	var out domain.IdentityProvider
	t := providerTarget(in.ID)
	err := ps.audit.Change(ctx, req.Actor, "admin.create-identity-provider", &t, func(ctx context.Context, emit usecase.Emit) error {
		if err := ps.authorize(req.Principal); err != nil {
			return err
		}
		var err error
		out, err = ps.create(ctx, in, emit)
		return err
	})
	return out, err
}

// Update changes the fields in sets.
func (ps *Providers) Update(ctx context.Context, req usecase.KeyRequest, in ProviderInput) (domain.IdentityProvider, error) {
	var out domain.IdentityProvider
	t := providerTarget(in.ID)
	err := ps.audit.Change(ctx, req.Actor, "admin.update-identity-provider", &t, func(ctx context.Context, emit usecase.Emit) error {
		if err := ps.authorize(req.Principal); err != nil {
			return err
		}
		var err error
		out, err = ps.update(ctx, in, "", emit)
		return err
	})
	return out, err
}

// create checks in (a new provider needs its secret), seals its secret and
// stores it, ending the sessions its requirement now covers.
func (ps *Providers) create(ctx context.Context, in ProviderInput, emit usecase.Emit) (domain.IdentityProvider, error) {
	if in.ClientSecret == "" {
		return domain.IdentityProvider{}, errSecretRequired
	}
	p, err := ps.build(domain.IdentityProvider{Enabled: true}, in)
	if err != nil {
		return domain.IdentityProvider{}, err
	}
	if p, err = domain.NewIdentityProvider(p, ps.clock.Now()); err != nil {
		return domain.IdentityProvider{}, err
	}
	if err := ps.checkDomains(ctx, p); err != nil {
		return domain.IdentityProvider{}, err
	}
	if err := ps.providers.Create(ctx, p); err != nil {
		return domain.IdentityProvider{}, err
	}
	return p, ps.endSessions(ctx, domain.IdentityProvider{}, p)
}

// update applies in to provider in.ID, which must belong to org unless org
// is "" (an administrator's update), ending the sessions its requirement
// now covers and did not before.
func (ps *Providers) update(ctx context.Context, in ProviderInput, org string, emit usecase.Emit) (domain.IdentityProvider, error) {
	var out, before domain.IdentityProvider
	id, err := domain.ParseIdentityProviderID(in.ID, "id")
	if err != nil {
		return out, domain.ErrIdentityProviderNotFound
	}
	err = ps.providers.Update(ctx, id, func(p *domain.IdentityProvider) error {
		if org != "" && string(p.OrganizationID) != org {
			return domain.ErrIdentityProviderNotFound
		}
		next, err := ps.build(*p, in)
		if err != nil {
			return err
		}
		if next, err = domain.ReviseIdentityProvider(next, ps.clock.Now()); err != nil {
			return err
		}
		if err := ps.checkDomains(ctx, next); err != nil {
			return err
		}
		before, *p, out = *p, next, next
		return nil
	})
	if err != nil {
		return out, err
	}
	return out, ps.endSessions(ctx, before, out)
}

// Put creates the provider, or replaces every field given of an existing
// one (the providers file).
func (ps *Providers) Put(ctx context.Context, req usecase.KeyRequest, in ProviderInput) (domain.IdentityProvider, error) {
	p, err := ps.Update(ctx, req, in)
	if errors.Is(err, domain.ErrIdentityProviderNotFound) {
		return ps.Create(ctx, req, in)
	}
	return p, err
}

// build applies in to p, sealing a new secret.
func (ps *Providers) build(p domain.IdentityProvider, in ProviderInput) (domain.IdentityProvider, error) {
	p.ID = domain.IdentityProviderID(in.ID)
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	if in.Preset != nil {
		p.Preset = domain.IdentityProviderPreset(*in.Preset)
	}
	set(&p.Name, in.Name)
	set(&p.Issuer, in.Issuer)
	set(&p.ClientID, in.ClientID)
	if in.Scopes != nil {
		p.Scopes = append([]string(nil), (*in.Scopes)...)
	}
	if in.Endpoints != nil {
		p.Endpoints = *in.Endpoints
	}
	if in.TrustedForLinking != nil {
		p.TrustedForLinking = *in.TrustedForLinking
	}
	if in.Enabled != nil {
		p.Enabled = *in.Enabled
	}
	if in.OrganizationID != nil {
		p.OrganizationID = domain.OrganizationID(*in.OrganizationID)
	}
	if in.Domains != nil {
		p.Domains = p.Domains[:0:0]
		for _, d := range *in.Domains {
			p.Domains = append(p.Domains, domain.DomainID(d))
		}
	}
	if in.DefaultRole != nil {
		p.DefaultRole = domain.OrgRole(*in.DefaultRole)
	}
	if in.RequireSSO != nil {
		p.RequireSSO = *in.RequireSSO
	}
	if in.ClientSecret != "" {
		if len(in.ClientSecret) > 4096 {
			return p, domain.Invalid("identity_provider.invalid", "Invalid identity provider",
				domain.FieldViolation{Field: "clientSecret", Message: "must be at most 4096 bytes"})
		}
		if _, err := domain.ParseIdentityProviderID(in.ID, "id"); err != nil {
			return p, err
		}
		sealed, err := ps.sealer.Seal(domain.SealIdentityProviderSecret, in.ID, []byte(in.ClientSecret))
		if err != nil {
			return p, err
		}
		p.SealedClientSecret = sealed
	}
	return p, nil
}

// checkDomains refuses a domain that does not exist or belongs to another
// organization than p's.
func (ps *Providers) checkDomains(ctx context.Context, p domain.IdentityProvider) error {
	var bad []domain.FieldViolation
	for i, id := range p.Domains {
		d, err := ps.domains.Get(ctx, id)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			bad = append(bad, domain.FieldViolation{Field: "domains[" + strconv.Itoa(i) + "]", Message: "is not a domain"})
		case err != nil:
			return err
		case d.OrganizationID() != p.OrganizationID:
			bad = append(bad, domain.FieldViolation{Field: "domains[" + strconv.Itoa(i) + "]", Message: "belongs to another organization"})
		}
	}
	if len(bad) > 0 {
		return domain.Invalid("identity_provider.invalid", "Invalid identity provider", bad...)
	}
	return nil
}

// List returns every provider. Only a refusal is audited.
func (ps *Providers) List(ctx context.Context, req usecase.KeyRequest) ([]domain.IdentityProvider, error) {
	if err := ps.authorize(req.Principal); err != nil {
		return nil, ps.audit.Record(ctx, req.Actor, "admin.list-identity-providers", providerTarget(""), err)
	}
	return ps.providers.List(ctx)
}

// Get returns provider id. Only a refusal is audited.
func (ps *Providers) Get(ctx context.Context, req usecase.KeyRequest, id string) (domain.IdentityProvider, error) {
	if err := ps.authorize(req.Principal); err != nil {
		return domain.IdentityProvider{}, ps.audit.Record(ctx, req.Actor, "admin.get-identity-provider", providerTarget(id), err)
	}
	pid, err := domain.ParseIdentityProviderID(id, "id")
	if err != nil {
		return domain.IdentityProvider{}, domain.ErrIdentityProviderNotFound
	}
	return ps.providers.Get(ctx, pid)
}

// Delete removes provider id with every account linked through it.
func (ps *Providers) Delete(ctx context.Context, req usecase.KeyRequest, id string) error {
	t := providerTarget(id)
	err := ps.audit.Change(ctx, req.Actor, "admin.delete-identity-provider", &t, func(ctx context.Context, _ usecase.Emit) error {
		if err := ps.authorize(req.Principal); err != nil {
			return err
		}
		pid, err := domain.ParseIdentityProviderID(id, "id")
		if err != nil {
			return domain.ErrIdentityProviderNotFound
		}
		return ps.providers.Delete(ctx, pid)
	})
	return err
}

// Enabled lists the enabled providers that anyone may sign in with (not an
// organization's), for the hosted sign-in page. It reads every provider:
// they are few.
func (ps *Providers) Enabled(ctx context.Context) ([]domain.IdentityProvider, error) {
	all, err := ps.providers.List(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, p := range all {
		if p.Enabled && p.OrganizationID == "" {
			out = append(out, p)
		}
	}
	return out, nil
}

// An organization's providers, managed by a trusted backend with a service
// key (organizations:read to list, organizations:write to change): only
// providers of the organization named in the path, which it can never
// move to another organization. Every change and refusal is audited.

// orgProviderTarget names the provider in the audit log.
func orgProviderTarget(id string) usecase.Target {
	return usecase.Target{Type: "identity_provider", ID: id}
}

// CreateForOrganization registers a provider of org.
func (ps *Providers) CreateForOrganization(ctx context.Context, req usecase.TrustedRequest, org string, in ProviderInput) (domain.IdentityProvider, error) {
	var out domain.IdentityProvider
	t := orgProviderTarget(in.ID)
	err := ps.audit.Change(ctx, req.Actor(), "organizations.create-identity-provider", &t, func(ctx context.Context, emit usecase.Emit) error {
		if err := req.Need(domain.ScopeOrganizationsWrite); err != nil {
			return err
		}
		in.OrganizationID = &org
		var err error
		out, err = ps.create(ctx, in, emit)
		return err
	})
	return out, err
}

// ListForOrganization returns org's providers.
func (ps *Providers) ListForOrganization(ctx context.Context, req usecase.TrustedRequest, org string) ([]domain.IdentityProvider, error) {
	if err := req.Need(domain.ScopeOrganizationsRead); err != nil {
		return nil, err
	}
	if _, err := ps.orgs.Get(ctx, domain.OrganizationID(org)); err != nil {
		return nil, err
	}
	all, err := ps.providers.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]domain.IdentityProvider, 0, len(all))
	for _, p := range all {
		if string(p.OrganizationID) == org {
			out = append(out, p)
		}
	}
	return out, nil
}

// UpdateForOrganization changes the fields given of org's provider.
func (ps *Providers) UpdateForOrganization(ctx context.Context, req usecase.TrustedRequest, org string, in ProviderInput) (domain.IdentityProvider, error) {
	var out domain.IdentityProvider
	t := orgProviderTarget(in.ID)
	err := ps.audit.Change(ctx, req.Actor(), "organizations.update-identity-provider", &t, func(ctx context.Context, emit usecase.Emit) error {
		if err := req.Need(domain.ScopeOrganizationsWrite); err != nil {
			return err
		}
		in.OrganizationID = &org
		var err error
		out, err = ps.update(ctx, in, org, emit)
		return err
	})
	return out, err
}

// DeleteForOrganization removes org's provider with its linked accounts.
func (ps *Providers) DeleteForOrganization(ctx context.Context, req usecase.TrustedRequest, org, id string) error {
	t := orgProviderTarget(id)
	err := ps.audit.Change(ctx, req.Actor(), "organizations.delete-identity-provider", &t, func(ctx context.Context, _ usecase.Emit) error {
		if err := req.Need(domain.ScopeOrganizationsWrite); err != nil {
			return err
		}
		pid, err := domain.ParseIdentityProviderID(id, "id")
		if err != nil {
			return domain.ErrIdentityProviderNotFound
		}
		p, err := ps.providers.Get(ctx, pid)
		if err != nil {
			return err
		}
		if string(p.OrganizationID) != org {
			return domain.ErrIdentityProviderNotFound
		}
		return ps.providers.Delete(ctx, pid)
	})
	return err
}
