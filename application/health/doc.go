// Package health holds the readiness check, the one use case of its
// context: whether the service can serve requests that need its
// dependencies (the database), and why not.
//
// A context with one use case: a ReadinessHandler with one Handle method,
// as application's doc.go allows. It never writes through a port.
//
// Tests are black-box (package health_test).
package health
