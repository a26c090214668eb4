package memory_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/ports/conformance"
)

func newStores(*testing.T) conformance.Stores {
	db := memory.NewDB()
	return conformance.Stores{
		Users:         memory.NewUserRepository(db),
		Sessions:      memory.NewSessionRepository(db),
		Credentials:   memory.NewCredentialRepository(db),
		Verifications: memory.NewVerificationRepository(db),
		Organizations: memory.NewOrganizationRepository(db),
		ServiceKeys:   memory.NewServiceKeyRepository(db),
		Audit:         memory.NewAuditLog(db),
		Domains:       memory.NewDomainRepository(db),
		OAuthClients:  memory.NewOAuthClientRepository(db),
		OAuthGrants:   memory.NewOAuthGrantRepository(db),

		TwoFactor:          memory.NewTwoFactorRepository(db),
		MFAChallenges:      memory.NewMFAChallengeRepository(db),
		Passkeys:           memory.NewPasskeyRepository(db),
		WebAuthnChallenges: memory.NewWebAuthnChallengeRepository(db),

		IdentityProviders: memory.NewIdentityProviderRepository(db),
		LinkedAccounts:    memory.NewLinkedAccountRepository(db),
		FederationStates:  memory.NewFederationStateRepository(db),

		UnitOfWork: memory.NewUnitOfWork(db),
		Outbox:     memory.NewOutbox(db),
	}
}

func TestUserRepository(t *testing.T) {
	conformance.RunUserRepository(t, func(*testing.T) ports.UserRepository { return memory.NewUserRepository(memory.NewDB()) })
}

func TestSessionRepository(t *testing.T) {
	conformance.RunSessionRepository(t, newStores)
}

func TestCredentialRepository(t *testing.T) {
	conformance.RunCredentialRepository(t, newStores)
}

func TestVerificationRepository(t *testing.T) {
	conformance.RunVerificationRepository(t, newStores)
}

func TestServiceKeyRepository(t *testing.T) {
	conformance.RunServiceKeyRepository(t, newStores)
}

func TestAuditLog(t *testing.T) {
	conformance.RunAuditLog(t, newStores)
}

func TestOrganizationRepository(t *testing.T) {
	conformance.RunOrganizationRepository(t, newStores)
}

func TestDomainRepository(t *testing.T) {
	conformance.RunDomainRepository(t, newStores)
}

func TestOAuthRepositories(t *testing.T) {
	conformance.RunOAuthRepositories(t, newStores)
}

func TestHealthChecker(t *testing.T) {
	conformance.RunHealthChecker(t, func(*testing.T) ports.HealthChecker { return memory.NewHealthChecker() })
}

func TestUserPage(t *testing.T) {
	conformance.RunUserPage(t, newStores)
}

func TestSigningKeyRepository(t *testing.T) {
	conformance.RunSigningKeyRepository(t, func(*testing.T) ports.SigningKeyRepository {
		return memory.NewSigningKeyRepository(memory.NewDB())
	})
}

func TestMFARepositories(t *testing.T) {
	conformance.RunMFARepositories(t, newStores)
}

func TestPasskeyRepositories(t *testing.T) {
	conformance.RunPasskeyRepositories(t, newStores)
}

func TestFederationRepositories(t *testing.T) {
	conformance.RunFederationRepositories(t, newStores)
}

func TestUnitOfWork(t *testing.T) {
	conformance.RunUnitOfWork(t, newStores)
}

func TestOutbox(t *testing.T) {
	conformance.RunOutbox(t, newStores)
}

func TestSpentTokens(t *testing.T) {
	conformance.RunSpentTokens(t, func(*testing.T) (ports.SpentTokens, ports.SpentTokens) {
		s := memory.NewSpentTokens()
		return s, s
	})
}

func TestLeases(t *testing.T) {
	conformance.RunLeases(t, func(*testing.T) (ports.Leases, ports.Leases) {
		l := memory.NewLeases()
		return l, l
	})
}

func TestSignInStats(t *testing.T) {
	conformance.RunSignInStats(t, func(*testing.T) (ports.SignInStats, ports.SignInStats) {
		s := memory.NewSignInStats()
		return s, s
	})
}

func TestCounts(t *testing.T) {
	conformance.RunCounts(t, newStores)
}
