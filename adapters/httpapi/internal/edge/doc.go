// Package edge holds what every contract of the HTTP edge shares:
//   - Kit, the handlers' shared pieces (settings, use cases, logger, session
//     cookies, origins) and registration: Register for operations (into
//     their contracts, with the route's policy taken from the operation),
//     Add for a contract package's operations, in its Group's vocabulary,
//     Handle and Page for plain gin routes;
//   - Policy, declared where each route is registered (its error shape and
//     Words, rate rule, CORS, security, form page), the Table the middleware
//     reads it from, and the one path-prefix fallback for requests no route
//     matches (Unmatched);
//   - the middleware (request context, recovery, access log, sizes, input
//     checks, CORS, rate limits, origin/CSRF check, form bodies);
//   - cookies and their signing, origins and redirect targets, the request's
//     principal (session, admin, organization member, service key);
//   - the renderers (Better Auth's {message, code}, RFC 9457 problems,
//     RFC 6749 errors), the one status mapping (StatusFor) and the problem
//     vocabulary the admin and trusted APIs share (ProblemWords);
//   - the wire types two contracts share (organization metadata, roles,
//     domains) and the hosted pages' forms, declared on the framework routes
//     they post to.
//
// Each contract package maps the inner layers' neutral codes to its own
// wire vocabulary in one file (its Words) and attaches it at registration.
package edge
