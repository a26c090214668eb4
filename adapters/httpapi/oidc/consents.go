package oidc

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// addOAuthConsentRoutes lets the signed-in user see and withdraw what they
// granted OAuth clients (Better Auth oauth-provider's get-consents and
// delete-consent; ASVS V10.4.9). Both use the session cookie, so the POST
// keeps the framework's origin check.
func (s *API) AddOAuthConsentRoutes() {
	type op = huma.Operation
	errs := []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests}
	edge.Add(s.routes, edge.ContractFramework, op{OperationID: "oauth2GetConsents", Method: http.MethodGet, Path: edge.FrameworkBase + "/oauth2/get-consents",
		Tags: []string{tagOAuth}, Summary: "List OAuth consents",
		Description: "The clients the signed-in user consented to, with the scopes allowed, most recently updated first. " +
			"First-party clients, which ask no consent, are not listed.",
		Security: edge.SessionSecurity, Errors: errs}, s.oauthGetConsents, edge.ContractAuth)
	edge.Add(s.routes, edge.ContractFramework, op{OperationID: "oauth2DeleteConsent", Method: http.MethodPost, Path: edge.FrameworkBase + "/oauth2/delete-consent",
		Tags: []string{tagOAuth}, Summary: "Revoke an OAuth consent",
		Description: "Withdraws the signed-in user's consent to a client and revokes every grant the user gave it: its access and refresh tokens " +
			"stop working and the next authorization asks for consent again. A client with nothing granted (or unknown) is 404 CONSENT_NOT_FOUND.",
		Security: edge.SessionSecurity, Errors: append([]int{http.StatusNotFound}, errs...)}, s.oauthDeleteConsent, edge.ContractAuth)
}

// ConsentJSON is one client the user consented to.
type ConsentJSON struct {
	ClientID   string   `json:"clientId" doc:"The client's client_id." example:"gh_ci_4kT9qZ2mW8rX1vB6nL3pD7sF"`
	ClientName string   `json:"clientName" doc:"The client's name, as the consent page showed it." example:"Acme Notes"`
	Scopes     []string `json:"scopes" doc:"The scopes the user allowed." example:"[\"openid\",\"email\"]"`
	CreatedAt  string   `json:"createdAt" format:"date-time" doc:"When the user first consented." example:"2026-11-21T09:30:00.000Z"`
	UpdatedAt  string   `json:"updatedAt" format:"date-time" doc:"When the consent last changed (new scopes)." example:"2026-11-21T09:30:00.000Z"`
}

// ConsentsOutput lists the user's consents.
type ConsentsOutput struct {
	Body []ConsentJSON
}

func (s *API) oauthGetConsents(ctx context.Context, _ *struct{}) (*ConsentsOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	list, err := s.OAuthProvider.Consents(ctx, &p)
	if err != nil {
		return nil, err
	}
	out := &ConsentsOutput{Body: make([]ConsentJSON, len(list))}
	for i, c := range list {
		scopes := c.Scopes
		if scopes == nil {
			scopes = []string{}
		}
		out.Body[i] = ConsentJSON{ClientID: string(c.ClientID), ClientName: c.ClientName, Scopes: scopes,
			CreatedAt: edge.JSDate(c.CreatedAt), UpdatedAt: edge.JSDate(c.UpdatedAt)}
	}
	return out, nil
}

// DeleteConsentInput names the client whose consent goes.
type DeleteConsentInput struct {
	Body struct {
		ClientID string `json:"clientId" minLength:"1" maxLength:"256" doc:"The client's client_id (clientId of get-consents)."`
	}
}

func (s *API) oauthDeleteConsent(ctx context.Context, in *DeleteConsentInput) (*edge.StatusOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.OAuthProvider.RevokeConsent(ctx, &p, in.Body.ClientID); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}
