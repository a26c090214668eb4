// Package gormstore implements the storage ports on gorm, for SQLite (pure Go,
// the embedded default) and PostgreSQL (production). One adapter serves both
// dialects; only the dialector and the migration folder differ.
package gormstore
