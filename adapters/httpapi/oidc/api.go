// Package oidc serves the OpenID provider (Better Auth's oidc-provider
// plugin's wire: authorize, token, userinfo, revocation, introspection,
// end-session, consents) and discovery at the root and under /api/auth,
// with one issuer everywhere (edge.Kit.Issuer). Its endpoints answer in the
// framework's vocabulary, handed in by routes.go; the OAuth endpoints that
// clients call with their own credentials declare edge.OAuthEndpoint, so
// their errors take RFC 6749's shape.
//
// The handlers call one use case, the OAuthProvider routes.go hands to New.
package oidc

import (
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/oidc"
)

// API holds the OpenID provider's handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	// OAuthProvider is the OpenID provider's use cases.
	OAuthProvider *oidc.OAuthProvider
	routes        edge.Group
}

// New returns the OpenID provider's routes on k. They are the framework's
// (Better Auth's oidc-provider plugin), so they answer in the framework's
// vocabulary, words. Its handlers call provider's use cases.
func New(k *edge.Kit, provider *oidc.OAuthProvider, words edge.Words) *API {
	if words == nil {
		panic("oidc: nil dependency")
	}
	// Its operations answer in the framework's vocabulary when routed in
	// the framework (the provider's endpoints), in the problem vocabulary
	// elsewhere (the trusted API's protected-resource metadata).
	return &API{Kit: k, OAuthProvider: provider, routes: edge.Group{Kit: k, Words: func(c edge.Contract) edge.Words {
		if c == edge.ContractFramework {
			return words
		}
		return edge.ProblemWords
	}}}
}
