package memory

import (
	"sync"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// DB is the one in-memory store that every memory repository shares. A single
// lock guards all maps, so that deleting a user removes their sessions,
// credential and links in the same step, as ON DELETE CASCADE does in SQL,
// and creating a row for a missing user fails as a foreign key would.
type DB struct {
	mu sync.RWMutex
	// unit is set while a unit of work holds the write lock; undo then
	// lists how to put back each change it made, oldest first (see
	// UnitOfWork).
	unit bool
	undo []func()
	// afterCommit holds what to run once the unit of work holding the
	// write lock has committed (and released it).
	afterCommit []func()

	users       map[domain.UserID]*domain.User
	userByEmail map[domain.Email]domain.UserID

	sessions       map[domain.SessionID]*domain.Session
	sessionByToken map[domain.TokenHash]domain.SessionID

	credentials map[domain.UserID]*domain.Credential

	verifications       map[string]*domain.Verification
	verificationByToken map[domain.TokenHash]string

	organizations      map[domain.OrganizationID]*domain.Organization
	organizationBySlug map[string]domain.OrganizationID
	members            map[domain.MemberID]*domain.Member
	memberByOrgUser    map[orgUser]domain.MemberID
	// membersByOrg indexes each organization's members, kept in step by
	// insertMember and deleteMember: its size is the member count.
	membersByOrg map[domain.OrganizationID]map[domain.MemberID]struct{}
	invitations  map[domain.InvitationID]*domain.Invitation

	// serviceKeySecrets is keyed by hash, the primary key of
	// service_key_secrets; revoking or rotating a key deletes from it.
	serviceKeys       map[domain.ServiceKeyID]*domain.ServiceKey
	serviceKeySecrets map[domain.TokenHash]domain.ServiceKeySecret

	// auditLog is append-only: nothing deletes from it.
	auditLog map[string]domain.AuditEntry

	// domainByHostname is the unique index on hostname.
	domains          map[domain.DomainID]*domain.Domain
	domainByHostname map[string]domain.DomainID

	// The OpenID provider's rows (see oauth.go); codes and refresh tokens
	// are keyed by hash, consents by user and client.
	oauthClients       map[domain.OAuthClientID]domain.OAuthClient
	oauthCodes         map[domain.TokenHash]domain.AuthorizationCode
	oauthGrants        map[domain.GrantID]domain.OAuthGrant
	oauthRefreshTokens map[domain.TokenHash]domain.RefreshToken
	oauthConsents      map[userClient]domain.Consent

	// The multi-factor rows (see mfa.go and passkeys.go). Byte keys (hashes,
	// credential ids) are kept as strings; backup codes by user, then hash.
	totpFactors        map[domain.UserID]domain.TOTPFactor
	factorLockouts     map[domain.UserID]domain.FactorLockout
	backupCodes        map[domain.UserID]map[string]domain.BackupCode
	mfaChallenges      map[string]domain.MFAChallenge
	passkeys           map[string]domain.PasskeyCredential
	webauthnChallenges map[string]domain.WebAuthnChallenge

	// The federation's rows (see identity_providers.go, linked_accounts.go
	// and federation_states.go). providerByDomain is the unique index on a
	// bound domain, kept in step with the providers' Domains;
	// linkedAccountBySubject the unique index on (provider, subject). States
	// are keyed by their id hash, as a string.
	identityProviders      map[domain.IdentityProviderID]domain.IdentityProvider
	providerByDomain       map[domain.DomainID]domain.IdentityProviderID
	linkedAccounts         map[domain.LinkedAccountID]domain.LinkedAccount
	linkedAccountBySubject map[providerSubject]domain.LinkedAccountID
	federationStates       map[string]domain.FederationState

	signingKeys map[domain.SigningKeyID]domain.SigningKey

	// outbox holds the messages waiting to be delivered, by id.
	outbox map[string]ports.OutboxMessage

	webhooks webhookTables // see webhooks.go
}

// userClient is the primary key of a consent.
type userClient struct {
	user   domain.UserID
	client domain.OAuthClientID
}

// NewDB returns an empty store.
func NewDB() *DB {
	return &DB{
		users:               map[domain.UserID]*domain.User{},
		userByEmail:         map[domain.Email]domain.UserID{},
		sessions:            map[domain.SessionID]*domain.Session{},
		sessionByToken:      map[domain.TokenHash]domain.SessionID{},
		credentials:         map[domain.UserID]*domain.Credential{},
		verifications:       map[string]*domain.Verification{},
		verificationByToken: map[domain.TokenHash]string{},
		organizations:       map[domain.OrganizationID]*domain.Organization{},
		organizationBySlug:  map[string]domain.OrganizationID{},
		members:             map[domain.MemberID]*domain.Member{},
		memberByOrgUser:     map[orgUser]domain.MemberID{},
		membersByOrg:        map[domain.OrganizationID]map[domain.MemberID]struct{}{},
		invitations:         map[domain.InvitationID]*domain.Invitation{},
		serviceKeys:         map[domain.ServiceKeyID]*domain.ServiceKey{},
		serviceKeySecrets:   map[domain.TokenHash]domain.ServiceKeySecret{},
		auditLog:            map[string]domain.AuditEntry{},
		domains:             map[domain.DomainID]*domain.Domain{},
		domainByHostname:    map[string]domain.DomainID{},
		oauthClients:        map[domain.OAuthClientID]domain.OAuthClient{},
		oauthCodes:          map[domain.TokenHash]domain.AuthorizationCode{},
		oauthGrants:         map[domain.GrantID]domain.OAuthGrant{},
		oauthRefreshTokens:  map[domain.TokenHash]domain.RefreshToken{},
		oauthConsents:       map[userClient]domain.Consent{},
		totpFactors:         map[domain.UserID]domain.TOTPFactor{},
		factorLockouts:      map[domain.UserID]domain.FactorLockout{},
		backupCodes:         map[domain.UserID]map[string]domain.BackupCode{},
		mfaChallenges:       map[string]domain.MFAChallenge{},
		passkeys:            map[string]domain.PasskeyCredential{},
		webauthnChallenges:  map[string]domain.WebAuthnChallenge{},

		identityProviders:      map[domain.IdentityProviderID]domain.IdentityProvider{},
		providerByDomain:       map[domain.DomainID]domain.IdentityProviderID{},
		linkedAccounts:         map[domain.LinkedAccountID]domain.LinkedAccount{},
		linkedAccountBySubject: map[providerSubject]domain.LinkedAccountID{},
		federationStates:       map[string]domain.FederationState{},

		signingKeys: map[domain.SigningKeyID]domain.SigningKey{},
		outbox:      map[string]ports.OutboxMessage{},

		webhooks: newWebhookTables(),
	}
}

// hasUser reports whether the user exists. The caller holds the lock.
func (db *DB) hasUser(id domain.UserID) bool {
	_, ok := db.users[id]
	return ok
}

// deleteUser removes the user and everything that refers to them. The caller
// holds the write lock.
func (db *DB) deleteUser(u *domain.User) {
	unset(db, db.userByEmail, u.Email())
	unset(db, db.users, u.ID())
	unset(db, db.credentials, u.ID())
	unset(db, db.factorLockouts, u.ID())
	db.deleteMemberships(u.ID())
	for id, s := range db.sessions {
		// Sessions in which the user impersonated someone go too.
		if s.UserID() == u.ID() || s.ImpersonatedBy() == u.ID() {
			db.deleteSession(id, s)
		}
	}
	for id, v := range db.verifications {
		if v.UserID() == u.ID() {
			db.deleteVerification(id, v)
		}
	}
	db.deleteOAuthOf("", u.ID())
	db.deleteFactorsOf(u.ID())
	db.deleteFederationOf(u.ID())
}

func (db *DB) deleteSession(id domain.SessionID, s *domain.Session) {
	unset(db, db.sessionByToken, s.TokenHash())
	unset(db, db.sessions, id)
}

func (db *DB) deleteVerification(id string, v *domain.Verification) {
	unset(db, db.verificationByToken, v.TokenHash())
	unset(db, db.verifications, id)
}
