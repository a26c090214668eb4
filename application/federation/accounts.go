package federation

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The errors of the user's linked accounts.
var (
	ErrAccountNotFound     = domain.Invalid("linked_account.not_found", "Account not found")
	ErrAccountNotNamed     = domain.Invalid("linked_account.not_named", "Name the account", domain.FieldViolation{Field: "accountId", Message: "is required"})
	ErrCannotUnlinkLast    = domain.Invalid("linked_account.last", "You can't unlink your last account")
	ErrCredentialAccount   = domain.Invalid("linked_account.credential", "The password is not a linked account: it cannot be unlinked")
	ErrNoRefreshToken      = domain.Invalid("linked_account.no_refresh_token", "Refresh token not found")
	ErrNoAccessToken       = domain.Invalid("linked_account.no_access_token", "Access token not found")
	ErrProviderUnavailable = domain.Invalid("linked_account.provider_unavailable", "The account's provider is not configured")
)

// refreshMargin is how close to its expiry an access token is refreshed
// before it is handed out (Better Auth: 5 s).
const refreshMargin = 5 * time.Second

// Accounts are a signed-in user's linked accounts, and the operators'
// view of a user's.
type Accounts struct {
	providers   ports.IdentityProviderRepository
	accounts    ports.LinkedAccountRepository
	credentials ports.CredentialRepository
	passkeys    ports.PasskeyRepository
	client      ports.FederationClient
	sealer      ports.SecretSealer
	clock       ports.Clock
	audit       usecase.Auditor
	policy      domain.SessionPolicy
	admins      domain.PlatformAdmins
}

// NewAccounts returns the linked-account use cases.
func NewAccounts(providers ports.IdentityProviderRepository, accounts ports.LinkedAccountRepository, credentials ports.CredentialRepository,
	passkeys ports.PasskeyRepository, client ports.FederationClient, sealer ports.SecretSealer, audit usecase.Auditor,
	ids ports.IDGenerator, clock ports.Clock, settings Settings, admin usecase.AdminSettings) *Accounts {
	usecase.MustHave(providers, accounts, credentials, passkeys, client, sealer, ids, clock)
	return &Accounts{providers: providers, accounts: accounts, credentials: credentials, passkeys: passkeys, client: client,
		sealer: sealer, clock: clock, audit: audit, policy: settings.Auth.Sessions, admins: admin.Admins}
}

