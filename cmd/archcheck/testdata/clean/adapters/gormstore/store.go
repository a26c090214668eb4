// Package gormstore holds SQL and environment names, and no wire code.
package gormstore

import "os"

type row struct {
	Created string `gorm:"default:CURRENT_TIMESTAMP"`
}

// PostgresEnv names a variable.
const PostgresEnv = "GATEHOUSE_TEST_POSTGRES_URL"

var (
	query   = "SELECT id FROM users WHERE created_at < CURRENT_TIMESTAMP"
	now     = "CURRENT_TIMESTAMP"
	timeout = os.Getenv("PGCONNECT_TIMEOUT")
	_       = []any{row{}, query, now, timeout}
)
