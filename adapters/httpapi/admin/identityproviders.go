package admin

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// Administration of upstream identity providers under
// /api/admin/identity-providers (auth contract, problem+json errors). The
// rules live in federation.Providers; this file only translates. A client
// secret goes in and never comes out.

// CreateIdentityProviderInput registers a provider.
type CreateIdentityProviderInput struct {
	Body struct {
		ID string `json:"id" minLength:"1" maxLength:"64" doc:"1 to 64 characters of a-z, 0-9 and -; not credential." example:"google"`
		edge.IdentityProviderBody
	}
}

func (s *API) createIdentityProvider(ctx context.Context, in *CreateIdentityProviderInput) (*edge.IdentityProviderOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.IdentityProviders.Create(ctx, req, in.Body.Input(in.Body.ID))
	if err != nil {
		return nil, err
	}
	return &edge.IdentityProviderOutput{Status: http.StatusCreated, CacheControl: "no-store", Body: edge.ProviderJSON(p, s.Federation.RedirectURI(p.ID))}, nil
}

// IdentityProviderListOutput lists providers.
type IdentityProviderListOutput struct {
	Body struct {
		Data []edge.IdentityProviderJSON `json:"data" doc:"Every provider, by id."`
	}
}

func (s *API) listIdentityProviders(ctx context.Context, _ *struct{}) (*IdentityProviderListOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	all, err := s.IdentityProviders.List(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &IdentityProviderListOutput{}
	out.Body.Data = make([]edge.IdentityProviderJSON, len(all))
	for i, p := range all {
		out.Body.Data[i] = edge.ProviderJSON(p, s.Federation.RedirectURI(p.ID))
	}
	return out, nil
}

// IdentityProviderIDInput names a provider in the path.
type IdentityProviderIDInput struct {
	ID string `path:"id" minLength:"1" maxLength:"64" doc:"The provider's id."`
}

func (s *API) getIdentityProvider(ctx context.Context, in *IdentityProviderIDInput) (*edge.IdentityProviderOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.IdentityProviders.Get(ctx, req, in.ID)
	if err != nil {
		return nil, err
	}
	return &edge.IdentityProviderOutput{Status: http.StatusOK, Body: edge.ProviderJSON(p, s.Federation.RedirectURI(p.ID))}, nil
}

// UpdateIdentityProviderInput changes the fields present.
type UpdateIdentityProviderInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"64" doc:"The provider's id."`
	Body edge.IdentityProviderBody
}

func (s *API) updateIdentityProvider(ctx context.Context, in *UpdateIdentityProviderInput) (*edge.IdentityProviderOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.IdentityProviders.Update(ctx, req, in.Body.Input(in.ID))
	if err != nil {
		return nil, err
	}
	return &edge.IdentityProviderOutput{Status: http.StatusOK, CacheControl: "no-store", Body: edge.ProviderJSON(p, s.Federation.RedirectURI(p.ID))}, nil
}

func (s *API) setIdentityProviderEnabled(on bool) func(context.Context, *IdentityProviderIDInput) (*edge.IdentityProviderOutput, error) {
	return func(ctx context.Context, in *IdentityProviderIDInput) (*edge.IdentityProviderOutput, error) {
		return s.updateIdentityProvider(ctx, &UpdateIdentityProviderInput{ID: in.ID, Body: edge.IdentityProviderBody{Enabled: &on}})
	}
}

func (s *API) deleteIdentityProvider(ctx context.Context, in *IdentityProviderIDInput) (*edge.NoContentOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.IdentityProviders.Delete(ctx, req, in.ID); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// AddIdentityProviderRoutes registers the administrators' identity-provider
// routes.
func (s *API) AddIdentityProviderRoutes() {
	type op = huma.Operation
	const tag = "Identity providers"
	adminOp := func(o op) op {
		o.Path = edge.AdminBase + "/identity-providers" + o.Path
		o.Tags = []string{tag}
		o.Security = edge.SessionSecurity
		o.Description += " Needs a platform administrator's session: 401 without a session, 403 for anyone else."
		o.Errors = append(o.Errors, http.StatusUnauthorized, http.StatusForbidden)
		return o
	}
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "createIdentityProvider", Method: post, Path: "", DefaultStatus: http.StatusCreated,
		Summary: "Register an identity provider", Errors: []int{http.StatusBadRequest, http.StatusConflict, http.StatusNotFound},
		Description: "Registers an upstream provider users sign in with: a generic OpenID provider (discovery from its issuer) or a preset " +
			"(google, microsoft, gitlab as OpenID Connect; github as OAuth 2 with its API). Every endpoint can be overridden. The client secret is sealed " +
			"under the service secrets and never shown again. callbackUrl in the answer is the redirect URI to register at the provider."}),
		s.createIdentityProvider)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "listIdentityProviders", Method: get, Path: "",
		Summary: "List identity providers", Description: "Every provider, by id; never a secret."}), s.listIdentityProviders)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "getIdentityProvider", Method: get, Path: "/{id}",
		Summary: "Get an identity provider", Errors: []int{http.StatusNotFound}, Description: "One provider; never its secret."}), s.getIdentityProvider)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "updateIdentityProvider", Method: patch, Path: "/{id}",
		Summary: "Update an identity provider", Errors: []int{http.StatusBadRequest, http.StatusConflict, http.StatusNotFound},
		Description: "Changes the fields present. A clientSecret replaces the sealed one."}), s.updateIdentityProvider)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "disableIdentityProvider", Method: post, Path: "/{id}/disable",
		Summary: "Disable an identity provider", Errors: []int{http.StatusNotFound},
		Description: "Sign-ins with it stop (its id answers as unknown); its linked accounts are kept."}), s.setIdentityProviderEnabled(false))
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "enableIdentityProvider", Method: post, Path: "/{id}/enable",
		Summary: "Enable an identity provider", Errors: []int{http.StatusNotFound}, Description: "Sign-ins with it work again."}),
		s.setIdentityProviderEnabled(true))
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "deleteIdentityProvider", Method: del, Path: "/{id}", DefaultStatus: http.StatusNoContent,
		Summary: "Delete an identity provider", Errors: []int{http.StatusNotFound},
		Description: "Removes the provider with every account linked through it. Users left with no way to sign in can still reset a password."}),
		s.deleteIdentityProvider)
}
