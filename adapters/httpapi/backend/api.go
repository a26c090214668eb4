// Package backend serves the trusted API (/api/users, /api/organizations,
// /api/domains): a consumer's backend calls it server to server with a
// service key. Each operation is registered with registerTrusted, which
// names its scope, documents the key schemes and answers in codes.go's
// vocabulary (the trusted API's area.reason codes, over edge.ProblemWords).
// The shared use cases decide what a service key may do; trustedRequest
// refuses a key without the route's scope first, before the body is read.
package backend

import (
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// API holds the backend routes' handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	routes edge.Group // in this package's vocabulary
}

// New returns the backend routes on k; routes.go registers each group.
func New(k *edge.Kit) *API {
	return &API{Kit: k, routes: edge.Group{Kit: k, Words: edge.Speaks(backendWords)}}
}
