package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/domain"
)

// Administration of OAuth clients under /api/admin/oauth-clients (auth
// contract, problem+json errors). The rules live in oidc.OAuthClients;
// this file only translates.

// OAuthClientJSON is an OAuth client as administrators see it: never its
// secret.
type OAuthClientJSON struct {
	ClientID               string    `json:"clientId" example:"gh_ci_4bT0kq9ZrW2mX7yP1sV8nL3c"`
	Name                   string    `json:"name" example:"Example app"`
	Type                   string    `json:"type" enum:"public,confidential" doc:"public: a browser or native app, no secret, PKCE required; confidential: a server that authenticates with its secret."`
	RedirectURIs           []string  `json:"redirectUris" doc:"Where the authorization answer may go, compared exactly." example:"[\"https://app.example.com/callback\"]"`
	PostLogoutRedirectURIs []string  `json:"postLogoutRedirectUris" doc:"Where end-session may send the browser afterwards, compared exactly."`
	FirstParty             bool      `json:"firstParty" doc:"First-party clients skip the consent page."`
	SecretLast4            string    `json:"secretLast4,omitempty" doc:"The last four characters of a confidential client's secret; absent for public clients." example:"x9Qa"`
	CreatedAt              time.Time `json:"createdAt"`
	UpdatedAt              time.Time `json:"updatedAt"`
}

