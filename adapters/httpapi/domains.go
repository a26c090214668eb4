package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
)

// The domain routes: trusted backends claim hostnames for organizations and
// read how their DNS verification goes (backend contract, service keys);
// platform administrators reassign, recheck or verify them by hand (auth
// contract, PATCH /api/admin/domains/{id}). The rules live in
// command.Domains; this file only translates.

// DNSRecordJSON is one DNS record a domain's owner publishes, with what the
// last check observed.
type DNSRecordJSON struct {
	Type          string     `json:"type" enum:"TXT,CNAME" doc:"TXT: the ownership challenge. CNAME: the alias to the service, required when the service is configured with a CNAME target."`
	Name          string     `json:"name" doc:"The fully qualified name to publish the record at, without the trailing dot." example:"_gatehouse-challenge.shop.example.com"`
	Value         string     `json:"value" doc:"The value to publish: for TXT, gatehouse-verification= and the domain's random token (exactly this string, one of the name's TXT records); for CNAME, the target hostname." example:"gatehouse-verification=3kQ9vT2mXcR8pL1sN7bY4wZ6hJ0aE5dF"`
	Required      bool       `json:"required" doc:"Whether the domain is verified only once this record is seen (and fails when it stays missing past the grace period)."`
	Status        string     `json:"status" enum:"unchecked,found,missing,mismatch" doc:"What the last check saw: unchecked (never looked up), found (the expected value), missing (no such record, or the name does not exist), mismatch (records exist at the name, none with the expected value)."`
	Observed      []string   `json:"observed" nullable:"false" doc:"The values the last check saw at the name (at most five, each cut to 255 bytes), for comparing with value; empty when missing or unchecked. A failed lookup (SERVFAIL, timeout) leaves the last observation in place."`
	LastCheckedAt *time.Time `json:"lastCheckedAt" nullable:"true" doc:"When the record was last looked up with an answer; null before the first check."`
}

// DomainJSON is a domain and its DNS records.
type DomainJSON struct {
	ID             string          `json:"id" doc:"The domain's identifier."`
	Hostname       string          `json:"hostname" doc:"The hostname, normalised: lower-case, without a trailing dot, internationalised labels in punycode (xn--)." example:"shop.example.com"`
	OrganizationID *string         `json:"organizationId" nullable:"true" doc:"The organization the domain belongs to, or null."`
	Status         string          `json:"status" enum:"pending,verified,failed" doc:"pending: waiting for every required record to be seen; it turns failed when the verification window ends first. verified: every required record was seen (or an administrator verified it by hand); it turns failed when a required record stays missing longer than the grace period. failed: checked again only when an administrator asks for a recheck."`
	Attempts       int             `json:"attempts" doc:"Unsuccessful checks since the domain became pending, or since a verified domain's required record went missing (a lookup that failed, such as SERVFAIL or a timeout, counts too, and changes nothing else); the delay between checks doubles with each, up to the configured maximum. 0 once verified with every required record in place."`
	LastCheckedAt  *time.Time      `json:"lastCheckedAt" nullable:"true" doc:"When DNS was last looked up with an answer; null before the first check."`
	NextCheckAt    *time.Time      `json:"nextCheckAt" nullable:"true" doc:"When the verifier checks next; null for a failed domain and for one verified by hand."`
	VerifiedAt     *time.Time      `json:"verifiedAt" nullable:"true" doc:"When the domain was last verified; null if never."`
	FailedAt       *time.Time      `json:"failedAt" nullable:"true" doc:"When the domain last failed; null if never."`
	ManualReason   *string         `json:"manualVerificationReason" nullable:"true" doc:"Why a platform administrator marked the domain verified by hand, or null when DNS decides."`
	CreatedAt      time.Time       `json:"createdAt"`
	UpdatedAt      time.Time       `json:"updatedAt"`
	Records        []DNSRecordJSON `json:"records" nullable:"false" doc:"The records to publish, the TXT challenge first."`
}

