// Package httpapi is the HTTP edge of Gatehouse: a gin engine carrying three
// Huma APIs, one per published contract (authentication framework, auth and
// admin, trusted backend), and the HTML surfaces beside them (the console and
// account pages, the hosted sign-in pages). Each operation is registered once from typed input
// and output structs, so the contract documents exactly what is routed and
// validated. Handlers are thin: they build a command, call a use case, and
// map the result; errors go back as values and one hook renders them. Each
// package holds the use cases it calls as fields, which routes.go fills from
// the application; this package alone imports the application root (make
// archcheck, rule 8).
//
// The edge is split by contract. server.go builds the engine and its
// middleware from internal/edge (the pieces every contract shares:
// registration, each route's policy, cookies, origins, the request's
// caller, resolved once when a handler first asks, the renderers and the
// one status mapping); routes.go is the index, calling
// every group of every contract package (framework/, oidc/, admin/,
// backend/, explorer/) and of the HTML surfaces (console/, account/,
// pages/, on internal/shell), and
// nothing else registers a route. Each
// route declares its policy where it is registered (internal/edge.Policy:
// error shape and vocabulary, rate rule, CORS, security, form page);
// NewServer panics when a route has none. The middleware reads the matched
// route's policy, never its path; only requests that match no route fall
// back on the path prefix (edge.Unmatched). Contract packages never import
// each other, and the HTML surfaces and the contracts never import each
// other either (make archcheck, rules 2 and 6).
package httpapi
