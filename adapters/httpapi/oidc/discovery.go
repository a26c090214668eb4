package oidc

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/domain"
)

// Discovery (security.md §5): the OpenID provider's metadata at the issuer
// with /.well-known/openid-configuration appended (OpenID Connect Discovery
// §4), the same document as OAuth authorization server metadata at the
// framework base and with the well-known segment inserted at the host root
// (RFC 8414 §3, and §5's transition form), and the trusted API's protected
// resource metadata (RFC 9728). Every answer is 200 JSON, never a redirect,
// cacheable for five minutes and readable from any origin.

// ProviderMetadata is the OpenID provider's (and OAuth authorization
// server's) metadata. No member is an empty array (Discovery §3).
type ProviderMetadata struct {
	Issuer                                     string   `json:"issuer" doc:"The issuer: the base URL with /api/auth, exactly, no trailing slash. Equal to every token's iss." example:"https://id.example.com/api/auth"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint" example:"https://id.example.com/api/auth/oauth2/authorize"`
	TokenEndpoint                              string   `json:"token_endpoint" example:"https://id.example.com/api/auth/oauth2/token"`
	UserinfoEndpoint                           string   `json:"userinfo_endpoint" example:"https://id.example.com/api/auth/oauth2/userinfo"`
	JWKSURI                                    string   `json:"jwks_uri" example:"https://id.example.com/api/auth/jwks"`
	RevocationEndpoint                         string   `json:"revocation_endpoint" example:"https://id.example.com/api/auth/oauth2/revoke"`
	IntrospectionEndpoint                      string   `json:"introspection_endpoint" example:"https://id.example.com/api/auth/oauth2/introspect"`
	EndSessionEndpoint                         string   `json:"end_session_endpoint" example:"https://id.example.com/api/auth/oauth2/end-session"`
	ScopesSupported                            []string `json:"scopes_supported"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	ResponseModesSupported                     []string `json:"response_modes_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	SubjectTypesSupported                      []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported           []string `json:"id_token_signing_alg_values_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported     []string `json:"revocation_endpoint_auth_methods_supported"`
	IntrospectionEndpointAuthMethodsSupported  []string `json:"introspection_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	ClaimsSupported                            []string `json:"claims_supported"`
	ACRValuesSupported                         []string `json:"acr_values_supported"`
	PromptValuesSupported                      []string `json:"prompt_values_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported" doc:"Authorization responses carry iss (RFC 9207)."`
	RequestParameterSupported                  bool     `json:"request_parameter_supported"`
	RequestURIParameterSupported               bool     `json:"request_uri_parameter_supported"`
	ClaimsParameterSupported                   bool     `json:"claims_parameter_supported"`
}

// ProtectedResourceMetadata describes the trusted API (RFC 9728).
type ProtectedResourceMetadata struct {
	Resource               string   `json:"resource" doc:"The resource identifier: the base URL, exactly." example:"https://id.example.com"`
	ResourceName           string   `json:"resource_name"`
	ResourceDocumentation  string   `json:"resource_documentation" doc:"The API explorer." example:"https://id.example.com/api/docs"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ScopesSupported        []string `json:"scopes_supported" doc:"The service-key scopes."`
}

// DiscoveryHeaders make a metadata document cacheable and readable from any
// origin: it is public and carries no credential.
type DiscoveryHeaders struct {
	ContentType  string `header:"Content-Type"`
	CacheControl string `header:"Cache-Control"`
	AllowOrigin  string `header:"Access-Control-Allow-Origin"`
}

func discoveryHeaders() DiscoveryHeaders {
	return DiscoveryHeaders{ContentType: "application/json", CacheControl: "public, max-age=300", AllowOrigin: "*"}
}

// ProviderMetadataOutput is the provider's metadata.
type ProviderMetadataOutput struct {
	DiscoveryHeaders
	Body ProviderMetadata
}

// ProtectedResourceOutput is the trusted API's metadata.
type ProtectedResourceOutput struct {
	DiscoveryHeaders
	Body ProtectedResourceMetadata
}

// providerMetadata builds the one metadata document every discovery route
// serves.
func (s *API) providerMetadata() ProviderMetadata {
	issuer := s.Issuer()
	clientAuth := []string{"client_secret_basic", "client_secret_post", "none"}
	return ProviderMetadata{
		Issuer:                                    issuer,
		AuthorizationEndpoint:                     issuer + "/oauth2/authorize",
		TokenEndpoint:                             issuer + "/oauth2/token",
		UserinfoEndpoint:                          issuer + "/oauth2/userinfo",
		JWKSURI:                                   issuer + "/jwks",
		RevocationEndpoint:                        issuer + "/oauth2/revoke",
		IntrospectionEndpoint:                     issuer + "/oauth2/introspect",
		EndSessionEndpoint:                        issuer + "/oauth2/end-session",
		ScopesSupported:                           oidc.SupportedScopes,
		ResponseTypesSupported:                    []string{"code"},
		ResponseModesSupported:                    []string{"query"},
		GrantTypesSupported:                       []string{"authorization_code", "refresh_token", "client_credentials"},
		SubjectTypesSupported:                     []string{"public"},
		IDTokenSigningAlgValuesSupported:          []string{string(domain.AlgRS256)},
		TokenEndpointAuthMethodsSupported:         clientAuth,
		RevocationEndpointAuthMethodsSupported:    clientAuth,
		IntrospectionEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post"},
		CodeChallengeMethodsSupported:             []string{"S256"},
		ClaimsSupported: []string{"sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "azp", "at_hash",
			"amr", "acr", "email", "email_verified", "name", "picture"},
		ACRValuesSupported:                         []string{domain.ACRPassword, domain.ACRMultiFactor, domain.ACRPhishingResistant},
		PromptValuesSupported:                      []string{"none", "login", "consent"},
		AuthorizationResponseIssParameterSupported: true,
	}
}

