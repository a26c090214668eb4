// Package admin serves the administration API under /api/admin (a platform
// administrator's session): service keys, the audit log, OAuth clients,
// signing keys and the admin-only domain update, plus the calling service
// key's own description. It answers in the problem vocabulary it shares
// with the trusted API (edge.ProblemWords). The audit log publishes each
// entry in the vocabulary of the contract its actor called, composed in
// routes.go (AuditCode).
package admin

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/domain"
)

// API holds the admin routes' handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	routes    edge.Group
	auditCode AuditCode
}

// AuditCode is the code the audit log publishes for an entry recorded with
// code by an actor of type actor. The log stores neutral codes; each entry
// reads in the vocabulary of the contract its actor called (routes.go
// composes it from the trusted API's and the framework's).
type AuditCode func(actor domain.ActorType, code string) string

// New returns the admin routes on k; routes.go registers each group.
func New(k *edge.Kit, auditCode AuditCode) *API {
	if auditCode == nil {
		panic("admin: nil dependency")
	}
	return &API{Kit: k, routes: routes(k), auditCode: auditCode}
}

// routes registers the admin operations in the problem vocabulary the admin
// routes share with the trusted API (edge.ProblemWords). The routes a
// session calls administer the platform (edge.Administration); the calling
// service key's own description does not.
func routes(k *edge.Kit) edge.Group {
	return edge.Group{Kit: k, Words: edge.Speaks(edge.ProblemWords), Declare: func(c edge.Contract, op huma.Operation) huma.Operation {
		if c == edge.ContractAuth {
			op = edge.WithPolicy(op, edge.Administration)
			op.Description += edge.AdministrationNote("admin.mfa_required")
		}
		return op
	}}
}