func domainJSON(d *domain.Domain) DomainJSON {
	out := DomainJSON{ID: string(d.ID()), Hostname: d.Hostname(), Status: string(d.Status()), Attempts: d.Attempts(),
		LastCheckedAt: edge.OptionalTime(d.LastCheckedAt()), NextCheckAt: edge.OptionalTime(d.NextCheckAt()), VerifiedAt: edge.OptionalTime(d.VerifiedAt()),
		FailedAt: edge.OptionalTime(d.FailedAt()), CreatedAt: d.CreatedAt(), UpdatedAt: d.UpdatedAt(), Records: dnsRecordsJSON(d.Records())}
	if org := d.OrganizationID(); org != "" {
		s := string(org)
		out.OrganizationID = &s
	}
	if r := d.ManualReason(); r != "" {
		out.ManualReason = &r
	}
	return out
}

func dnsRecordsJSON(rs []domain.DNSRecord) []DNSRecordJSON {
	out := make([]DNSRecordJSON, len(rs))
	for i, r := range rs {
		observed := r.Observed
		if observed == nil {
			observed = []string{}
		}
		out[i] = DNSRecordJSON{Type: string(r.Type), Name: r.Name, Value: r.Value, Required: r.Required, Status: string(r.Status),
			Observed: observed, LastCheckedAt: edge.OptionalTime(r.LastCheckedAt)}
	}
	return out
}

// DomainOutput is one domain.
type DomainOutput struct {
	Body DomainJSON
}

func domainOutput(d *domain.Domain) *DomainOutput { return &DomainOutput{Body: domainJSON(d)} }

// CreateDomainInput claims a hostname.
type CreateDomainInput struct {
	Body struct {
		Hostname       string  `json:"hostname" minLength:"1" maxLength:"1024" doc:"The hostname to claim. It is normalised (lower-cased, trailing dot removed, internationalised names to punycode) and must be a DNS name of at least two labels, each at most 63 characters and 253 in all once encoded; an IP address, a wildcard or a bare public suffix (com, co.uk) is refused." example:"shop.example.com"`
		OrganizationID *string `json:"organizationId,omitempty" nullable:"true" maxLength:"128" doc:"The organization claiming the hostname; absent or null for none."`
	}
}

func (s *Server) createDomain(ctx context.Context, in *CreateDomainInput) (*DomainOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeDomainsWrite)
	if err != nil {
		return nil, err
	}
	cmd := command.CreateDomain{Hostname: in.Body.Hostname}
	if in.Body.OrganizationID != nil {
		cmd.OrganizationID = domain.OrganizationID(*in.Body.OrganizationID)
	}
	d, err := s.App.Commands.Domains.Create(ctx, req, cmd)
	if err != nil {
		return nil, err
	}
	return domainOutput(d), nil
}

// DomainIDInput names a domain in the path.
type DomainIDInput struct {
	ID string `path:"id" minLength:"1" maxLength:"128" doc:"The domain's id."`
}

func (s *Server) getDomain(ctx context.Context, in *DomainIDInput) (*DomainOutput, error) {
	if _, err := s.trustedRequest(ctx, domain.ScopeDomainsRead); err != nil {
		return nil, err
	}
	d, err := s.App.Commands.Domains.Get(ctx, domain.DomainID(in.ID))
	if err != nil {
		return nil, err
	}
	return domainOutput(d), nil
}

// DomainHostnameInput names a domain by hostname in the path.
type DomainHostnameInput struct {
	Hostname string `path:"hostname" minLength:"1" maxLength:"1024" doc:"The hostname, in any spelling that normalises to the domain's (case, trailing dot, Unicode or punycode)." example:"shop.example.com"`
}

func (s *Server) getDomainByHostname(ctx context.Context, in *DomainHostnameInput) (*DomainOutput, error) {
	if _, err := s.trustedRequest(ctx, domain.ScopeDomainsRead); err != nil {
		return nil, err
	}
	d, err := s.App.Commands.Domains.GetByHostname(ctx, in.Hostname)
	if err != nil {
		return nil, err
	}
	return domainOutput(d), nil
}

// DNSRecordsOutput lists a domain's records.
type DNSRecordsOutput struct {
	Body struct {
		Records []DNSRecordJSON `json:"records" nullable:"false" doc:"The records to publish, the TXT challenge first."`
	}
}

