// Package edge holds what every contract of the HTTP edge shares:
//   - Kit, the handlers' shared pieces (settings, logger, session
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
//   - cookies and their signing, origins and redirect targets, and the
//     request's caller: one middleware (Kit.Callers) gives each request room
//     for it, and the first handler to ask resolves it, once per request
//     (a route that never asks pays no query). Kit.Principal is the one
//     entry for a signed-in caller, checked against the route's policy
//     (impersonation, an administrator's second factor); OrgRequest,
//     AdminRequest and KeyRequest wrap it; ServiceKey is the trusted
//     routes' key; Session is the bare session (get-session). What the edge
//     asks of the application for this is named in Deps, set by NewKit;
//     the Kit holds no contract's use cases (each package names its own);
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
