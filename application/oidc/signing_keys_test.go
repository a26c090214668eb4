package oidc_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

const keySecret = "signing-test-secret-0123456789-abcdefghijklmnop"

var tokenSettings = usecase.TokenSettings{
	Issuer: "https://id.example.com/api/auth", BaseURL: "https://id.example.com", Secrets: []string{keySecret},
	JWTIssuer: "https://id.example.com/api/auth", JWTAudience: []string{"https://id.example.com"}, JWTLifetime: 15 * time.Minute,
	AccessTokenLifetime: 15 * time.Minute, IDTokenLifetime: time.Hour, JWKSMaxAge: 5 * time.Minute,
}

// keyWorld is adminWorld with signing keys on a memory store.
type keyWorld struct {
	*usecasetest.AdminWorld
	repo *memory.SigningKeyRepository
	keys *oidc.SigningKeys
}

func newKeyWorld(t *testing.T) *keyWorld {
	t.Helper()
	w := &keyWorld{AdminWorld: usecasetest.NewAdminWorld(t), repo: memory.NewSigningKeyRepository(memory.NewDB())}
	w.keys = w.instance(t, keySecret)
	return w
}

// instance is another service instance on the same store, sealing under
// secrets; its keys are ensured.
func (w *keyWorld) instance(t *testing.T, secrets ...string) *oidc.SigningKeys {
	t.Helper()
	jose, err := signingkeys.New(secrets)
	if err != nil {
		t.Fatal(err)
	}
	k := oidc.NewSigningKeys(w.repo, jose, system.NewIDGenerator(), w.Clock, w.Auditor, tokenSettings, usecase.AdminSettings{Admins: w.Admins})
	if err := k.Ensure(t.Context()); err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return k
}

