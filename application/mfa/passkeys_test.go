package mfa_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/descope/virtualwebauthn"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/usecasetest"
	"github.com/gatehouse/gatehouse/test/webauthntest"
)

const pkTestOrigin = "https://id.example.com"

// pkWorld is a memory world with the passkey use cases, a user signed in
// with their password, and a software authenticator.
type pkWorld struct {
	*usecasetest.World
	pk     *mfa.Passkeys
	audit  *memory.AuditLog
	p      usecase.Principal
	device virtualwebauthn.Authenticator
	cred   virtualwebauthn.Credential
	rp     virtualwebauthn.RelyingParty
}

const pkWindow = time.Minute

func newPKWorld(t *testing.T) *pkWorld {
	t.Helper()
	w := &pkWorld{World: usecasetest.NewWorld(t, false), audit: nil}
	w.Settings.StepUpWindow = pkWindow
	w.audit = memory.NewAuditLog(w.DB)
	var err error
	w.pk, err = mfa.NewPasskeys(w.Users, memory.NewPasskeyRepository(w.DB), memory.NewWebAuthnChallengeRepository(w.DB),
		memory.NewSessionRepository(w.DB), w.AuditorOf(w.audit), system.NewTokenGenerator(), system.NewIDGenerator(), w.Clock, w.Settings,
		mfa.PasskeySettings{RPID: "id.example.com", RPName: "Gatehouse", Origins: []string{pkTestOrigin}})
	if err != nil {
		t.Fatal(err)
	}
	up := w.MustSignUp(t, "ada@example.com")
	w.p = usecase.Principal{User: up.User, Session: up.Session}
	w.device = virtualwebauthn.NewAuthenticator()
	w.cred = webauthntest.NewEC2Credential()
	w.rp = virtualwebauthn.RelyingParty{ID: "id.example.com", Name: "Gatehouse", Origin: pkTestOrigin}
	return w
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// register registers the world's credential for its user.
func (w *pkWorld) register(t *testing.T) domain.PasskeyCredential {
	t.Helper()
	opts, err := w.pk.RegisterOptions(t.Context(), mfa.PasskeyRegisterOptions{Principal: w.p})
	if err != nil {
		t.Fatal(err)
	}
	ao, err := virtualwebauthn.ParseAttestationOptions(mustMarshal(t, opts.Creation))
	if err != nil {
		t.Fatal(err)
	}
	w.device.Options.UserHandle = []byte(ao.UserID)
	resp := virtualwebauthn.CreateAttestationResponse(w.rp, w.device, w.cred, *ao)
	c, err := w.pk.VerifyRegistration(t.Context(), mfa.PasskeyVerifyRegistration{Principal: w.p, ChallengeID: opts.ChallengeID,
		Response: []byte(resp), Name: "Laptop", Actor: usecase.UserActor(w.p.User.ID(), "req-1", "192.0.2.1")})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// authenticate runs an authentication ceremony, signed in as p when set.
func (w *pkWorld) authenticate(t *testing.T, p *usecase.Principal) (*mfa.PasskeyAuthResult, error) {
	t.Helper()
	opts, err := w.pk.AuthenticateOptions(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	ao, err := virtualwebauthn.ParseAssertionOptions(mustMarshal(t, opts.Request))
	if err != nil {
		t.Fatal(err)
	}
	w.cred.Counter++
	resp := virtualwebauthn.CreateAssertionResponse(w.rp, w.device, w.cred, *ao)
	return w.pk.VerifyAuthentication(t.Context(), mfa.PasskeyVerifyAuthentication{Principal: p, ChallengeID: opts.ChallengeID, Response: []byte(resp)})
}

func TestPasskey_last_passkey_needs_a_fresh_second_factor(t *testing.T) {
	w := newPKWorld(t)
	c := w.register(t)
	res, err := w.authenticate(t, nil)
	if err != nil || !res.NewSession {
		t.Fatalf("passkey sign-in = %+v, %v", res, err)
	}
	p := usecase.Principal{User: res.User, Session: res.Session}
	// Within the window the passkey sign-in counts as the step-up; past
	// it, the last passkey stays until a second factor is proven again.
	w.Clock.Advance(pkWindow + time.Second)
	del := mfa.PasskeyChange{Principal: p, ID: c.ID, Actor: usecase.UserActor(p.User.ID(), "req-2", "192.0.2.1")}
	usecasetest.MustCode(t, w.pk.Delete(t.Context(), del), "mfa.step_up_required")
	stepped, err := w.authenticate(t, &p)
	if err != nil || stepped.NewSession {
		t.Fatalf("step-up = %+v, %v; want the current session", stepped, err)
	}
	del.Principal.Session = stepped.Session
	if err := w.pk.Delete(t.Context(), del); err != nil {
		t.Fatalf("delete after step-up: %v", err)
	}
	for _, action := range []string{"passkey.register", "passkey.delete"} {
		es, err := w.audit.List(t.Context(), ports.AuditQuery{Action: action, Limit: 10})
		if err != nil || len(es) != 1 || es[0].ActorID != string(p.User.ID()) || es[0].Outcome != domain.OutcomeSuccess {
			t.Fatalf("audit %s = %+v, %v; want one success by the user", action, es, err)
		}
	}
}

func TestPasskey_rules(t *testing.T) {
	t.Run("banned_user_refused", func(t *testing.T) {
		w := newPKWorld(t)
		w.register(t)
		if err := w.Users.Update(t.Context(), w.p.User.ID(), func(u *domain.User) error {
			return u.Ban("spam", time.Time{}, w.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		_, err := w.authenticate(t, nil)
		usecasetest.MustCode(t, err, usecase.ErrBannedUser.Code)
	})
	t.Run("expired_challenge_refused", func(t *testing.T) {
		w := newPKWorld(t)
		w.register(t)
		opts, err := w.pk.AuthenticateOptions(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		ao, _ := virtualwebauthn.ParseAssertionOptions(mustMarshal(t, opts.Request))
		w.cred.Counter++
		resp := virtualwebauthn.CreateAssertionResponse(w.rp, w.device, w.cred, *ao)
		w.Clock.Advance(mfa.PasskeyChallengeTTL + time.Second)
		_, err = w.pk.VerifyAuthentication(t.Context(), mfa.PasskeyVerifyAuthentication{ChallengeID: opts.ChallengeID, Response: []byte(resp)})
		usecasetest.MustCode(t, err, "passkey.challenge_not_found")
	})
	t.Run("registration_challenge_is_not_an_authentication", func(t *testing.T) {
		w := newPKWorld(t)
		w.register(t)
		reg, err := w.pk.RegisterOptions(t.Context(), mfa.PasskeyRegisterOptions{Principal: w.p})
		if err != nil {
			t.Fatal(err)
		}
		auth, _ := w.pk.AuthenticateOptions(t.Context(), nil)
		ao, _ := virtualwebauthn.ParseAssertionOptions(mustMarshal(t, auth.Request))
		w.cred.Counter++
		resp := virtualwebauthn.CreateAssertionResponse(w.rp, w.device, w.cred, *ao)
		_, err = w.pk.VerifyAuthentication(t.Context(), mfa.PasskeyVerifyAuthentication{ChallengeID: reg.ChallengeID, Response: []byte(resp)})
		usecasetest.MustCode(t, err, "passkey.challenge_not_found")
	})
	t.Run("registration_needs_a_fresh_session", func(t *testing.T) {
		w := newPKWorld(t)
		opts, err := w.pk.RegisterOptions(t.Context(), mfa.PasskeyRegisterOptions{Principal: w.p})
		if err != nil {
			t.Fatal(err)
		}
		w.Clock.Advance(w.Settings.Sessions.FreshAge + time.Second)
		_, err = w.pk.RegisterOptions(t.Context(), mfa.PasskeyRegisterOptions{Principal: w.p})
		usecasetest.MustCode(t, err, usecase.ErrSessionNotFresh.Code)
		_, err = w.pk.VerifyRegistration(t.Context(), mfa.PasskeyVerifyRegistration{Principal: w.p, ChallengeID: opts.ChallengeID, Response: []byte(`{}`)})
		usecasetest.MustCode(t, err, usecase.ErrSessionNotFresh.Code)
	})
	t.Run("synced_passkey_counter_may_stay", func(t *testing.T) {
		w := newPKWorld(t)
		w.device.Options.BackupEligible, w.device.Options.BackupState = true, true
		w.register(t)
		for range 2 {
			w.cred.Counter = 0 // authenticate adds one: both answers carry 1
			res, err := w.authenticate(t, nil)
			if err != nil {
				t.Fatalf("synced passkey with a counter that stays: %v", err)
			}
			if m := res.Session.Authentication().MethodNames(); len(m) == 0 || m[0] != "swk" {
				t.Fatalf("methods = %v, want swk first", m)
			}
		}
	})
}

func TestPasskey_expired_challenges_are_purged(t *testing.T) {
	w := newPKWorld(t)
	if _, err := w.pk.AuthenticateOptions(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	purge := account.NewPurger(memory.NewSessionRepository(w.DB), memory.NewVerificationRepository(w.DB),
		memory.NewServiceKeyRepository(w.DB), memory.NewOAuthGrantRepository(w.DB), memory.NewMFAChallengeRepository(w.DB),
		memory.NewWebAuthnChallengeRepository(w.DB), memory.NewFederationStateRepository(w.DB), memory.NewSignInStats(), memory.NewSpentTokens(), w.Clock)
	if p, err := purge.PurgeExpired(t.Context()); err != nil || p.Challenges != 0 {
		t.Fatalf("purge of a live challenge = %+v, %v", p, err)
	}
	w.Clock.Advance(mfa.PasskeyChallengeTTL + time.Second)
	if p, err := purge.PurgeExpired(t.Context()); err != nil || p.Challenges != 1 {
		t.Fatalf("purge after the challenge expired = %+v, %v; want 1 challenge", p, err)
	}
}