func oauthClientJSON(c domain.OAuthClient) OAuthClientJSON {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return OAuthClientJSON{ClientID: string(c.ID), Name: c.Name, Type: string(c.Type), RedirectURIs: nonNil(c.RedirectURIs),
		PostLogoutRedirectURIs: nonNil(c.PostLogoutRedirectURIs), FirstParty: c.FirstParty, SecretLast4: c.SecretLast4,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// IssuedOAuthClientJSON is a client with its secret, shown once.
type IssuedOAuthClientJSON struct {
	OAuthClientJSON
	ClientSecret string `json:"clientSecret,omitempty" doc:"A confidential client's secret (gh_cs_ and 43 random characters), shown this one time: only its hash is kept. Absent for public clients." example:"gh_cs_…"`
}

// IssuedOAuthClientOutput answers registration and secret rotation; it is
// never cached.
type IssuedOAuthClientOutput struct {
	Status       int
	CacheControl string `header:"Cache-Control"`
	Body         IssuedOAuthClientJSON
}

func issuedOAuthClientOutput(status int, c oidc.IssuedOAuthClient) *IssuedOAuthClientOutput {
	return &IssuedOAuthClientOutput{Status: status, CacheControl: "no-store",
		Body: IssuedOAuthClientJSON{OAuthClientJSON: oauthClientJSON(c.Client), ClientSecret: c.Secret}}
}

// OAuthClientOutput answers with one client.
type OAuthClientOutput struct {
	Body OAuthClientJSON
}

// RegisterOAuthClientInput registers a client.
type RegisterOAuthClientInput struct {
	Body struct {
		Name                   string   `json:"name" maxLength:"128" example:"Example app" doc:"1 to 128 characters, shown on the consent page."`
		Type                   string   `json:"type" doc:"public or confidential." example:"confidential"`
		RedirectURIs           []string `json:"redirectUris" maxItems:"20" doc:"1 to 20 absolute URIs without fragment, user information or wildcard: https, http only on localhost, 127.0.0.1 or [::1], or (public clients) a private-use scheme such as com.example.app:/callback." example:"[\"https://app.example.com/callback\"]"`
		PostLogoutRedirectURIs []string `json:"postLogoutRedirectUris,omitempty" maxItems:"20" doc:"Up to 20 URIs, under the same rules."`
		FirstParty             bool     `json:"firstParty,omitempty" doc:"true: the client skips the consent page (default false)."`
	}
}

func (s *API) registerOAuthClient(ctx context.Context, in *RegisterOAuthClientInput) (*IssuedOAuthClientOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	c, err := s.OAuthClients.Register(ctx, req, oidc.RegisterOAuthClient{Name: b.Name, Type: b.Type,
		RedirectURIs: b.RedirectURIs, PostLogoutRedirectURIs: b.PostLogoutRedirectURIs, FirstParty: b.FirstParty})
	if err != nil {
		return nil, err
	}
	return issuedOAuthClientOutput(http.StatusCreated, c), nil
}

// OAuthClientListOutput lists clients.
type OAuthClientListOutput struct {
	Body struct {
		Data []OAuthClientJSON `json:"data" doc:"Every client, newest first."`
	}
}

func (s *API) listOAuthClients(ctx context.Context, _ *struct{}) (*OAuthClientListOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	clients, err := s.OAuthClients.List(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &OAuthClientListOutput{}
	out.Body.Data = make([]OAuthClientJSON, len(clients))
	for i, c := range clients {
		out.Body.Data[i] = oauthClientJSON(c)
	}
	return out, nil
}

// OAuthClientIDInput names a client in the path.
type OAuthClientIDInput struct {
	ID string `path:"id" minLength:"1" maxLength:"64" doc:"The client_id."`
}

func (s *API) getOAuthClient(ctx context.Context, in *OAuthClientIDInput) (*OAuthClientOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	c, err := s.OAuthClients.Get(ctx, req, domain.OAuthClientID(in.ID))
	if err != nil {
		return nil, err
	}
	return &OAuthClientOutput{Body: oauthClientJSON(c)}, nil
}

// UpdateOAuthClientInput changes the fields present; the type, id and secret
// cannot change (unknown properties are refused).
type UpdateOAuthClientInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"64" doc:"The client_id."`
	Body struct {
		Name                   *string   `json:"name,omitempty" maxLength:"128" doc:"A new name."`
		RedirectURIs           *[]string `json:"redirectUris,omitempty" maxItems:"20" doc:"Replaces the redirect URIs (1 to 20, the rules of registration)."`
		PostLogoutRedirectURIs *[]string `json:"postLogoutRedirectUris,omitempty" maxItems:"20" doc:"Replaces the post-logout redirect URIs (0 to 20)."`
		FirstParty             *bool     `json:"firstParty,omitempty" doc:"Whether the client skips the consent page."`
	}
}

func (s *API) updateOAuthClient(ctx context.Context, in *UpdateOAuthClientInput) (*OAuthClientOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	b := in.Body
	c, err := s.OAuthClients.Update(ctx, req, domain.OAuthClientID(in.ID), oidc.UpdateOAuthClient{Name: b.Name,
		RedirectURIs: b.RedirectURIs, PostLogoutRedirectURIs: b.PostLogoutRedirectURIs, FirstParty: b.FirstParty})
	if err != nil {
		return nil, err
	}
	return &OAuthClientOutput{Body: oauthClientJSON(c)}, nil
}

func (s *API) rotateOAuthClientSecret(ctx context.Context, in *OAuthClientIDInput) (*IssuedOAuthClientOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	c, err := s.OAuthClients.RotateSecret(ctx, req, domain.OAuthClientID(in.ID))
	if err != nil {
		return nil, err
	}
	return issuedOAuthClientOutput(http.StatusOK, c), nil
}

func (s *API) deleteOAuthClient(ctx context.Context, in *OAuthClientIDInput) (*edge.NoContentOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.OAuthClients.Delete(ctx, req, domain.OAuthClientID(in.ID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// addOAuthClientRoutes registers the administrators' OAuth-client routes.
func (s *API) AddOAuthClientRoutes() {
	type op = huma.Operation
	const tag = "OAuth clients"
	adminOp := func(o op) op {
		o.Path = edge.AdminBase + "/oauth-clients" + o.Path
		o.Tags = []string{tag}
		o.Security = edge.SessionSecurity
		o.Description += " Needs a platform administrator's session: 401 without a session, 403 for anyone else."
		o.Errors = append(o.Errors, http.StatusUnauthorized, http.StatusForbidden)
		return o
	}
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "createOAuthClient", Method: post, Path: "", DefaultStatus: http.StatusCreated,
		Summary: "Register an OAuth client", Errors: []int{http.StatusBadRequest},
		Description: "Registers an application that signs users in through Gatehouse's OpenID provider. The client_id is gh_ci_ and 24 random characters. " +
			"A confidential client's secret (gh_cs_ and 43 random characters) is in this answer only: storage keeps its SHA-256 hash. Redirect URIs are " +
			"compared exactly at authorization. Audited."}),
		s.registerOAuthClient)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "listOAuthClients", Method: get, Path: "",
		Summary:     "List OAuth clients",
		Description: "Every client, newest first, without secrets (a confidential client shows the last four characters of its secret)."}),
		s.listOAuthClients)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "getOAuthClient", Method: get, Path: "/{id}",
		Summary: "Get an OAuth client", Errors: []int{http.StatusNotFound},
		Description: "One client, without its secret."}),
		s.getOAuthClient)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "updateOAuthClient", Method: patch, Path: "/{id}",
		Summary: "Change an OAuth client", Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "Changes the name, redirect URIs, post-logout redirect URIs or first-party flag. The type and the secret cannot be changed here. Audited."}),
		s.updateOAuthClient)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "rotateOAuthClientSecret", Method: post, Path: "/{id}/rotate-secret",
		Summary: "Rotate an OAuth client's secret", Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "Gives a confidential client a new secret, shown once; the old one stops working at once. A public client has no secret (400 " +
			"oauth_client.public_has_no_secret). Audited."}),
		s.rotateOAuthClientSecret)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "deleteOAuthClient", Method: del, Path: "/{id}", DefaultStatus: http.StatusNoContent,
		Summary: "Delete an OAuth client", Errors: []int{http.StatusNotFound},
		Description: "Deletes the client with its authorization codes, grants (its access and refresh tokens stop working) and consents. Audited."}),
		s.deleteOAuthClient)
}