// jwksKids returns the kids of the key set by algorithm.
func jwksKids(t *testing.T, k *oidc.SigningKeys) map[string][]string {
	t.Helper()
	doc, err := k.JWKS(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, key := range set.Keys {
		out[key["alg"].(string)] = append(out[key["alg"].(string)], key["kid"].(string))
	}
	return out
}

// header returns a token's decoded protected header.
func header(t *testing.T, token string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

func b64JSON(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestSigningKeys_ensure_creates_one_key_per_algorithm_once(t *testing.T) {
	w := newKeyWorld(t)
	if err := w.keys.Ensure(t.Context()); err != nil {
		t.Fatal(err)
	}
	w.instance(t, keySecret) // a second instance starting finds the keys
	stored, err := w.repo.List(t.Context())
	if err != nil || len(stored) != 2 {
		t.Fatalf("stored keys = %d, %v; want 2", len(stored), err)
	}
	kids := jwksKids(t, w.keys)
	if len(kids["EdDSA"]) != 1 || len(kids["RS256"]) != 1 {
		t.Fatalf("key set = %v", kids)
	}
}

func TestSigningKeys_verify(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	now := w.Clock.Now().Unix()
	claims := func(edit func(c map[string]any)) map[string]any {
		c := map[string]any{"iss": tokenSettings.Issuer, "aud": "api", "sub": "u1", "iat": now, "exp": now + 60}
		if edit != nil {
			edit(c)
		}
		return c
	}
	sign := func(alg domain.SigningAlgorithm, typ string, c map[string]any) string {
		token, err := w.keys.Sign(ctx, alg, typ, c)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	good := sign(domain.AlgRS256, "at+jwt", claims(nil))
	kid := header(t, good)["kid"].(string)
	payload := strings.Split(good, ".")[1]
	stored, _ := w.repo.List(ctx)
	var rsaJWK []byte
	for _, k := range stored {
		if string(k.ID) == kid {
			rsaJWK = k.PublicJWK
		}
	}
	hs256 := func(key []byte) string {
		input := b64JSON(map[string]string{"alg": "HS256", "kid": kid, "typ": "at+jwt"}) + "." + payload
		m := hmac.New(sha256.New, key)
		m.Write([]byte(input))
		return input + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	}
	stranger, _ := signingkeys.New(signingkeys.Secrets{keySecret})
	unknown, _ := stranger.Generate("not-published", domain.AlgRS256)
	unknownToken, err := signingkeys.SignClaims(signingkeys.Secrets{keySecret}, unknown, "at+jwt", claims(nil))
	if err != nil {
		t.Fatal(err)
	}
	access := oidc.VerifyOptions{Alg: domain.AlgRS256, Type: "at+jwt", Issuer: tokenSettings.Issuer, Audience: "api"}

	tests := []struct {
		name  string
		token string
		opt   oidc.VerifyOptions
		ok    bool
	}{
		{"good_token", good, access, true},
		{"typ_compared_as_a_media_type", good, oidc.VerifyOptions{Alg: domain.AlgRS256, Type: "application/AT+JWT"}, true},
		{"alg_none", b64JSON(map[string]string{"alg": "none", "kid": kid, "typ": "at+jwt"}) + "." + payload + ".", access, false},
		{"hs256_with_the_public_jwk_as_secret", hs256(rsaJWK), access, false},
		{"hs256_with_the_kid_as_secret", hs256([]byte(kid)), access, false},
		{"unknown_kid", unknownToken, access, false},
		{"wrong_typ", sign(domain.AlgRS256, "JWT", claims(nil)), access, false},
		{"missing_typ", sign(domain.AlgRS256, "", claims(nil)), access, false},
		{"other_algorithm_than_asked", sign(domain.AlgEdDSA, "at+jwt", claims(nil)), access, false},
		{"no_algorithm_asked", good, oidc.VerifyOptions{}, false},
		{"expired_beyond_leeway", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["exp"] = now - 31 })), access, false},
		{"expired_within_leeway", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["exp"] = now - 29 })), access, true},
		{"expired_but_expiry_ignored", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["exp"] = now - 3600 })),
			oidc.VerifyOptions{Alg: domain.AlgRS256, Issuer: tokenSettings.Issuer, IgnoreExpiry: true}, true},
		{"no_exp", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { delete(c, "exp") })), access, false},
		{"exp_not_a_number", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["exp"] = "never" })), access, false},
		{"nbf_in_the_future", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["nbf"] = now + 60 })), access, false},
		{"nbf_within_leeway", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["nbf"] = now + 20 })), access, true},
		{"iat_in_the_future", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["iat"] = now + 120 })), access, false},
		{"wrong_iss", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["iss"] = "https://evil.example.com/api/auth" })), access, false},
		{"iss_with_trailing_slash", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["iss"] = tokenSettings.Issuer + "/" })), access, false},
		{"wrong_aud", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["aud"] = "other-api" })), access, false},
		{"aud_list_containing_the_audience", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["aud"] = []string{"x", "api"} })), access, true},
		{"aud_list_without_the_audience", sign(domain.AlgRS256, "at+jwt", claims(func(c map[string]any) { c["aud"] = []string{"x", "y"} })), access, false},
		{"changed_payload", strings.Join([]string{strings.Split(good, ".")[0], b64JSON(claims(func(c map[string]any) { c["sub"] = "admin" })), strings.Split(good, ".")[2]}, "."), access, false},
		{"garbage", "not.a.token", access, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.keys.Verify(ctx, tt.token, tt.opt)
			if tt.ok {
				if err != nil || got["sub"] != "u1" {
					t.Fatalf("Verify = %v, %v; want the claims", got, err)
				}
				return
			}
			if domain.KindOf(err) != domain.KindUnauthenticated || got != nil {
				t.Fatalf("Verify = %v, %v; want unauthenticated", got, err)
			}
			usecasetest.MustCode(t, err, "token.invalid")
		})
	}
}

