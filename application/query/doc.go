// Package query holds the read-only use cases that stand alone: listing a
// user's sessions, reading the audit log, the administrators' overview and
// the readiness check.
//
// Style: a handler per use case, the older of the two styles application's
// doc.go names; its reads join services in a change of their own that moves
// every call site at once. Every use case is a FooHandler struct holding
// only the ports it reads, a NewFooHandler constructor that panics on a nil
// dependency (a wiring bug), and one method Handle(ctx, ...) that returns
// the result and a domain error. A query never writes through a port, and
// decides its own permission question (the audit log is for platform
// admins). Reads that belong to a context with a service (organizations,
// domains, service keys, ...) are methods of that service, in its package.
//
// Tests are black-box (package query_test), table tests on the memory
// adapters.
package query
