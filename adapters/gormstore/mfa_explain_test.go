package gormstore_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
)

// TestMFAQueries_use_keys proves that the multi-factor lookups, made on
// every second-factor answer and passkey sign-in, reach their rows through
// a key and scan no table: the TOTP factor by user, a backup code by (user,
// hash), a challenge by id hash (its conditional UPDATEs too), a passkey by
// credential id and a user's passkeys through (user_id, created_at). The
// reset reaches each table by user id, and pruning reaches expired
// challenges through the expires_at indexes. The statements explained are
// the ones the repositories ran, on 10,000 rows a table (a tenth on SQLite:
// planRows) with fresh statistics.
func TestMFAQueries_use_keys(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		dialect := gormstore.DialectOf(db)
		seed := mfaSeedOn(dialect)
		n := seed.n
		seedMFARows(t, db, dialect, seed)
		capture := captureStatements(db)
		factors := gormstore.NewTwoFactorRepository(db)
		challenges := gormstore.NewMFAChallengeRepository(db)
		passkeys := gormstore.NewPasskeyRepository(db)
		webauthn := gormstore.NewWebAuthnChallengeRepository(db)
		ctx := context.Background()
		now := mfaSeedTime

		pk := func(table string) ([]string, []string) {
			return []string{"sqlite_autoindex_" + table + "_1"}, []string{table + "_pkey"}
		}
		byPasskeyUser := []string{"passkeys_user_id_created_at_idx"}
		tests := []struct {
			name string
			// table is the table read through its primary key; when it is
			// empty, indexes names the index both dialects must use.
			table   string
			run     func(t *testing.T) []statement
			indexes []string
		}{
			{"totp_by_user", "totp_factors", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if _, err := factors.GetTOTP(ctx, seed.user(42)); err != nil {
						t.Fatalf("GetTOTP: %v", err)
					}
				})}
			}, nil},
			{"totp_use_step", "totp_factors", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if err := factors.UseTOTPStep(ctx, seed.user(43), 1_000_000); err != nil {
						t.Fatalf("UseTOTPStep: %v", err)
					}
				})}
			}, nil},
			{"backup_code_use", "backup_codes", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if err := factors.UseBackupCode(ctx, seed.user(44), seededMFAHash("code", 44), now); err != nil {
						t.Fatalf("UseBackupCode: %v", err)
					}
				})}
			}, nil},
			{"challenge_consume", "mfa_challenges", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if _, err := challenges.Consume(ctx, seededMFAHash("ch", 234), now); err != nil {
						t.Fatalf("Consume: %v", err)
					}
				})}
			}, nil},
			{"challenge_record_failure", "mfa_challenges", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if _, err := challenges.RecordFailure(ctx, seededMFAHash("ch", 235), now); err != nil {
						t.Fatalf("RecordFailure: %v", err)
					}
				})}
			}, nil},
			{"passkey_by_id", "passkeys", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if _, err := passkeys.Get(ctx, seededMFAHash("pk", 777)); err != nil {
						t.Fatalf("Get: %v", err)
					}
				})}
			}, nil},
			{"passkey_sign_count", "passkeys", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if err := passkeys.UpdateSignCount(ctx, seededMFAHash("pk", 778), 0, 1, now); err != nil {
						t.Fatalf("UpdateSignCount: %v", err)
					}
				})}
			}, nil},
			{"webauthn_consume", "webauthn_challenges", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if _, err := webauthn.Consume(ctx, seededMFAHash("wa", 999), now); err != nil {
						t.Fatalf("Consume: %v", err)
					}
				})}
			}, nil},
			{"passkeys_by_user", "", func(t *testing.T) []statement {
				return []statement{capture.one(t, func() {
					if list, err := passkeys.ListByUser(ctx, seed.user(5)); err != nil || len(list) != n/seed.users {
						t.Fatalf("ListByUser = %d passkeys, %v", len(list), err)
					}
				})}
			}, byPasskeyUser},
		}
		for _, tt := range tests {
			sqlite, postgres := tt.indexes, tt.indexes
			if tt.table != "" {
				sqlite, postgres = pk(tt.table)
			}
			t.Run(tt.name, func(t *testing.T) {
				for _, q := range tt.run(t) {
					assertMFAPlan(t, db, dialect, q, sqlite, postgres)
				}
			})
		}

		t.Run("delete_all_by_user", func(t *testing.T) {
			all := capture.all(func() {
				if err := factors.DeleteAll(ctx, seed.user(7)); err != nil {
					t.Fatalf("DeleteAll: %v", err)
				}
			})
			deletes := statementsStarting(t, all, "DELETE")
			sqlite := [][]string{{"sqlite_autoindex_totp_factors_1"}, {"sqlite_autoindex_backup_codes_1"},
				{"mfa_challenges_user_id_idx"}, byPasskeyUser, {"webauthn_challenges_user_id_idx"}}
			postgres := [][]string{{"totp_factors_pkey"}, {"backup_codes_pkey"},
				{"mfa_challenges_user_id_idx"}, byPasskeyUser, {"webauthn_challenges_user_id_idx"}}
			if len(deletes) != len(sqlite) {
				t.Fatalf("DeleteAll ran %d DELETE statements, want %d", len(deletes), len(sqlite))
			}
			for i, q := range deletes {
				assertMFAPlan(t, db, dialect, q, sqlite[i], postgres[i])
			}
		})

		t.Run("delete_expired", func(t *testing.T) {
			for _, c := range []struct {
				table string
				run   func() (int, error)
			}{
				{"mfa_challenges", func() (int, error) { return challenges.DeleteExpired(ctx, now) }},
				{"webauthn_challenges", func() (int, error) { return webauthn.DeleteExpired(ctx, now) }},
			} {
				q := capture.one(t, func() {
					if got, err := c.run(); err != nil || got != n/100 {
						t.Fatalf("DeleteExpired %s = %d, %v; want %d", c.table, got, err, n/100)
					}
				})
				idx := []string{c.table + "_expires_at_idx"}
				assertMFAPlan(t, db, dialect, q, idx, idx)
			}
		})
	})
}

