package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// RunFederationRepositories runs the IdentityProviderRepository,
// LinkedAccountRepository and FederationStateRepository contracts.
// newStores must return empty repositories sharing one fresh database each
// time it is called; Users, Organizations, Domains, IdentityProviders,
// LinkedAccounts and FederationStates are used.
func RunFederationRepositories(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"provider_round_trips_every_field_in_utc", testProviderRoundTrip},
		{"minimal_provider_round_trips", testProviderMinimal},
		{"providers_list_in_id_byte_order", testProviderList},
		{"duplicate_provider_id_is_conflict", testProviderDuplicate},
		{"missing_provider_is_not_found", testProviderNotFound},
		{"missing_organization_or_domain_is_not_found_and_stores_nothing", testProviderMissingReferences},
		{"update_saves_what_fn_did", testProviderUpdate},
		{"update_saves_nothing_when_fn_fails", testProviderUpdateRollback},
		{"concurrent_updates_are_not_lost", testProviderUpdateParallel},
		{"update_changes_domain_bindings", testProviderUpdateBindings},
		{"domain_bound_to_another_provider_is_taken", testProviderDomainTaken},
		{"deleting_a_domain_unbinds_it", testProviderDomainDeleted},
		{"deleting_the_organization_deletes_its_providers", testProviderOrgCascade},
		{"deleting_a_provider_deletes_its_accounts_and_states", testProviderDeleteCascades},
		{"linked_account_round_trips_every_field_in_utc", testLinkedAccountRoundTrip},
		{"minimal_linked_account_round_trips", testLinkedAccountMinimal},
		{"linked_accounts_list_oldest_first", testLinkedAccountList},
		{"linked_accounts_of_several_users_list_by_user_then_oldest", testLinkedAccountListByUsers},
		{"duplicate_linked_account_is_conflict", testLinkedAccountDuplicate},
		{"user_with_first_account_is_stored_whole_or_not_at_all", testLinkedAccountCreateWithUser},
		{"linked_account_of_missing_user_or_provider_is_not_found", testLinkedAccountMissingReferences},
		{"linked_account_update_changes_only_its_own_mutable_fields", testLinkedAccountUpdate},
		{"linked_account_update_of_another_user_or_failing_saves_nothing", testLinkedAccountUpdateRefused},
		{"linked_account_delete_keeps_the_last_one_when_asked", testLinkedAccountDelete},
		{"concurrent_unlinks_of_the_last_two_keep_one", testLinkedAccountDeleteParallel},
		{"deleting_the_user_deletes_accounts_and_links_in_flight", testFederationUserDeleteCascades},
		{"state_is_consumed_once", testFederationStateConsume},
		{"state_expired_or_unknown_is_not_found", testFederationStateNotFound},
		{"state_duplicate_is_conflict_and_missing_references_not_found", testFederationStateDuplicate},
		{"concurrent_consumes_one_wins", testFederationStateConsumeParallel},
		{"delete_expired_removes_only_expired_states", testFederationStateDeleteExpired},
		{"returned_values_are_copies", testFederationCopies},
	}
	for _, tt := range tests {
		t.Run("contract=FederationRepositories/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// makeProvider returns an OpenID Connect provider id of the service, or,
// with org, of that organization routing domains, created at baseTime.
func makeProvider(t *testing.T, id string, org domain.OrganizationID, domains ...domain.DomainID) domain.IdentityProvider {
	t.Helper()
	p, err := domain.NewIdentityProvider(domain.IdentityProvider{
		ID: domain.IdentityProviderID(id), Preset: domain.PresetOIDC, Issuer: "https://idp.example.com/" + id,
		ClientID: "client-" + id, SealedClientSecret: []byte("sealed-" + id), OrganizationID: org, Domains: domains,
	}, baseTime)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustCreateProvider(t *testing.T, s Stores, p domain.IdentityProvider) {
	t.Helper()
	if err := s.IdentityProviders.Create(context.Background(), p); err != nil {
		t.Fatalf("Create provider %s: %v", p.ID, err)
	}
}

func mustGetProvider(t *testing.T, s Stores, id domain.IdentityProviderID) domain.IdentityProvider {
	t.Helper()
	p, err := s.IdentityProviders.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get provider %s: %v", id, err)
	}
	return p
}

func assertProviderGone(t *testing.T, s Stores, id domain.IdentityProviderID) {
	t.Helper()
	_, err := s.IdentityProviders.Get(context.Background(), id)
	mustBeCode(t, err, domain.ErrNotFound, domain.ErrIdentityProviderNotFound.Code)
}

// assertSameProvider compares every field; want's domains are expected in
// byte order (the bindings are a set, and every store returns them sorted).
func assertSameProvider(t *testing.T, got, want domain.IdentityProvider) {
	t.Helper()
	if got.ID != want.ID || got.Preset != want.Preset || got.Name != want.Name || got.Issuer != want.Issuer ||
		got.ClientID != want.ClientID || got.Endpoints != want.Endpoints ||
		!bytes.Equal(got.SealedClientSecret, want.SealedClientSecret) || !slices.Equal(got.Scopes, want.Scopes) ||
		got.TrustedForLinking != want.TrustedForLinking || got.Enabled != want.Enabled ||
		got.OrganizationID != want.OrganizationID || !slices.Equal(got.Domains, want.Domains) ||
		got.DefaultRole != want.DefaultRole || got.RequireSSO != want.RequireSSO {
		t.Fatalf("provider mismatch:\n got  %+v\n want %+v", got, want)
	}
	assertTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	assertTime(t, "UpdatedAt", got.UpdatedAt, want.UpdatedAt)
}

func assertProviderOfDomain(t *testing.T, s Stores, d domain.DomainID, want domain.IdentityProviderID) {
	t.Helper()
	p, err := s.IdentityProviders.GetByDomain(context.Background(), d)
	if want == "" {
		mustBeCode(t, err, domain.ErrNotFound, domain.ErrIdentityProviderNotFound.Code)
		return
	}
	if err != nil || p.ID != want {
		t.Fatalf("GetByDomain(%s) = %s, %v; want %s", d, p.ID, err, want)
	}
}

// mustCreateOrgDomains creates organization org (owned by user
// "owner-<org>") and its domains.
func mustCreateOrgDomains(t *testing.T, s Stores, org string, domains ...string) {
	t.Helper()
	mustCreateOrg(t, s, org, domain.UserID("owner-"+org))
	for _, d := range domains {
		mustCreateDomain(t, s, newDomainAt(d, domain.OrganizationID(org), baseTime))
	}
}

func testProviderRoundTrip(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrgDomains(t, s, "o1", "d1", "d2")
	at := baseTime.In(nonUTC).Add(1234 * time.Nanosecond)
	endpoints := domain.IdentityProviderEndpoints{ // #nosec G101 -- a test provider's endpoint URLs, no credentials
		Authorization: "https://idp.example.com/authorize", Token: "https://idp.example.com/token",
		UserInfo: "https://idp.example.com/userinfo", JWKS: "https://idp.example.com/jwks", API: "https://api.idp.example.com",
	}
	p, err := domain.NewIdentityProvider(domain.IdentityProvider{
		ID: "acme-sso", Preset: domain.PresetOIDC, Name: "Acme SSO", Issuer: "https://idp.example.com",
		ClientID: "client-1", SealedClientSecret: []byte{0x00, 0xff, 0x10}, Endpoints: endpoints,
		Scopes: []string{"openid", "email", "groups"}, TrustedForLinking: true, Enabled: true,
		OrganizationID: "o1", Domains: []domain.DomainID{"d2", "d1"}, DefaultRole: domain.OrgRoleAdmin, RequireSSO: true,
	}, baseTime)
	if err != nil {
		t.Fatal(err)
	}
	p.CreatedAt, p.UpdatedAt = at, at.Add(time.Hour)
	mustCreateProvider(t, s, p)

	want := p
	want.Domains = []domain.DomainID{"d1", "d2"}
	want.CreatedAt, want.UpdatedAt = at.Truncate(time.Microsecond), at.Add(time.Hour).Truncate(time.Microsecond)
	assertSameProvider(t, mustGetProvider(t, s, "acme-sso"), want)
	for _, d := range []domain.DomainID{"d1", "d2"} {
		got, err := s.IdentityProviders.GetByDomain(ctx, d)
		if err != nil {
			t.Fatalf("GetByDomain(%s): %v", d, err)
		}
		assertSameProvider(t, got, want)
	}
	list, err := s.IdentityProviders.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %d providers, %v; want 1", len(list), err)
	}
	assertSameProvider(t, list[0], want)
}

func testProviderMinimal(t *testing.T, s Stores) {
	p, err := domain.NewIdentityProvider(domain.IdentityProvider{
		ID: "github", Preset: domain.PresetGitHub, ClientID: "gh-client", SealedClientSecret: []byte("sealed"),
	}, baseTime)
	if err != nil {
		t.Fatal(err)
	}
	mustCreateProvider(t, s, p)
	got := mustGetProvider(t, s, "github")
	assertSameProvider(t, got, p)
	if got.Issuer != "" || got.OrganizationID != "" || got.Domains != nil || got.DefaultRole != "" || got.Enabled {
		t.Fatalf("minimal provider = %+v", got)
	}
}

func providerIDs(list []domain.IdentityProvider) []domain.IdentityProviderID {
	var ids []domain.IdentityProviderID
	for _, p := range list {
		ids = append(ids, p.ID)
	}
	return ids
}

func mustListProviders(t *testing.T, s Stores) []domain.IdentityProviderID {
	t.Helper()
	list, err := s.IdentityProviders.List(context.Background())
	if err != nil {
		t.Fatalf("List providers: %v", err)
	}
	return providerIDs(list)
}

func testProviderList(t *testing.T, s Stores) {
	if ids := mustListProviders(t, s); len(ids) != 0 {
		t.Fatalf("List of an empty store = %v", ids)
	}
	// Byte order: "-" (0x2d) sorts before the digits, whatever the
	// database's locale would say.
	for _, id := range []string{"b", "a1", "a-1", "0x", "a"} {
		mustCreateProvider(t, s, makeProvider(t, id, ""))
	}
	want := []domain.IdentityProviderID{"0x", "a", "a-1", "a1", "b"}
	if got := mustListProviders(t, s); !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
}

func testProviderDuplicate(t *testing.T, s Stores) {
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	dup := makeProvider(t, "p1", "")
	dup.Name = "Other"
	mustBeCode(t, s.IdentityProviders.Create(context.Background(), dup), domain.ErrConflict, domain.ErrIdentityProviderExists.Code)
	assertSameProvider(t, mustGetProvider(t, s, "p1"), makeProvider(t, "p1", ""))
}

func testProviderNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrgDomains(t, s, "o1", "d1")
	assertProviderGone(t, s, "nope")
	assertProviderOfDomain(t, s, "nope", "")
	assertProviderOfDomain(t, s, "d1", "") // a domain bound to no provider
	called := false
	err := s.IdentityProviders.Update(ctx, "nope", func(*domain.IdentityProvider) error { called = true; return nil })
	mustBeCode(t, err, domain.ErrNotFound, domain.ErrIdentityProviderNotFound.Code)
	if called {
		t.Fatal("Update of a missing provider called fn")
	}
	mustBeCode(t, s.IdentityProviders.Delete(ctx, "nope"), domain.ErrNotFound, domain.ErrIdentityProviderNotFound.Code)
}

