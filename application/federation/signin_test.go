package federation_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// upstream is the provider's side of the use case tests: it hands out the
// identity it is told to, and checks that the callback brings back the
// PKCE verifier and nonce of the authorization request it made.
type upstream struct {
	t        *testing.T
	identity ports.UpstreamIdentity
	metadata ports.UpstreamMetadata
	verifier string
	nonce    string
}

func (u *upstream) Metadata(context.Context, ports.UpstreamProvider) (ports.UpstreamMetadata, error) {
	return u.metadata, nil
}

func (u *upstream) AuthorizationURL(_ context.Context, p ports.UpstreamProvider, a ports.UpstreamAuthorization) (string, error) {
	if p.ClientSecret != "client-secret" {
		u.t.Fatalf("the client secret did not open: %q", p.ClientSecret)
	}
	u.verifier, u.nonce = a.Verifier, a.Nonce
	return "https://idp.example/authorize?" + url.Values{"state": {a.State}}.Encode(), nil
}

func (u *upstream) Exchange(_ context.Context, _ ports.UpstreamProvider, code, verifier, _, nonce string) (ports.UpstreamIdentity, ports.UpstreamTokens, error) {
	if code != "the-code" || verifier != u.verifier || nonce != u.nonce || len(verifier) < 43 || nonce == "" {
		u.t.Fatalf("exchange with code %q verifier %q nonce %q, want the request's", code, verifier, nonce)
	}
	return u.identity, ports.UpstreamTokens{AccessToken: "at", RefreshToken: "rt", IDToken: "idt"}, nil
}

func (u *upstream) VerifyIDToken(context.Context, ports.UpstreamProvider, string, string) (ports.UpstreamIdentity, error) {
	return u.identity, nil
}

func (u *upstream) Refresh(context.Context, ports.UpstreamProvider, string) (ports.UpstreamTokens, error) {
	return ports.UpstreamTokens{AccessToken: "at2"}, nil
}

func (u *upstream) UserInfo(context.Context, ports.UpstreamProvider, string) (ports.UpstreamIdentity, error) {
	return u.identity, nil
}

// fedWorld is the federation's use cases on the memory store of w.
type fedWorld struct {
	*usecasetest.World
	up        *upstream
	signIns   *federation.SignIns
	providers *federation.Providers
	accounts  *memory.LinkedAccountRepository
}

func newFedWorld(t *testing.T) *fedWorld {
	t.Helper()
	w := usecasetest.NewWorld(t, false)
	sealer, err := signingkeys.NewSecretSealer(signingkeys.Secrets{"a-test-secret-of-at-least-32-bytes-long"})
	if err != nil {
		t.Fatal(err)
	}
	up := &upstream{t: t, metadata: ports.UpstreamMetadata{Issuer: "https://idp.example"}}
	providers, domains := memory.NewIdentityProviderRepository(w.DB), memory.NewDomainRepository(w.DB)
	accounts := memory.NewLinkedAccountRepository(w.DB)
	tokens, ids, audit := system.NewTokenGenerator(), system.NewIDGenerator(), w.AuditorOf(memory.NewAuditLog(w.DB))
	router := federation.NewRouter(providers, domains)
	f := &fedWorld{World: w, up: up, accounts: accounts}
	f.signIns = federation.NewSignIns(providers, accounts, memory.NewFederationStateRepository(w.DB), w.Users, memory.NewSessionRepository(w.DB),
		memory.NewVerificationRepository(w.DB), memory.NewMFAChallengeRepository(w.DB), up, sealer, w.Mail, audit, tokens, ids, w.Clock,
		federation.Settings{Auth: w.Settings}, nil, router, memory.NewOrganizationRepository(w.DB))
	f.providers = federation.NewProviders(providers, domains, memory.NewOrganizationRepository(w.DB), sealer, audit, ids, w.Clock, usecase.AdminSettings{},
		w.Users, memory.NewSessionRepository(w.DB), federation.NewRouter(providers, domains))
	return f
}

// mustProvider registers an OpenID provider "idp" as the command line.
func (f *fedWorld) mustProvider(t *testing.T, trusted bool) {
	t.Helper()
	preset, issuer, client := "oidc", "https://idp.example", "client"
	if _, err := f.providers.Create(t.Context(), usecase.KeyRequest{Actor: usecase.CLIActor}, federation.ProviderInput{ID: "idp",
		Preset: &preset, Issuer: &issuer, ClientID: &client, ClientSecret: "client-secret", TrustedForLinking: &trusted}); err != nil {
		t.Fatal(err)
	}
}

