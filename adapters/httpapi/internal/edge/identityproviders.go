package edge

import (
	"time"

	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/domain"
)

// The identity-provider wire types the admin and trusted APIs share.

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

// ProviderJSON is p as the admin and trusted APIs show it, with the
// redirect URI to register at the provider (federation.SignIns.RedirectURI).
func ProviderJSON(p domain.IdentityProvider, callbackURL string) IdentityProviderJSON {
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
		DefaultRole: string(p.DefaultRole), RequireSSO: p.RequireSSO, CallbackURL: callbackURL,
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

// Input is the use case's input for provider id.
func (b IdentityProviderBody) Input(id string) federation.ProviderInput {
	in := federation.ProviderInput{ID: id, Preset: b.Preset, Name: b.Name, Issuer: b.Issuer, ClientID: b.ClientID, ClientSecret: b.ClientSecret,
		Scopes: b.Scopes, TrustedForLinking: b.TrustedForLinking, Enabled: b.Enabled, OrganizationID: b.OrganizationID, Domains: b.Domains,
		DefaultRole: b.DefaultRole, RequireSSO: b.RequireSSO}
	if e := b.Endpoints; e != nil {
		in.Endpoints = &domain.IdentityProviderEndpoints{Authorization: e.Authorization, Token: e.Token, UserInfo: e.UserInfo, JWKS: e.JWKS, API: e.API}
	}
	return in
}
