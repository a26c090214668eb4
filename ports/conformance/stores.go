package conformance

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Stores is one store's set of repositories, sharing one database. The suites
// for sessions, credentials and links need Users to create the owning user
// first, and to check that deleting the user deletes what they own.
type Stores struct {
	Users         ports.UserRepository
	Sessions      ports.SessionRepository
	Credentials   ports.CredentialRepository
	Verifications ports.VerificationRepository
	Organizations ports.OrganizationRepository
	ServiceKeys   ports.ServiceKeyRepository
	Audit         ports.AuditLog
	Domains       ports.DomainRepository
	OAuthClients  ports.OAuthClientRepository
	OAuthGrants   ports.OAuthGrantRepository

	TwoFactor          ports.TwoFactorRepository
	MFAChallenges      ports.MFAChallengeRepository
	Passkeys           ports.PasskeyRepository
	WebAuthnChallenges ports.WebAuthnChallengeRepository

	IdentityProviders ports.IdentityProviderRepository
	LinkedAccounts    ports.LinkedAccountRepository
	FederationStates  ports.FederationStateRepository

	// UnitOfWork and Outbox run on the same database as the rest.
	UnitOfWork ports.UnitOfWork
	Outbox     ports.Outbox
}

// mustCreateUsers creates users u1, u2, … with addresses u1@example.com, ….
func mustCreateUsers(t *testing.T, s Stores, ids ...domain.UserID) {
	t.Helper()
	for _, id := range ids {
		mustCreateUser(t, s.Users, mustUser(t, string(id), string(id)+"@example.com"))
	}
}

// mustDeleteUser deletes a user through the user port.
func mustDeleteUser(t *testing.T, s Stores, id domain.UserID) {
	t.Helper()
	if err := s.Users.Delete(context.Background(), id); err != nil {
		t.Fatalf("Delete user %s: %v", id, err)
	}
}

// assertTime fails unless got is the instant want, in UTC.
func assertTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("%s = %s, want the instant %s", what, got.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	if !got.IsZero() && got.Location() != time.UTC {
		t.Fatalf("%s location = %v, want UTC", what, got.Location())
	}
}

// runParallel runs fn n times at once and returns the errors.
func runParallel(n int, fn func(i int) error) []error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}
