// Package domain holds Gatehouse's entities, value objects, typed identifiers
// and the one error type every layer returns. It imports the standard library
// only: no HTTP, ORM or wiring code may reach it.
package domain
