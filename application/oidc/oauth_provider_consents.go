package oidc

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// errConsentNotFound is Better Auth's answer for a client the user has
// nothing granted to.
var errConsentNotFound = domain.NewError(domain.KindNotFound, "oauth_consent.not_found", "Consent not found")

// ConsentView is what the signed-in user allowed one client.
type ConsentView struct {
	ClientID   domain.OAuthClientID
	ClientName string
	Scopes     []string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Consents lists the clients the signed-in user consented to, most recently
// updated first. A consent whose client is gone is left out.
func (p *OAuthProvider) Consents(ctx context.Context, principal *usecase.Principal) ([]ConsentView, error) {
	if principal == nil || principal.User == nil {
		return nil, usecase.ErrUnauthorized
	}
	list, err := p.grants.ListConsents(ctx, principal.User.ID())
	if err != nil {
		return nil, err
	}
	out := make([]ConsentView, 0, len(list))
	for _, c := range list {
		client, err := p.clients.Get(ctx, c.ClientID)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, ConsentView{ClientID: c.ClientID, ClientName: client.Name, Scopes: c.Scopes,
			CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt})
	}
	return out, nil
}

// RevokeConsent withdraws what the signed-in user granted client: the
// consent goes, so the next authorization asks again, and every grant of the
// user and client is revoked, so their access and refresh tokens stop
// working (ASVS V10.4.9). A client with nothing granted (or unknown) is
// CONSENT_NOT_FOUND.
func (p *OAuthProvider) RevokeConsent(ctx context.Context, principal *usecase.Principal, clientID string) error {
	if principal == nil || principal.User == nil {
		return usecase.ErrUnauthorized
	}
	err := p.grants.RevokeConsent(ctx, principal.User.ID(), domain.OAuthClientID(clientID), p.clock.Now())
	if errors.Is(err, domain.ErrConsentNotFound) {
		return errConsentNotFound
	}
	return err
}
