// Package backend serves the trusted API (/api/users, /api/organizations,
// /api/domains): a consumer's backend calls it server to server with a
// service key. Each operation is registered with registerTrusted, which
// names its scope, documents the key schemes and answers in codes.go's
// vocabulary (the trusted API's area.reason codes, over edge.ProblemWords).
// The shared use cases decide what a service key may do; trustedRequest
// refuses a key without the route's scope first, before the body is read.
package backend

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// API holds the backend routes' handlers, on the edge's shared pieces.
type API struct{ *edge.Kit }

// New returns the backend routes on k; routes.go registers each group.
func New(k *edge.Kit) *API { return &API{k} }

// register routes op in contract c, answering in this package's vocabulary.
func register[I, O any](s *API, c edge.Contract, op huma.Operation, h func(context.Context, *I) (*O, error), alsoIn ...edge.Contract) {
	edge.Register(s.Kit, c, edge.WithWords(op, backendWords), h, alsoIn...)
}
