// Package test holds Gatehouse's black-box tests: they build the real
// application through bootstrap's injectors (on memory, SQLite and
// PostgreSQL), or run the real binary, and speak to it only over HTTP.
package test
