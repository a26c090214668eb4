// Package httpapi is the HTTP edge of Gatehouse: a gin engine carrying three
// Huma APIs, one per published contract (authentication framework, auth and
// admin, trusted backend). Each operation is registered once from typed input
// and output structs, so the contract documents exactly what is routed and
// validated. Handlers are thin: they build a command, call the application,
// and map the result; errors go back as values and one hook renders them.
package httpapi
