package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// RunOAuthRepositories runs the OAuthClientRepository and
// OAuthGrantRepository contracts. newStores must return empty repositories
// sharing one fresh database each time it is called; Users, OAuthClients and
// OAuthGrants are used.
func RunOAuthRepositories(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"client_round_trips", testOAuthClientRoundTrip},
		{"public_client_without_secret_round_trips", testOAuthClientPublic},
		{"missing_client_is_not_found", testOAuthClientNotFound},
		{"duplicate_client_id_is_conflict", testOAuthClientDuplicate},
		{"client_update_applies_fn", testOAuthClientUpdate},
		{"client_update_rolls_back_when_fn_fails", testOAuthClientUpdateRollback},
		{"client_list_is_newest_first", testOAuthClientList},
		{"returned_clients_are_copies", testOAuthClientCopies},
		{"client_delete_cascades", testOAuthClientDeleteCascades},
		{"user_delete_cascades", testOAuthUserDeleteCascades},
		{"code_consumed_once", testOAuthCodeConsume},
		{"code_reuse_is_conflict_with_grant", testOAuthCodeReuse},
		{"concurrent_consumes_one_wins", testOAuthCodeConsumeParallel},
		{"expired_or_unknown_code_is_not_found", testOAuthCodeExpired},
		{"duplicate_code_hash_is_conflict", testOAuthCodeDuplicate},
		{"code_of_missing_client_or_user_is_not_found", testOAuthCodeMissingOwner},
		{"grant_round_trips_with_and_without_refresh", testOAuthGrantRoundTrip},
		{"missing_grant_is_not_found", testOAuthGrantNotFound},
		{"duplicate_grant_is_conflict_and_stores_nothing", testOAuthGrantDuplicate},
		{"grant_of_missing_client_or_user_is_not_found", testOAuthGrantMissingOwner},
		{"revoke_is_idempotent", testOAuthGrantRevoke},
		{"refresh_token_comes_with_its_grant", testOAuthRefreshGet},
		{"rotate_marks_used_and_stores_successor", testOAuthRefreshRotate},
		{"rotate_of_used_token_is_conflict", testOAuthRefreshRotateUsed},
		{"rotate_of_unknown_or_expired_token_is_not_found", testOAuthRefreshRotateNotFound},
		{"concurrent_rotations_one_wins", testOAuthRefreshRotateParallel},
		{"consent_put_replaces", testOAuthConsent},
		{"consent_of_missing_client_or_user_is_not_found", testOAuthConsentMissingOwner},
		{"consents_list_newest_updated_first", testOAuthConsentList},
		{"consent_revoke_revokes_only_that_users_grants_of_the_client", testOAuthConsentRevoke},
		{"consent_revoke_without_consent_or_grant_is_not_found", testOAuthConsentRevokeNotFound},
		{"delete_expired_removes_only_expired", testOAuthDeleteExpired},
	}
	for _, tt := range tests {
		t.Run("contract=OAuthRepositories/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// nonUTC is a zone the repositories must convert from.
var nonUTC = time.FixedZone("UTC+5:30", 5*3600+1800)

// makeOAuthClient returns a confidential client id created at createdAt.
func makeOAuthClient(id string, createdAt time.Time) domain.OAuthClient {
	return domain.OAuthClient{
		ID:                     domain.OAuthClientID(id),
		Name:                   "Client " + id,
		Type:                   domain.OAuthClientConfidential,
		RedirectURIs:           []string{"https://" + id + ".example.com/callback", "http://127.0.0.1:8080/cb"},
		PostLogoutRedirectURIs: []string{"https://" + id + ".example.com/"},
		FirstParty:             true,
		SecretHash:             domain.HashToken("secret-" + id),
		SecretLast4:            "ab" + id[len(id)-2:],
		CreatedAt:              createdAt,
		UpdatedAt:              createdAt.Add(time.Second),
	}
}

func mustCreateOAuthClient(t *testing.T, s Stores, id string, createdAt time.Time) domain.OAuthClient {
	t.Helper()
	c := makeOAuthClient(id, createdAt)
	if err := s.OAuthClients.Create(context.Background(), c); err != nil {
		t.Fatalf("Create client %s: %v", id, err)
	}
	return c
}

func mustGetOAuthClient(t *testing.T, s Stores, id string) domain.OAuthClient {
	t.Helper()
	c, err := s.OAuthClients.Get(context.Background(), domain.OAuthClientID(id))
	if err != nil {
		t.Fatalf("Get client %s: %v", id, err)
	}
	return c
}

func assertSameOAuthClient(t *testing.T, got, want domain.OAuthClient) {
	t.Helper()
	if got.ID != want.ID || got.Name != want.Name || got.Type != want.Type || got.FirstParty != want.FirstParty ||
		got.SecretHash != want.SecretHash || got.SecretLast4 != want.SecretLast4 ||
		!slices.Equal(got.RedirectURIs, want.RedirectURIs) || !slices.Equal(got.PostLogoutRedirectURIs, want.PostLogoutRedirectURIs) {
		t.Fatalf("client mismatch:\n got  %+v\n want %+v", got, want)
	}
	assertTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	assertTime(t, "UpdatedAt", got.UpdatedAt, want.UpdatedAt)
}

// codeHash is the hash of code n.
func codeHash(n int) domain.TokenHash { return domain.HashToken(fmt.Sprintf("code-%d", n)) }

// refreshHash is the hash of refresh token n.
func refreshHash(n int) domain.TokenHash { return domain.HashToken(fmt.Sprintf("refresh-%d", n)) }

func makeCode(n int, client string, user domain.UserID, createdAt time.Time) domain.AuthorizationCode {
	return domain.AuthorizationCode{
		Hash:                codeHash(n),
		ClientID:            domain.OAuthClientID(client),
		UserID:              user,
		RedirectURI:         "https://" + client + ".example.com/callback",
		Scopes:              []string{"openid", "email", "offline_access"},
		Nonce:               fmt.Sprintf("nonce-%d", n),
		CodeChallenge:       "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		CodeChallengeMethod: "S256",
		AuthTime:            createdAt.Add(-time.Minute),
		AMR:                 []domain.AuthMethod{domain.MethodPassword, domain.MethodOTP, domain.MethodMultiFactor},
		ACR:                 domain.ACRMultiFactor,
		CreatedAt:           createdAt,
		ExpiresAt:           createdAt.Add(time.Minute),
	}
}

func mustCreateCode(t *testing.T, s Stores, c domain.AuthorizationCode) {
	t.Helper()
	if err := s.OAuthGrants.CreateCode(context.Background(), c); err != nil {
		t.Fatalf("CreateCode: %v", err)
	}
}

func assertSameCode(t *testing.T, got, want domain.AuthorizationCode) {
	t.Helper()
	if got.Hash != want.Hash || got.ClientID != want.ClientID || got.UserID != want.UserID ||
		got.RedirectURI != want.RedirectURI || !slices.Equal(got.Scopes, want.Scopes) || got.Nonce != want.Nonce ||
		got.CodeChallenge != want.CodeChallenge || got.CodeChallengeMethod != want.CodeChallengeMethod ||
		got.GrantID != want.GrantID || !slices.Equal(got.AMR, want.AMR) || got.ACR != want.ACR {
		t.Fatalf("code mismatch:\n got  %+v\n want %+v", got, want)
	}
	assertTime(t, "AuthTime", got.AuthTime, want.AuthTime)
	assertTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	assertTime(t, "ExpiresAt", got.ExpiresAt, want.ExpiresAt)
	assertTime(t, "ConsumedAt", got.ConsumedAt, want.ConsumedAt)
}

func makeGrant(id, client string, user domain.UserID, createdAt time.Time) domain.OAuthGrant {
	return domain.OAuthGrant{
		ID:        domain.GrantID(id),
		ClientID:  domain.OAuthClientID(client),
		UserID:    user,
		Scopes:    []string{"openid", "profile", "offline_access"},
		AuthTime:  createdAt.Add(-time.Minute),
		AMR:       []domain.AuthMethod{domain.MethodHardwareKey, domain.MethodUserVerification, domain.MethodMultiFactor},
		ACR:       domain.ACRPhishingResistant,
		Nonce:     "nonce-" + id,
		CreatedAt: createdAt,
		ExpiresAt: createdAt.Add(30 * 24 * time.Hour),
	}
}

func makeRefresh(n int, grant string, createdAt time.Time) domain.RefreshToken {
	return domain.RefreshToken{Hash: refreshHash(n), GrantID: domain.GrantID(grant), CreatedAt: createdAt,
		ExpiresAt: createdAt.Add(30 * 24 * time.Hour)}
}

func mustCreateGrant(t *testing.T, s Stores, g domain.OAuthGrant, refresh *domain.RefreshToken) {
	t.Helper()
	if err := s.OAuthGrants.CreateGrant(context.Background(), g, refresh); err != nil {
		t.Fatalf("CreateGrant %s: %v", g.ID, err)
	}
}

func mustGetGrant(t *testing.T, s Stores, id string) domain.OAuthGrant {
	t.Helper()
	g, err := s.OAuthGrants.GetGrant(context.Background(), domain.GrantID(id))
	if err != nil {
		t.Fatalf("GetGrant %s: %v", id, err)
	}
	return g
}

func assertSameGrant(t *testing.T, got, want domain.OAuthGrant) {
	t.Helper()
	if got.ID != want.ID || got.ClientID != want.ClientID || got.UserID != want.UserID ||
		!slices.Equal(got.Scopes, want.Scopes) || got.Nonce != want.Nonce || !slices.Equal(got.AMR, want.AMR) || got.ACR != want.ACR {
		t.Fatalf("grant mismatch:\n got  %+v\n want %+v", got, want)
	}
	assertTime(t, "AuthTime", got.AuthTime, want.AuthTime)
	assertTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	assertTime(t, "ExpiresAt", got.ExpiresAt, want.ExpiresAt)
	assertTime(t, "RevokedAt", got.RevokedAt, want.RevokedAt)
}

func assertSameRefresh(t *testing.T, got, want domain.RefreshToken) {
	t.Helper()
	if got.Hash != want.Hash || got.GrantID != want.GrantID {
		t.Fatalf("refresh token mismatch:\n got  %+v\n want %+v", got, want)
	}
	assertTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	assertTime(t, "ExpiresAt", got.ExpiresAt, want.ExpiresAt)
	assertTime(t, "UsedAt", got.UsedAt, want.UsedAt)
}

func mustGetRefresh(t *testing.T, s Stores, h domain.TokenHash) (domain.RefreshToken, domain.OAuthGrant) {
	t.Helper()
	r, g, err := s.OAuthGrants.GetRefreshToken(context.Background(), h)
	if err != nil {
		t.Fatalf("GetRefreshToken(%s): %v", h, err)
	}
	return r, g
}

func testOAuthClientRoundTrip(t *testing.T, s Stores) {
	// A time in another zone, below a microsecond, comes back in UTC at
	// microsecond precision.
	at := baseTime.In(nonUTC).Add(1234 * time.Nanosecond)
	c := mustCreateOAuthClient(t, s, "c1", at)
	got := mustGetOAuthClient(t, s, "c1")
	c.CreatedAt = at.Truncate(time.Microsecond)
	c.UpdatedAt = c.CreatedAt.Add(time.Second)
	assertSameOAuthClient(t, got, c)
}

func testOAuthClientPublic(t *testing.T, s Stores) {
	c := makeOAuthClient("c1", baseTime)
	c.Type, c.SecretHash, c.SecretLast4, c.FirstParty = domain.OAuthClientPublic, "", "", false
	c.PostLogoutRedirectURIs = nil
	c.RedirectURIs = []string{"com.example.app:/callback"}
	if err := s.OAuthClients.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	got := mustGetOAuthClient(t, s, "c1")
	assertSameOAuthClient(t, got, c)
	if len(got.PostLogoutRedirectURIs) != 0 {
		t.Fatalf("PostLogoutRedirectURIs = %q, want none", got.PostLogoutRedirectURIs)
	}
}

func testOAuthClientNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	_, err := s.OAuthClients.Get(ctx, "nope")
	mustBeKind(t, err, domain.ErrNotFound)
	err = s.OAuthClients.Update(ctx, "nope", func(*domain.OAuthClient) error {
		t.Fatal("fn ran for a missing client")
		return nil
	})
	mustBeKind(t, err, domain.ErrNotFound)
	mustBeKind(t, s.OAuthClients.Delete(ctx, "nope"), domain.ErrNotFound)
}

func testOAuthClientDuplicate(t *testing.T, s Stores) {
	mustCreateOAuthClient(t, s, "c1", baseTime)
	dup := makeOAuthClient("c1", baseTime.Add(time.Hour))
	dup.Name = "Other"
	mustBeCode(t, s.OAuthClients.Create(context.Background(), dup), domain.ErrConflict, domain.ErrOAuthClientExists.Code)
	if got := mustGetOAuthClient(t, s, "c1"); got.Name != "Client c1" {
		t.Fatalf("Name = %q after a refused duplicate, want the first", got.Name)
	}
}

func testOAuthClientUpdate(t *testing.T, s Stores) {
	c := mustCreateOAuthClient(t, s, "c1", baseTime)
	later := baseTime.Add(time.Hour)
	err := s.OAuthClients.Update(context.Background(), "c1", func(got *domain.OAuthClient) error {
		assertSameOAuthClient(t, *got, c)
		got.Name = "Renamed"
		got.RedirectURIs = []string{"https://new.example.com/cb"}
		got.PostLogoutRedirectURIs = nil
		got.FirstParty = false
		got.SecretHash, got.SecretLast4 = domain.HashToken("rotated"), "ated"
		got.UpdatedAt = later
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Name, c.RedirectURIs, c.PostLogoutRedirectURIs, c.FirstParty = "Renamed", []string{"https://new.example.com/cb"}, nil, false
	c.SecretHash, c.SecretLast4, c.UpdatedAt = domain.HashToken("rotated"), "ated", later
	assertSameOAuthClient(t, mustGetOAuthClient(t, s, "c1"), c)
}

func testOAuthClientUpdateRollback(t *testing.T, s Stores) {
	c := mustCreateOAuthClient(t, s, "c1", baseTime)
	boom := errors.New("boom")
	err := s.OAuthClients.Update(context.Background(), "c1", func(got *domain.OAuthClient) error {
		got.Name = "Changed"
		got.RedirectURIs[0] = "https://evil.example.com/"
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	assertSameOAuthClient(t, mustGetOAuthClient(t, s, "c1"), c)
}

func testOAuthClientList(t *testing.T, s Stores) {
	ctx := context.Background()
	list, err := s.OAuthClients.List(ctx)
	if err != nil || len(list) != 0 {
		t.Fatalf("List of an empty store = %v, %v", list, err)
	}
	mustCreateOAuthClient(t, s, "c1", baseTime)
	mustCreateOAuthClient(t, s, "c3", baseTime.Add(time.Minute))
	mustCreateOAuthClient(t, s, "c2", baseTime.Add(time.Minute))
	mustCreateOAuthClient(t, s, "c4", baseTime.Add(-time.Minute))
	list, err = s.OAuthClients.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		ids = append(ids, string(c.ID))
	}
	if want := []string{"c3", "c2", "c1", "c4"}; !slices.Equal(ids, want) {
		t.Fatalf("List = %v, want %v (newest first, then id descending)", ids, want)
	}
	assertSameOAuthClient(t, list[2], makeOAuthClient("c1", baseTime))
}

func testOAuthClientCopies(t *testing.T, s Stores) {
	c := makeOAuthClient("c1", baseTime)
	if err := s.OAuthClients.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	c.RedirectURIs[0] = "https://changed.example.com/" // the caller's slice
	got := mustGetOAuthClient(t, s, "c1")
	got.RedirectURIs[0] = "https://changed.example.com/"
	list, _ := s.OAuthClients.List(context.Background())
	list[0].PostLogoutRedirectURIs[0] = "https://changed.example.com/"
	assertSameOAuthClient(t, mustGetOAuthClient(t, s, "c1"), makeOAuthClient("c1", baseTime))
}

// seedOAuth gives client and user a code (n), a grant "g<n>" with refresh
// token n, and a consent.
func seedOAuth(t *testing.T, s Stores, n int, client string, user domain.UserID) {
	t.Helper()
	mustCreateCode(t, s, makeCode(n, client, user, baseTime))
	r := makeRefresh(n, fmt.Sprintf("g%d", n), baseTime)
	mustCreateGrant(t, s, makeGrant(fmt.Sprintf("g%d", n), client, user, baseTime), &r)
	if err := s.OAuthGrants.PutConsent(context.Background(), domain.Consent{UserID: user, ClientID: domain.OAuthClientID(client),
		Scopes: []string{"openid"}, CreatedAt: baseTime, UpdatedAt: baseTime}); err != nil {
		t.Fatal(err)
	}
}

// assertOAuthSeed checks that what seedOAuth(n, client, user) stored is all
// there (present) or all gone.
func assertOAuthSeed(t *testing.T, s Stores, n int, client string, user domain.UserID, present bool) {
	t.Helper()
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		if present && err != nil {
			t.Fatalf("%s %d: %v, want it kept", what, n, err)
		}
		if !present {
			if err == nil {
				t.Fatalf("%s %d is still there, want it deleted", what, n)
			}
			mustBeKind(t, err, domain.ErrNotFound)
		}
	}
	_, err := s.OAuthGrants.GetGrant(ctx, domain.GrantID(fmt.Sprintf("g%d", n)))
	check("grant", err)
	_, _, err = s.OAuthGrants.GetRefreshToken(ctx, refreshHash(n))
	check("refresh token", err)
	_, err = s.OAuthGrants.GetConsent(ctx, user, domain.OAuthClientID(client))
	check("consent", err)
	// Consuming is the only read of a code, so it comes last.
	_, err = s.OAuthGrants.ConsumeCode(ctx, codeHash(n), "gx", baseTime)
	check("code", err)
}

func testOAuthClientDeleteCascades(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	mustCreateOAuthClient(t, s, "c2", baseTime)
	seedOAuth(t, s, 1, "c1", "u1")
	seedOAuth(t, s, 2, "c2", "u1")
	// A client-credentials grant has no user.
	mustCreateGrant(t, s, makeGrant("cc1", "c1", "", baseTime), nil)
	if err := s.OAuthClients.Delete(context.Background(), "c1"); err != nil {
		t.Fatal(err)
	}
	_, err := s.OAuthClients.Get(context.Background(), "c1")
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.OAuthGrants.GetGrant(context.Background(), "cc1")
	mustBeKind(t, err, domain.ErrNotFound)
	assertOAuthSeed(t, s, 2, "c2", "u1", true)
	assertOAuthSeed(t, s, 1, "c1", "u1", false)
}

func testOAuthUserDeleteCascades(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	seedOAuth(t, s, 1, "c1", "u1")
	seedOAuth(t, s, 2, "c1", "u2")
	mustCreateGrant(t, s, makeGrant("cc1", "c1", "", baseTime), nil)
	mustDeleteUser(t, s, "u1")
	mustGetGrant(t, s, "cc1")
	mustGetOAuthClient(t, s, "c1")
	assertOAuthSeed(t, s, 2, "c1", "u2", true)
	assertOAuthSeed(t, s, 1, "c1", "u1", false)
}

func testOAuthCodeConsume(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	created := baseTime.In(nonUTC).Add(999 * time.Nanosecond)
	c := makeCode(1, "c1", "u1", created)
	mustCreateCode(t, s, c)
	now := created.Add(30*time.Second + 1500*time.Nanosecond)
	got, err := s.OAuthGrants.ConsumeCode(context.Background(), c.Hash, "g1", now)
	if err != nil {
		t.Fatal(err)
	}
	want := makeCode(1, "c1", "u1", created.Truncate(time.Microsecond))
	want.AuthTime = c.AuthTime.Truncate(time.Microsecond)
	want.ConsumedAt, want.GrantID = now.Truncate(time.Microsecond), "g1"
	assertSameCode(t, got, want)
}

func testOAuthCodeReuse(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	c := makeCode(1, "c1", "u1", baseTime)
	mustCreateCode(t, s, c)
	now := baseTime.Add(10 * time.Second)
	if _, err := s.OAuthGrants.ConsumeCode(ctx, c.Hash, "g1", now); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{now.Add(time.Second), c.ExpiresAt.Add(time.Hour)} {
		got, err := s.OAuthGrants.ConsumeCode(ctx, c.Hash, "g2", at)
		mustBeCode(t, err, domain.ErrConflict, domain.ErrCodeConsumed.Code)
		want := c
		want.ConsumedAt, want.GrantID = now, "g1"
		assertSameCode(t, got, want)
	}
}

func testOAuthCodeConsumeParallel(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	c := makeCode(1, "c1", "u1", baseTime)
	mustCreateCode(t, s, c)
	const n = 12
	codes := make([]domain.AuthorizationCode, n)
	errs := runParallel(n, func(i int) error {
		var err error
		codes[i], err = s.OAuthGrants.ConsumeCode(context.Background(), c.Hash, domain.GrantID(fmt.Sprintf("g%d", i)), baseTime.Add(time.Second))
		return err
	})
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("exchanges %d and %d both consumed the code", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, domain.ErrConflict):
			t.Fatalf("exchange %d: %v, want a conflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no exchange consumed the code")
	}
	want := domain.GrantID(fmt.Sprintf("g%d", winner))
	for i, got := range codes {
		if got.GrantID != want {
			t.Fatalf("exchange %d saw grant %q, want the winner's %q", i, got.GrantID, want)
		}
	}
}

func testOAuthCodeExpired(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	c := makeCode(1, "c1", "u1", baseTime)
	mustCreateCode(t, s, c)
	for _, at := range []time.Time{c.ExpiresAt, c.ExpiresAt.Add(time.Second)} {
		_, err := s.OAuthGrants.ConsumeCode(ctx, c.Hash, "g1", at)
		mustBeKind(t, err, domain.ErrNotFound)
	}
	_, err := s.OAuthGrants.ConsumeCode(ctx, codeHash(2), "g1", baseTime)
	mustBeKind(t, err, domain.ErrNotFound)
	// The refused exchanges consumed nothing: it still works in time.
	if _, err := s.OAuthGrants.ConsumeCode(ctx, c.Hash, "g1", c.ExpiresAt.Add(-time.Microsecond)); err != nil {
		t.Fatal(err)
	}
}

func testOAuthCodeDuplicate(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	mustCreateCode(t, s, makeCode(1, "c1", "u1", baseTime))
	mustBeCode(t, s.OAuthGrants.CreateCode(context.Background(), makeCode(1, "c1", "u1", baseTime)), domain.ErrConflict, domain.ErrOAuthCodeExists.Code)
}

func testOAuthCodeMissingOwner(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	mustBeKind(t, s.OAuthGrants.CreateCode(context.Background(), makeCode(1, "c9", "u1", baseTime)), domain.ErrNotFound)
	mustBeKind(t, s.OAuthGrants.CreateCode(context.Background(), makeCode(2, "c1", "u9", baseTime)), domain.ErrNotFound)
}

func testOAuthGrantRoundTrip(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	at := baseTime.In(nonUTC).Add(777 * time.Nanosecond)
	g1 := makeGrant("g1", "c1", "u1", at)
	mustCreateGrant(t, s, g1, nil)
	g2 := makeGrant("g2", "c1", "", at) // client credentials
	g2.Scopes, g2.Nonce, g2.AuthTime, g2.AMR, g2.ACR = nil, "", time.Time{}, nil, ""
	r := makeRefresh(1, "g2", at)
	mustCreateGrant(t, s, g2, &r)

	want1 := makeGrant("g1", "c1", "u1", at.Truncate(time.Microsecond))
	want1.AuthTime = g1.AuthTime.Truncate(time.Microsecond)
	assertSameGrant(t, mustGetGrant(t, s, "g1"), want1)
	want2 := g2
	want2.CreatedAt, want2.ExpiresAt = g2.CreatedAt.Truncate(time.Microsecond), g2.ExpiresAt.Truncate(time.Microsecond)
	assertSameGrant(t, mustGetGrant(t, s, "g2"), want2)
	if g := mustGetGrant(t, s, "g1"); !g.Active(baseTime) {
		t.Fatal("new grant is not active")
	}

	gotR, gotG := mustGetRefresh(t, s, r.Hash)
	wantR := makeRefresh(1, "g2", at.Truncate(time.Microsecond))
	assertSameRefresh(t, gotR, wantR)
	assertSameGrant(t, gotG, want2)
}

func testOAuthGrantNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	_, err := s.OAuthGrants.GetGrant(ctx, "nope")
	mustBeKind(t, err, domain.ErrNotFound)
	mustBeKind(t, s.OAuthGrants.RevokeGrant(ctx, "nope", baseTime), domain.ErrNotFound)
	_, _, err = s.OAuthGrants.GetRefreshToken(ctx, refreshHash(1))
	mustBeKind(t, err, domain.ErrNotFound)
}

func testOAuthGrantDuplicate(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	r1 := makeRefresh(1, "g1", baseTime)
	mustCreateGrant(t, s, makeGrant("g1", "c1", "u1", baseTime), &r1)
	// A taken grant id stores neither the grant nor its refresh token.
	r2 := makeRefresh(2, "g1", baseTime)
	mustBeCode(t, s.OAuthGrants.CreateGrant(context.Background(), makeGrant("g1", "c1", "u1", baseTime), &r2), domain.ErrConflict, domain.ErrOAuthGrantExists.Code)
	_, _, err := s.OAuthGrants.GetRefreshToken(context.Background(), r2.Hash)
	mustBeKind(t, err, domain.ErrNotFound)
	// A taken refresh hash stores neither either.
	mustBeCode(t, s.OAuthGrants.CreateGrant(context.Background(), makeGrant("g2", "c1", "u1", baseTime), &r1), domain.ErrConflict, domain.ErrOAuthGrantExists.Code)
	_, err = s.OAuthGrants.GetGrant(context.Background(), "g2")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testOAuthGrantMissingOwner(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	mustBeKind(t, s.OAuthGrants.CreateGrant(context.Background(), makeGrant("g1", "c9", "u1", baseTime), nil), domain.ErrNotFound)
	r := makeRefresh(1, "g2", baseTime)
	mustBeKind(t, s.OAuthGrants.CreateGrant(context.Background(), makeGrant("g2", "c1", "u9", baseTime), &r), domain.ErrNotFound)
	_, _, err := s.OAuthGrants.GetRefreshToken(context.Background(), r.Hash)
	mustBeKind(t, err, domain.ErrNotFound)
}

func testOAuthGrantRevoke(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	r := makeRefresh(1, "g1", baseTime)
	mustCreateGrant(t, s, makeGrant("g1", "c1", "u1", baseTime), &r)
	revoked := baseTime.In(nonUTC).Add(time.Hour + 5*time.Nanosecond)
	for _, at := range []time.Time{revoked, revoked.Add(time.Hour)} {
		if err := s.OAuthGrants.RevokeGrant(context.Background(), "g1", at); err != nil {
			t.Fatalf("RevokeGrant at %s: %v", at, err)
		}
	}
	g := mustGetGrant(t, s, "g1")
	assertTime(t, "RevokedAt", g.RevokedAt, revoked.Truncate(time.Microsecond))
	if g.Active(baseTime) {
		t.Fatal("revoked grant is active")
	}
	// Its refresh token is still found, with the revoked grant.
	_, gg := mustGetRefresh(t, s, r.Hash)
	assertTime(t, "refresh's grant RevokedAt", gg.RevokedAt, revoked.Truncate(time.Microsecond))
}

func testOAuthRefreshGet(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	r1, r2 := makeRefresh(1, "g1", baseTime), makeRefresh(2, "g2", baseTime.Add(time.Second))
	g1, g2 := makeGrant("g1", "c1", "u1", baseTime), makeGrant("g2", "c1", "u1", baseTime.Add(time.Second))
	mustCreateGrant(t, s, g1, &r1)
	mustCreateGrant(t, s, g2, &r2)
	gotR, gotG := mustGetRefresh(t, s, r2.Hash)
	assertSameRefresh(t, gotR, r2)
	assertSameGrant(t, gotG, g2)
}

func testOAuthRefreshRotate(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	r1 := makeRefresh(1, "g1", baseTime)
	g := makeGrant("g1", "c1", "u1", baseTime)
	mustCreateGrant(t, s, g, &r1)
	now := baseTime.In(nonUTC).Add(time.Hour + 3*time.Nanosecond)
	r2 := makeRefresh(2, "g1", now)
	if err := s.OAuthGrants.RotateRefreshToken(context.Background(), r1.Hash, r2, now); err != nil {
		t.Fatal(err)
	}
	old, og := mustGetRefresh(t, s, r1.Hash)
	r1.UsedAt = now.Truncate(time.Microsecond)
	assertSameRefresh(t, old, r1)
	assertSameGrant(t, og, g)
	next, ng := mustGetRefresh(t, s, r2.Hash)
	assertSameRefresh(t, next, makeRefresh(2, "g1", now.Truncate(time.Microsecond)))
	assertSameGrant(t, ng, g)
	// The successor rotates in turn.
	r3 := makeRefresh(3, "g1", now.Add(time.Hour))
	if err := s.OAuthGrants.RotateRefreshToken(context.Background(), r2.Hash, r3, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
}

func testOAuthRefreshRotateUsed(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	r1 := makeRefresh(1, "g1", baseTime)
	mustCreateGrant(t, s, makeGrant("g1", "c1", "u1", baseTime), &r1)
	now := baseTime.Add(time.Hour)
	if err := s.OAuthGrants.RotateRefreshToken(context.Background(), r1.Hash, makeRefresh(2, "g1", now), now); err != nil {
		t.Fatal(err)
	}
	err := s.OAuthGrants.RotateRefreshToken(context.Background(), r1.Hash, makeRefresh(3, "g1", now), now.Add(time.Minute))
	mustBeCode(t, err, domain.ErrConflict, domain.ErrRefreshTokenUsed.Code)
	_, _, err = s.OAuthGrants.GetRefreshToken(context.Background(), refreshHash(3))
	mustBeKind(t, err, domain.ErrNotFound)
	old, _ := mustGetRefresh(t, s, r1.Hash)
	assertTime(t, "UsedAt", old.UsedAt, now)
}

func testOAuthRefreshRotateNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	r1 := makeRefresh(1, "g1", baseTime)
	mustCreateGrant(t, s, makeGrant("g1", "c1", "u1", baseTime), &r1)
	mustBeKind(t, s.OAuthGrants.RotateRefreshToken(ctx, refreshHash(9), makeRefresh(2, "g1", baseTime), baseTime), domain.ErrNotFound)
	mustBeKind(t, s.OAuthGrants.RotateRefreshToken(ctx, r1.Hash, makeRefresh(3, "g1", r1.ExpiresAt), r1.ExpiresAt), domain.ErrNotFound)
	for _, n := range []int{2, 3} {
		_, _, err := s.OAuthGrants.GetRefreshToken(ctx, refreshHash(n))
		mustBeKind(t, err, domain.ErrNotFound)
	}
	if r, _ := mustGetRefresh(t, s, r1.Hash); !r.UsedAt.IsZero() {
		t.Fatal("a refused rotation marked the token used")
	}
}

func testOAuthRefreshRotateParallel(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	r1 := makeRefresh(1, "g1", baseTime)
	mustCreateGrant(t, s, makeGrant("g1", "c1", "u1", baseTime), &r1)
	const n = 12
	now := baseTime.Add(time.Hour)
	errs := runParallel(n, func(i int) error {
		return s.OAuthGrants.RotateRefreshToken(context.Background(), r1.Hash, makeRefresh(100+i, "g1", now), now)
	})
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("rotations %d and %d both used the token", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, domain.ErrConflict):
			t.Fatalf("rotation %d: %v, want a conflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no rotation used the token")
	}
	for i := range n {
		_, _, err := s.OAuthGrants.GetRefreshToken(context.Background(), refreshHash(100+i))
		if i == winner && err != nil {
			t.Fatalf("the winner's successor: %v", err)
		}
		if i != winner {
			mustBeKind(t, err, domain.ErrNotFound)
		}
	}
}

func testOAuthConsent(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	_, err := s.OAuthGrants.GetConsent(ctx, "u1", "c1")
	mustBeKind(t, err, domain.ErrNotFound)
	first := domain.Consent{UserID: "u1", ClientID: "c1", Scopes: []string{"openid", "email"},
		CreatedAt: baseTime.In(nonUTC).Add(time.Nanosecond), UpdatedAt: baseTime.In(nonUTC).Add(time.Nanosecond)}
	if err := s.OAuthGrants.PutConsent(ctx, first); err != nil {
		t.Fatal(err)
	}
	assertConsent(t, s, "u1", []string{"openid", "email"}, baseTime, baseTime)
	later := baseTime.Add(time.Hour)
	if err := s.OAuthGrants.PutConsent(ctx, domain.Consent{UserID: "u1", ClientID: "c1",
		Scopes: []string{"openid", "profile"}, CreatedAt: later, UpdatedAt: later}); err != nil {
		t.Fatal(err)
	}
	// Replacing keeps the creation time.
	assertConsent(t, s, "u1", []string{"openid", "profile"}, baseTime, later)
	_, err = s.OAuthGrants.GetConsent(ctx, "u2", "c1")
	mustBeKind(t, err, domain.ErrNotFound)
}

func assertConsent(t *testing.T, s Stores, user domain.UserID, scopes []string, created, updated time.Time) {
	t.Helper()
	c, err := s.OAuthGrants.GetConsent(context.Background(), user, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if c.UserID != user || c.ClientID != "c1" || !slices.Equal(c.Scopes, scopes) {
		t.Fatalf("consent = %+v, want scopes %v", c, scopes)
	}
	assertTime(t, "CreatedAt", c.CreatedAt, created)
	assertTime(t, "UpdatedAt", c.UpdatedAt, updated)
}

func testOAuthConsentMissingOwner(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	for _, c := range []domain.Consent{{UserID: "u1", ClientID: "c9"}, {UserID: "u9", ClientID: "c1"}} {
		c.Scopes, c.CreatedAt, c.UpdatedAt = []string{"openid"}, baseTime, baseTime
		mustBeKind(t, s.OAuthGrants.PutConsent(ctx, c), domain.ErrNotFound)
	}
}

func testOAuthConsentList(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	for _, id := range []string{"c1", "c2", "c3", "c4"} {
		mustCreateOAuthClient(t, s, id, baseTime)
	}
	put := func(user domain.UserID, client string, created, updated time.Time) {
		t.Helper()
		if err := s.OAuthGrants.PutConsent(ctx, domain.Consent{UserID: user, ClientID: domain.OAuthClientID(client),
			Scopes: []string{"openid", client}, CreatedAt: created, UpdatedAt: updated}); err != nil {
			t.Fatal(err)
		}
	}
	// c2 and c4 tie on updated_at; c3 was created first but updated last.
	put("u1", "c4", baseTime, baseTime.Add(time.Hour))
	put("u1", "c1", baseTime, baseTime)
	put("u1", "c3", baseTime.Add(-time.Hour), baseTime.Add(2*time.Hour))
	put("u1", "c2", baseTime, baseTime.Add(time.Hour))
	put("u2", "c1", baseTime, baseTime.Add(3*time.Hour))
	got, err := s.OAuthGrants.ListConsents(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []domain.OAuthClientID
	for _, c := range got {
		if c.UserID != "u1" || !slices.Equal(c.Scopes, []string{"openid", string(c.ClientID)}) {
			t.Fatalf("consent = %+v", c)
		}
		ids = append(ids, c.ClientID)
	}
	if want := []domain.OAuthClientID{"c3", "c2", "c4", "c1"}; !slices.Equal(ids, want) {
		t.Fatalf("ListConsents order = %v, want %v", ids, want)
	}
	assertTime(t, "c3 CreatedAt", got[0].CreatedAt, baseTime.Add(-time.Hour))
	assertTime(t, "c3 UpdatedAt", got[0].UpdatedAt, baseTime.Add(2*time.Hour))
	none, err := s.OAuthGrants.ListConsents(ctx, "u9")
	if err != nil || len(none) != 0 {
		t.Fatalf("ListConsents of a user without consents = %v, %v", none, err)
	}
}

func testOAuthConsentRevoke(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	mustCreateOAuthClient(t, s, "c2", baseTime)
	seedOAuth(t, s, 1, "c1", "u1") // grant g1, revoked below
	seedOAuth(t, s, 2, "c2", "u1") // another client: kept
	seedOAuth(t, s, 3, "c1", "u2") // another user: kept
	// A second grant of u1 and c1, and one revoked earlier, which keeps its
	// first revocation time.
	mustCreateGrant(t, s, makeGrant("g4", "c1", "u1", baseTime), nil)
	earlier := baseTime.Add(time.Minute)
	old := makeGrant("g5", "c1", "u1", baseTime)
	mustCreateGrant(t, s, old, nil)
	if err := s.OAuthGrants.RevokeGrant(ctx, "g5", earlier); err != nil {
		t.Fatal(err)
	}
	mustCreateGrant(t, s, makeGrant("cc1", "c1", "", baseTime), nil) // client credentials: kept
	at := baseTime.In(nonUTC).Add(time.Hour + 5*time.Nanosecond)
	if err := s.OAuthGrants.RevokeConsent(ctx, "u1", "c1", at); err != nil {
		t.Fatal(err)
	}
	_, err := s.OAuthGrants.GetConsent(ctx, "u1", "c1")
	mustBeKind(t, err, domain.ErrNotFound)
	for _, id := range []string{"g1", "g4"} {
		assertTime(t, id+" RevokedAt", mustGetGrant(t, s, id).RevokedAt, at.Truncate(time.Microsecond))
	}
	assertTime(t, "g5 RevokedAt", mustGetGrant(t, s, "g5").RevokedAt, earlier)
	_, g := mustGetRefresh(t, s, refreshHash(1))
	if g.Active(baseTime.Add(2 * time.Hour)) {
		t.Fatal("the refresh token's grant is still active")
	}
	for _, id := range []string{"g2", "g3", "cc1"} {
		if g := mustGetGrant(t, s, id); !g.RevokedAt.IsZero() {
			t.Fatalf("grant %s revoked: %+v", id, g)
		}
	}
	assertOAuthSeed(t, s, 2, "c2", "u1", true)
	assertOAuthSeed(t, s, 3, "c1", "u2", true)
	list, err := s.OAuthGrants.ListConsents(ctx, "u1")
	if err != nil || len(list) != 1 || list[0].ClientID != "c2" {
		t.Fatalf("ListConsents after revocation = %+v, %v", list, err)
	}
}

func testOAuthConsentRevokeNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	mustCreateOAuthClient(t, s, "c2", baseTime)
	for _, client := range []domain.OAuthClientID{"c1", "c9"} {
		mustBeCode(t, s.OAuthGrants.RevokeConsent(ctx, "u1", client, baseTime), domain.ErrConsentNotFound, "oauth_consent.not_found")
	}
	// A grant without a consent (a first-party client) is revoked; then
	// nothing is left to revoke.
	mustCreateGrant(t, s, makeGrant("g1", "c2", "u1", baseTime), nil)
	if err := s.OAuthGrants.RevokeConsent(ctx, "u1", "c2", baseTime); err != nil {
		t.Fatalf("RevokeConsent of a grant without consent: %v", err)
	}
	assertTime(t, "g1 RevokedAt", mustGetGrant(t, s, "g1").RevokedAt, baseTime)
	mustBeCode(t, s.OAuthGrants.RevokeConsent(ctx, "u1", "c2", baseTime), domain.ErrConsentNotFound, "oauth_consent.not_found")
	// Only the consent: it goes.
	if err := s.OAuthGrants.PutConsent(ctx, domain.Consent{UserID: "u1", ClientID: "c1", Scopes: []string{"openid"},
		CreatedAt: baseTime, UpdatedAt: baseTime}); err != nil {
		t.Fatal(err)
	}
	if err := s.OAuthGrants.RevokeConsent(ctx, "u1", "c1", baseTime); err != nil {
		t.Fatalf("RevokeConsent of a consent without grants: %v", err)
	}
	_, err := s.OAuthGrants.GetConsent(ctx, "u1", "c1")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testOAuthDeleteExpired(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateOAuthClient(t, s, "c1", baseTime)
	now := baseTime.Add(2 * time.Hour)

	expiredCode := makeCode(1, "c1", "u1", baseTime) // expires after a minute
	liveCode := makeCode(2, "c1", "u1", baseTime)
	liveCode.ExpiresAt = now.Add(time.Minute)
	mustCreateCode(t, s, expiredCode)
	mustCreateCode(t, s, liveCode)

	// An expired grant with its refresh token; a live one whose first
	// refresh token was rotated and expired.
	oldGrant := makeGrant("g1", "c1", "u1", baseTime)
	oldGrant.ExpiresAt = baseTime.Add(time.Hour)
	oldRefresh := makeRefresh(1, "g1", baseTime)
	oldRefresh.ExpiresAt = oldGrant.ExpiresAt
	mustCreateGrant(t, s, oldGrant, &oldRefresh)
	usedRefresh := makeRefresh(2, "g2", baseTime)
	usedRefresh.ExpiresAt = baseTime.Add(90 * time.Minute)
	mustCreateGrant(t, s, makeGrant("g2", "c1", "u1", baseTime), &usedRefresh)
	if err := s.OAuthGrants.RotateRefreshToken(ctx, usedRefresh.Hash, makeRefresh(3, "g2", baseTime), baseTime.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// A grant expiring at now is expired, as OAuthGrant.Active says.
	edge := makeGrant("g3", "c1", "", baseTime)
	edge.ExpiresAt = now
	mustCreateGrant(t, s, edge, nil)

	n, err := s.OAuthGrants.DeleteExpired(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Fatalf("DeleteExpired = %d, want 5 (a code, two grants, two refresh tokens)", n)
	}
	for _, id := range []domain.GrantID{"g1", "g3"} {
		_, err = s.OAuthGrants.GetGrant(ctx, id)
		mustBeKind(t, err, domain.ErrNotFound)
	}
	for _, h := range []domain.TokenHash{oldRefresh.Hash, usedRefresh.Hash} {
		_, _, err = s.OAuthGrants.GetRefreshToken(ctx, h)
		mustBeKind(t, err, domain.ErrNotFound)
	}
	mustGetGrant(t, s, "g2")
	mustGetRefresh(t, s, refreshHash(3))
	_, err = s.OAuthGrants.ConsumeCode(ctx, expiredCode.Hash, "gx", baseTime)
	mustBeKind(t, err, domain.ErrNotFound)
	if _, err := s.OAuthGrants.ConsumeCode(ctx, liveCode.Hash, "gx", now); err != nil {
		t.Fatalf("live code: %v", err)
	}
	if n, err := s.OAuthGrants.DeleteExpired(ctx, now); err != nil || n != 0 {
		t.Fatalf("second DeleteExpired = %d, %v, want 0", n, err)
	}
}