func (s *Server) domainRecords(ctx context.Context, in *DomainIDInput) (*DNSRecordsOutput, error) {
	if _, err := s.trustedRequest(ctx, domain.ScopeDomainsRead); err != nil {
		return nil, err
	}
	rs, err := s.App.Commands.Domains.Records(ctx, domain.DomainID(in.ID))
	if err != nil {
		return nil, err
	}
	out := &DNSRecordsOutput{}
	out.Body.Records = dnsRecordsJSON(rs)
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
		Data       []DomainJSON `json:"data" nullable:"false" doc:"The page's domains, newest first."`
		NextCursor *string      `json:"nextCursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last."`
	}
}

func (s *Server) listDomains(ctx context.Context, in *ListDomainsInput) (*DomainsOutput, error) {
	if _, err := s.trustedRequest(ctx, domain.ScopeDomainsRead); err != nil {
		return nil, err
	}
	page, err := s.App.Commands.Domains.List(ctx, command.ListDomains{OrganizationID: domain.OrganizationID(in.OrganizationID),
		Status: domain.DomainStatus(in.Status), Limit: in.Limit, Cursor: in.Cursor})
	if err != nil {
		return nil, err
	}
	out := &DomainsOutput{}
	out.Body.Data = make([]DomainJSON, len(page.Domains))
	for i, d := range page.Domains {
		out.Body.Data[i] = domainJSON(d)
	}
	if page.NextCursor != "" {
		out.Body.NextCursor = &page.NextCursor
	}
	return out, nil
}

func (s *Server) deleteDomain(ctx context.Context, in *DomainIDInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeDomainsWrite)
	if err != nil {
		return nil, err
	}
	if err := s.App.Commands.Domains.Delete(ctx, req, domain.DomainID(in.ID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// ManualVerificationJSON marks a domain verified by hand.
type ManualVerificationJSON struct {
	Reason string `json:"reason" minLength:"1" maxLength:"500" doc:"Why the domain is verified without DNS (1 to 500 characters), kept on the domain." example:"Verified by phone with the registrant, ticket 4711"`
}

// AdminUpdateDomainInput is an administrator's change to a domain.
type AdminUpdateDomainInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"128" doc:"The domain's id."`
	Body struct {
		OrganizationID edge.NullableString     `json:"organizationId,omitempty" doc:"Move the domain to this organization; null (or \"\") detaches it from any organization."`
		Recheck        bool                    `json:"recheck,omitempty" doc:"true: check DNS now. A failed domain becomes pending with a fresh verification window; a domain verified by hand goes back to DNS (it stays verified while its records are found, with the grace period)."`
		Verify         *ManualVerificationJSON `json:"verify,omitempty" doc:"Mark the domain verified by hand; DNS no longer decides until a recheck is asked. Excludes recheck."`
	}
}

func (s *Server) adminUpdateDomain(ctx context.Context, in *AdminUpdateDomainInput) (*DomainOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	cmd := command.UpdateDomain{SetOrganization: b.OrganizationID.IsSet(), OrganizationID: domain.OrganizationID(b.OrganizationID.Value()), Recheck: b.Recheck}
	if b.Verify != nil {
		cmd.VerifyReason = &b.Verify.Reason
	}
	d, err := s.App.Commands.Domains.Update(ctx, req, domain.DomainID(in.ID), cmd)
	if err != nil {
		return nil, err
	}
	return domainOutput(d), nil
}

// addDomainRoutes registers the domain routes (/api/domains, and PATCH /api/admin/domains/{id}).
func (s *Server) addDomainRoutes() {
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

	register(s, edge.ContractAuth, op{OperationID: "adminUpdateDomain", Method: http.MethodPatch, Path: edge.AdminBase + "/domains/{id}", Tags: []string{tag},
		Summary: "Administer a domain", Security: edge.SessionSecurity,
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
		Description: "A platform administrator's change, applied atomically: organizationId moves the domain to another organization (null detaches it; " +
			"an unknown one is 404 organization.not_found naming body.organizationId); recheck: true checks DNS now (a failed domain becomes pending with a " +
			"fresh window); verify: {reason} marks it verified by hand (reason 1 to 500 characters, 400 naming body.verify.reason otherwise). recheck and " +
			"verify exclude each other; a body changing nothing is 400. Answers 200 with the domain. Needs a platform administrator's session: 401 without " +
			"a session, 403 auth.not_platform_admin for anyone else. Audited as admin.update-domain, refusals included." + notFound},
		s.adminUpdateDomain)
}
