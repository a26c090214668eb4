package gormstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
)

// TestFederationQueries_use_keys proves that the federation's lookups, made
// on every social sign-in and callback, reach their rows through a key and
// scan no table: a provider by id (its domain ids through the bindings'
// primary key), the provider of a domain through the binding's unique index,
// a linked account by (provider, subject), a user's accounts through
// (user_id, created_at, id), and a sign-in state by its id hash (its
// conditional UPDATE). Pruning reaches expired states through the
// expires_at index. The statements explained are the ones the repositories
// ran, on 1,000 providers, 4,000 bound domains and 10,000 accounts and
// states (a tenth on SQLite: planRows), with fresh statistics.
func TestFederationQueries_use_keys(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		seed := federationSeedOn(dialect)
		n := seed.n
		seedFederationRows(t, db, dialect, seed)
		capture := captureStatements(db)
		providers := gormstore.NewIdentityProviderRepository(db)
		accounts := gormstore.NewLinkedAccountRepository(db)
		states := gormstore.NewFederationStateRepository(db)
		ctx := context.Background()
		now := mfaSeedTime

		// The primary keys of a provider and of its bindings, on each
		// dialect.
		providerSQLite, providerPG := "sqlite_autoindex_identity_providers_1 (id=?)", "identity_providers_pkey"
		bindingSQLite, bindingPG := "sqlite_autoindex_identity_provider_domains_1 (provider_id=?)", "identity_provider_domains_pkey"
		tests := []struct {
			name             string
			run              func(t *testing.T) statement
			sqlite, postgres []string
		}{
			{"provider_by_id", func(t *testing.T) statement {
				return capture.one(t, func() {
					if p, err := providers.Get(ctx, seed.provider(42)); err != nil || len(p.Domains) != seed.domains/seed.providers {
						t.Fatalf("Get = %+v, %v", p, err)
					}
				})
			}, []string{providerSQLite, bindingSQLite}, []string{providerPG, bindingPG}},
			{"provider_by_domain", func(t *testing.T) statement {
				return capture.one(t, func() {
					// Provider 42's second domain.
					if p, err := providers.GetByDomain(ctx, domain.DomainID(seededDomainID(seed.providers+42))); err != nil || p.ID != seed.provider(42) {
						t.Fatalf("GetByDomain = %+v, %v", p, err)
					}
				})
			}, []string{"identity_provider_domains_domain_id_key (domain_id=?)", providerSQLite, bindingSQLite},
				[]string{"identity_provider_domains_domain_id_key", providerPG, bindingPG}},
			{"account_by_subject", func(t *testing.T) statement {
				return capture.one(t, func() {
					a, err := accounts.GetBySubject(ctx, seed.provider(77), seededSubject(77))
					if err != nil || a.UserID != seed.user(77) {
						t.Fatalf("GetBySubject = %+v, %v", a, err)
					}
				})
			}, []string{"linked_accounts_provider_id_subject_key (provider_id=? AND subject=?)"},
				[]string{"linked_accounts_provider_id_subject_key"}},
			{"accounts_by_user", func(t *testing.T) statement {
				return capture.one(t, func() {
					if list, err := accounts.ListByUser(ctx, seed.user(5)); err != nil || len(list) != n/seed.users {
						t.Fatalf("ListByUser = %d accounts, %v", len(list), err)
					}
				})
			}, []string{"linked_accounts_user_id_created_at_idx (user_id=?)"}, []string{"linked_accounts_user_id_created_at_idx"}},
			{"state_consume", func(t *testing.T) statement {
				return capture.one(t, func() {
					if _, err := states.Consume(ctx, seededMFAHash("fs", 234), now); err != nil {
						t.Fatalf("Consume: %v", err)
					}
				})
			}, []string{"sqlite_autoindex_federation_states_1 (id_hash=?)"}, []string{"federation_states_pkey"}},
			{"state_delete_expired", func(t *testing.T) statement {
				return capture.one(t, func() {
					if got, err := states.DeleteExpired(ctx, now); err != nil || got != n/100 {
						t.Fatalf("DeleteExpired = %d, %v; want %d", got, err, n/100)
					}
				})
			}, []string{"federation_states_expires_at_idx"}, []string{"federation_states_expires_at_idx"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				assertMFAPlan(t, db, dialect, tt.run(t), tt.sqlite, tt.postgres)
			})
		}
	})
}