// assertMFAPlan explains q and fails unless the plan uses the dialect's
// indexes and scans no table.
func assertMFAPlan(t *testing.T, db *gorm.DB, dialect gormstore.Dialect, q statement, sqlite, postgres []string) {
	t.Helper()
	plan := explainStatement(t, db, dialect, q)
	t.Logf("query:\n%s\nplan:\n%s", q.sql, plan)
	if dialect == gormstore.DialectSQLite {
		assertPlanUses(t, plan, sqlite...)
		assertNoSQLiteScan(t, plan)
	} else {
		assertPlanUses(t, plan, postgres...)
		assertNoSeqScan(t, plan)
	}
}

// The multi-factor seed: users users (seedPageUsers), each with a verified
// TOTP factor and ten backup codes, and n challenges, passkeys and WebAuthn
// challenges, row i belonging to user i mod users. One challenge in a
// hundred has expired at mfaSeedTime.
var mfaSeedTime = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

// mfaSeed is the size of the multi-factor seed.
type mfaSeed struct{ users, n int }

// mfaSeedOn returns the multi-factor seed's size on dialect: 1,000 users
// and 10,000 rows a table (a tenth on SQLite: planRows).
func mfaSeedOn(dialect gormstore.Dialect) mfaSeed {
	return mfaSeed{users: planRows(dialect, 1000), n: planRows(dialect, 10_000)}
}

// user returns the user of row i.
func (s mfaSeed) user(i int) domain.UserID {
	return domain.UserID(fmt.Sprintf("user-%08d", i%s.users))
}

// seededMFAHash is the SHA-256 of kind-i, standing for a hashed code, a
// hashed challenge id or a credential id.
func seededMFAHash(kind string, i int) []byte {
	h := sha256.Sum256(fmt.Appendf(nil, "%s-%d", kind, i))
	return h[:]
}

func seedMFARows(t *testing.T, db *gorm.DB, dialect gormstore.Dialect, seed mfaSeed) {
	t.Helper()
	n := seed.n
	seedPageUsers(t, db, dialect, seed.users)
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
	for u := range seed.users {
		insert("totp_factors", []string{"user_id", "sealed_secret", "verified", "last_used_step", "created_at", "verified_at"},
			[]any{string(seed.user(u)), []byte("sealed"), true, int64(100), at, at}, u == seed.users-1)
	}
	for i := range 10 * seed.users {
		insert("backup_codes", []string{"user_id", "code_hash", "used_at", "created_at"},
			[]any{string(seed.user(i)), seededMFAHash("code", i), nil, at}, i == 10*seed.users-1)
	}
	expiry := func(i int) time.Time {
		if i%100 == 0 {
			return mfaSeedTime.Add(-time.Minute)
		}
		return mfaSeedTime.Add(5 * time.Minute)
	}
	for i := range n {
		insert("mfa_challenges", []string{"id_hash", "user_id", "expires_at", "attempts", "max_attempts", "remember_me",
			"consumed_at", "otp_hash", "otp_expires_at"},
			[]any{seededMFAHash("ch", i), string(seed.user(i)), expiry(i), 0, 5, false, nil, nil, nil}, i == n-1)
	}
	for i := range n {
		insert("passkeys", []string{"id", "user_id", "name", "public_key", "sign_count", "aaguid", "transports",
			"backup_eligible", "backed_up", "attestation_type", "created_at", "last_used_at"},
			[]any{seededMFAHash("pk", i), string(seed.user(i)), "Key", []byte("cose"), int64(0), nil, `["internal"]`,
				false, false, "none", at.Add(time.Duration(i) * time.Second), nil}, i == n-1)
	}
	for i := range n {
		insert("webauthn_challenges", []string{"id_hash", "challenge", "user_id", "purpose", "expires_at", "used_at", "session_data"},
			[]any{seededMFAHash("wa", i), []byte("challenge"), string(seed.user(i)), "authentication", expiry(i), nil, nil}, i == n-1)
	}
	tx.commit()
	for _, table := range []string{"totp_factors", "backup_codes", "mfa_challenges", "passkeys", "webauthn_challenges"} {
		analyze(db, table)
	}
}