func testProviderMissingReferences(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrgDomains(t, s, "o1", "d1")
	mustBeKind(t, s.IdentityProviders.Create(ctx, makeProvider(t, "p1", "nope")), domain.ErrNotFound)
	assertProviderGone(t, s, "p1")
	// The provider is not kept when one of its domains is missing.
	mustBeKind(t, s.IdentityProviders.Create(ctx, makeProvider(t, "p1", "o1", "d1", "nope")), domain.ErrNotFound)
	assertProviderGone(t, s, "p1")
	assertProviderOfDomain(t, s, "d1", "")
	mustCreateProvider(t, s, makeProvider(t, "p1", "o1", "d1"))
	// Moving to a missing organization or binding a missing domain saves
	// nothing.
	mustBeKind(t, s.IdentityProviders.Update(ctx, "p1", func(p *domain.IdentityProvider) error {
		p.OrganizationID = "nope"
		return nil
	}), domain.ErrNotFound)
	mustBeKind(t, s.IdentityProviders.Update(ctx, "p1", func(p *domain.IdentityProvider) error {
		p.Name, p.Domains = "Renamed", []domain.DomainID{"nope"}
		return nil
	}), domain.ErrNotFound)
	assertSameProvider(t, mustGetProvider(t, s, "p1"), makeProvider(t, "p1", "o1", "d1"))
	assertProviderOfDomain(t, s, "d1", "p1")
}

