// Package httpapi is the HTTP edge of Gatehouse: a gin engine carrying three
// Huma APIs, one per published contract (authentication framework, auth and
// admin, trusted backend). Each operation is registered once from typed input
// and output structs, so the contract documents exactly what is routed and
// validated. Handlers are thin: they build a command, call the application,
// and map the result; errors go back as values and one hook renders them.
//
// routes.go is the index: every group of routes is called from addRoutes and
// from nowhere else. Each route declares its policy where it is registered
// (internal/edge.Policy: error shape, rate rule, CORS, security, form page),
// through register and withPolicy for operations and handle for plain gin
// routes; NewServer panics when a route has none. The middleware reads the
// matched route's policy, never its path; only requests that match no route
// fall back on the path prefix (edge.Unmatched).
package httpapi
