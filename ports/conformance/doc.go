// Package conformance holds one test suite per storage port. Every adapter
// (memory, SQLite, PostgreSQL) runs the same suite, so they cannot drift apart
// in behaviour: error kinds, atomicity, copies and time precision.
package conformance
