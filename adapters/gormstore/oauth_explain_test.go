package gormstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
)

// TestOAuthQueries_use_keys proves that the OpenID provider's lookups, made
// on every authorize, token, userinfo and introspection request, reach their
// rows through a primary key and scan no table: the client by id, the code
// by hash (the exchange's conditional UPDATE), the refresh token by hash
// joined to its grant by id, the grant by id, the consent by (user, client),
// the rotation's conditional UPDATE, and the revocation. Pruning reaches the
// expired rows through the expires_at indexes. The statements explained are
// the ones the repositories ran, captured as they ran, on 10,000 codes,
// grants and refresh tokens (a tenth on SQLite: planRows) with fresh
// statistics.
func TestOAuthQueries_use_keys(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		seed := oauthSeedOn(dialect)
		n := seed.n
		seedOAuthRows(t, db, dialect, seed)
		capture := captureStatements(db)
		clients := gormstore.NewOAuthClientRepository(db)
		grants := gormstore.NewOAuthGrantRepository(db)
		ctx := context.Background()
		now := oauthSeedTime.Add(time.Minute)

		tests := []struct {
			name string
			// run runs the repository call; it returns the statements to
			// explain among those it ran.
			run func(t *testing.T) []statement
			// sqlite and postgres name the indexes each dialect must use.
			sqlite, postgres []string
		}{
			{"client_by_id", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if c, err := clients.Get(ctx, seededClientID(42)); err != nil || c.Name != "Client 42" {
						t.Fatalf("Get = %+v, %v", c, err)
					}
				})}
			}, []string{"sqlite_autoindex_oauth_clients_1 (id=?)"}, []string{"oauth_clients_pkey"}},
			{"code_consume", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if c, err := grants.ConsumeCode(ctx, seededCodeHash(234), "grant-new", now); err != nil || c.UserID != seed.user(234) {
						t.Fatalf("ConsumeCode = %+v, %v", c, err)
					}
				})}
			}, []string{"sqlite_autoindex_oauth_codes_1 (hash=?)"}, []string{"oauth_codes_pkey"}},
			{"refresh_with_grant", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					r, g, err := grants.GetRefreshToken(ctx, seededRefreshHash(321))
					if err != nil || g.ID != seededGrantID(321) || r.GrantID != g.ID {
						t.Fatalf("GetRefreshToken = %+v, %+v, %v", r, g, err)
					}
				})}
			}, []string{"sqlite_autoindex_oauth_refresh_tokens_1 (hash=?)", "sqlite_autoindex_oauth_grants_1 (id=?)"},
				[]string{"oauth_refresh_tokens_pkey", "oauth_grants_pkey"}},
			{"grant_by_id", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if g, err := grants.GetGrant(ctx, seededGrantID(777)); err != nil || g.UserID != seed.user(777) {
						t.Fatalf("GetGrant = %+v, %v", g, err)
					}
				})}
			}, []string{"sqlite_autoindex_oauth_grants_1 (id=?)"}, []string{"oauth_grants_pkey"}},
			{"consent_by_user_and_client", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if c, err := grants.GetConsent(ctx, seed.user(55), seededClientID(5)); err != nil || len(c.Scopes) != 2 {
						t.Fatalf("GetConsent = %+v, %v", c, err)
					}
				})}
			}, []string{"sqlite_autoindex_oauth_consents_1 (user_id=? AND client_id=?)"}, []string{"oauth_consents_pkey"}},
			{"rotate_refresh_token", func(t *testing.T) []statement {
				next := domain.RefreshToken{Hash: "hash-next", GrantID: seededGrantID(99), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
				all := capture.all(func() {
					if err := grants.RotateRefreshToken(ctx, seededRefreshHash(99), next, now); err != nil {
						t.Fatalf("RotateRefreshToken: %v", err)
					}
				})
				return statementsStarting(t, all, "UPDATE")
			}, []string{"sqlite_autoindex_oauth_refresh_tokens_1 (hash=?)"}, []string{"oauth_refresh_tokens_pkey"}},
			{"revoke_grant", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if err := grants.RevokeGrant(ctx, seededGrantID(98), now); err != nil {
						t.Fatalf("RevokeGrant: %v", err)
					}
				})}
			}, []string{"sqlite_autoindex_oauth_grants_1 (id=?)"}, []string{"oauth_grants_pkey"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for _, q := range tt.run(t) {
					plan := explainStatement(t, db, dialect, q)
					t.Logf("query:\n%s\nplan:\n%s", q.sql, plan)
					if dialect == gormstore.DialectSQLite {
						assertPlanUses(t, plan, tt.sqlite...)
						assertNoSQLiteScan(t, plan)
					} else {
						assertPlanUses(t, plan, tt.postgres...)
						assertNoSeqScan(t, plan)
					}
				}
			})
		}

		t.Run("delete_expired", func(t *testing.T) {
			// One row in a hundred of each table has expired.
			all := capture.all(func() {
				got, err := grants.DeleteExpired(ctx, now)
				if err != nil || got != 3*n/100 {
					t.Fatalf("DeleteExpired = %d, %v; want %d", got, err, 3*n/100)
				}
			})
			deletes := statementsStarting(t, all, "DELETE")
			if len(deletes) != 3 {
				t.Fatalf("DeleteExpired ran %d DELETE statements, want 3", len(deletes))
			}
			for i, table := range []string{"oauth_codes", "oauth_refresh_tokens", "oauth_grants"} {
				// EXPLAIN after the deletion: the plan is the one the
				// statement had, on statistics that still count the rows.
				plan := explainStatement(t, db, dialect, deletes[i])
				t.Logf("query:\n%s\nplan:\n%s", deletes[i].sql, plan)
				assertPlanUses(t, plan, table+"_expires_at_idx")
				if dialect == gormstore.DialectSQLite {
					assertNoSQLiteScan(t, plan)
				} else {
					assertNoSeqScan(t, plan)
				}
			}
		})
	})
}

