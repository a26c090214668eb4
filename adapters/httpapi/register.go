package httpapi

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// register routes op in contract c with the Words of the contract it speaks:
// Better Auth's codes in the framework, problem codes elsewhere.
func register[I, O any](s *Server, c edge.Contract, op huma.Operation, h func(context.Context, *I) (*O, error), alsoIn ...edge.Contract) {
	words := edge.ProblemWords
	if c == edge.ContractFramework {
		words = frameworkWords
	}
	op = edge.WithPolicy(op, func(p *edge.Policy) {
		if p.Words == nil {
			p.Words = words
		}
	})
	edge.Register(s.Kit, c, op, h, alsoIn...)
}
