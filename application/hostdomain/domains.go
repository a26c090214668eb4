package hostdomain

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// DomainSettings are the rules of domain verification.
type DomainSettings struct {
	// CNAMETarget, when set, is the normalised hostname every domain must
	// point a CNAME record to, besides publishing its TXT challenge.
	CNAMETarget string
	// Policy says when checks happen, how long a pending domain has to
	// publish its records and how long a verified one may lose them.
	Policy domain.VerificationPolicy
	// CheckBatch is how many due domains one verifier pass checks
	// (DefaultCheckBatch when zero).
	CheckBatch int
	// CheckLease is how long a pass's claim on its domains lasts
	// (DefaultCheckLease when zero).
	CheckLease time.Duration
}

// DomainTokenLength is the length of a domain's challenge token: 32
// characters of [A-Za-z0-9], about 190 bits.
const DomainTokenLength = 32

// The domain errors of the trusted and admin APIs.
var (
	errDomainHostnameTaken = &domain.Error{Kind: domain.KindConflict, Code: domain.ErrHostnameTaken.Code, Message: domain.ErrHostnameTaken.Message,
		Fields: []domain.FieldViolation{{Field: "hostname", Message: "is taken by another domain"}}}
	errDomainBadStatus = domain.Invalid("request.invalid_status", "Invalid status", domain.FieldViolation{Field: "status", Message: "must be pending, verified or failed"})
)

// domainOrgNotFound is a missing organization named at location.
func domainOrgNotFound(location string) error {
	return &domain.Error{Kind: domain.KindNotFound, Code: "organization.not_found", Message: "Organization not found",
		Fields: []domain.FieldViolation{{Field: location, Message: "is not an organization"}}}
}

// Domains is the use cases of domains: trusted backends create, read and
// delete them, platform administrators reassign, recheck or verify them by
// hand, and the verifier (CheckDue) checks their DNS records.
type Domains struct {
	domains  ports.DomainRepository
	orgs     ports.OrganizationRepository
	resolver ports.DNSResolver
	tokens   ports.TokenGenerator
	ids      ports.IDGenerator
	clock    ports.Clock
	audit    usecase.Auditor
	admins   domain.PlatformAdmins
	settings DomainSettings
	// wake tells the verifier that a domain is due now (see Woken).
	wake chan struct{}
	sso  usecase.SSOSessions // nil: nothing is required
}

// NewDomains returns the domain use cases.
func NewDomains(domains ports.DomainRepository, orgs ports.OrganizationRepository, resolver ports.DNSResolver, audit usecase.Auditor,
	tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, settings DomainSettings, admin usecase.AdminSettings) *Domains {
	usecase.MustHave(domains, orgs, resolver, tokens, ids, clock)
	return &Domains{domains: domains, orgs: orgs, resolver: resolver, tokens: tokens, ids: ids, clock: clock,
		audit: audit, admins: admin.Admins, settings: settings, wake: make(chan struct{}, 1)}
}

// UseSSO ends, with each change that makes a domain verified (or moves a
// verified one), the sessions that its provider's "SSO required" now
// covers.
func (s *Domains) UseSSO(sessions usecase.SSOSessions) *Domains {
	usecase.MustHave(sessions)
	s.sso = sessions
	return s
}

// Woken receives when a domain became due now (created, or a recheck was
// asked), so a verifier in this process checks it without waiting for its
// next tick. Verifiers in other processes find it on their next tick.
func (s *Domains) Woken() <-chan struct{} { return s.wake }

func (s *Domains) wakeVerifier() {
	select {
	case s.wake <- struct{}{}:
	default: // already woken
	}
}

func domainTarget(id domain.DomainID) usecase.Target {
	return usecase.Target{Type: "domain", ID: string(id)}
}

// CreateDomain names the hostname to claim and, optionally, the
// organization that claims it.
type CreateDomain struct {
	Hostname       string
	OrganizationID domain.OrganizationID
}

// Create claims a hostname: normalised and validated (errors at
// hostname), unique in the service (409 domain.hostname_taken), for an
// existing organization (404 organization.not_found naming
// organizationId) or none. The domain is pending with a fresh random
// challenge, and its first check is due at once. Audited as domains.create,
// with domain.created.
func (s *Domains) Create(ctx context.Context, req usecase.TrustedRequest, cmd CreateDomain) (*domain.Domain, error) {
	return s.create(ctx, req, "domains.create", cmd)
}

