// Package query holds the read-only use cases that stand alone: listing a
// user's sessions, reading the audit log and the readiness check.
//
// Every use case has the handler style: a FooHandler struct holding only the
// ports it reads, a NewFooHandler constructor that panics on a nil
// dependency (a wiring bug), and one method Handle(ctx, ...) that returns
// the result and a domain error. A query never writes through a port, and
// decides its own permission question (the audit log is for platform
// admins). Reads that belong to a context with a service (organizations,
// domains, service keys, ...) are methods of that service, in its package.
//
// Tests are black-box (package query_test), table tests on the memory
// adapters.
package query
