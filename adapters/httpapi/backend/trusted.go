package backend

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// The trusted API (backend contract): routes a consumer's own backend calls
// server to server with a service key. Each route names one scope; the key
// is read from Authorization: Bearer or x-api-key, never from the query
// string, and cookies are ignored.

// trustedRequest authenticates the calling service key and checks it holds
// scope: 401 (with WWW-Authenticate: Bearer) for a missing, unknown, revoked
// or expired key, 403 auth.insufficient_scope for a key without the scope.
// The use case checks the scope again (it decides what its caller may do);
// the edge checks it first so that a key without the scope is refused
// before the handler reads the body, and without an audit entry.
func (s *API) trustedRequest(ctx context.Context, scope domain.Scope) (usecase.TrustedRequest, error) {
	k, err := s.ServiceKey(ctx, scope)
	if err != nil {
		return usecase.TrustedRequest{}, err
	}
	return usecase.TrustedRequest{Key: k, RequestID: edge.RequestIDFrom(ctx), IPAddress: edge.RequestInfoFrom(ctx).ClientIP}, nil
}

// trustedOp documents o as a trusted operation needing scope: both key
// schemes, 401, 403 and the key's rate budget (429); it answers in the
// trusted API's vocabulary (backendWords).
func trustedOp(o huma.Operation, scope domain.Scope) huma.Operation {
	o = edge.WithPolicy(o, func(p *edge.Policy) { p.Words = backendWords })
	o.Security = edge.KeySecurity
	o.Description += " Needs a service key with the scope " + string(scope) + " (or *): 401 without a valid key, 403 without the scope, " +
		"429 with Retry-After past the key's rate budget."
	o.Errors = append(o.Errors, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests)
	return o
}

// registerTrusted registers a trusted operation in the backend contract.
func registerTrusted[I, O any](s *API, scope domain.Scope, o huma.Operation, h func(context.Context, *I) (*O, error)) {
	edge.Add(s.routes, edge.ContractBackend, trustedOp(o, scope), h)
}
