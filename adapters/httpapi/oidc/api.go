// Package oidc serves the OpenID provider (Better Auth's oidc-provider
// plugin's wire: authorize, token, userinfo, revocation, introspection,
// end-session, consents) and discovery at the root and under /api/auth,
// with one issuer everywhere (edge.Kit.Issuer). Its endpoints answer in the
// framework's vocabulary, handed in by routes.go; the OAuth endpoints that
// clients call with their own credentials declare edge.OAuthEndpoint, so
// their errors take RFC 6749's shape.
package oidc

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// API holds the OpenID provider's handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	words edge.Words
}

// New returns the OpenID provider's routes on k. They are the framework's
// (Better Auth's oidc-provider plugin), so they answer in the framework's
// vocabulary, words.
func New(k *edge.Kit, words edge.Words) *API {
	if words == nil {
		panic("oidc: nil dependency")
	}
	return &API{Kit: k, words: words}
}

// register routes op in contract c: in the framework's vocabulary when c is
// the framework (the provider's endpoints), in the problem vocabulary
// elsewhere (the trusted API's protected-resource metadata).
func register[I, O any](s *API, c edge.Contract, op huma.Operation, h func(context.Context, *I) (*O, error), alsoIn ...edge.Contract) {
	var words edge.Words = edge.ProblemWords
	if c == edge.ContractFramework {
		words = s.words
	}
	edge.Register(s.Kit, c, edge.WithWords(op, words), h, alsoIn...)
}