// callback runs a whole sign-in as the browser that started it.
func (f *fedWorld) callback(t *testing.T, edit func(*federation.Callback)) (federation.CallbackResult, error) {
	t.Helper()
	st, err := f.signIns.Start(t.Context(), federation.Start{Provider: "idp", CallbackURL: "/done", ErrorURL: "/oops"})
	if err != nil {
		t.Fatal(err)
	}
	cb := federation.Callback{Provider: "idp", State: st.State, StateCookie: st.State, Code: "the-code",
		Issuer: "https://idp.example", HasIssuer: true}
	if edit != nil {
		edit(&cb)
	}
	return f.signIns.Callback(t.Context(), cb)
}

func TestSignIns_linking_rules(t *testing.T) {
	for _, tc := range []struct {
		name                             string
		trusted, upstreamVerified, local bool
		wantCode                         string // "" links to the local user
	}{
		{"trusted_and_both_verified_links", true, true, true, ""},
		{"untrusted_provider_does_not_link", false, true, true, "federation.account_not_linked"},
		{"unverified_upstream_address_does_not_link", true, false, true, "federation.account_not_linked"},
		{"unverified_local_address_does_not_link", true, true, false, "federation.account_not_linked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFedWorld(t)
			f.mustProvider(t, tc.trusted)
			local := f.MustSignUp(t, "ada@example.com").User
			if tc.local {
				if err := f.Users.Update(t.Context(), local.ID(), func(u *domain.User) error { u.MarkEmailVerified(f.Clock.Now()); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			f.up.identity = ports.UpstreamIdentity{Subject: "sub-1", Email: "ada@example.com", EmailVerified: tc.upstreamVerified, Name: "Ada"}
			res, err := f.callback(t, nil)
			linked, lerr := f.accounts.ListByUser(t.Context(), local.ID())
			if lerr != nil {
				t.Fatal(lerr)
			}
			if tc.wantCode != "" {
				usecasetest.MustCode(t, err, tc.wantCode)
				if len(linked) != 0 || res.Session != nil || res.ErrorURL != "/oops" {
					t.Fatalf("refused link left %d accounts, session %v, error URL %q", len(linked), res.Session, res.ErrorURL)
				}
				return
			}
			if err != nil || res.User.ID() != local.ID() || res.NewUser || res.Session == nil || len(linked) != 1 || linked[0].Subject != "sub-1" {
				t.Fatalf("link = %+v, %v; accounts %v", res, err, linked)
			}
		})
	}
}

func TestSignIns_callback_rules(t *testing.T) {
	for _, tc := range []struct {
		name     string
		metadata ports.UpstreamMetadata
		edit     func(*federation.Callback)
		wantCode string
	}{
		{"another_browser_is_a_state_mismatch", ports.UpstreamMetadata{}, func(c *federation.Callback) { c.StateCookie = "" }, "federation.state_mismatch"},
		{"no_state", ports.UpstreamMetadata{}, func(c *federation.Callback) { c.State = "" }, "federation.state_missing"},
		{"another_provider_is_a_state_mismatch", ports.UpstreamMetadata{}, func(c *federation.Callback) { c.Provider = "other" }, "federation.state_mismatch"},
		{"wrong_issuer", ports.UpstreamMetadata{Issuer: "https://idp.example"}, func(c *federation.Callback) { c.Issuer = "https://evil.example" }, "federation.issuer_mismatch"},
		{"missing_issuer_when_promised", ports.UpstreamMetadata{Issuer: "https://idp.example", IssuerInResponse: true},
			func(c *federation.Callback) { c.Issuer, c.HasIssuer = "", false }, "federation.issuer_missing"},
		{"missing_issuer_when_not_promised", ports.UpstreamMetadata{Issuer: "https://idp.example"},
			func(c *federation.Callback) { c.Issuer, c.HasIssuer = "", false }, ""},
		{"provider_error_is_passed_on_when_registered", ports.UpstreamMetadata{}, func(c *federation.Callback) { c.Error = "access_denied" }, "federation.upstream_error"},
		{"no_code", ports.UpstreamMetadata{}, func(c *federation.Callback) { c.Code = "" }, "federation.no_code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFedWorld(t)
			f.mustProvider(t, false)
			f.up.metadata = tc.metadata
			f.up.identity = ports.UpstreamIdentity{Subject: "sub-1", Email: "new@example.com", EmailVerified: true}
			res, err := f.callback(t, tc.edit)
			if tc.wantCode == "" {
				if err != nil || res.Session == nil || !res.NewUser || res.RedirectURL != "/done" {
					t.Fatalf("callback = %+v, %v", res, err)
				}
				return
			}
			usecasetest.MustCode(t, err, tc.wantCode)
			if res.Session != nil {
				t.Fatal("a refused callback started a session")
			}
		})
	}
}

func TestSignIns_state_is_used_once(t *testing.T) {
	f := newFedWorld(t)
	f.mustProvider(t, false)
	f.up.identity = ports.UpstreamIdentity{Subject: "sub-1", Email: "new@example.com", EmailVerified: true}
	st, err := f.signIns.Start(t.Context(), federation.Start{Provider: "idp", CallbackURL: "/done"})
	if err != nil {
		t.Fatal(err)
	}
	cb := federation.Callback{Provider: "idp", State: st.State, StateCookie: st.State, Code: "the-code", Issuer: "https://idp.example", HasIssuer: true}
	// A wrong browser does not use it up.
	wrong := cb
	wrong.StateCookie = "x"
	if _, err := f.signIns.Callback(t.Context(), wrong); err == nil {
		t.Fatal("the wrong browser's callback succeeded")
	}
	if res, err := f.signIns.Callback(t.Context(), cb); err != nil || res.Session == nil {
		t.Fatalf("first callback = %+v, %v", res, err)
	}
	_, err = f.signIns.Callback(t.Context(), cb)
	usecasetest.MustCode(t, err, "federation.state_mismatch")
	// Nor does it outlive its ten minutes.
	st, err = f.signIns.Start(t.Context(), federation.Start{Provider: "idp", CallbackURL: "/done"})
	if err != nil {
		t.Fatal(err)
	}
	f.Clock.Advance(domain.FederationStateTTL + time.Second)
	cb.State, cb.StateCookie = st.State, st.State
	_, err = f.signIns.Callback(t.Context(), cb)
	usecasetest.MustCode(t, err, "federation.state_mismatch")
}

func TestFederatedAuthentication_keeps_registered_methods(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	a := federation.FederatedAuthentication([]string{"pwd", "mfa", "bogus", "otp", "pwd"}, at)
	if got := a.EncodeMethods(); got != "pwd mfa otp" || !a.HasSecondFactor() || a.ACR() != domain.ACRMultiFactor {
		t.Fatalf("methods %q, second factor %v, acr %s", got, a.HasSecondFactor(), a.ACR())
	}
	if a := federation.FederatedAuthentication(nil, at); a.HasSecondFactor() || len(a.Methods) != 0 {
		t.Fatalf("no amr = %+v", a)
	}
}

func TestSignIns_no_user_is_made_of_an_unverified_address(t *testing.T) {
	f := newFedWorld(t)
	f.mustProvider(t, true)
	f.up.identity = ports.UpstreamIdentity{Subject: "sub-1", Email: "someone@example.com", EmailVerified: false}
	_, err := f.callback(t, nil)
	usecasetest.MustCode(t, err, "federation.email_not_verified")
	if _, err := f.Users.GetByEmail(t.Context(), "someone@example.com"); err == nil {
		t.Fatal("a user was made of an address the provider did not verify")
	}
}

// Ensure sign-ins at a provider are recorded in the durable counts once
// the provider vouched for an identity: a new user's session as a success,
// a banned user's refusal as a failure, and a bad state not at all.
func TestSignIns_are_recorded_in_the_counts(t *testing.T) {
	f := newFedWorld(t)
	stats := memory.NewSignInStats()
	counter := usecase.NewSignInCounter(stats, f.Clock, nil)
	f.signIns.CountSignIns(counter)
	f.mustProvider(t, false)
	f.up.identity = ports.UpstreamIdentity{Subject: "sub-1", Email: "new@example.com", EmailVerified: true}
	res, err := f.callback(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.callback(t, func(c *federation.Callback) { c.StateCookie = "" }); err == nil {
		t.Fatal("a callback from another browser was accepted")
	}
	if err := f.Users.Update(t.Context(), res.User.ID(), func(u *domain.User) error {
		return u.Ban("spam", time.Time{}, f.Clock.Now())
	}); err != nil {
		t.Fatal(err)
	}
	_, err = f.callback(t, nil)
	usecasetest.MustCode(t, err, "user.banned")
	if err := counter.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := stats.Series(t.Context(), f.Clock.Now(), f.Clock.Now().Add(time.Nanosecond), ports.StepHour)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Succeeded != 1 || got[0].Failed != 1 {
		t.Fatalf("counts = %+v, want 1 succeeded and 1 failed", got[0])
	}
}
