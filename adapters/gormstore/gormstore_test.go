package gormstore_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		newURL = emptiedURL(t, newURL)
		conformance.RunUserRepository(t, func(t *testing.T) ports.UserRepository {
			return gormstore.NewUserRepository(gormtest.Open(t, newURL(t)))
		})
	})
}

// storesOn returns the factory of fresh stores that share one empty,
// migrated database of newURL's dialect (emptiedURL), on a pool of their
// own.
func storesOn(t *testing.T, newURL gormtest.NewURLFunc) func(t *testing.T) conformance.Stores {
	newURL = emptiedURL(t, newURL)
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

			TwoFactor:          gormstore.NewTwoFactorRepository(db),
			MFAChallenges:      gormstore.NewMFAChallengeRepository(db),
			Passkeys:           gormstore.NewPasskeyRepository(db),
			WebAuthnChallenges: gormstore.NewWebAuthnChallengeRepository(db),

			IdentityProviders: gormstore.NewIdentityProviderRepository(db),
			LinkedAccounts:    gormstore.NewLinkedAccountRepository(db),
			FederationStates:  gormstore.NewFederationStateRepository(db),

			UnitOfWork: gormstore.NewUnitOfWork(db),
			Outbox:     gormstore.NewOutbox(db),
		}
	}
}

func TestUserPage(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunUserPage(t, storesOn(t, newURL))
	})
}

func TestSessionRepository(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunSessionRepository(t, storesOn(t, newURL))
	})
}

func TestCredentialRepository(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunCredentialRepository(t, storesOn(t, newURL))
	})
}

func TestVerificationRepository(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunVerificationRepository(t, storesOn(t, newURL))
	})
}

func TestServiceKeyRepository(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunServiceKeyRepository(t, storesOn(t, newURL))
	})
}

func TestAuditLog(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunAuditLog(t, storesOn(t, newURL))
	})
}

func TestOrganizationRepository(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunOrganizationRepository(t, storesOn(t, newURL))
	})
}

func TestDomainRepository(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunDomainRepository(t, storesOn(t, newURL))
	})
}

func TestOAuthRepositories(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunOAuthRepositories(t, storesOn(t, newURL))
	})
}

func TestMFARepositories(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunMFARepositories(t, storesOn(t, newURL))
	})
}

func TestPasskeyRepositories(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunPasskeyRepositories(t, storesOn(t, newURL))
	})
}

func TestFederationRepositories(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunFederationRepositories(t, storesOn(t, newURL))
	})
}

// TestSpentTokens runs the SpentTokens contract on two pools of one
// database, as two replicas hold.
func TestSpentTokens(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		newURL = emptiedURL(t, newURL)
		conformance.RunSpentTokens(t, func(t *testing.T) (ports.SpentTokens, ports.SpentTokens) {
			u := newURL(t)
			return gormstore.NewSpentTokens(gormtest.Open(t, u)), gormstore.NewSpentTokens(gormtest.Open(t, u))
		})
	})
}

func TestUnitOfWork(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunUnitOfWork(t, storesOn(t, newURL))
	})
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunOutbox(t, storesOn(t, newURL))
	})
}

func TestHealthChecker(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
		{"bare_name_with_sqlite_extension", "gatehouse.sqlite3", gormstore.DialectSQLite, true},
		{"prefixed_bare_word", "sqlite:gatehouse", gormstore.DialectSQLite, true},
		{"bare_word_refused", "gatehouse", "", false},
		{"words_refused", "not a url at all", "", false},
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

// Ensure a bare word is refused with a message listing the accepted forms.
func TestParseDatabaseURL_bare_word_names_the_forms(t *testing.T) {
	_, _, err := gormstore.ParseDatabaseURL("not a url at all")
	if err == nil {
		t.Fatal("a bare word was accepted")
	}
	for _, want := range []string{"postgres://", "sqlite:PATH", ".db"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "not a url at all") {
		t.Fatalf("error %q repeats the value", err)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"sqlite:data/gatehouse.db", "SQLite data/gatehouse.db"},
		{"./x/y.db?_pragma=busy_timeout(5)", "SQLite ./x/y.db"},
		{"postgres://gatehouse:s3cret@db.internal:6432/auth?sslmode=disable", "PostgreSQL gatehouse@db.internal:6432/auth"},
		{"postgresql://db/auth", "PostgreSQL db:5432/auth"},
		{"postgres:///auth?host=/run/postgresql&user=me", "PostgreSQL me@/run/postgresql:5432/auth"},
	}
	for _, tt := range tests {
		if got := gormstore.Describe(gormstore.DatabaseURL(tt.in)); got != tt.want {
			t.Errorf("Describe(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(gormstore.Describe(gormstore.DatabaseURL(tt.in)), "s3cret") {
			t.Errorf("Describe(%q) shows the password", tt.in)
		}
	}
}

// Ensure Connect creates no directory for a SQLite file: a missing one is
// refused, by name, and stays missing.
func TestConnect_refuses_missing_sqlite_directory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nonexistent", "dir")
	_, err := gormstore.Connect(gormstore.DatabaseURL("sqlite:"+filepath.Join(dir, "x.db")), 0)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Connect = %v, want an error naming %s", err, dir)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the directory was created: %v", err)
	}
	if err := gormstore.CheckSQLiteDir(gormstore.DatabaseURL("sqlite:" + filepath.Join(dir, "x.db"))); err == nil {
		t.Fatal("CheckSQLiteDir accepted a missing directory")
	}
	if err := gormstore.CheckSQLiteDir("postgres://u@h/db"); err != nil {
		t.Fatalf("CheckSQLiteDir on PostgreSQL = %v", err)
	}
}

func TestSigningKeyRepository(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		newURL = emptiedURL(t, newURL)
		conformance.RunSigningKeyRepository(t, func(t *testing.T) ports.SigningKeyRepository {
			return gormstore.NewSigningKeyRepository(gormtest.Open(t, newURL(t)))
		})
	})
}

// TestLeases runs the Leases contract on two pools of one database, as two
// replicas hold.
func TestLeases(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		newURL = emptiedURL(t, newURL)
		conformance.RunLeases(t, func(t *testing.T) (ports.Leases, ports.Leases) {
			u := newURL(t)
			return gormstore.NewLeases(gormtest.Open(t, u)), gormstore.NewLeases(gormtest.Open(t, u))
		})
	})
}

// TestSignInStats runs the SignInStats contract on two pools of one
// database, as two replicas hold.
func TestSignInStats(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		newURL = emptiedURL(t, newURL)
		conformance.RunSignInStats(t, func(t *testing.T) (ports.SignInStats, ports.SignInStats) {
			u := newURL(t)
			return gormstore.NewSignInStats(gormtest.Open(t, u)), gormstore.NewSignInStats(gormtest.Open(t, u))
		})
	})
}

func TestCounts(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		conformance.RunCounts(t, storesOn(t, newURL))
	})
}
