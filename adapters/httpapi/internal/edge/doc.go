// Package edge holds what every contract of the HTTP edge shares: the policy
// each route declares where it is registered (its error vocabulary, rate
// rule, CORS, security and form page), the table the middleware reads it
// from, and the one path-prefix fallback for requests no route matches.
package edge
