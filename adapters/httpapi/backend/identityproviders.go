package backend

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/domain"
)

// An organization's identity providers (enterprise SSO) on the trusted
// API: the rules live in federation.Providers; this file only translates.

// OrgProviderCreateInput registers a provider of the organization.
type OrgProviderCreateInput struct {
	Org  string `path:"id" minLength:"1" maxLength:"128" doc:"The organization's id."`
	Body struct {
		ID string `json:"id" minLength:"1" maxLength:"64" doc:"1 to 64 characters of a-z, 0-9 and -; not credential." example:"acme-sso"`
		edge.IdentityProviderBody
	}
}

// OrgProviderInput names one provider of the organization.
type OrgProviderInput struct {
	Org string `path:"id" minLength:"1" maxLength:"128" doc:"The organization's id."`
	ID  string `path:"providerId" minLength:"1" maxLength:"64" doc:"The provider's id."`
}

// OrgProviderUpdateInput changes the fields present.
type OrgProviderUpdateInput struct {
	OrgProviderInput
	Body edge.IdentityProviderBody
}

// OrgProviderListOutput lists the organization's providers.
type OrgProviderListOutput struct {
	Body struct {
		Data []edge.IdentityProviderJSON `json:"data" doc:"The organization's providers, by id."`
	}
}

func (s *API) createOrgProvider(ctx context.Context, in *OrgProviderCreateInput) (*edge.IdentityProviderOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	p, err := s.IdentityProviders.CreateForOrganization(ctx, req, in.Org, in.Body.Input(in.Body.ID))
	if err != nil {
		return nil, err
	}
	return &edge.IdentityProviderOutput{Status: http.StatusCreated, CacheControl: "no-store", Body: edge.ProviderJSON(p, s.Federation.RedirectURI(p.ID))}, nil
}

func (s *API) listOrgProviders(ctx context.Context, in *OrgProviderInput) (*OrgProviderListOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsRead)
	if err != nil {
		return nil, err
	}
	all, err := s.IdentityProviders.ListForOrganization(ctx, req, in.Org)
	if err != nil {
		return nil, err
	}
	out := &OrgProviderListOutput{}
	out.Body.Data = make([]edge.IdentityProviderJSON, len(all))
	for i, p := range all {
		out.Body.Data[i] = edge.ProviderJSON(p, s.Federation.RedirectURI(p.ID))
	}
	return out, nil
}

func (s *API) updateOrgProvider(ctx context.Context, in *OrgProviderUpdateInput) (*edge.IdentityProviderOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	p, err := s.IdentityProviders.UpdateForOrganization(ctx, req, in.Org, in.Body.Input(in.ID))
	if err != nil {
		return nil, err
	}
	return &edge.IdentityProviderOutput{Status: http.StatusOK, CacheControl: "no-store", Body: edge.ProviderJSON(p, s.Federation.RedirectURI(p.ID))}, nil
}

func (s *API) deleteOrgProvider(ctx context.Context, in *OrgProviderInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeOrganizationsWrite)
	if err != nil {
		return nil, err
	}
	if err := s.IdentityProviders.DeleteForOrganization(ctx, req, in.Org, in.ID); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// AddOrgProviderRoutes registers an organization's identity providers on
// the trusted API.
func (s *API) AddOrgProviderRoutes() {
	type op = huma.Operation
	const tag = "Organizations"
	base := "/api/organizations/{id}/identity-providers"
	read, write := domain.ScopeOrganizationsRead, domain.ScopeOrganizationsWrite
	audited := " Audited with the key as the actor."
	registerTrusted(s, write, op{OperationID: "createOrganizationIdentityProvider", Method: http.MethodPost, Path: base, Tags: []string{tag},
		Summary: "Register the organization's identity provider", DefaultStatus: http.StatusCreated,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		Description: "Enterprise SSO: the organization's own OpenID provider (preset oidc, microsoft, google, gitlab), bound to some of its domains " +
			"(domains: their ids). Addresses at those domains, while verified by DNS, are routed to it; it may sign in no other address; new people " +
			"join the organization with defaultRole; with requireSso their passwords are refused. The client secret is sealed and never shown; " +
			"organizationId is the path's. 404 when the organization does not exist." + audited}, s.createOrgProvider)
	registerTrusted(s, read, op{OperationID: "listOrganizationIdentityProviders", Method: http.MethodGet, Path: base, Tags: []string{tag},
		Summary: "List the organization's identity providers", Description: "Never a secret."},
		func(ctx context.Context, in *struct {
			Org string `path:"id" minLength:"1" maxLength:"128" doc:"The organization's id."`
		}) (*OrgProviderListOutput, error) {
			return s.listOrgProviders(ctx, &OrgProviderInput{Org: in.Org})
		})
	registerTrusted(s, write, op{OperationID: "updateOrganizationIdentityProvider", Method: http.MethodPatch, Path: base + "/{providerId}", Tags: []string{tag},
		Summary: "Update the organization's identity provider", Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		Description: "Changes the fields present; a provider of another organization is not found." + audited}, s.updateOrgProvider)
	registerTrusted(s, write, op{OperationID: "deleteOrganizationIdentityProvider", Method: http.MethodDelete, Path: base + "/{providerId}", Tags: []string{tag},
		Summary: "Delete the organization's identity provider", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
		Description: "Removes it with every account linked through it." + audited}, s.deleteOrgProvider)
}
