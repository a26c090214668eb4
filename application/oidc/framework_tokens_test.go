package oidc_test

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// payloadOf returns a token's payload with iat and exp cut out, so that two
// tokens' other claims can be compared byte for byte.
func payloadOf(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	times := regexp.MustCompile(`,"iat":[0-9]+,"exp":[0-9]+`)
	if !times.Match(b) {
		t.Fatalf("payload without iat and exp: %s", b)
	}
	return times.ReplaceAllString(string(b), "")
}

// Ensure get-session's token is handed out again while nothing it says has
// changed and most of its life is left, carries exactly the claims of a
// freshly signed one but iat and exp, and verifies.
func TestSigningKeys_session_framework_token_is_reused_while_unchanged(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	p := w.SignedIn(t, "ada@example.com")
	user := map[string]any{"id": string(p.User.ID()), "name": "Ada", "email": "ada@example.com"}
	first, err := w.keys.SessionFrameworkToken(ctx, &p, user)
	if err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(tokenSettings.JWTLifetime/3 - time.Second)
	again, err := w.keys.SessionFrameworkToken(ctx, &p, user)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatal("an unchanged session with most of its token's life left got a new token")
	}
	fresh, err := w.keys.FrameworkToken(ctx, &p, user)
	if err != nil {
		t.Fatal(err)
	}
	if fresh == first {
		t.Fatal("FrameworkToken reused a token")
	}
	if got, want := payloadOf(t, again), payloadOf(t, fresh); got != want {
		t.Fatalf("reused claims %s, fresh %s", got, want)
	}
	opt := oidc.VerifyOptions{Alg: domain.AlgEdDSA, Type: "JWT", Issuer: tokenSettings.JWTIssuer, Audience: tokenSettings.JWTAudience[0]}
	if _, err := w.keys.Verify(ctx, again, opt); err != nil {
		t.Fatalf("the reused token does not verify: %v", err)
	}

	// Past a third of its lifetime, a new one.
	w.Clock.Advance(2 * time.Second)
	later, err := w.keys.SessionFrameworkToken(ctx, &p, user)
	if err != nil {
		t.Fatal(err)
	}
	c, err := w.keys.Verify(ctx, later, opt)
	if err != nil {
		t.Fatal(err)
	}
	if later == first || c["iat"] != float64(w.Clock.Now().Unix()) {
		t.Fatalf("a token past a third of its life was handed out again (iat %v, now %d)", c["iat"], w.Clock.Now().Unix())
	}
}

// Ensure any change to what the token says, to the session, or to the key
// that signs gets a new token at once, and that each session has its own.
func TestSigningKeys_session_framework_token_follows_every_change(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	p := w.SignedIn(t, "ada@example.com")
	user := map[string]any{"id": string(p.User.ID()), "name": "Ada", "email": "ada@example.com", "banned": false}
	mustToken := func(p usecase.Principal, user any) string {
		t.Helper()
		token, err := w.keys.SessionFrameworkToken(ctx, &p, user)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	base := mustToken(p, user)

	// A second later, a token signed anew differs from base (its iat)
	// even when everything else is the same; ed25519 signs deterministically.
	w.Clock.Advance(time.Second)
	renamed := map[string]any{"id": string(p.User.ID()), "name": "Ada L.", "email": "ada@example.com", "banned": false}
	token := mustToken(p, renamed)
	if token == base || !strings.Contains(payloadOf(t, token), `"name":"Ada L."`) {
		t.Fatalf("after a rename: %s", payloadOf(t, token))
	}
	w.Clock.Advance(time.Second)
	if token = mustToken(p, user); token == base {
		t.Fatal("the token of the old name came back (the cache keeps one token a session)")
	}
	base = token

	w.Clock.Advance(time.Second)
	moved := *p.Session
	moved.SetActiveOrganization("org-1", w.Clock.Now())
	q := p
	q.Session = &moved
	if token = mustToken(q, user); token == base {
		t.Fatal("a changed session (updated_at) kept its token")
	}
	base = token

	// Another session of the same user, alike in all but its id, gets its own.
	w.Clock.Advance(time.Second)
	twin := domain.RehydrateSession("twin", p.User.ID(), domain.HashToken("twin"), true, "", "", moved.ActiveOrganizationID(), "",
		moved.ExpiresAt(), moved.CreatedAt(), moved.UpdatedAt(), moved.Authentication())
	r := usecase.Principal{User: p.User, Session: twin}
	if token = mustToken(r, user); token == base {
		t.Fatal("another session got this session's token")
	}

	base = mustToken(q, user)
	if _, err := w.keys.Rotate(ctx, usecase.KeyRequest{Actor: usecase.CLIActor},
		oidc.RotateSigningKeys{Algs: []domain.SigningAlgorithm{domain.AlgEdDSA}, Immediate: true}); err != nil {
		t.Fatal(err)
	}
	token = mustToken(q, user)
	if token == base || header(t, token)["kid"] == header(t, base)["kid"] {
		t.Fatalf("after a rotation the token of the old key (%v) was handed out", header(t, base)["kid"])
	}
}

// Ensure the kept tokens are bounded: many sessions never hold more than
// the cache's size.
func TestSigningKeys_session_framework_tokens_are_bounded(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	p := w.SignedIn(t, "ada@example.com")
	user := map[string]any{"id": string(p.User.ID())}
	now := w.Clock.Now()
	for i := range oidc.FrameworkTokenCacheSize + 10 {
		s := domain.NewSession(domain.SessionID(fmt.Sprintf("s-%d", i)), p.User.ID(), domain.HashToken(fmt.Sprint(i)), true, "", "",
			domain.SessionPolicy{Lifetime: time.Hour}, now)
		q := usecase.Principal{User: p.User, Session: s}
		if _, err := w.keys.SessionFrameworkToken(ctx, &q, user); err != nil {
			t.Fatal(err)
		}
	}
	if got, limit := oidc.FrameworkTokensKept(w.keys), oidc.FrameworkTokenCacheSize; got > limit || got == 0 {
		t.Fatalf("kept %d tokens, want 1 to %d", got, limit)
	}
}

// Ensure concurrent get-sessions of many sessions each get a token of their
// own user (run under -race, as the suite is).
func TestSigningKeys_session_framework_token_concurrent(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	now := w.Clock.Now()
	principals := make([]usecase.Principal, 40)
	for i := range principals {
		u, err := domain.NewUser(domain.UserID(fmt.Sprintf("u-%d", i)), "U", domain.Email(fmt.Sprintf("u%d@example.com", i)), now)
		if err != nil {
			t.Fatal(err)
		}
		s := domain.NewSession(domain.SessionID(fmt.Sprintf("s-%d", i)), u.ID(), domain.HashToken(fmt.Sprint(i)), true, "", "",
			domain.SessionPolicy{Lifetime: time.Hour}, now)
		principals[i] = usecase.Principal{User: u, Session: s}
	}
	opt := oidc.VerifyOptions{Alg: domain.AlgEdDSA, Type: "JWT"}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for n := range 100 {
				q := principals[(g*7+n)%len(principals)]
				token, err := w.keys.SessionFrameworkToken(ctx, &q, map[string]any{"id": string(q.User.ID())})
				if err == nil {
					var c map[string]any
					if c, err = w.keys.Verify(ctx, token, opt); err == nil && c["sub"] != string(q.User.ID()) {
						err = fmt.Errorf("%s got a token of %v", q.User.ID(), c["sub"])
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