// all runs fn and returns every statement it ran.
func (c *statementCapture) all(fn func()) []statement {
	c.mu.Lock()
	c.seen = nil
	c.mu.Unlock()
	fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]statement(nil), c.seen...)
}

// statementsStarting returns the statements whose SQL starts with verb,
// failing if there is none.
func statementsStarting(t *testing.T, all []statement, verb string) []statement {
	t.Helper()
	var out []statement
	for _, s := range all {
		if strings.HasPrefix(strings.TrimSpace(s.sql), verb) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s among the statements run", verb)
	}
	return out
}

// The OAuth seed: clients clients (enough that PostgreSQL does not prefer
// scanning the table), n/10 users (seedPageUsers), and n codes, grants and
// refresh tokens, row i belonging to user i mod n/10 and client i mod
// clients; each user consented to the first oauthSeedConsents clients. One
// row in a hundred of each table has expired at oauthSeedTime.
var oauthSeedTime = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

const oauthSeedConsents = 10 // clients each user consented to

// oauthSeed is the size of the OAuth seed.
type oauthSeed struct{ n, clients int }

// oauthSeedOn returns the OAuth seed's size on dialect: 10,000 rows a
// table and 2,000 clients (a tenth on SQLite: planRows).
func oauthSeedOn(dialect gormstore.Dialect) oauthSeed {
	return oauthSeed{n: planRows(dialect, 10_000), clients: planRows(dialect, 2000)}
}

// user returns the user of row i.
func (s oauthSeed) user(i int) domain.UserID {
	return domain.UserID(fmt.Sprintf("user-%08d", i%(s.n/10)))
}

func seededClientID(i int) domain.OAuthClientID {
	return domain.OAuthClientID(fmt.Sprintf("gh_ci_%024d", i))
}
func seededGrantID(i int) domain.GrantID       { return domain.GrantID(fmt.Sprintf("grant-%08d", i)) }
func seededCodeHash(i int) domain.TokenHash    { return domain.TokenHash(fmt.Sprintf("code-%038d", i)) }
func seededRefreshHash(i int) domain.TokenHash { return domain.TokenHash(fmt.Sprintf("rt-%040d", i)) }

func seedOAuthRows(t *testing.T, db *gorm.DB, dialect gormstore.Dialect, seed oauthSeed) {
	t.Helper()
	n := seed.n
	seedPageUsers(t, db, dialect, n/10)
	tx := beginSeed(t, db)
	defer tx.rollback()
	at := oauthSeedTime.Add(-time.Hour)
	const batch = 500
	var clients [][]any
	for c := range seed.clients {
		clients = append(clients, []any{string(seededClientID(c)), fmt.Sprintf("Client %d", c), "confidential",
			fmt.Sprintf(`["https://app%d.example.com/callback"]`, c), `[]`, c%2 == 0, "secret-hash", "abcd",
			at.Add(time.Duration(c) * time.Second), at})
		if len(clients) == batch || c == seed.clients-1 {
			tx.insert("oauth_clients", []string{"id", "name", "type", "redirect_uris", "post_logout_redirect_uris",
				"first_party", "secret_hash", "secret_last4", "created_at", "updated_at"}, clients)
			clients = clients[:0]
		}
	}

	expiry := func(i int, live time.Duration) time.Time {
		if i%100 == 0 {
			return oauthSeedTime.Add(-time.Minute)
		}
		return oauthSeedTime.Add(live)
	}
	var codes, grantRows, refresh, consents [][]any
	flush := func(force bool) {
		if len(codes) == batch || (force && len(codes) > 0) {
			tx.insert("oauth_codes", []string{"hash", "client_id", "user_id", "redirect_uri", "scopes", "nonce",
				"code_challenge", "code_challenge_method", "auth_time", "created_at", "expires_at", "consumed_at", "grant_id"}, codes)
			tx.insert("oauth_grants", []string{"id", "client_id", "user_id", "scopes", "auth_time", "nonce",
				"created_at", "expires_at", "revoked_at"}, grantRows)
			tx.insert("oauth_refresh_tokens", []string{"hash", "grant_id", "created_at", "expires_at", "used_at"}, refresh)
			codes, grantRows, refresh = codes[:0], grantRows[:0], refresh[:0]
		}
		if len(consents) == batch || (force && len(consents) > 0) {
			tx.insert("oauth_consents", []string{"user_id", "client_id", "scopes", "created_at", "updated_at"}, consents)
			consents = consents[:0]
		}
	}
	for i := range n {
		client, user := string(seededClientID(i%seed.clients)), string(seed.user(i))
		codes = append(codes, []any{string(seededCodeHash(i)), client, user, "https://app.example.com/callback",
			"openid email", "nonce", "challenge", "S256", at, at, expiry(i, 10*time.Minute), nil, ""})
		grantRows = append(grantRows, []any{string(seededGrantID(i)), client, user, "openid offline_access", at, "nonce",
			at, expiry(i, 30*24*time.Hour), nil})
		refresh = append(refresh, []any{string(seededRefreshHash(i)), string(seededGrantID(i)), at, expiry(i+50, 24*time.Hour), nil})
		consents = append(consents, []any{string(seed.user(i / oauthSeedConsents)), string(seededClientID(i % oauthSeedConsents)),
			"openid email", at, at})
		flush(false)
	}
	flush(true)
	tx.commit()
	for _, table := range []string{"oauth_clients", "oauth_codes", "oauth_grants", "oauth_refresh_tokens", "oauth_consents"} {
		analyze(db, table)
	}
}