// The federation seed: the multi-factor seed's users, providers providers
// of the domain seed's organizations, each routing domains/providers of its
// domains (domain i to provider i mod providers), and n linked accounts and
// states, row i of user i mod users at provider i mod providers. One state
// in a hundred has expired at mfaSeedTime.
type federationSeed struct {
	mfaSeed
	providers, domains int
}

// federationSeedOn returns the federation seed's size on dialect: the
// multi-factor seed's, 1,000 providers and 4,000 domains (a tenth on
// SQLite: planRows).
func federationSeedOn(dialect gormstore.Dialect) federationSeed {
	return federationSeed{mfaSeed: mfaSeedOn(dialect), providers: planRows(dialect, 1000), domains: planRows(dialect, 4000)}
}

// provider returns the provider of row i.
func (s federationSeed) provider(i int) domain.IdentityProviderID {
	return domain.IdentityProviderID(fmt.Sprintf("idp-%08d", i%s.providers))
}

func seededSubject(i int) string { return fmt.Sprintf("subject-%08d", i) }

func seedFederationRows(t *testing.T, db *gorm.DB, dialect gormstore.Dialect, seed federationSeed) {
	t.Helper()
	n := seed.n
	seedPageUsers(t, db, dialect, seed.users)
	seedDomains(t, db, seed.domains)
	tx := beginSeed(t, db)
	defer tx.rollback()
	at := mfaSeedTime.Add(-time.Hour)
	const batch = 500
	var rows [][]any
	insert := func(table string, cols []string, row []any, last bool) {
		rows = append(rows, row)
		if len(rows) == batch || last {
			tx.insert(table, cols, rows)
			rows = rows[:0]
		}
	}
	for i := range seed.providers {
		insert("identity_providers", []string{"id", "preset", "name", "issuer", "client_id", "sealed_client_secret",
			"scopes", "enabled", "organization_id", "default_role", "created_at", "updated_at"},
			[]any{string(seed.provider(i)), "oidc", "IdP", "https://idp.example.com", "client", []byte("sealed"),
				`["openid","email"]`, true, fmt.Sprintf("org-%02d", i%20), "member", at, at}, i == seed.providers-1)
	}
	for i := range seed.domains {
		insert("identity_provider_domains", []string{"provider_id", "domain_id"},
			[]any{string(seed.provider(i)), seededDomainID(i)}, i == seed.domains-1)
	}
	for i := range n {
		insert("linked_accounts", []string{"id", "user_id", "provider_id", "subject", "email", "scopes", "sealed_tokens",
			"access_token_expires_at", "refresh_token_expires_at", "created_at", "updated_at"},
			[]any{fmt.Sprintf("acct-%08d", i), string(seed.user(i)), string(seed.provider(i)), seededSubject(i),
				"someone@example.com", `["openid"]`, []byte("tokens"), at, nil, at.Add(time.Duration(i) * time.Second), at}, i == n-1)
	}
	for i := range n {
		expires := mfaSeedTime.Add(5 * time.Minute)
		if i%100 == 0 {
			expires = mfaSeedTime.Add(-time.Minute)
		}
		insert("federation_states", []string{"id_hash", "provider_id", "sealed_secrets", "callback_url", "expires_at"},
			[]any{seededMFAHash("fs", i), string(seed.provider(i)), []byte("secrets"), "https://app.example.com/", expires}, i == n-1)
	}
	tx.commit()
	for _, table := range []string{"identity_providers", "identity_provider_domains", "linked_accounts", "federation_states"} {
		analyze(db, table)
	}
}
