package backend

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/domain"
)

// The domain routes: trusted backends claim hostnames for organizations and
// read how their DNS verification goes (backend contract, service keys);
// platform administrators reassign, recheck or verify them by hand (auth
// contract, PATCH /api/admin/domains/{id}). The rules live in
// hostdomain.Domains; this file only translates.

// CreateDomainInput claims a hostname.
type CreateDomainInput struct {
	Body struct {
		Hostname       string  `json:"hostname" minLength:"1" maxLength:"1024" doc:"The hostname to claim. It is normalised (lower-cased, trailing dot removed, internationalised names to punycode) and must be a DNS name of at least two labels, each at most 63 characters and 253 in all once encoded; an IP address, a wildcard or a bare public suffix (com, co.uk) is refused." example:"shop.example.com"`
		OrganizationID *string `json:"organizationId,omitempty" nullable:"true" maxLength:"128" doc:"The organization claiming the hostname; absent or null for none."`
	}
}

func (s *API) createDomain(ctx context.Context, in *CreateDomainInput) (*edge.DomainOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeDomainsWrite)
	if err != nil {
		return nil, err
	}
	cmd := hostdomain.CreateDomain{Hostname: in.Body.Hostname}
	if in.Body.OrganizationID != nil {
		cmd.OrganizationID = domain.OrganizationID(*in.Body.OrganizationID)
	}
	d, err := s.Domains.Create(ctx, req, cmd)
	if err != nil {
		return nil, err
	}
	return edge.DomainOutputOf(d), nil
}

// DomainIDInput names a domain in the path.
type DomainIDInput struct {
	ID string `path:"id" minLength:"1" maxLength:"128" doc:"The domain's id."`
}

func (s *API) getDomain(ctx context.Context, in *DomainIDInput) (*edge.DomainOutput, error) {
	if _, err := s.trustedRequest(ctx, domain.ScopeDomainsRead); err != nil {
		return nil, err
	}
	d, err := s.Domains.Get(ctx, domain.DomainID(in.ID))
	if err != nil {
		return nil, err
	}
	return edge.DomainOutputOf(d), nil
}

// DomainHostnameInput names a domain by hostname in the path.
type DomainHostnameInput struct {
	Hostname string `path:"hostname" minLength:"1" maxLength:"1024" doc:"The hostname, in any spelling that normalises to the domain's (case, trailing dot, Unicode or punycode)." example:"shop.example.com"`
}

func (s *API) getDomainByHostname(ctx context.Context, in *DomainHostnameInput) (*edge.DomainOutput, error) {
	if _, err := s.trustedRequest(ctx, domain.ScopeDomainsRead); err != nil {
		return nil, err
	}
	d, err := s.Domains.GetByHostname(ctx, in.Hostname)
	if err != nil {
		return nil, err
	}
	return edge.DomainOutputOf(d), nil
}

// DNSRecordsOutput lists a domain's records.
type DNSRecordsOutput struct {
	Body struct {
		Records []edge.DNSRecordJSON `json:"records" nullable:"false" doc:"The records to publish, the TXT challenge first."`
	}
}

func (s *API) domainRecords(ctx context.Context, in *DomainIDInput) (*DNSRecordsOutput, error) {
	if _, err := s.trustedRequest(ctx, domain.ScopeDomainsRead); err != nil {
		return nil, err
	}
	rs, err := s.Domains.Records(ctx, domain.DomainID(in.ID))
	if err != nil {
		return nil, err
	}
	out := &DNSRecordsOutput{}
	out.Body.Records = edge.DNSRecordsJSONOf(rs)
	return out, nil
}

// ListDomainsInput filters and pages domains.
type ListDomainsInput struct {
	Limit          int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size."`
	Cursor         string `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page; absent for the first page."`
	OrganizationID string `query:"organizationId" maxLength:"128" doc:"Only this organization's domains."`
	Status         string `query:"status" enum:"pending,verified,failed" doc:"Only domains in this status."`
}

// DomainsOutput is a page of domains.
type DomainsOutput struct {
	Body struct {
		Data       []edge.DomainJSON `json:"data" nullable:"false" doc:"The page's domains, newest first."`
		NextCursor *string           `json:"nextCursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last."`
	}
}

