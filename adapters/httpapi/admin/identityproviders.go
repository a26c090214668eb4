package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/domain"
)

// Administration of upstream identity providers under
// /api/admin/identity-providers (auth contract, problem+json errors). The
// rules live in federation.Providers; this file only translates. A client
// secret goes in and never comes out.

// EndpointsJSON overrides where a provider is reached.
type EndpointsJSON struct {
	Authorization string `json:"authorization,omitempty" maxLength:"2048" doc:"The authorization endpoint (default: discovery, or GitHub's)."`
	Token         string `json:"token,omitempty" maxLength:"2048" doc:"The token endpoint."`
	UserInfo      string `json:"userinfo,omitempty" maxLength:"2048" doc:"The userinfo endpoint."`
	JWKS          string `json:"jwks,omitempty" maxLength:"2048" doc:"The key set the ID tokens are signed with."`
	API           string `json:"api,omitempty" maxLength:"2048" doc:"GitHub's REST API root (https://api.github.com)."`
}

// IdentityProviderJSON is a provider as administrators see it: never its
// secret.
type IdentityProviderJSON struct {
	ID                string        `json:"id" example:"google" doc:"The provider's id: sign-in/social's provider and the callback's path."`
	Preset            string        `json:"preset" enum:"oidc,google,microsoft,gitlab,github"`
	Name              string        `json:"name" example:"Google" doc:"What the hosted sign-in page's button says."`
	Issuer            string        `json:"issuer,omitempty" example:"https://accounts.google.com"`
	ClientID          string        `json:"clientId"`
	ClientSecretSet   bool          `json:"clientSecretSet" doc:"Always true: the secret is sealed at rest and never shown."`
	Scopes            []string      `json:"scopes"`
	Endpoints         EndpointsJSON `json:"endpoints"`
	TrustedForLinking bool          `json:"trustedForLinking" doc:"A new upstream identity joins the local user of its address when the provider also says it is verified and the local address is verified."`
	Enabled           bool          `json:"enabled"`
	OrganizationID    string        `json:"organizationId,omitempty" doc:"Set for an organization's enterprise SSO provider."`
	Domains           []string      `json:"domains" doc:"The organization's verified domains routed to this provider (ids)."`
	DefaultRole       string        `json:"defaultRole,omitempty" doc:"The role of members provisioned on their first sign-in."`
	RequireSSO        bool          `json:"requireSso" doc:"Addresses at its domains may not sign in with a password."`
	CallbackURL       string        `json:"callbackUrl" doc:"The redirect URI to register at the provider."`
	CreatedAt         time.Time     `json:"createdAt"`
	UpdatedAt         time.Time     `json:"updatedAt"`
}