// create claims cmd's hostname for req, audited as action (see Create).
func (s *Domains) create(ctx context.Context, req usecase.Caller, action string, cmd CreateDomain) (*domain.Domain, error) {
	var created *domain.Domain
	t := usecase.Target{Type: "domain"}
	err := s.audit.Change(ctx, req.Actor(), action, &t, func(ctx context.Context, emit usecase.Emit) error {
		host, err := domain.NormalizeHostname(cmd.Hostname, "hostname")
		if err != nil {
			return err
		}
		if err := s.organizationExists(ctx, cmd.OrganizationID, "organizationId"); err != nil {
			return err
		}
		d := domain.NewDomain(domain.DomainID(s.ids.NewID()), host, cmd.OrganizationID, s.tokens.NewSecret(DomainTokenLength),
			s.settings.CNAMETarget, s.clock.Now())
		if err := s.domains.Create(ctx, d); err != nil {
			return domainStoreErr(err, "organizationId")
		}
		created, t.ID = d, string(d.ID())
		emit(domain.EventDomainCreated, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.wakeVerifier()
	return created, nil
}

// organizationExists refuses an organization that does not exist, naming
// location; "" (no organization) is fine.
func (s *Domains) organizationExists(ctx context.Context, org domain.OrganizationID, location string) error {
	if org == "" {
		return nil
	}
	if _, err := s.orgs.Get(ctx, org); errors.Is(err, domain.ErrNotFound) {
		return domainOrgNotFound(location)
	} else if err != nil {
		return err
	}
	return nil
}

// domainStoreErr gives the store's errors the API's codes: a taken
// hostname names hostname, an organization deleted meanwhile names
// orgLocation.
func domainStoreErr(err error, orgLocation string) error {
	switch {
	case errors.Is(err, domain.ErrHostnameTaken):
		return errDomainHostnameTaken
	case errors.Is(err, domain.ErrDomainNotFound):
		return err
	case errors.Is(err, domain.ErrNotFound):
		return domainOrgNotFound(orgLocation)
	}
	return err
}

// Get returns the domain id, or domain.not_found.
func (s *Domains) Get(ctx context.Context, id domain.DomainID) (*domain.Domain, error) {
	return s.domains.Get(ctx, id)
}

// GetByHostname returns the domain with hostname once normalised (so
// "Example.COM." and IDN spellings find it), or domain.not_found; a
// hostname that cannot be a domain's is invalid at path.hostname.
func (s *Domains) GetByHostname(ctx context.Context, hostname string) (*domain.Domain, error) {
	host, err := domain.NormalizeHostname(hostname, "hostname")
	if err != nil {
		return nil, err
	}
	return s.domains.GetByHostname(ctx, host)
}

// Records returns the DNS records of domain id, with what the last check
// observed, or domain.not_found.
func (s *Domains) Records(ctx context.Context, id domain.DomainID) ([]domain.DNSRecord, error) {
	d, err := s.domains.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return d.Records(), nil
}

// ListDomains filters and pages domains.
type ListDomains struct {
	OrganizationID domain.OrganizationID
	Status         domain.DomainStatus // "" for every status
	Limit          int                 // 1 to 100
	Cursor         string              // NextCursor of the previous page
}

// DomainPage is one page of domains, newest first, and the cursor of the
// next page ("" on the last).
type DomainPage struct {
	Domains    []*domain.Domain
	NextCursor string
}

// List returns a page of domains, newest first, read through an index from
// the cursor so every page costs the same.
func (s *Domains) List(ctx context.Context, q ListDomains) (DomainPage, error) {
	after, err := usecase.PageRequest(q.Limit, q.Cursor)
	if err != nil {
		return DomainPage{}, err
	}
	switch q.Status {
	case "", domain.DomainPending, domain.DomainVerified, domain.DomainFailed:
	default:
		return DomainPage{}, errDomainBadStatus
	}
	f := ports.DomainQuery{OrganizationID: q.OrganizationID, Status: q.Status, Limit: q.Limit, After: after}
	page, err := s.domains.List(ctx, f)
	if err != nil {
		return DomainPage{}, err
	}
	out := DomainPage{Domains: page.Domains}
	out.NextCursor = usecase.NextCursor(page.Next)
	return out, nil
}

// Delete removes the domain id, or answers domain.not_found. Audited as
// domains.delete, with domain.deleted (the domain as it was).
func (s *Domains) Delete(ctx context.Context, req usecase.TrustedRequest, id domain.DomainID) error {
	return s.delete(ctx, req, "domains.delete", id)
}

// delete removes domain id for req, audited as action (see Delete).
func (s *Domains) delete(ctx context.Context, req usecase.Caller, action string, id domain.DomainID) error {
	t := domainTarget(id)
	return s.audit.Change(ctx, req.Actor(), action, &t, func(ctx context.Context, emit usecase.Emit) error {
		d, err := s.domains.Get(ctx, id)
		if err != nil {
			return err
		}
		emit(domain.EventDomainDeleted, d)
		return s.domains.Delete(ctx, id)
	})
}
