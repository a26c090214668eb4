package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// purgeSpy records which store the purge asked to delete from, and with
// which time, and answers each with a count of its own.
type purgeSpy map[string]time.Time

func (s purgeSpy) deleted(kind string, at time.Time, n int) (int, error) {
	s[kind] = at
	return n, nil
}

type spySessions struct {
	ports.SessionRepository
	purgeSpy
}

func (s spySessions) DeleteExpired(_ context.Context, at time.Time) (int, error) {
	return s.deleted("sessions", at, 1)
}

type spyVerifications struct {
	ports.VerificationRepository
	purgeSpy
}

func (s spyVerifications) DeleteExpired(_ context.Context, at time.Time) (int, error) {
	return s.deleted("links", at, 2)
}

type spyKeys struct {
	ports.ServiceKeyRepository
	purgeSpy
}

func (s spyKeys) DeleteExpiredSecrets(_ context.Context, at time.Time) (int, error) {
	return s.deleted("key secrets", at, 4)
}

type spyGrants struct {
	ports.OAuthGrantRepository
	purgeSpy
}

func (s spyGrants) DeleteExpired(_ context.Context, at time.Time) (int, error) {
	return s.deleted("oauth", at, 8)
}

type spyChallenges struct {
	ports.MFAChallengeRepository
	purgeSpy
}

func (s spyChallenges) DeleteExpired(_ context.Context, at time.Time) (int, error) {
	return s.deleted("second-factor challenges", at, 16)
}

type spyWebAuthn struct {
	ports.WebAuthnChallengeRepository
	purgeSpy
}

func (s spyWebAuthn) DeleteExpired(_ context.Context, at time.Time) (int, error) {
	return s.deleted("passkey ceremonies", at, 32)
}

type spyStates struct {
	ports.FederationStateRepository
	purgeSpy
}

func (s spyStates) DeleteExpired(_ context.Context, at time.Time) (int, error) {
	return s.deleted("federation states", at, 64)
}

type spySignIns struct {
	ports.SignInStats
	purgeSpy
}

func (s spySignIns) DeleteBefore(_ context.Context, at time.Time) (int, error) {
	return s.deleted("sign-in counts", at, 128)
}

type spySpent struct {
	ports.SpentTokens
	purgeSpy
}

func (s spySpent) DeleteExpired(_ context.Context, at time.Time) (int, error) {
	return s.deleted("form tokens", at, 256)
}

// Ensure one purge deletes every kind of expired record, each as of the
// clock's now (sign-in counts as of their retention before it), and counts
// each kind where Purged says: a kind left out keeps growing unseen.
func TestPurgeExpired_purges_every_kind(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	spy := purgeSpy{}
	purge := account.NewPurger(spySessions{purgeSpy: spy}, spyVerifications{purgeSpy: spy}, spyKeys{purgeSpy: spy},
		spyGrants{purgeSpy: spy}, spyChallenges{purgeSpy: spy}, spyWebAuthn{purgeSpy: spy}, spyStates{purgeSpy: spy},
		spySignIns{purgeSpy: spy}, spySpent{purgeSpy: spy}, w.Clock)
	p, err := purge.PurgeExpired(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	now := w.Clock.Now()
	for _, kind := range []string{"sessions", "links", "key secrets", "oauth", "second-factor challenges", "passkey ceremonies",
		"federation states", "form tokens"} {
		if at, ok := spy[kind]; !ok || !at.Equal(now) {
			t.Errorf("%s: purged as of %v (asked: %v), want as of %v", kind, at, ok, now)
		}
	}
	if at, want := spy["sign-in counts"], now.Add(-account.SignInCountRetention); !at.Equal(want) {
		t.Errorf("sign-in counts: purged before %v, want before %v", at, want)
	}
	want := account.Purged{Sessions: 1, Links: 2, KeySecrets: 4, OAuth: 8, Challenges: 16 + 32 + 64, SignInCounts: 128, FormTokens: 256}
	if p != want {
		t.Errorf("purged = %+v, want %+v", p, want)
	}
}
