// Package bootstrap reads the configuration and wires Gatehouse together with
// google/wire: one injector for SQL storage (SQLite or PostgreSQL, chosen from
// the database URL) and one with in-memory adapters for tests.
package bootstrap
