package gormstore_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/domain"
)

// wrappedConnector hands out pgx's connections inside a type of its own, as
// a driver wrapper (instrumentation, say) would.
type wrappedConnector struct{ driver.Connector }

type wrappedConn struct{ driver.Conn }

func (c wrappedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return wrappedConn{conn}, nil
}

// Ensure the session lookup, which reads through pgx itself when the pool's
// connections are pgx's, still works through database/sql on a pool whose
// driver is wrapped: it finds a session with its user, and reports a
// missing one as not found.
func TestSessionLookup_on_a_wrapped_driver(t *testing.T) {
	t.Parallel()
	u := gormtest.PostgresMigratedURL(t)
	db := gormtest.Open(t, u)
	now := time.Now()
	user, err := domain.NewUser("u1", "Ada", "ada@example.com", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := gormstore.NewUserRepository(db).Create(t.Context(), user); err != nil {
		t.Fatal(err)
	}
	s := domain.NewSession("s1", user.ID(), domain.HashToken("token"), true, "", "", domain.SessionPolicy{Lifetime: time.Hour}, now)
	if err := gormstore.NewSessionRepository(db).Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}

	base, err := stdlib.GetDefaultDriver().(driver.DriverContext).OpenConnector(string(u))
	if err != nil {
		t.Fatal(err)
	}
	pool := sql.OpenDB(wrappedConnector{base})
	t.Cleanup(func() { _ = pool.Close() })
	wrapped, err := gorm.Open(postgres.New(postgres.Config{Conn: pool}), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sessions := gormstore.NewSessionRepository(wrapped)
	got, gotUser, err := sessions.GetByTokenHash(t.Context(), s.TokenHash())
	if err != nil {
		t.Fatalf("lookup on a wrapped driver: %v", err)
	}
	if got.ID() != s.ID() || gotUser.ID() != user.ID() || gotUser.Name() != "Ada" || !got.ExpiresAt().Equal(s.ExpiresAt()) {
		t.Fatalf("lookup on a wrapped driver: session %s of user %s (%s)", got.ID(), gotUser.ID(), gotUser.Name())
	}
	if _, _, err := sessions.GetByTokenHash(t.Context(), domain.HashToken("nothing")); !errors.Is(err, domain.ErrSessionNotFound) {
		t.Fatalf("a missing session on a wrapped driver: %v", err)
	}
}