func testProviderUpdate(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	later := baseTime.In(nonUTC).Add(time.Hour + time.Nanosecond)
	err := s.IdentityProviders.Update(ctx, "p1", func(p *domain.IdentityProvider) error {
		p.ID = "moved" // the id cannot change
		p.Name, p.Enabled, p.TrustedForLinking = "Renamed", true, true
		p.Scopes = []string{"openid", "email"}
		p.SealedClientSecret = []byte("rotated")
		p.Endpoints.Token = "https://idp.example.com/token2"
		p.UpdatedAt = later
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := makeProvider(t, "p1", "")
	want.Name, want.Enabled, want.TrustedForLinking = "Renamed", true, true
	want.Scopes, want.SealedClientSecret = []string{"openid", "email"}, []byte("rotated")
	want.Endpoints.Token = "https://idp.example.com/token2"
	want.UpdatedAt = later.Truncate(time.Microsecond)
	assertSameProvider(t, mustGetProvider(t, s, "p1"), want)
	assertProviderGone(t, s, "moved")
}

func testProviderUpdateRollback(t *testing.T, s Stores) {
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	boom := errors.New("boom")
	err := s.IdentityProviders.Update(context.Background(), "p1", func(p *domain.IdentityProvider) error {
		p.Name, p.Scopes[0] = "Changed", "changed"
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	assertSameProvider(t, mustGetProvider(t, s, "p1"), makeProvider(t, "p1", ""))
}

func testProviderUpdateParallel(t *testing.T, s Stores) {
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	const n = 10
	errs := runParallel(n, func(i int) error {
		return s.IdentityProviders.Update(context.Background(), "p1", func(p *domain.IdentityProvider) error {
			p.Scopes = append(p.Scopes, fmt.Sprintf("scope-%d", i))
			return nil
		})
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Update %d: %v", i, err)
		}
	}
	if got := mustGetProvider(t, s, "p1").Scopes; len(got) != 3+n {
		t.Fatalf("Scopes = %v, want the 3 defaults and %d added (no lost update)", got, n)
	}
}

func setDomains(domains ...domain.DomainID) func(p *domain.IdentityProvider) error {
	return func(p *domain.IdentityProvider) error { p.Domains = domains; return nil }
}

func testProviderUpdateBindings(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrgDomains(t, s, "o1", "d1", "d2", "d3")
	mustCreateProvider(t, s, makeProvider(t, "p1", "o1", "d1", "d2"))
	if err := s.IdentityProviders.Update(ctx, "p1", setDomains("d3", "d2")); err != nil {
		t.Fatal(err)
	}
	if got := mustGetProvider(t, s, "p1").Domains; !slices.Equal(got, []domain.DomainID{"d2", "d3"}) {
		t.Fatalf("Domains = %v, want [d2 d3]", got)
	}
	assertProviderOfDomain(t, s, "d1", "")
	assertProviderOfDomain(t, s, "d2", "p1")
	assertProviderOfDomain(t, s, "d3", "p1")
	// An update that leaves the domains alone keeps them.
	if err := s.IdentityProviders.Update(ctx, "p1", func(p *domain.IdentityProvider) error { p.Name = "Renamed"; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := mustGetProvider(t, s, "p1").Domains; !slices.Equal(got, []domain.DomainID{"d2", "d3"}) {
		t.Fatalf("Domains after a rename = %v, want [d2 d3]", got)
	}
	if err := s.IdentityProviders.Update(ctx, "p1", setDomains()); err != nil {
		t.Fatal(err)
	}
	if got := mustGetProvider(t, s, "p1").Domains; got != nil {
		t.Fatalf("Domains = %v, want none", got)
	}
	assertProviderOfDomain(t, s, "d2", "")
	assertProviderOfDomain(t, s, "d3", "")
}

func testProviderDomainTaken(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrgDomains(t, s, "o1", "d1", "d2")
	mustCreateProvider(t, s, makeProvider(t, "p1", "o1", "d1"))
	code := domain.ErrIdentityProviderDomainTaken.Code
	mustBeCode(t, s.IdentityProviders.Create(ctx, makeProvider(t, "p2", "o1", "d2", "d1")), domain.ErrConflict, code)
	assertProviderGone(t, s, "p2")
	assertProviderOfDomain(t, s, "d2", "")
	mustCreateProvider(t, s, makeProvider(t, "p2", "o1", "d2"))
	err := s.IdentityProviders.Update(ctx, "p2", func(p *domain.IdentityProvider) error {
		p.Name, p.Domains = "Renamed", []domain.DomainID{"d1", "d2"}
		return nil
	})
	mustBeCode(t, err, domain.ErrConflict, code)
	assertSameProvider(t, mustGetProvider(t, s, "p2"), makeProvider(t, "p2", "o1", "d2"))
	assertProviderOfDomain(t, s, "d1", "p1")
	assertProviderOfDomain(t, s, "d2", "p2")
	// A provider keeps its own domains through an update.
	if err := s.IdentityProviders.Update(ctx, "p1", setDomains("d1")); err != nil {
		t.Fatalf("Update keeping its own domain: %v", err)
	}
	assertProviderOfDomain(t, s, "d1", "p1")
}

func testProviderDomainDeleted(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrgDomains(t, s, "o1", "d1", "d2")
	mustCreateProvider(t, s, makeProvider(t, "p1", "o1", "d1", "d2"))
	if err := s.Domains.Delete(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	if got := mustGetProvider(t, s, "p1").Domains; !slices.Equal(got, []domain.DomainID{"d2"}) {
		t.Fatalf("Domains = %v, want [d2]", got)
	}
	assertProviderOfDomain(t, s, "d1", "")
	// The domain, made again, is free to bind.
	mustCreateDomain(t, s, newDomainAt("d1", "o1", baseTime))
	mustCreateProvider(t, s, makeProvider(t, "p2", "o1", "d1"))
	assertProviderOfDomain(t, s, "d1", "p2")
}

// mustLinkAccount creates account id of user at provider, subject
// "sub-<id>", created at.
func mustLinkAccount(t *testing.T, s Stores, id string, user domain.UserID, provider domain.IdentityProviderID, at time.Time) domain.LinkedAccount {
	t.Helper()
	a := makeLinkedAccount(t, id, user, provider, at)
	if err := s.LinkedAccounts.Create(context.Background(), a); err != nil {
		t.Fatalf("Create linked account %s: %v", id, err)
	}
	return a
}

func makeLinkedAccount(t *testing.T, id string, user domain.UserID, provider domain.IdentityProviderID, at time.Time) domain.LinkedAccount {
	t.Helper()
	a, err := domain.NewLinkedAccount(domain.LinkedAccount{
		ID: domain.LinkedAccountID(id), UserID: user, ProviderID: provider, Subject: "sub-" + id,
		Email: id + "@upstream.example", Scopes: []string{"openid", "email"}, SealedTokens: []byte("tokens-" + id),
		AccessTokenExpiresAt: at.Add(time.Hour), RefreshTokenExpiresAt: at.Add(30 * 24 * time.Hour),
	}, at)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustGetBySubject(t *testing.T, s Stores, provider domain.IdentityProviderID, subject string) domain.LinkedAccount {
	t.Helper()
	a, err := s.LinkedAccounts.GetBySubject(context.Background(), provider, subject)
	if err != nil {
		t.Fatalf("GetBySubject(%s, %s): %v", provider, subject, err)
	}
	return a
}

func assertAccountGone(t *testing.T, s Stores, provider domain.IdentityProviderID, subject string) {
	t.Helper()
	_, err := s.LinkedAccounts.GetBySubject(context.Background(), provider, subject)
	mustBeCode(t, err, domain.ErrNotFound, domain.ErrLinkedAccountNotFound.Code)
}

func assertSameLinkedAccount(t *testing.T, got, want domain.LinkedAccount) {
	t.Helper()
	if got.ID != want.ID || got.UserID != want.UserID || got.ProviderID != want.ProviderID || got.Subject != want.Subject ||
		got.Email != want.Email || !slices.Equal(got.Scopes, want.Scopes) || !bytes.Equal(got.SealedTokens, want.SealedTokens) {
		t.Fatalf("linked account mismatch:\n got  %+v\n want %+v", got, want)
	}
	assertTime(t, "AccessTokenExpiresAt", got.AccessTokenExpiresAt, want.AccessTokenExpiresAt)
	assertTime(t, "RefreshTokenExpiresAt", got.RefreshTokenExpiresAt, want.RefreshTokenExpiresAt)
	assertTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	assertTime(t, "UpdatedAt", got.UpdatedAt, want.UpdatedAt)
}

func mustListAccounts(t *testing.T, s Stores, user domain.UserID) []domain.LinkedAccount {
	t.Helper()
	list, err := s.LinkedAccounts.ListByUser(context.Background(), user)
	if err != nil {
		t.Fatalf("ListByUser(%s): %v", user, err)
	}
	return list
}

func accountIDs(list []domain.LinkedAccount) []domain.LinkedAccountID {
	var ids []domain.LinkedAccountID
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	return ids
}

func testLinkedAccountRoundTrip(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	at := baseTime.In(nonUTC).Add(1234 * time.Nanosecond)
	a := makeLinkedAccount(t, "a1", "u1", "p1", baseTime)
	a.CreatedAt, a.UpdatedAt = at, at.Add(time.Minute)
	a.AccessTokenExpiresAt, a.RefreshTokenExpiresAt = at.Add(time.Hour), at.Add(48*time.Hour)
	a.SealedTokens = []byte{0x00, 0xff, 0x80}
	if err := s.LinkedAccounts.Create(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	want := a
	want.CreatedAt, want.UpdatedAt = at.Truncate(time.Microsecond), at.Add(time.Minute).Truncate(time.Microsecond)
	want.AccessTokenExpiresAt = at.Add(time.Hour).Truncate(time.Microsecond)
	want.RefreshTokenExpiresAt = at.Add(48 * time.Hour).Truncate(time.Microsecond)
	assertSameLinkedAccount(t, mustGetBySubject(t, s, "p1", "sub-a1"), want)
	list := mustListAccounts(t, s, "u1")
	if len(list) != 1 {
		t.Fatalf("ListByUser = %d accounts, want 1", len(list))
	}
	assertSameLinkedAccount(t, list[0], want)
}

func testLinkedAccountMinimal(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	a, err := domain.NewLinkedAccount(domain.LinkedAccount{ID: "a1", UserID: "u1", ProviderID: "p1", Subject: "12345"}, baseTime)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.LinkedAccounts.Create(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	got := mustGetBySubject(t, s, "p1", "12345")
	assertSameLinkedAccount(t, got, a)
	if got.Scopes != nil || got.SealedTokens != nil {
		t.Fatalf("Scopes = %q, SealedTokens = %x, want none", got.Scopes, got.SealedTokens)
	}
	// Subjects match exactly, at their provider only.
	assertAccountGone(t, s, "p1", "1234")
	assertAccountGone(t, s, "p2", "12345")
}

func testLinkedAccountList(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	mustCreateProvider(t, s, makeProvider(t, "p2", ""))
	if list := mustListAccounts(t, s, "u1"); len(list) != 0 {
		t.Fatalf("ListByUser of a user without accounts = %v", list)
	}
	mustLinkAccount(t, s, "a1", "u1", "p1", baseTime)
	mustLinkAccount(t, s, "a3", "u1", "p2", baseTime.Add(time.Minute))
	mustLinkAccount(t, s, "a2", "u1", "p1", baseTime.Add(time.Minute))
	mustLinkAccount(t, s, "a-2", "u1", "p2", baseTime.Add(time.Minute))
	mustLinkAccount(t, s, "a4", "u1", "p2", baseTime.Add(-time.Minute))
	mustLinkAccount(t, s, "a5", "u2", "p1", baseTime.Add(-time.Hour))
	want := []domain.LinkedAccountID{"a4", "a1", "a-2", "a2", "a3"}
	if got := accountIDs(mustListAccounts(t, s, "u1")); !slices.Equal(got, want) {
		t.Fatalf("ListByUser = %v, want %v (oldest first, then id in byte order)", got, want)
	}
}

func testLinkedAccountListByUsers(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2", "u3")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	mustCreateProvider(t, s, makeProvider(t, "p2", ""))
	mustLinkAccount(t, s, "a1", "u2", "p1", baseTime)
	mustLinkAccount(t, s, "a2", "u2", "p2", baseTime.Add(-time.Minute))
	mustLinkAccount(t, s, "a3", "u1", "p1", baseTime.Add(time.Hour))
	mustLinkAccount(t, s, "a4", "u3", "p1", baseTime)
	got, err := s.LinkedAccounts.ListByUsers(context.Background(), []domain.UserID{"u2", "u1", "u2", "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	want := []domain.LinkedAccountID{"a3", "a2", "a1"}
	if !slices.Equal(accountIDs(got), want) {
		t.Fatalf("ListByUsers = %v, want %v (u1's, then u2's oldest first; not u3's; each once)", accountIDs(got), want)
	}
	if got, err := s.LinkedAccounts.ListByUsers(context.Background(), nil); err != nil || len(got) != 0 {
		t.Fatalf("ListByUsers of nobody = %v, %v", got, err)
	}
}

func testLinkedAccountCreateWithUser(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	mustLinkAccount(t, s, "a1", "u1", "p1", baseTime)
	// Both stored.
	u2 := mustUser(t, "u2", "u2@example.com")
	if err := s.LinkedAccounts.CreateWithUser(ctx, u2, makeLinkedAccount(t, "a2", "u2", "p1", baseTime)); err != nil {
		t.Fatalf("CreateWithUser: %v", err)
	}
	if got := mustGetBySubject(t, s, "p1", "sub-a2"); got.UserID != "u2" {
		t.Fatalf("the new user's account = %+v", got)
	}
	if _, err := s.Users.Get(ctx, "u2"); err != nil {
		t.Fatalf("the new user: %v", err)
	}
	// A taken address: neither stored.
	u3 := mustUser(t, "u3", "u1@example.com")
	mustBeCode(t, s.LinkedAccounts.CreateWithUser(ctx, u3, makeLinkedAccount(t, "a3", "u3", "p1", baseTime)), domain.ErrConflict, domain.ErrUserExists.Code)
	assertAccountGone(t, s, "p1", "sub-a3")
	// A taken upstream identity: neither stored.
	u4 := mustUser(t, "u4", "u4@example.com")
	dup := makeLinkedAccount(t, "a4", "u4", "p1", baseTime)
	dup.Subject = "sub-a1"
	mustBeCode(t, s.LinkedAccounts.CreateWithUser(ctx, u4, dup), domain.ErrConflict, domain.ErrLinkedAccountExists.Code)
	if _, err := s.Users.Get(ctx, "u4"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the user of a refused account was stored: %v", err)
	}
	// A missing provider: neither stored.
	u5 := mustUser(t, "u5", "u5@example.com")
	mustBeCode(t, s.LinkedAccounts.CreateWithUser(ctx, u5, makeLinkedAccount(t, "a5", "u5", "nope", baseTime)), domain.ErrNotFound, domain.ErrIdentityProviderNotFound.Code)
	if _, err := s.Users.Get(ctx, "u5"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the user of an account of a missing provider was stored: %v", err)
	}
}

func testLinkedAccountDuplicate(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	mustCreateProvider(t, s, makeProvider(t, "p2", ""))
	first := mustLinkAccount(t, s, "a1", "u1", "p1", baseTime)
	code := domain.ErrLinkedAccountExists.Code
	// The same upstream identity, for any user.
	for _, user := range []domain.UserID{"u1", "u2"} {
		dup := makeLinkedAccount(t, "a2", user, "p1", baseTime)
		dup.Subject = "sub-a1"
		mustBeCode(t, s.LinkedAccounts.Create(ctx, dup), domain.ErrConflict, code)
	}
	// The same id.
	mustBeCode(t, s.LinkedAccounts.Create(ctx, makeLinkedAccount(t, "a1", "u2", "p2", baseTime)), domain.ErrConflict, code)
	assertSameLinkedAccount(t, mustGetBySubject(t, s, "p1", "sub-a1"), first)
	assertAccountGone(t, s, "p2", "sub-a1")
	// The same subject at another provider is another identity.
	other := makeLinkedAccount(t, "a2", "u2", "p2", baseTime)
	other.Subject = "sub-a1"
	if err := s.LinkedAccounts.Create(ctx, other); err != nil {
		t.Fatalf("the same subject at another provider: %v", err)
	}
}

func testLinkedAccountMissingReferences(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	mustBeCode(t, s.LinkedAccounts.Create(ctx, makeLinkedAccount(t, "a1", "u9", "p1", baseTime)),
		domain.ErrNotFound, domain.ErrUserNotFound.Code)
	mustBeCode(t, s.LinkedAccounts.Create(ctx, makeLinkedAccount(t, "a1", "u1", "p9", baseTime)),
		domain.ErrNotFound, domain.ErrIdentityProviderNotFound.Code)
	if list := mustListAccounts(t, s, "u1"); len(list) != 0 {
		t.Fatalf("accounts after refused creates = %v", list)
	}
}

func testLinkedAccountUpdate(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	mustCreateProvider(t, s, makeProvider(t, "p2", ""))
	a := mustLinkAccount(t, s, "a1", "u1", "p1", baseTime)
	later := baseTime.In(nonUTC).Add(time.Hour + time.Nanosecond)
	err := s.LinkedAccounts.Update(context.Background(), "u1", "a1", func(x *domain.LinkedAccount) error {
		x.Email, x.Scopes, x.SealedTokens = "new@upstream.example", []string{"openid", "email", "repo"}, []byte("rotated")
		x.AccessTokenExpiresAt, x.RefreshTokenExpiresAt, x.UpdatedAt = later.Add(time.Hour), time.Time{}, later
		// None of these may change.
		x.ID, x.UserID, x.ProviderID, x.Subject, x.CreatedAt = "a9", "u2", "p2", "other", later
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := a
	want.Email, want.Scopes, want.SealedTokens = "new@upstream.example", []string{"openid", "email", "repo"}, []byte("rotated")
	want.AccessTokenExpiresAt = later.Add(time.Hour).Truncate(time.Microsecond)
	want.RefreshTokenExpiresAt, want.UpdatedAt = time.Time{}, later.Truncate(time.Microsecond)
	assertSameLinkedAccount(t, mustGetBySubject(t, s, "p1", "sub-a1"), want)
	assertAccountGone(t, s, "p2", "other")
	if list := mustListAccounts(t, s, "u2"); len(list) != 0 {
		t.Fatalf("u2's accounts = %v", list)
	}
	// Clearing the tokens stores none.
	err = s.LinkedAccounts.Update(context.Background(), "u1", "a1", func(x *domain.LinkedAccount) error {
		x.SealedTokens, x.Scopes, x.AccessTokenExpiresAt = nil, nil, time.Time{}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want.SealedTokens, want.Scopes, want.AccessTokenExpiresAt = nil, nil, time.Time{}
	assertSameLinkedAccount(t, mustGetBySubject(t, s, "p1", "sub-a1"), want)
}

func testLinkedAccountUpdateRefused(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	a := mustLinkAccount(t, s, "a1", "u1", "p1", baseTime)
	called := false
	change := func(x *domain.LinkedAccount) error { called = true; x.Email = "stolen@example.com"; return nil }
	mustBeCode(t, s.LinkedAccounts.Update(ctx, "u2", "a1", change), domain.ErrNotFound, domain.ErrLinkedAccountNotFound.Code)
	mustBeCode(t, s.LinkedAccounts.Update(ctx, "u1", "a9", change), domain.ErrNotFound, domain.ErrLinkedAccountNotFound.Code)
	if called {
		t.Fatal("Update of another user's or a missing account called fn")
	}
	boom := errors.New("boom")
	err := s.LinkedAccounts.Update(ctx, "u1", "a1", func(x *domain.LinkedAccount) error {
		x.Email, x.Scopes[0] = "changed@example.com", "changed"
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	assertSameLinkedAccount(t, mustGetBySubject(t, s, "p1", "sub-a1"), a)
}

func testLinkedAccountDelete(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	mustCreateProvider(t, s, makeProvider(t, "p2", ""))
	mustLinkAccount(t, s, "a1", "u1", "p1", baseTime)
	mustLinkAccount(t, s, "a2", "u1", "p2", baseTime)
	mustLinkAccount(t, s, "b1", "u2", "p1", baseTime)
	notFound := domain.ErrLinkedAccountNotFound.Code
	for _, keepOne := range []bool{false, true} {
		mustBeCode(t, s.LinkedAccounts.Delete(ctx, "u2", "a1", keepOne), domain.ErrNotFound, notFound)
		mustBeCode(t, s.LinkedAccounts.Delete(ctx, "u1", "a9", keepOne), domain.ErrNotFound, notFound)
	}
	mustGetBySubject(t, s, "p1", "sub-a1")
	if err := s.LinkedAccounts.Delete(ctx, "u1", "a1", true); err != nil {
		t.Fatalf("Delete with another account left: %v", err)
	}
	assertAccountGone(t, s, "p1", "sub-a1")
	mustBeCode(t, s.LinkedAccounts.Delete(ctx, "u1", "a2", true), domain.ErrConflict, domain.ErrLastLinkedAccount.Code)
	mustGetBySubject(t, s, "p2", "sub-a2")
	if err := s.LinkedAccounts.Delete(ctx, "u1", "a2", false); err != nil {
		t.Fatalf("Delete of the last account without keepOne: %v", err)
	}
	assertAccountGone(t, s, "p2", "sub-a2")
	mustBeCode(t, s.LinkedAccounts.Delete(ctx, "u1", "a2", false), domain.ErrNotFound, notFound)
	mustGetBySubject(t, s, "p1", "sub-b1")
}

func testLinkedAccountDeleteParallel(t *testing.T, s Stores) {
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	mustCreateProvider(t, s, makeProvider(t, "p2", ""))
	// Several rounds, each a user's last two accounts unlinked at once.
	for round := range 5 {
		user := domain.UserID(fmt.Sprintf("u%d", round))
		mustCreateUsers(t, s, user)
		ids := []domain.LinkedAccountID{domain.LinkedAccountID(fmt.Sprintf("a%d-1", round)), domain.LinkedAccountID(fmt.Sprintf("a%d-2", round))}
		mustLinkAccount(t, s, string(ids[0]), user, "p1", baseTime)
		mustLinkAccount(t, s, string(ids[1]), user, "p2", baseTime)
		errs := runParallel(2, func(i int) error {
			return s.LinkedAccounts.Delete(context.Background(), user, ids[i], true)
		})
		mustOneWin(t, errs, domain.ErrLastLinkedAccount)
		for _, err := range errs {
			if err != nil {
				mustBeCode(t, err, domain.ErrConflict, domain.ErrLastLinkedAccount.Code)
			}
		}
		if left := mustListAccounts(t, s, user); len(left) != 1 {
			t.Fatalf("round %d: %d accounts left, want 1", round, len(left))
		}
	}
	// Of a user's six accounts unlinked at once, all but one go.
	mustCreateUsers(t, s, "many")
	const n = 6
	for i := range n {
		mustLinkAccount(t, s, fmt.Sprintf("m%d", i), "many", "p1", baseTime)
	}
	errs := runParallel(n, func(i int) error {
		return s.LinkedAccounts.Delete(context.Background(), "many", domain.LinkedAccountID(fmt.Sprintf("m%d", i)), true)
	})
	failed := 0
	for i, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, domain.ErrConflict):
			mustBeCode(t, err, domain.ErrConflict, domain.ErrLastLinkedAccount.Code)
			failed++
		default:
			t.Fatalf("Delete %d: %v", i, err)
		}
	}
	if left := mustListAccounts(t, s, "many"); failed != 1 || len(left) != 1 {
		t.Fatalf("%d unlinks refused, %d accounts left; want 1 and 1", failed, len(left))
	}
}

// makeState returns a sign-in state id (hashed) at provider, or a link of
// user (in session "sess-<user>"), expiring ten minutes after baseTime.
func makeState(t *testing.T, id string, provider domain.IdentityProviderID, user domain.UserID) domain.FederationState {
	t.Helper()
	st := domain.FederationState{
		IDHash: hashOf(id), ProviderID: provider, SealedSecrets: []byte("secrets-" + id),
		CallbackURL: "https://app.example.com/done", ErrorURL: "https://app.example.com/error",
		NewUserURL: "https://app.example.com/welcome", RequestSignUp: true, ExpiresAt: baseTime.Add(domain.FederationStateTTL),
	}
	if user != "" {
		st.LinkUserID, st.LinkSessionID, st.NewUserURL, st.RequestSignUp = user, domain.SessionID("sess-"+string(user)), "", false
	}
	st, err := domain.NewFederationState(st, baseTime.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mustCreateState(t *testing.T, s Stores, st domain.FederationState) {
	t.Helper()
	if err := s.FederationStates.Create(context.Background(), st); err != nil {
		t.Fatalf("Create state: %v", err)
	}
}

func assertSameState(t *testing.T, got, want domain.FederationState) {
	t.Helper()
	if !bytes.Equal(got.IDHash, want.IDHash) || got.ProviderID != want.ProviderID || !bytes.Equal(got.SealedSecrets, want.SealedSecrets) ||
		got.CallbackURL != want.CallbackURL || got.ErrorURL != want.ErrorURL || got.NewUserURL != want.NewUserURL ||
		got.LinkUserID != want.LinkUserID || got.LinkSessionID != want.LinkSessionID || got.RequestSignUp != want.RequestSignUp {
		t.Fatalf("state mismatch:\n got  %+v\n want %+v", got, want)
	}
	assertTime(t, "ExpiresAt", got.ExpiresAt, want.ExpiresAt)
	assertTime(t, "UsedAt", got.UsedAt, want.UsedAt)
}

// assertStateGone fails unless the state cannot be consumed (before its
// expiry).
func assertStateGone(t *testing.T, s Stores, id string) {
	t.Helper()
	_, err := s.FederationStates.Consume(context.Background(), hashOf(id), baseTime)
	mustBeCode(t, err, domain.ErrNotFound, domain.ErrFederationStateNotFound.Code)
}

func mustConsumeState(t *testing.T, s Stores, id string) domain.FederationState {
	t.Helper()
	st, err := s.FederationStates.Consume(context.Background(), hashOf(id), baseTime)
	if err != nil {
		t.Fatalf("Consume state %s: %v", id, err)
	}
	return st
}

func testFederationStateConsume(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	for _, st := range []domain.FederationState{makeState(t, "sign-in", "p1", ""), makeState(t, "link", "p1", "u1")} {
		st.ExpiresAt = st.ExpiresAt.In(nonUTC).Add(time.Nanosecond)
		mustCreateState(t, s, st)
		at := baseTime.In(nonUTC).Add(5 * time.Nanosecond)
		got, err := s.FederationStates.Consume(ctx, st.IDHash, at)
		if err != nil {
			t.Fatalf("Consume: %v", err)
		}
		st.ExpiresAt, st.UsedAt = st.ExpiresAt.Truncate(time.Microsecond), baseTime
		assertSameState(t, got, st)
		_, err = s.FederationStates.Consume(ctx, st.IDHash, at)
		mustBeCode(t, err, domain.ErrNotFound, domain.ErrFederationStateNotFound.Code)
	}
}

func testFederationStateNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	st := makeState(t, "s1", "p1", "")
	mustCreateState(t, s, st)
	_, err := s.FederationStates.Consume(ctx, st.IDHash, st.ExpiresAt)
	mustBeCode(t, err, domain.ErrNotFound, domain.ErrFederationStateNotFound.Code)
	assertStateGone(t, s, "nope")
	// The expired attempt did not use it.
	mustConsumeState(t, s, "s1")
}

func testFederationStateDuplicate(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	mustCreateProvider(t, s, makeProvider(t, "p2", ""))
	st := makeState(t, "s1", "p1", "u1")
	mustCreateState(t, s, st)
	mustBeCode(t, s.FederationStates.Create(ctx, makeState(t, "s1", "p2", "")), domain.ErrConflict, domain.ErrFederationStateExists.Code)
	mustBeCode(t, s.FederationStates.Create(ctx, makeState(t, "s2", "p9", "")), domain.ErrNotFound, domain.ErrIdentityProviderNotFound.Code)
	mustBeCode(t, s.FederationStates.Create(ctx, makeState(t, "s3", "p1", "u9")), domain.ErrNotFound, domain.ErrUserNotFound.Code)
	assertSameState(t, mustConsumeState(t, s, "s1"), func() domain.FederationState { st.UsedAt = baseTime; return st }())
	assertStateGone(t, s, "s2")
	assertStateGone(t, s, "s3")
}

func testFederationStateConsumeParallel(t *testing.T, s Stores) {
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	st := makeState(t, "s1", "p1", "")
	mustCreateState(t, s, st)
	errs := runParallel(10, func(int) error {
		_, err := s.FederationStates.Consume(context.Background(), st.IDHash, baseTime)
		return err
	})
	mustOneWin(t, errs, domain.ErrFederationStateNotFound)
}

func testFederationStateDeleteExpired(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	old := makeState(t, "old", "p1", "u1")
	mustCreateState(t, s, old)
	mustCreateState(t, s, makeState(t, "used", "p1", ""))
	mustConsumeState(t, s, "used")
	live := makeState(t, "live", "p1", "")
	live.ExpiresAt = old.ExpiresAt.Add(time.Minute)
	mustCreateState(t, s, live)
	n, err := s.FederationStates.DeleteExpired(ctx, old.ExpiresAt.Add(time.Microsecond))
	if err != nil || n != 2 {
		t.Fatalf("DeleteExpired = %d, %v, want 2", n, err)
	}
	if n, err := s.FederationStates.DeleteExpired(ctx, live.ExpiresAt); err != nil || n != 0 {
		t.Fatalf("DeleteExpired at the live state's expiry = %d, %v, want 0", n, err)
	}
	assertStateGone(t, s, "old")
	mustConsumeState(t, s, "live")
}

func testProviderOrgCascade(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrgDomains(t, s, "o1", "d1")
	mustCreateOrgDomains(t, s, "o2", "d2")
	mustCreateUsers(t, s, "u1")
	mustCreateProvider(t, s, makeProvider(t, "p1", "o1", "d1"))
	mustCreateProvider(t, s, makeProvider(t, "p2", "o2", "d2"))
	mustCreateProvider(t, s, makeProvider(t, "p3", ""))
	for _, p := range []domain.IdentityProviderID{"p1", "p2", "p3"} {
		mustLinkAccount(t, s, "a-"+string(p), "u1", p, baseTime)
		mustCreateState(t, s, makeState(t, "s-"+string(p), p, ""))
	}
	if err := s.Organizations.Delete(ctx, "o1"); err != nil {
		t.Fatal(err)
	}
	assertProviderGone(t, s, "p1")
	assertProviderOfDomain(t, s, "d1", "")
	assertAccountGone(t, s, "p1", "sub-a-p1")
	assertStateGone(t, s, "s-p1")
	if got := mustListProviders(t, s); !slices.Equal(got, []domain.IdentityProviderID{"p2", "p3"}) {
		t.Fatalf("List = %v, want [p2 p3]", got)
	}
	assertProviderOfDomain(t, s, "d2", "p2")
	if got := accountIDs(mustListAccounts(t, s, "u1")); !slices.Equal(got, []domain.LinkedAccountID{"a-p2", "a-p3"}) {
		t.Fatalf("accounts = %v, want [a-p2 a-p3]", got)
	}
	mustConsumeState(t, s, "s-p2")
	mustConsumeState(t, s, "s-p3")
}

func testProviderDeleteCascades(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrgDomains(t, s, "o1", "d1")
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateProvider(t, s, makeProvider(t, "p1", "o1", "d1"))
	mustCreateProvider(t, s, makeProvider(t, "p2", ""))
	mustLinkAccount(t, s, "a1", "u1", "p1", baseTime)
	mustLinkAccount(t, s, "a2", "u1", "p2", baseTime)
	mustLinkAccount(t, s, "b1", "u2", "p1", baseTime)
	mustCreateState(t, s, makeState(t, "s1", "p1", ""))
	mustCreateState(t, s, makeState(t, "s1-link", "p1", "u1"))
	mustCreateState(t, s, makeState(t, "s2", "p2", ""))
	if err := s.IdentityProviders.Delete(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	assertProviderGone(t, s, "p1")
	assertProviderOfDomain(t, s, "d1", "")
	assertAccountGone(t, s, "p1", "sub-a1")
	assertAccountGone(t, s, "p1", "sub-b1")
	if got := accountIDs(mustListAccounts(t, s, "u1")); !slices.Equal(got, []domain.LinkedAccountID{"a2"}) {
		t.Fatalf("u1's accounts = %v, want [a2]", got)
	}
	assertStateGone(t, s, "s1")
	assertStateGone(t, s, "s1-link")
	mustConsumeState(t, s, "s2")
	mustBeCode(t, s.IdentityProviders.Delete(ctx, "p1"), domain.ErrNotFound, domain.ErrIdentityProviderNotFound.Code)
	// The domain is free to bind again; the id to register again.
	mustCreateProvider(t, s, makeProvider(t, "p1", "o1", "d1"))
	assertProviderOfDomain(t, s, "d1", "p1")
}

func testFederationUserDeleteCascades(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateProvider(t, s, makeProvider(t, "p1", ""))
	mustLinkAccount(t, s, "a1", "u1", "p1", baseTime)
	mustLinkAccount(t, s, "b1", "u2", "p1", baseTime)
	mustCreateState(t, s, makeState(t, "link-u1", "p1", "u1"))
	mustCreateState(t, s, makeState(t, "link-u2", "p1", "u2"))
	mustCreateState(t, s, makeState(t, "sign-in", "p1", ""))
	mustDeleteUser(t, s, "u1")
	assertAccountGone(t, s, "p1", "sub-a1")
	if list := mustListAccounts(t, s, "u1"); len(list) != 0 {
		t.Fatalf("deleted user's accounts = %v", list)
	}
	assertStateGone(t, s, "link-u1")
	mustGetBySubject(t, s, "p1", "sub-b1")
	mustConsumeState(t, s, "link-u2")
	mustConsumeState(t, s, "sign-in")
	mustGetProvider(t, s, "p1")
}

func testFederationCopies(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrgDomains(t, s, "o1", "d1", "d2")
	mustCreateUsers(t, s, "u1")

	p := makeProvider(t, "p1", "o1", "d1", "d2")
	mustCreateProvider(t, s, p)
	p.Scopes[0], p.SealedClientSecret[0], p.Domains[0] = "mutated", 'X', "mutated"
	for _, get := range []func() (domain.IdentityProvider, error){
		func() (domain.IdentityProvider, error) { return s.IdentityProviders.Get(ctx, "p1") },
		func() (domain.IdentityProvider, error) { return s.IdentityProviders.GetByDomain(ctx, "d1") },
		func() (domain.IdentityProvider, error) {
			list, err := s.IdentityProviders.List(ctx)
			if err != nil || len(list) != 1 {
				return domain.IdentityProvider{}, fmt.Errorf("list: %d providers, %w", len(list), err)
			}
			return list[0], nil
		},
	} {
		got, err := get()
		if err != nil {
			t.Fatal(err)
		}
		got.Scopes[0], got.SealedClientSecret[0], got.Domains[0] = "mutated", 'Y', "mutated"
	}
	var kept *domain.IdentityProvider
	if err := s.IdentityProviders.Update(ctx, "p1", func(x *domain.IdentityProvider) error { kept = x; return nil }); err != nil {
		t.Fatal(err)
	}
	kept.Scopes[0], kept.Domains[0] = "mutated", "mutated"
	assertSameProvider(t, mustGetProvider(t, s, "p1"), makeProvider(t, "p1", "o1", "d1", "d2"))

	a := makeLinkedAccount(t, "a1", "u1", "p1", baseTime)
	if err := s.LinkedAccounts.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	a.Scopes[0], a.SealedTokens[0] = "mutated", 'X'
	got := mustGetBySubject(t, s, "p1", "sub-a1")
	got.Scopes[0], got.SealedTokens[0] = "mutated", 'Y'
	mustListAccounts(t, s, "u1")[0].Scopes[0] = "mutated"
	assertSameLinkedAccount(t, mustGetBySubject(t, s, "p1", "sub-a1"), makeLinkedAccount(t, "a1", "u1", "p1", baseTime))

	st := makeState(t, "s1", "p1", "")
	mustCreateState(t, s, st)
	st.SealedSecrets[0], st.IDHash[0] = 'X', st.IDHash[0]^0xff
	consumed := mustConsumeState(t, s, "s1")
	want := makeState(t, "s1", "p1", "")
	want.UsedAt = baseTime
	assertSameState(t, consumed, want)
}
