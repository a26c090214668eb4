package command

import (
	"context"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// GROUNDWORK STUB: the OAuth-clients helper replaces this file. Keep the
// exported signatures.

// OAuthClients are the administrators' use cases for the applications that
// sign users in through Gatehouse.
type OAuthClients struct {
	clients ports.OAuthClientRepository
}

// NewOAuthClients returns the OAuth-client use cases.
func NewOAuthClients(clients ports.OAuthClientRepository, audit ports.AuditLog, tokens ports.TokenGenerator, ids ports.IDGenerator,
	clock ports.Clock, admin AdminSettings) *OAuthClients {
	return &OAuthClients{clients: clients}
}

// RegisterOAuthClient is an administrator's new client.
type RegisterOAuthClient struct {
	Name                   string
	RedirectURIs           []string
	PostLogoutRedirectURIs []string
	Type                   string
	FirstParty             bool
}

// UpdateOAuthClient changes the fields that are not nil.
type UpdateOAuthClient struct {
	Name                   *string
	RedirectURIs           *[]string
	PostLogoutRedirectURIs *[]string
	FirstParty             *bool
}

// IssuedOAuthClient is a client with its secret (confidential clients
// only), shown this one time.
type IssuedOAuthClient struct {
	Client domain.OAuthClient
	Secret string
}

// Register creates a client.
func (o *OAuthClients) Register(ctx context.Context, req KeyRequest, in RegisterOAuthClient) (IssuedOAuthClient, error) {
	panic("groundwork")
}

// List returns every client, newest first.
func (o *OAuthClients) List(ctx context.Context, req KeyRequest) ([]domain.OAuthClient, error) {
	panic("groundwork")
}

// Get returns one client.
func (o *OAuthClients) Get(ctx context.Context, req KeyRequest, id domain.OAuthClientID) (domain.OAuthClient, error) {
	panic("groundwork")
}

// Update changes a client.
func (o *OAuthClients) Update(ctx context.Context, req KeyRequest, id domain.OAuthClientID, in UpdateOAuthClient) (domain.OAuthClient, error) {
	panic("groundwork")
}

// RotateSecret gives a confidential client a new secret; the old one stops
// working at once.
func (o *OAuthClients) RotateSecret(ctx context.Context, req KeyRequest, id domain.OAuthClientID) (IssuedOAuthClient, error) {
	panic("groundwork")
}

// Delete removes a client and revokes everything issued to it.
func (o *OAuthClients) Delete(ctx context.Context, req KeyRequest, id domain.OAuthClientID) error {
	panic("groundwork")
}
