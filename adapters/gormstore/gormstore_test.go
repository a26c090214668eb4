package gormstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/ports/conformance"
)

func TestUserRepository(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunUserRepository(t, func(t *testing.T) ports.UserRepository {
			return gormstore.NewUserRepository(gormtest.Open(t, newURL(t)))
		})
	})
}

// storesOn returns the factory of fresh stores that share one newly migrated
// database of newURL's dialect.
func storesOn(newURL gormtest.NewURLFunc) func(t *testing.T) conformance.Stores {
	return func(t *testing.T) conformance.Stores {
		db := gormtest.Open(t, newURL(t))
		return conformance.Stores{
			Users:         gormstore.NewUserRepository(db),
			Sessions:      gormstore.NewSessionRepository(db),
			Credentials:   gormstore.NewCredentialRepository(db),
			Verifications: gormstore.NewVerificationRepository(db),
			Organizations: gormstore.NewOrganizationRepository(db),
			ServiceKeys:   gormstore.NewServiceKeyRepository(db),
			Audit:         gormstore.NewAuditLog(db),
			Domains:       gormstore.NewDomainRepository(db),
			OAuthClients:  gormstore.NewOAuthClientRepository(db),
			OAuthGrants:   gormstore.NewOAuthGrantRepository(db),
		}
	}
}

func TestUserPage(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunUserPage(t, storesOn(newURL))
	})
}

func TestSessionRepository(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunSessionRepository(t, storesOn(newURL))
	})
}

func TestCredentialRepository(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunCredentialRepository(t, storesOn(newURL))
	})
}

func TestVerificationRepository(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunVerificationRepository(t, storesOn(newURL))
	})
}

func TestServiceKeyRepository(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunServiceKeyRepository(t, storesOn(newURL))
	})
}

func TestAuditLog(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunAuditLog(t, storesOn(newURL))
	})
}

func TestOrganizationRepository(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunOrganizationRepository(t, storesOn(newURL))
	})
}

func TestDomainRepository(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunDomainRepository(t, storesOn(newURL))
	})
}

func TestOAuthRepositories(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunOAuthRepositories(t, storesOn(newURL))
	})
}

func TestHealthChecker(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		conformance.RunHealthChecker(t, func(*testing.T) ports.HealthChecker { return gormstore.NewHealthChecker(db) })

		t.Run("closed_database_is_unavailable", func(t *testing.T) {
			db := gormtest.Open(t, newURL(t))
			sqlDB, _ := db.DB()
			_ = sqlDB.Close()
			err := gormstore.NewHealthChecker(db).Check(context.Background())
			if !errors.Is(err, domain.ErrUnavailable) {
				t.Fatalf("Check on a closed database = %v, want kind unavailable", err)
			}
		})
	})
}

func TestMigrate_is_idempotent_and_versioned(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		db := gormtest.Open(t, newURL(t))
		applied, err := gormstore.Migrate(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		if len(applied) != 0 {
			t.Fatalf("second Migrate applied %v, want nothing", applied)
		}
		v, err := gormstore.MigrationVersion(context.Background(), db)
		if err != nil || v < 1 {
			t.Fatalf("MigrationVersion = %d, %v", v, err)
		}
	})
}

func TestMigrate_concurrent_replicas_migrate_once(t *testing.T) {
	u := gormtest.PostgresURL(t)
	const replicas = 4
	errs := make(chan error, replicas)
	for range replicas {
		go func() {
			_, cleanup, err := gormstore.Open(context.Background(), u, 0)
			if err == nil {
				cleanup()
			}
			errs <- err
		}()
	}
	deadline := time.After(2 * time.Minute)
	for range replicas {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatalf("replica start: %v", err)
			}
		case <-deadline:
			t.Fatal("replicas did not finish migrating")
		}
	}
}

func TestParseDatabaseURL(t *testing.T) {
	tests := []struct {
		name, in string
		dialect  gormstore.Dialect
		ok       bool
	}{
		{"postgres", "postgres://u@localhost/db", gormstore.DialectPostgres, true},
		{"postgresql", "postgresql://u@localhost/db", gormstore.DialectPostgres, true},
		{"sqlite_scheme", "sqlite:/tmp/x.db", gormstore.DialectSQLite, true},
		{"bare_path", "./data/x.db", gormstore.DialectSQLite, true},
		{"file_scheme", "file:x.db?_pragma=busy_timeout(100)", gormstore.DialectSQLite, true},
		{"mysql_refused", "mysql://u@localhost/db", "", false},
		{"memory_refused", "sqlite::memory:", "", false},
		{"empty_refused", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, dsn, err := gormstore.ParseDatabaseURL(gormstore.DatabaseURL(tt.in))
			if tt.ok != (err == nil) || d != tt.dialect {
				t.Fatalf("ParseDatabaseURL(%q) = %q, %v; want %q ok=%v", tt.in, d, err, tt.dialect, tt.ok)
			}
			if d == gormstore.DialectSQLite {
				for _, want := range []string{"journal_mode", "foreign_keys", "_txlock=immediate", "busy_timeout"} {
					if !strings.Contains(dsn, want) {
						t.Fatalf("SQLite DSN %q lacks %s", dsn, want)
					}
				}
			}
		})
	}
}

func TestSigningKeyRepository(t *testing.T) {
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunSigningKeyRepository(t, func(t *testing.T) ports.SigningKeyRepository {
			return gormstore.NewSigningKeyRepository(gormtest.Open(t, newURL(t)))
		})
	})
}