// AccountView is one way a user signs in, as list-accounts shows it. The
// password is the account of provider "credential", whose id is the user's.
type AccountView struct {
	ID         string
	ProviderID string
	Subject    string
	UserID     domain.UserID
	Email      string
	Scopes     []string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// List returns the user's password (when they have one) and linked
// accounts, oldest first.
func (a *Accounts) List(ctx context.Context, user domain.UserID) ([]AccountView, error) {
	var out []AccountView
	cred, err := a.credentials.Get(ctx, user)
	switch {
	case err == nil:
		out = append(out, AccountView{ID: string(user), ProviderID: domain.CredentialProviderID, Subject: string(user), UserID: user,
			Scopes: []string{}, CreatedAt: cred.UpdatedAt(), UpdatedAt: cred.UpdatedAt()})
	case !errors.Is(err, domain.ErrNotFound):
		return nil, err
	}
	linked, err := a.accounts.ListByUser(ctx, user)
	if err != nil {
		return nil, err
	}
	for _, l := range linked {
		out = append(out, viewOf(l))
	}
	return out, nil
}

// Linked returns the user's linked accounts only (the trusted user object).
func (a *Accounts) Linked(ctx context.Context, user domain.UserID) ([]AccountView, error) {
	linked, err := a.accounts.ListByUser(ctx, user)
	if err != nil {
		return nil, err
	}
	out := make([]AccountView, 0, len(linked))
	for _, l := range linked {
		out = append(out, viewOf(l))
	}
	return out, nil
}

// AccountSelection names one of the signed-in user's linked accounts, as
// Better Auth's account routes (access token, refresh, account info) do.
type AccountSelection struct {
	// AccountID is the account's id.
	AccountID string
	// ProviderID names, for older clients, the user's first account at
	// this provider.
	ProviderID string
	// UserID is accepted when it is the user's own.
	UserID string
}

// Select returns the id of user's account that sel names: sel.AccountID,
// else the user's first account at sel.ProviderID. Another user's id is
// ErrAccountNotFound, like an account the user does not have; naming
// neither the account nor a provider is ErrAccountNotNamed.
func (a *Accounts) Select(ctx context.Context, user domain.UserID, sel AccountSelection) (string, error) {
	if sel.UserID != "" && sel.UserID != string(user) {
		return "", ErrAccountNotFound
	}
	if sel.AccountID != "" {
		return sel.AccountID, nil
	}
	if sel.ProviderID == "" {
		return "", ErrAccountNotNamed
	}
	views, err := a.Linked(ctx, user)
	if err != nil {
		return "", err
	}
	for _, v := range views {
		if v.ProviderID == sel.ProviderID {
			return v.ID, nil
		}
	}
	return "", ErrAccountNotFound
}

// LinkedOfUsers returns the linked accounts of a page of users, by user, in
// one query (the trusted user list).
func (a *Accounts) LinkedOfUsers(ctx context.Context, users []domain.UserID) (map[domain.UserID][]AccountView, error) {
	linked, err := a.accounts.ListByUsers(ctx, users)
	if err != nil {
		return nil, err
	}
	out := make(map[domain.UserID][]AccountView, len(users))
	for _, l := range linked {
		out[l.UserID] = append(out[l.UserID], viewOf(l))
	}
	return out, nil
}

func viewOf(l domain.LinkedAccount) AccountView {
	scopes := l.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return AccountView{ID: string(l.ID), ProviderID: string(l.ProviderID), Subject: l.Subject, UserID: l.UserID, Email: l.Email,
		Scopes: scopes, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

// Unlink removes one of the signed-in user's linked accounts
// (account.unlinked). The session must be fresh. The last way to sign in
// (no password, no passkey, no other linked account) is never removed.
func (a *Accounts) Unlink(ctx context.Context, p usecase.Principal, o usecase.Origin, id string) error {
	if !p.Session.IsFresh(a.clock.Now(), a.policy) {
		return usecase.ErrSessionNotFresh
	}
	t := usecase.Target{Type: "linked_account", ID: id}
	return a.audit.Change(ctx, usecase.UserActor(p.User.ID(), o.RequestID, o.IPAddress), "account.unlink", &t,
		func(ctx context.Context, emit usecase.Emit) error {
			return a.unlink(ctx, p.User.ID(), id, emit)
		})
}

// UnlinkFor removes a user's linked account for an operator (req: an
// administrator or a service key with users:write), with the same last-way
// rule.
func (a *Accounts) UnlinkFor(ctx context.Context, req usecase.Caller, user domain.UserID, id string) error {
	action, t := usecase.ActionOf(req, "admin.unlink-account", "users.unlink-account"), usecase.Target{Type: "linked_account", ID: id}
	if err := authorizeOperator(req, a.admins, domain.ScopeUsersWrite); err != nil {
		return a.audit.Record(ctx, req.Actor(), action, t, err)
	}
	return a.audit.Change(ctx, req.Actor(), action, &t, func(ctx context.Context, emit usecase.Emit) error {
		// An operator names a resource: a missing one is not found, the
		// last way in a conflict.
		switch err := a.unlink(ctx, user, id, emit); {
		case errors.Is(err, ErrAccountNotFound), errors.Is(err, ErrCredentialAccount):
			return domain.ErrLinkedAccountNotFound
		case errors.Is(err, ErrCannotUnlinkLast):
			return domain.ErrLastLinkedAccount
		default:
			return err
		}
	})
}

// LinkedFor lists a user's linked accounts for an operator.
func (a *Accounts) LinkedFor(ctx context.Context, req usecase.Caller, user domain.UserID) ([]AccountView, error) {
	if err := authorizeOperator(req, a.admins, domain.ScopeUsersRead); err != nil {
		return nil, err
	}
	return a.Linked(ctx, user)
}

// authorizeOperator lets a platform administrator, or a service key with
// scope, act on any user's accounts.
func authorizeOperator(req usecase.Caller, admins domain.PlatformAdmins, scope domain.Scope) error {
	switch r := req.(type) {
	case usecase.TrustedRequest:
		return r.Need(scope)
	case usecase.AdminRequest:
		if admins.IsAdmin(r.Principal.User) {
			return nil
		}
	}
	return domain.ErrNotPlatformAdmin
}

// unlink removes user's linked account id (account.unlinked, with the
// account as it was).
func (a *Accounts) unlink(ctx context.Context, user domain.UserID, id string, emit usecase.Emit) error {
	if id == string(user) {
		return ErrCredentialAccount
	}
	others, err := a.otherWays(ctx, user)
	if err != nil {
		return err
	}
	linked, err := a.accounts.ListByUser(ctx, user)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(linked, func(l domain.LinkedAccount) bool { return string(l.ID) == id })
	if i < 0 {
		return ErrAccountNotFound
	}
	err = a.accounts.Delete(ctx, user, domain.LinkedAccountID(id), !others)
	switch {
	case errors.Is(err, domain.ErrLinkedAccountNotFound):
		return ErrAccountNotFound
	case errors.Is(err, domain.ErrLastLinkedAccount):
		return ErrCannotUnlinkLast
	case err != nil:
		return err
	}
	emit(domain.EventAccountUnlinked, linked[i])
	return nil
}

// otherWays reports whether user can sign in without a linked account: a
// password or a passkey.
func (a *Accounts) otherWays(ctx context.Context, user domain.UserID) (bool, error) {
	if _, err := a.credentials.Get(ctx, user); err == nil {
		return true, nil
	} else if !errors.Is(err, domain.ErrNotFound) {
		return false, err
	}
	n, err := a.passkeys.CountByUser(ctx, user)
	return n > 0, err
}

// AccessToken is an account's upstream access token, as get-access-token
// hands it out.
type AccessToken struct {
	Account              domain.LinkedAccount
	AccessToken          string
	AccessTokenExpiresAt time.Time
	IDToken              string
}

// AccessToken returns a valid access token of the user's account id,
// refreshed first when it expires within 5 s and a refresh token is kept.
func (a *Accounts) AccessToken(ctx context.Context, user domain.UserID, id string) (AccessToken, error) {
	acct, up, tokens, err := a.load(ctx, user, id)
	if err != nil {
		return AccessToken{}, err
	}
	now := a.clock.Now()
	if tokens.RefreshToken != "" && !acct.AccessTokenExpiresAt.IsZero() && acct.AccessTokenExpiresAt.Sub(now) < refreshMargin {
		if acct, tokens, err = a.refresh(ctx, acct, up, tokens); err != nil {
			return AccessToken{}, err
		}
	}
	if tokens.AccessToken == "" {
		return AccessToken{}, ErrNoAccessToken
	}
	return AccessToken{Account: acct, AccessToken: tokens.AccessToken, AccessTokenExpiresAt: acct.AccessTokenExpiresAt, IDToken: tokens.IDToken}, nil
}

// Refreshed is an account after refresh-token. The refresh token itself is
// never handed to the browser.
type Refreshed struct {
	Account     domain.LinkedAccount
	AccessToken string
	IDToken     string
}

// Refresh redeems the account's refresh token at the provider and keeps
// the new tokens.
func (a *Accounts) Refresh(ctx context.Context, user domain.UserID, id string) (Refreshed, error) {
	acct, up, tokens, err := a.load(ctx, user, id)
	if err != nil {
		return Refreshed{}, err
	}
	if tokens.RefreshToken == "" {
		return Refreshed{}, ErrNoRefreshToken
	}
	if acct, tokens, err = a.refresh(ctx, acct, up, tokens); err != nil {
		return Refreshed{}, err
	}
	return Refreshed{Account: acct, AccessToken: tokens.AccessToken, IDToken: tokens.IDToken}, nil
}

// Info is account-info's answer: who the provider says the account is.
type Info struct {
	Account  domain.LinkedAccount
	Identity ports.UpstreamIdentity
}

// Info reads the account's profile at the provider with its access token.
func (a *Accounts) Info(ctx context.Context, user domain.UserID, id string) (Info, error) {
	tok, err := a.AccessToken(ctx, user, id)
	if err != nil {
		return Info{}, err
	}
	p, err := a.providers.Get(ctx, tok.Account.ProviderID)
	if err != nil {
		return Info{}, ErrProviderUnavailable
	}
	up, err := openProvider(a.sealer, p)
	if err != nil {
		return Info{}, err
	}
	ident, err := a.client.UserInfo(ctx, up, tok.AccessToken)
	if err != nil {
		return Info{}, err
	}
	return Info{Account: tok.Account, Identity: ident}, nil
}

// load returns the user's account id, its provider and its opened tokens.
func (a *Accounts) load(ctx context.Context, user domain.UserID, id string) (domain.LinkedAccount, ports.UpstreamProvider, ports.UpstreamTokens, error) {
	var none ports.UpstreamProvider
	linked, err := a.accounts.ListByUser(ctx, user)
	if err != nil {
		return domain.LinkedAccount{}, none, ports.UpstreamTokens{}, err
	}
	for _, l := range linked {
		if string(l.ID) != id {
			continue
		}
		p, err := a.providers.Get(ctx, l.ProviderID)
		if errors.Is(err, domain.ErrIdentityProviderNotFound) || err == nil && !p.Enabled {
			return domain.LinkedAccount{}, none, ports.UpstreamTokens{}, ErrProviderUnavailable
		} else if err != nil {
			return domain.LinkedAccount{}, none, ports.UpstreamTokens{}, err
		}
		up, err := openProvider(a.sealer, p)
		if err != nil {
			return domain.LinkedAccount{}, none, ports.UpstreamTokens{}, err
		}
		tokens, err := openTokens(a.sealer, l.ID, l.SealedTokens)
		return l, up, tokens, err
	}
	if id == string(user) {
		return domain.LinkedAccount{}, none, ports.UpstreamTokens{}, ErrCredentialAccount
	}
	return domain.LinkedAccount{}, none, ports.UpstreamTokens{}, ErrAccountNotFound
}

// refresh redeems the refresh token and stores the new tokens (keeping the
// old refresh token when the provider sends none).
func (a *Accounts) refresh(ctx context.Context, acct domain.LinkedAccount, up ports.UpstreamProvider, old ports.UpstreamTokens) (domain.LinkedAccount, ports.UpstreamTokens, error) {
	fresh, err := a.client.Refresh(ctx, up, old.RefreshToken)
	if err != nil {
		return domain.LinkedAccount{}, ports.UpstreamTokens{}, err
	}
	if fresh.RefreshToken == "" {
		fresh.RefreshToken, fresh.RefreshTokenExpiresAt = old.RefreshToken, acct.RefreshTokenExpiresAt
	}
	if fresh.IDToken == "" {
		fresh.IDToken = old.IDToken
	}
	var saved domain.LinkedAccount
	err = a.accounts.Update(ctx, acct.UserID, acct.ID, func(l *domain.LinkedAccount) error {
		sealed, err := sealTokens(a.sealer, l.ID, fresh)
		if err != nil {
			return err
		}
		l.SealedTokens = sealed
		l.AccessTokenExpiresAt, l.RefreshTokenExpiresAt = stamp(fresh.AccessTokenExpiresAt), stamp(fresh.RefreshTokenExpiresAt)
		if len(fresh.Scopes) > 0 {
			l.Scopes = mergeScopes(nil, fresh.Scopes)
		}
		l.UpdatedAt = a.clock.Now()
		saved = *l
		return nil
	})
	return saved, fresh, err
}
