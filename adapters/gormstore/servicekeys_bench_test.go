package gormstore_test

import (
	"context"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/domain"
)

// BenchmarkServiceKeyLookup measures GetBySecretHash, which every trusted
// request runs: one query through the secret's primary key joined to its
// key, so the cost should stay flat from rows=1000 to rows=100000.
//
//	go test -run '^$' -bench ServiceKeyLookup -benchtime 2000x ./adapters/gormstore/
func BenchmarkServiceKeyLookup(b *testing.B) {
	atScales(b, func(b *testing.B, db *gorm.DB, dialect gormstore.Dialect, rows int) {
		repo := gormstore.NewServiceKeyRepository(db)
		seedKeySecrets(b, db, dialect, rows)
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			k, secret, err := repo.GetBySecretHash(ctx, seededTokenHash(i%rows))
			if err != nil {
				b.Fatal(err)
			}
			if secret.KeyID != k.ID() {
				b.Fatalf("secret of %s came with key %s", secret.KeyID, k.ID())
			}
		}
	})
}

// seedKeySecrets fills service_keys with n keys, each with one secret whose
// hash is seededTokenHash(i), in two INSERT … SELECT statements.
func seedKeySecrets(tb testing.TB, db *gorm.DB, dialect gormstore.Dialect, n int) {
	tb.Helper()
	now := domain.Timestamp(time.Now())
	keys := `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO service_keys (id, name, scopes, last4, created_by, created_at)
SELECT printf('key-%08d', i), 'bench', 'users:read', 'abcd', 'cli', ? FROM s`
	secrets := `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?)
INSERT INTO service_key_secrets (hash, key_id, created_at)
SELECT printf('hash-%038d', i), printf('key-%08d', i), ? FROM s`
	if dialect == gormstore.DialectPostgres {
		keys = `INSERT INTO service_keys (id, name, scopes, last4, created_by, created_at)
SELECT 'key-' || lpad(i::text, 8, '0'), 'bench', 'users:read', 'abcd', 'cli', $2 FROM generate_series(0, $1 - 1) AS i`
		secrets = `INSERT INTO service_key_secrets (hash, key_id, created_at)
SELECT 'hash-' || lpad(i::text, 38, '0'), 'key-' || lpad(i::text, 8, '0'), $2 FROM generate_series(0, $1 - 1) AS i`
	}
	for _, q := range []string{keys, secrets} {
		if err := db.Exec(q, n, now).Error; err != nil {
			tb.Fatal(err)
		}
	}
	analyze(db, "service_keys")
	analyze(db, "service_key_secrets")
}