// Ensure an immediate rotation (a compromised key) signs with the new key
// at once, here, and retires the old one now.
func TestSigningKeys_rotate(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	boss := w.SignedIn(t, "boss@example.com")
	eve := w.SignedIn(t, "eve@example.com")
	before, _ := w.keys.Sign(ctx, domain.AlgEdDSA, "JWT", map[string]any{"sub": "u1", "exp": w.Clock.Now().Unix() + 600})
	oldKid := header(t, before)["kid"].(string)

	_, err := w.keys.Rotate(ctx, usecase.KeyRequest{Principal: &eve, Actor: usecase.UserActor(eve.User.ID(), "", "")}, oidc.RotateSigningKeys{})
	if domain.KindOf(err) != domain.KindForbidden {
		t.Fatalf("Rotate by a non-admin = %v, want forbidden", err)
	}
	_, err = w.keys.Rotate(ctx, usecase.KeyRequest{Principal: &boss, Actor: usecase.UserActor(boss.User.ID(), "", "")}, oidc.RotateSigningKeys{Algs: []domain.SigningAlgorithm{"HS256"}})
	usecasetest.MustCode(t, err, "request.invalid_alg")

	w.Clock.Advance(time.Second)
	views, err := w.keys.Rotate(ctx, usecase.KeyRequest{Principal: &boss, Actor: usecase.UserActor(boss.User.ID(), "", "")},
		oidc.RotateSigningKeys{Algs: []domain.SigningAlgorithm{domain.AlgEdDSA}, Immediate: true})
	if err != nil || len(views) != 1 || views[0].Alg != domain.AlgEdDSA || string(views[0].ID) == oldKid {
		t.Fatalf("Rotate = %+v, %v", views, err)
	}
	after, _ := w.keys.Sign(ctx, domain.AlgEdDSA, "JWT", map[string]any{"sub": "u1", "exp": w.Clock.Now().Unix() + 600})
	if kid := header(t, after)["kid"]; kid != string(views[0].ID) {
		t.Fatalf("after rotation signed with %v, want the new key %s", kid, views[0].ID)
	}
	if kids := jwksKids(t, w.keys); len(kids["EdDSA"]) != 2 || kids["EdDSA"][0] != string(views[0].ID) || len(kids["RS256"]) != 1 {
		t.Fatalf("key set after rotation = %v", kids)
	}
	if _, err := w.keys.Verify(ctx, before, oidc.VerifyOptions{Alg: domain.AlgEdDSA}); err != nil {
		t.Fatalf("a token of the retired key no longer verifies: %v", err)
	}
	list, err := w.keys.List(ctx, usecase.KeyRequest{Actor: usecase.CLIActor})
	if err != nil || len(list) != 3 || list[0].ID != views[0].ID || list[0].RetiredAt.IsZero() != true {
		t.Fatalf("List = %+v, %v", list, err)
	}
	for _, v := range list {
		if string(v.ID) == oldKid && !v.PublishedUntil.Equal(v.RetiredAt.Add(time.Hour+5*time.Minute)) {
			t.Fatalf("retired key published until %v, want retirement + longest lifetime + max-age", v.PublishedUntil)
		}
	}

	// Refusals and successes are audited alike.
	var outcomes []domain.Outcome
	for _, e := range w.Entries(t, "admin.rotate-signing-key") {
		outcomes = append(outcomes, e.Outcome)
	}
	if len(outcomes) != 3 {
		t.Fatalf("audit outcomes = %v, want 3 entries", outcomes)
	}

	// Past the window the retired key leaves the set and the store.
	w.Clock.Advance(time.Hour + 5*time.Minute + time.Second)
	if err := w.keys.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := jwksKids(t, w.keys); len(kids["EdDSA"]) != 1 {
		t.Fatalf("key set after the window = %v", kids)
	}
	if _, err := w.keys.Verify(ctx, before, oidc.VerifyOptions{Alg: domain.AlgEdDSA, IgnoreExpiry: true}); err == nil {
		t.Fatal("a token of a pruned key verified")
	}
}

