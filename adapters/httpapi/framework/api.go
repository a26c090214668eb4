// Package framework serves the authentication framework under /api/auth on
// Better Auth's wire (reference/better-auth-wire.md), so the better-auth
// client works unmodified: sign-up, sign-in and sessions, the account,
// verification and reset (auth.go, account.go), the organization plugin
// (organization.go), the admin plugin (admin.go), the two-factor plugin
// (two_factor.go), and the JWT plugin's token and the key set (tokens.go). codes.go is its one vocabulary map:
// neutral codes to Better Auth's UPPER_SNAKE codes and statuses.
//
// A route is added in the group's Add…Routes method with edge.Add on the
// package's edge.Group, which puts it in the framework contract (and the
// auth contract when asked) with this package's Words; its policy (rate rule, form page, login CSRF)
// is declared on the operation with edge.WithPolicy / edge.WithRate.
package framework

import (
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// API holds the framework routes' handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	routes edge.Group // in this package's vocabulary
}

// New returns the framework routes on k; routes.go registers each group.
func New(k *edge.Kit) *API {
	return &API{Kit: k, routes: edge.Group{Kit: k, Words: edge.Speaks(Words)}}
}