func (s *API) listDomains(ctx context.Context, in *ListDomainsInput) (*DomainsOutput, error) {
	if _, err := s.trustedRequest(ctx, domain.ScopeDomainsRead); err != nil {
		return nil, err
	}
	page, err := s.Domains.List(ctx, hostdomain.ListDomains{OrganizationID: domain.OrganizationID(in.OrganizationID),
		Status: domain.DomainStatus(in.Status), Limit: in.Limit, Cursor: in.Cursor})
	if err != nil {
		return nil, err
	}
	out := &DomainsOutput{}
	out.Body.Data = make([]edge.DomainJSON, len(page.Domains))
	for i, d := range page.Domains {
		out.Body.Data[i] = edge.DomainJSONOf(d)
	}
	if page.NextCursor != "" {
		out.Body.NextCursor = &page.NextCursor
	}
	return out, nil
}

func (s *API) deleteDomain(ctx context.Context, in *DomainIDInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeDomainsWrite)
	if err != nil {
		return nil, err
	}
	if err := s.Domains.Delete(ctx, req, domain.DomainID(in.ID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// addDomainRoutes registers the trusted domain routes (/api/domains).
func (s *API) AddDomainRoutes() {
	type op = huma.Operation
	const (
		tag      = "Domains"
		base     = "/api/domains"
		notFound = " An unknown id is 404 domain.not_found."
		audited  = " Audited, with the service key as the actor."
	)
	read, write := domain.ScopeDomainsRead, domain.ScopeDomainsWrite
	registerTrusted(s, write, op{OperationID: "createDomain", Method: http.MethodPost, Path: base, Tags: []string{tag},
		Summary: "Claim a domain", DefaultStatus: http.StatusCreated, Errors: []int{http.StatusNotFound, http.StatusConflict},
		Description: "Claims a hostname, optionally for an organization, and answers 201 with the domain, pending, and the DNS records its owner must publish: " +
			"a TXT record at _gatehouse-challenge.<hostname> holding gatehouse-verification= and a random token of 32 characters (about 190 bits), and, when " +
			"the service is configured with a CNAME target, a CNAME from the hostname to it. The background verifier checks them at once and then with backoff; " +
			"the domain turns verified when every required record is seen, or failed when the verification window ends first. " +
			"The hostname is normalised and validated; every refusal is 400 naming body.hostname. A hostname is unique in the service, whatever the " +
			"organization: a second claim is 409 domain.hostname_taken. An unknown organization is 404 organization.not_found naming body.organizationId." + audited},
		s.createDomain)
	registerTrusted(s, read, op{OperationID: "listDomains", Method: http.MethodGet, Path: base, Tags: []string{tag},
		Summary: "List domains",
		Description: "One page of domains, newest first (creation time, then id), as {data, nextCursor}, optionally only one organization's or one status's. " +
			"Pass nextCursor as cursor for the next page; it is null on the last. Pages are read by keyset through an index, so every page costs the same " +
			"at any depth. A malformed cursor is 400 naming query.cursor."},
		s.listDomains)
	registerTrusted(s, read, op{OperationID: "getDomain", Method: http.MethodGet, Path: base + "/{id}", Tags: []string{tag},
		Summary: "Get a domain", Errors: []int{http.StatusNotFound},
		Description: "The domain with its verification state and DNS records." + notFound},
		s.getDomain)
	registerTrusted(s, read, op{OperationID: "getDomainByHostname", Method: http.MethodGet, Path: base + "/by-hostname/{hostname}", Tags: []string{tag},
		Summary: "Get a domain by hostname", Errors: []int{http.StatusNotFound},
		Description: "The domain whose hostname equals this one once normalised (case, trailing dot and Unicode or punycode spellings find the same domain); " +
			"one lookup through the unique index. A hostname no domain could have is 400 naming path.hostname; an unclaimed one 404 domain.not_found."},
		s.getDomainByHostname)
	registerTrusted(s, read, op{OperationID: "getDomainDNSRecords", Method: http.MethodGet, Path: base + "/{id}/dns-records", Tags: []string{tag},
		Summary: "A domain's DNS records", Errors: []int{http.StatusNotFound},
		Description: "The records the domain's owner publishes, each with whether it is required, what the last check observed and when." + notFound},
		s.domainRecords)
	registerTrusted(s, write, op{OperationID: "deleteDomain", Method: http.MethodDelete, Path: base + "/{id}", Tags: []string{tag},
		Summary: "Delete a domain", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
		Description: "Releases the hostname, which can then be claimed again (with a new token). Answers 204." + notFound + audited},
		s.deleteDomain)
}
