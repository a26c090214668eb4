package process

import (
	"testing"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
)

// postgresEmptyURL returns the URL of an empty PostgreSQL database of the
// test's own, for the tests of migrating one.
func postgresEmptyURL(t testing.TB) gormstore.DatabaseURL { return gormtest.PostgresURL(t) }
