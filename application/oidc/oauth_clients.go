package oidc

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var errPublicClientSecret = domain.NewError(domain.KindInvalid, "oauth_client.public_has_no_secret",
	"Public clients have no secret to rotate")

// OAuthClients are the administrators' use cases for the applications that
// sign users in through Gatehouse. Only platform administrators (and the
// command line, with a nil Principal) may use them; every change, and every
// refusal, is audited.
type OAuthClients struct {
	clients ports.OAuthClientRepository
	tokens  ports.TokenGenerator
	clock   ports.Clock
	audit   usecase.Auditor
	admins  domain.PlatformAdmins
}

// NewOAuthClients returns the OAuth-client use cases.
func NewOAuthClients(clients ports.OAuthClientRepository, audit usecase.Auditor, tokens ports.TokenGenerator, ids ports.IDGenerator,
	clock ports.Clock, admin usecase.AdminSettings) *OAuthClients {
	usecase.MustHave(clients, tokens, ids, clock)
	return &OAuthClients{clients: clients, tokens: tokens, clock: clock, audit: audit, admins: admin.Admins}
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

func oauthClientTarget(id domain.OAuthClientID) usecase.Target {
	return usecase.Target{Type: "oauth_client", ID: string(id)}
}

// authorize refuses actors other than platform administrators and the CLI.
func (o *OAuthClients) authorize(p *usecase.Principal) error {
	if p == nil || o.admins.IsAdmin(p.User) {
		return nil
	}
	return domain.ErrNotPlatformAdmin
}

// newSecret returns a fresh client secret and sets c's hash and last four
// characters of it.
func (o *OAuthClients) newSecret(c *domain.OAuthClient) string {
	secret := domain.OAuthClientSecretPrefix + o.tokens.NewSecret(domain.OAuthClientSecretLength)
	c.SecretHash = domain.HashToken(secret)
	c.SecretLast4 = secret[len(secret)-4:]
	return secret
}

// Register creates a client. Its id is "gh_ci_" and 24 random characters; a
// confidential client also gets a secret, which exists only in the answer:
// storage keeps its hash and last four characters.
func (o *OAuthClients) Register(ctx context.Context, req usecase.KeyRequest, in RegisterOAuthClient) (IssuedOAuthClient, error) {
	var issued IssuedOAuthClient
	t := oauthClientTarget("")
	err := o.audit.Change(ctx, req.Actor, "admin.create-oauth-client", &t, func(ctx context.Context, _ usecase.Emit) error {
		if err := o.authorize(req.Principal); err != nil {
			return err
		}
		c, err := validateRegistration(in)
		if err != nil {
			return err
		}
		now := o.clock.Now()
		c.ID = domain.OAuthClientID(domain.OAuthClientIDPrefix + o.tokens.NewSecret(domain.OAuthClientIDLength))
		c.CreatedAt, c.UpdatedAt = domain.Timestamp(now), domain.Timestamp(now)
		var secret string
		if c.Type == domain.OAuthClientConfidential {
			secret = o.newSecret(&c)
		}
		if err := o.clients.Create(ctx, c); err != nil {
			return err
		}
		issued, t = IssuedOAuthClient{Client: c, Secret: secret}, oauthClientTarget(c.ID)
		return nil
	})
	return issued, err
}

// validateRegistration checks every field of in, reporting every malformed
// one at once.
func validateRegistration(in RegisterOAuthClient) (domain.OAuthClient, error) {
	var bad []domain.FieldViolation
	collect := func(err error) {
		var de *domain.Error
		if errors.As(err, &de) {
			bad = append(bad, de.Fields...)
		}
	}
	name, err := domain.NormalizeOAuthClientName(in.Name, "name")
	collect(err)
	t, err := domain.ParseOAuthClientType(in.Type, "type")
	collect(err)
	var uris, logout []string
	if err == nil { // the rules for URIs depend on the type
		uris, err = domain.NormalizeRedirectURIs(in.RedirectURIs, t, "redirectUris", 1)
		collect(err)
		logout, err = domain.NormalizeRedirectURIs(in.PostLogoutRedirectURIs, t, "postLogoutRedirectUris", 0)
		collect(err)
	}
	if len(bad) > 0 {
		return domain.OAuthClient{}, domain.Invalid("oauth_client.invalid", "Invalid OAuth client", bad...)
	}
	return domain.OAuthClient{Name: name, Type: t, RedirectURIs: uris, PostLogoutRedirectURIs: logout, FirstParty: in.FirstParty}, nil
}

// List returns every client, newest first. Only a refusal is audited.
func (o *OAuthClients) List(ctx context.Context, req usecase.KeyRequest) ([]domain.OAuthClient, error) {
	if err := o.authorize(req.Principal); err != nil {
		return nil, o.audit.Record(ctx, req.Actor, "admin.list-oauth-clients", usecase.Target{Type: "oauth_client"}, err)
	}
	return o.clients.List(ctx)
}

// Get returns one client. Only a refusal is audited.
func (o *OAuthClients) Get(ctx context.Context, req usecase.KeyRequest, id domain.OAuthClientID) (domain.OAuthClient, error) {
	if err := o.authorize(req.Principal); err != nil {
		return domain.OAuthClient{}, o.audit.Record(ctx, req.Actor, "admin.get-oauth-client", oauthClientTarget(id), err)
	}
	return o.clients.Get(ctx, id)
}

// Update changes a client's name, redirect URIs, post-logout redirect URIs
// or first-party flag; its id, type and secret stay. Redirect URIs are
// checked against the client's type.
func (o *OAuthClients) Update(ctx context.Context, req usecase.KeyRequest, id domain.OAuthClientID, in UpdateOAuthClient) (domain.OAuthClient, error) {
	var updated domain.OAuthClient
	t := oauthClientTarget(id)
	err := o.audit.Change(ctx, req.Actor, "admin.update-oauth-client", &t, func(ctx context.Context, _ usecase.Emit) error {
		if err := o.authorize(req.Principal); err != nil {
			return err
		}
		var name string
		if in.Name != nil {
			var err error
			if name, err = domain.NormalizeOAuthClientName(*in.Name, "name"); err != nil {
				return err
			}
		}
		now := o.clock.Now()
		return o.clients.Update(ctx, id, func(c *domain.OAuthClient) error {
			var bad []domain.FieldViolation
			if in.RedirectURIs != nil {
				uris, err := domain.NormalizeRedirectURIs(*in.RedirectURIs, c.Type, "redirectUris", 1)
				if err != nil {
					bad = append(bad, fieldsOf(err)...)
				}
				c.RedirectURIs = uris
			}
			if in.PostLogoutRedirectURIs != nil {
				uris, err := domain.NormalizeRedirectURIs(*in.PostLogoutRedirectURIs, c.Type, "postLogoutRedirectUris", 0)
				if err != nil {
					bad = append(bad, fieldsOf(err)...)
				}
				c.PostLogoutRedirectURIs = uris
			}
			if len(bad) > 0 {
				return domain.Invalid("oauth_client.invalid", "Invalid OAuth client", bad...)
			}
			if in.Name != nil {
				c.Name = name
			}
			if in.FirstParty != nil {
				c.FirstParty = *in.FirstParty
			}
			c.UpdatedAt = domain.Timestamp(now)
			updated = *c
			return nil
		})
	})
	return updated, err
}

// fieldsOf returns the field violations of a domain error.
func fieldsOf(err error) []domain.FieldViolation {
	var de *domain.Error
	if errors.As(err, &de) {
		return de.Fields
	}
	return nil
}

// RotateSecret gives a confidential client a new secret; the old one stops
// working at once. A public client has none: that is invalid.
func (o *OAuthClients) RotateSecret(ctx context.Context, req usecase.KeyRequest, id domain.OAuthClientID) (IssuedOAuthClient, error) {
	var issued IssuedOAuthClient
	t := oauthClientTarget(id)
	err := o.audit.Change(ctx, req.Actor, "admin.rotate-oauth-client-secret", &t, func(ctx context.Context, _ usecase.Emit) error {
		if err := o.authorize(req.Principal); err != nil {
			return err
		}
		now := o.clock.Now()
		return o.clients.Update(ctx, id, func(c *domain.OAuthClient) error {
			if c.Type != domain.OAuthClientConfidential {
				return errPublicClientSecret
			}
			secret := o.newSecret(c)
			c.UpdatedAt = domain.Timestamp(now)
			issued = IssuedOAuthClient{Client: *c, Secret: secret}
			return nil
		})
	})
	return issued, err
}

// Delete removes a client and everything issued to it: its codes, grants
// (so its access and refresh tokens stop working) and consents.
func (o *OAuthClients) Delete(ctx context.Context, req usecase.KeyRequest, id domain.OAuthClientID) error {
	t := oauthClientTarget(id)
	err := o.audit.Change(ctx, req.Actor, "admin.delete-oauth-client", &t, func(ctx context.Context, _ usecase.Emit) error {
		if err := o.authorize(req.Principal); err != nil {
			return err
		}
		return o.clients.Delete(ctx, id)
	})
	return err
}
