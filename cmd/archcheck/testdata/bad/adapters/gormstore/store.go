// Package gormstore holds SQL, environment names and one wire code.
package gormstore

import (
	"errors"
	"os"

	_ "example.com/app/application" // want rule 5
)

type row struct {
	Created string `gorm:"default:CURRENT_TIMESTAMP"`
}

// PostgresEnv names a variable.
const PostgresEnv = "GATEHOUSE_TEST_POSTGRES_URL"

var query = "SELECT id FROM users WHERE created_at < CURRENT_TIMESTAMP"

var now = "CURRENT_TIMESTAMP"

var timeout = os.Getenv("PGCONNECT_TIMEOUT")

var errMember = errors.New("MEMBER_NOT_FOUND") // want rule 4

var where = `query.limit` // want rule 4