func (s *API) AddDiscoveryRoutes() {
	type op = huma.Operation
	const tag = "Discovery"
	metadata := s.providerMetadata() // fixed for the process's life
	provider := func(context.Context, *struct{}) (*ProviderMetadataOutput, error) {
		return &ProviderMetadataOutput{DiscoveryHeaders: discoveryHeaders(), Body: metadata}, nil
	}
	const same = " The same document is served at every discovery URL; its issuer is the base URL with /api/auth, exactly " +
		"(no trailing slash): configure clients with that issuer, never with the bare origin. 200 JSON, never a redirect; " +
		"cacheable for five minutes; readable from any origin."

	edge.Add(s.routes, edge.ContractFramework, edge.WithPolicy(op{OperationID: "openidConfiguration", Method: http.MethodGet,
		Path: edge.FrameworkBase + "/.well-known/openid-configuration", Tags: []string{tag},
		Summary:     "OpenID provider metadata",
		Description: "OpenID Connect Discovery 1.0 §4: the issuer with /.well-known/openid-configuration appended, where go-oidc and openid-client look." + same}, edge.PublicDocument),
		provider, edge.ContractAuth)
	edge.Add(s.routes, edge.ContractFramework, edge.WithPolicy(op{OperationID: "oauthAuthorizationServerMetadata", Method: http.MethodGet,
		Path: edge.FrameworkBase + "/.well-known/oauth-authorization-server", Tags: []string{tag},
		Summary:     "OAuth authorization server metadata",
		Description: "RFC 8414 metadata under the framework's base path, for clients that append the well-known segment." + same}, edge.PublicDocument),
		provider, edge.ContractAuth)

	for _, r := range []struct{ id, path, summary, desc string }{
		{"rootOpenidConfiguration", "/.well-known/openid-configuration", "OpenID provider metadata (host root)",
			"The provider metadata at the host root, for clients that look there."},
		{"rootOAuthAuthorizationServerMetadata", "/.well-known/oauth-authorization-server", "OAuth authorization server metadata (host root)",
			"RFC 8414 metadata at the host root, for clients that look there."},
		{"oauthAuthorizationServerMetadataForIssuer", "/.well-known/oauth-authorization-server" + edge.FrameworkBase, "OAuth authorization server metadata (RFC 8414)",
			"RFC 8414 §3: the well-known segment inserted between the host and the issuer's path /api/auth. Clients should try this URL first."},
		{"openidConfigurationForIssuer", "/.well-known/openid-configuration" + edge.FrameworkBase, "OpenID provider metadata (RFC 8414 §5)",
			"RFC 8414 §5's transition form: the OpenID well-known segment inserted between the host and the issuer's path."},
	} {
		edge.Add(s.routes, edge.ContractAuth, edge.WithRate(op{OperationID: r.id, Method: http.MethodGet, Path: r.path, Tags: []string{tag},
			Summary: r.summary, Description: r.desc + same}, edge.RatePublic), provider)
	}

	edge.Add(s.routes, edge.ContractBackend, edge.WithRate(op{OperationID: "protectedResourceMetadata", Method: http.MethodGet, Path: edge.ProtectedResourcePath, Tags: []string{tag},
		Summary: "Protected resource metadata (RFC 9728)",
		Description: "Describes the trusted API: its resource identifier (the base URL, exactly), how it takes a bearer credential (the Authorization header) " +
			"and the service-key scopes. It names no authorization server: the trusted API takes service keys issued by administrators, not OAuth access tokens. " +
			"Its 401s point here with WWW-Authenticate: Bearer resource_metadata=\"…\". 200 JSON, never a redirect; cacheable for five minutes; readable from any origin."}, edge.RatePublic),
		func(context.Context, *struct{}) (*ProtectedResourceOutput, error) {
			scopes := make([]string, len(domain.Scopes))
			for i, sc := range domain.Scopes {
				scopes[i] = string(sc)
			}
			return &ProtectedResourceOutput{DiscoveryHeaders: discoveryHeaders(), Body: ProtectedResourceMetadata{
				Resource: s.Config.BaseURL, ResourceName: "Gatehouse trusted API", ResourceDocumentation: s.Config.BaseURL + edge.ExplorerPath,
				BearerMethodsSupported: []string{"header"}, ScopesSupported: scopes,
			}}, nil
		})
}
