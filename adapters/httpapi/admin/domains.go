package admin

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/domain"
)

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

func (s *API) adminUpdateDomain(ctx context.Context, in *AdminUpdateDomainInput) (*edge.DomainOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	cmd := hostdomain.UpdateDomain{SetOrganization: b.OrganizationID.IsSet(), OrganizationID: domain.OrganizationID(b.OrganizationID.Value()), Recheck: b.Recheck}
	if b.Verify != nil {
		cmd.VerifyReason = &b.Verify.Reason
	}
	d, err := s.Domains.Update(ctx, req, domain.DomainID(in.ID), cmd)
	if err != nil {
		return nil, err
	}
	return edge.DomainOutputOf(d), nil
}

// addAdminDomainRoutes registers PATCH /api/admin/domains/{id}.
func (s *API) AddAdminDomainRoutes() {
	type op = huma.Operation
	const (
		tag      = "Domains"
		notFound = " An unknown id is 404 domain.not_found."
	)
	edge.Add(s.routes, edge.ContractAuth, op{OperationID: "adminUpdateDomain", Method: http.MethodPatch, Path: edge.AdminBase + "/domains/{id}", Tags: []string{tag},
		Summary: "Administer a domain", Security: edge.SessionSecurity,
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound},
		Description: "A platform administrator's change, applied atomically: organizationId moves the domain to another organization (null detaches it; " +
			"an unknown one is 404 organization.not_found naming body.organizationId); recheck: true checks DNS now (a failed domain becomes pending with a " +
			"fresh window); verify: {reason} marks it verified by hand (reason 1 to 500 characters, 400 naming body.verify.reason otherwise). recheck and " +
			"verify exclude each other; a body changing nothing is 400. Answers 200 with the domain. Needs a platform administrator's session: 401 without " +
			"a session, 403 auth.not_platform_admin for anyone else. Audited as admin.update-domain, refusals included." + notFound},
		s.adminUpdateDomain)
}