func (s *API) identityProviderJSON(p domain.IdentityProvider) IdentityProviderJSON {
	doms := make([]string, 0, len(p.Domains))
	for _, d := range p.Domains {
		doms = append(doms, string(d))
	}
	scopes := p.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	e := p.Endpoints
	return IdentityProviderJSON{ID: string(p.ID), Preset: string(p.Preset), Name: p.Name, Issuer: p.Issuer, ClientID: p.ClientID,
		ClientSecretSet: len(p.SealedClientSecret) > 0, Scopes: scopes,
		Endpoints:         EndpointsJSON{Authorization: e.Authorization, Token: e.Token, UserInfo: e.UserInfo, JWKS: e.JWKS, API: e.API},
		TrustedForLinking: p.TrustedForLinking, Enabled: p.Enabled, OrganizationID: string(p.OrganizationID), Domains: doms,
		DefaultRole: string(p.DefaultRole), RequireSSO: p.RequireSSO, CallbackURL: s.App.Commands.Federation.RedirectURI(p.ID),
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// IdentityProviderOutput answers with one provider.
type IdentityProviderOutput struct {
	Status       int
	CacheControl string `header:"Cache-Control"`
	Body         IdentityProviderJSON
}

// IdentityProviderBody is a provider's registration or its changes: absent
// fields keep their values on update.
type IdentityProviderBody struct {
	Preset            *string        `json:"preset,omitempty" enum:"oidc,google,microsoft,gitlab,github" doc:"Required on create."`
	Name              *string        `json:"name,omitempty" maxLength:"128"`
	Issuer            *string        `json:"issuer,omitempty" maxLength:"2048" doc:"The OpenID issuer; discovery is read from <issuer>/.well-known/openid-configuration. Microsoft: https://login.microsoftonline.com/<tenant>/v2.0."`
	ClientID          *string        `json:"clientId,omitempty" maxLength:"512"`
	ClientSecret      string         `json:"clientSecret,omitempty" maxLength:"4096" doc:"Write-only: sealed at once and never shown. Required on create; absent on update keeps it."`
	Scopes            *[]string      `json:"scopes,omitempty" maxItems:"32" doc:"Default: the preset's (openid email profile; GitHub read:user user:email)."`
	Endpoints         *EndpointsJSON `json:"endpoints,omitempty" doc:"Overrides (https, or http on a loopback host): for tests and air-gapped sites."`
	TrustedForLinking *bool          `json:"trustedForLinking,omitempty" doc:"Default false."`
	Enabled           *bool          `json:"enabled,omitempty" doc:"Default true."`
	OrganizationID    *string        `json:"organizationId,omitempty" maxLength:"128" doc:"Makes it an organization's enterprise SSO provider."`
	Domains           *[]string      `json:"domains,omitempty" maxItems:"50" doc:"Ids of the organization's domains routed to it."`
	DefaultRole       *string        `json:"defaultRole,omitempty" enum:"member,admin"`
	RequireSSO        *bool          `json:"requireSso,omitempty"`
}

func (b IdentityProviderBody) input(id string) federation.ProviderInput {
	in := federation.ProviderInput{ID: id, Preset: b.Preset, Name: b.Name, Issuer: b.Issuer, ClientID: b.ClientID, ClientSecret: b.ClientSecret,
		Scopes: b.Scopes, TrustedForLinking: b.TrustedForLinking, Enabled: b.Enabled, OrganizationID: b.OrganizationID, Domains: b.Domains,
		DefaultRole: b.DefaultRole, RequireSSO: b.RequireSSO}
	if e := b.Endpoints; e != nil {
		in.Endpoints = &domain.IdentityProviderEndpoints{Authorization: e.Authorization, Token: e.Token, UserInfo: e.UserInfo, JWKS: e.JWKS, API: e.API}
	}
	return in
}

// CreateIdentityProviderInput registers a provider.
type CreateIdentityProviderInput struct {
	Body struct {
		ID string `json:"id" minLength:"1" maxLength:"64" doc:"1 to 64 characters of a-z, 0-9 and -; not credential." example:"google"`
		IdentityProviderBody
	}
}

func (s *API) createIdentityProvider(ctx context.Context, in *CreateIdentityProviderInput) (*IdentityProviderOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.App.Commands.IdentityProviders.Create(ctx, req, in.Body.input(in.Body.ID))
	if err != nil {
		return nil, err
	}
	return &IdentityProviderOutput{Status: http.StatusCreated, CacheControl: "no-store", Body: s.identityProviderJSON(p)}, nil
}

// IdentityProviderListOutput lists providers.
type IdentityProviderListOutput struct {
	Body struct {
		Data []IdentityProviderJSON `json:"data" doc:"Every provider, by id."`
	}
}

func (s *API) listIdentityProviders(ctx context.Context, _ *struct{}) (*IdentityProviderListOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	all, err := s.App.Commands.IdentityProviders.List(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &IdentityProviderListOutput{}
	out.Body.Data = make([]IdentityProviderJSON, len(all))
	for i, p := range all {
		out.Body.Data[i] = s.identityProviderJSON(p)
	}
	return out, nil
}

// IdentityProviderIDInput names a provider in the path.
type IdentityProviderIDInput struct {
	ID string `path:"id" minLength:"1" maxLength:"64" doc:"The provider's id."`
}

func (s *API) getIdentityProvider(ctx context.Context, in *IdentityProviderIDInput) (*IdentityProviderOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.App.Commands.IdentityProviders.Get(ctx, req, in.ID)
	if err != nil {
		return nil, err
	}
	return &IdentityProviderOutput{Status: http.StatusOK, Body: s.identityProviderJSON(p)}, nil
}

// UpdateIdentityProviderInput changes the fields present.
type UpdateIdentityProviderInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"64" doc:"The provider's id."`
	Body IdentityProviderBody
}

func (s *API) updateIdentityProvider(ctx context.Context, in *UpdateIdentityProviderInput) (*IdentityProviderOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.App.Commands.IdentityProviders.Update(ctx, req, in.Body.input(in.ID))
	if err != nil {
		return nil, err
	}
	return &IdentityProviderOutput{Status: http.StatusOK, CacheControl: "no-store", Body: s.identityProviderJSON(p)}, nil
}

func (s *API) setIdentityProviderEnabled(on bool) func(context.Context, *IdentityProviderIDInput) (*IdentityProviderOutput, error) {
	return func(ctx context.Context, in *IdentityProviderIDInput) (*IdentityProviderOutput, error) {
		return s.updateIdentityProvider(ctx, &UpdateIdentityProviderInput{ID: in.ID, Body: IdentityProviderBody{Enabled: &on}})
	}
}

func (s *API) deleteIdentityProvider(ctx context.Context, in *IdentityProviderIDInput) (*edge.NoContentOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.App.Commands.IdentityProviders.Delete(ctx, req, in.ID); err != nil {
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
	register(s, edge.ContractAuth, adminOp(op{OperationID: "createIdentityProvider", Method: post, Path: "", DefaultStatus: http.StatusCreated,
		Summary: "Register an identity provider", Errors: []int{http.StatusBadRequest, http.StatusConflict, http.StatusNotFound},
		Description: "Registers an upstream provider users sign in with: a generic OpenID provider (discovery from its issuer) or a preset " +
			"(google, microsoft, gitlab as OpenID Connect; github as OAuth 2 with its API). Every endpoint can be overridden. The client secret is sealed " +
			"under the service secrets and never shown again. callbackUrl in the answer is the redirect URI to register at the provider."}),
		s.createIdentityProvider)
	register(s, edge.ContractAuth, adminOp(op{OperationID: "listIdentityProviders", Method: get, Path: "",
		Summary: "List identity providers", Description: "Every provider, by id; never a secret."}), s.listIdentityProviders)
	register(s, edge.ContractAuth, adminOp(op{OperationID: "getIdentityProvider", Method: get, Path: "/{id}",
		Summary: "Get an identity provider", Errors: []int{http.StatusNotFound}, Description: "One provider; never its secret."}), s.getIdentityProvider)
	register(s, edge.ContractAuth, adminOp(op{OperationID: "updateIdentityProvider", Method: patch, Path: "/{id}",
		Summary: "Update an identity provider", Errors: []int{http.StatusBadRequest, http.StatusConflict, http.StatusNotFound},
		Description: "Changes the fields present. A clientSecret replaces the sealed one."}), s.updateIdentityProvider)
	register(s, edge.ContractAuth, adminOp(op{OperationID: "disableIdentityProvider", Method: post, Path: "/{id}/disable",
		Summary: "Disable an identity provider", Errors: []int{http.StatusNotFound},
		Description: "Sign-ins with it stop (its id answers as unknown); its linked accounts are kept."}), s.setIdentityProviderEnabled(false))
	register(s, edge.ContractAuth, adminOp(op{OperationID: "enableIdentityProvider", Method: post, Path: "/{id}/enable",
		Summary: "Enable an identity provider", Errors: []int{http.StatusNotFound}, Description: "Sign-ins with it work again."}),
		s.setIdentityProviderEnabled(true))
	register(s, edge.ContractAuth, adminOp(op{OperationID: "deleteIdentityProvider", Method: del, Path: "/{id}", DefaultStatus: http.StatusNoContent,
		Summary: "Delete an identity provider", Errors: []int{http.StatusNotFound},
		Description: "Removes the provider with every account linked through it. Users left with no way to sign in can still reset a password."}),
		s.deleteIdentityProvider)
}