// Ensure a rotation on one instance is followed by another: at once when a
// token names the new kid (at most every few seconds), else at Refresh.
func TestSigningKeys_another_instance_follows_a_rotation(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	b := w.instance(t, keySecret)
	rotate := func() string {
		w.Clock.Advance(time.Second)
		if _, err := w.keys.Rotate(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, oidc.RotateSigningKeys{Algs: []domain.SigningAlgorithm{domain.AlgRS256}, Immediate: true}); err != nil {
			t.Fatal(err)
		}
		token, err := w.keys.Sign(ctx, domain.AlgRS256, "JWT", map[string]any{"exp": w.Clock.Now().Unix() + 60})
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	opt := oidc.VerifyOptions{Alg: domain.AlgRS256}
	if _, err := b.Verify(ctx, rotate(), opt); err != nil {
		t.Fatalf("instance b does not verify a token of a's new key: %v", err)
	}
	second := rotate()
	if _, err := b.Verify(ctx, second, opt); err == nil {
		t.Fatal("instance b reloaded twice within the throttle")
	}
	w.Clock.Advance(6 * time.Second)
	if _, err := b.Verify(ctx, second, opt); err != nil {
		t.Fatalf("after the throttle: %v", err)
	}
	// b signs with the newest key once it refreshed.
	third := rotate()
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	token, _ := b.Sign(ctx, domain.AlgRS256, "JWT", map[string]any{})
	if header(t, token)["kid"] != header(t, third)["kid"] {
		t.Fatal("b does not sign with the newest key after Refresh")
	}
}

// Ensure a rotation publishes its key on every instance before any signs
// with it: the new key is in the key set at once (and in another
// instance's after its reload) while the old key signs; at the activation
// time, two reload intervals on, both instances switch without a reload,
// and a token of the new key verifies on the other instance.
func TestSigningKeys_rotation_publishes_before_signing(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	b := w.instance(t, keySecret)
	sign := func(k *oidc.SigningKeys) string {
		t.Helper()
		token, err := k.Sign(ctx, domain.AlgEdDSA, "JWT", map[string]any{"exp": w.Clock.Now().Unix() + 600})
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	oldKid := header(t, sign(w.keys))["kid"]
	w.Clock.Advance(time.Second)
	rotatedAt := w.Clock.Now()
	views, err := w.keys.Rotate(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, oidc.RotateSigningKeys{Algs: []domain.SigningAlgorithm{domain.AlgEdDSA}})
	if err != nil || len(views) != 1 {
		t.Fatalf("Rotate = %+v, %v", views, err)
	}
	newKid := string(views[0].ID)
	if got, want := views[0].ActivatesAt, rotatedAt.Add(tokenSettings.KeyActivationDelay()); views[0].Status != oidc.SigningKeyPending || !got.Equal(want) {
		t.Fatalf("new key %s activates at %v, want pending until %v", views[0].Status, got, want)
	}
	if kids := jwksKids(t, w.keys)["EdDSA"]; len(kids) != 2 || kids[0] != newKid {
		t.Fatalf("key set after rotation = %v, want the new key first and the old one", kids)
	}
	for name, k := range map[string]*oidc.SigningKeys{"a": w.keys, "b": b} {
		if kid := header(t, sign(k))["kid"]; kid != oldKid {
			t.Fatalf("instance %s signs with %v before the activation, want the old key %v", name, kid, oldKid)
		}
	}
	// b's periodic reload, within one interval of the rotation.
	w.Clock.Advance(time.Minute - time.Second)
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := jwksKids(t, b)["EdDSA"]; len(kids) != 2 || kids[0] != newKid {
		t.Fatalf("b's key set after its reload = %v", kids)
	}
	if kid := header(t, sign(b))["kid"]; kid != oldKid {
		t.Fatalf("b signs with %v before the activation", kid)
	}

	w.Clock.Advance(time.Minute + time.Second) // past the activation; nobody reloads
	token := sign(w.keys)
	if kid := header(t, token)["kid"]; kid != newKid {
		t.Fatalf("a signs with %v after the activation, want %s", kid, newKid)
	}
	if kid := header(t, sign(b))["kid"]; kid != newKid {
		t.Fatalf("b signs with %v after the activation, want %s", kid, newKid)
	}
	if _, err := b.Verify(ctx, token, oidc.VerifyOptions{Alg: domain.AlgEdDSA}); err != nil {
		t.Fatalf("b does not verify a's token of the new key: %v", err)
	}
	list, err := w.keys.List(ctx, usecase.KeyRequest{Actor: usecase.CLIActor})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range list {
		want := oidc.SigningKeyActive
		if string(v.ID) == oldKid {
			want = oidc.SigningKeyRetired
			if !v.RetiredAt.Equal(views[0].ActivatesAt) {
				t.Fatalf("old key retired at %v, want the new key's activation %v", v.RetiredAt, views[0].ActivatesAt)
			}
		}
		if v.Status != want {
			t.Fatalf("key %s (%s) is %s, want %s", v.ID, v.Alg, v.Status, want)
		}
	}
}

// Ensure an immediate rotation while another waits to activate signs at
// once, and the waiting key never signs: its retirement comes first.
func TestSigningKeys_immediate_rotation_overtakes_a_pending_one(t *testing.T) {
	w := newKeyWorld(t)
	ctx := t.Context()
	calm, err := w.keys.Rotate(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, oidc.RotateSigningKeys{Algs: []domain.SigningAlgorithm{domain.AlgRS256}})
	if err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(10 * time.Second)
	urgent, err := w.keys.Rotate(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, oidc.RotateSigningKeys{Algs: []domain.SigningAlgorithm{domain.AlgRS256}, Immediate: true})
	if err != nil || urgent[0].Status != oidc.SigningKeyActive || !urgent[0].ActivatesAt.Equal(w.Clock.Now()) {
		t.Fatalf("immediate Rotate = %+v, %v", urgent, err)
	}
	for _, after := range []time.Duration{0, time.Hour} {
		w.Clock.Advance(after)
		token, err := w.keys.Sign(ctx, domain.AlgRS256, "JWT", map[string]any{})
		if err != nil || header(t, token)["kid"] != string(urgent[0].ID) {
			t.Fatalf("%v after: signed with %v, %v; want the immediate key", after, header(t, token)["kid"], err)
		}
	}
	list, err := w.keys.List(ctx, usecase.KeyRequest{Actor: usecase.CLIActor})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range list {
		if v.ID == calm[0].ID && v.Status != oidc.SigningKeyRetired {
			t.Fatalf("the overtaken key is %s, want retired", v.Status)
		}
	}
}

// Ensure keys sealed under a secret no longer configured are replaced at
// start, and stay published.
func TestSigningKeys_ensure_replaces_keys_no_secret_opens(t *testing.T) {
	w := newKeyWorld(t)
	oldKids := jwksKids(t, w.keys)
	b := w.instance(t, "another-secret-0123456789-abcdefghijklmnopqrstu")
	kids := jwksKids(t, b)
	for _, alg := range []string{"EdDSA", "RS256"} {
		if len(kids[alg]) != 2 || kids[alg][1] != oldKids[alg][0] {
			t.Fatalf("%s kids = %v, want a new key and the old one", alg, kids[alg])
		}
	}
	token, err := b.Sign(t.Context(), domain.AlgEdDSA, "JWT", map[string]any{})
	if err != nil || header(t, token)["kid"] != kids["EdDSA"][0] {
		t.Fatalf("signed with %v, %v; want the new key", header(t, token)["kid"], err)
	}
}

func TestSigningKeys_framework_token(t *testing.T) {
	w := newKeyWorld(t)
	p := w.SignedIn(t, "ada@example.com")
	// The edge passes the user object as the framework serialises it.
	user := map[string]any{"id": string(p.User.ID()), "email": "ada@example.com", "emailVerified": true, "role": "user"}
	token, err := w.keys.FrameworkToken(t.Context(), &p, user)
	if err != nil {
		t.Fatal(err)
	}
	h := header(t, token)
	if h["alg"] != "EdDSA" || h["typ"] != "JWT" || h["kid"] == "" {
		t.Fatalf("header = %v", h)
	}
	c, err := w.keys.Verify(t.Context(), token, oidc.VerifyOptions{Alg: domain.AlgEdDSA, Type: "JWT",
		Issuer: tokenSettings.JWTIssuer, Audience: tokenSettings.JWTAudience[0]})
	if err != nil {
		t.Fatal(err)
	}
	now := float64(w.Clock.Now().Unix())
	if c["sub"] != string(p.User.ID()) || c["id"] != string(p.User.ID()) || c["email"] != "ada@example.com" || c["emailVerified"] != true ||
		c["aud"] != "https://id.example.com" || c["iat"] != now || c["exp"] != now+15*60 || c["role"] != "user" {
		t.Fatalf("claims = %v", c)
	}
	if _, err := w.keys.FrameworkToken(t.Context(), nil, user); domain.KindOf(err) != domain.KindUnauthenticated {
		t.Fatalf("without a principal: %v", err)
	}
	for _, bad := range []any{nil, "ada", []string{"ada"}, map[string]any{}} {
		if _, err := w.keys.FrameworkToken(t.Context(), &p, bad); domain.KindOf(err) != domain.KindInternal {
			t.Fatalf("user %#v: %v, want an internal error", bad, err)
		}
	}
}
