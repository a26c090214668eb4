// Package admin serves the administration API under /api/admin (a platform
// administrator's session): service keys, the audit log, OAuth clients,
// signing keys and the admin-only domain update, plus the calling service
// key's own description. It answers in the problem vocabulary it shares
// with the trusted API (edge.ProblemWords). The audit log publishes each
// entry in the vocabulary of the contract its actor called, composed in
// routes.go (AuditCode).
//
// The handlers call the use cases named in Deps (embedded in API), which
// routes.go fills once with New(kit, Deps{…}, auditCode); a test builds the
// API with the use cases of the routes it serves (admin_test.go).
package admin

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	appadmin "github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/application/webhook"
	"github.com/gatehouse/gatehouse/domain"
)

// API holds the admin routes' handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	Deps
	routes    edge.Group
	auditCode AuditCode
}

// Deps are the use cases the admin handlers call, named by routes.go. A
// group's handlers call only some of them: a test builds the API with those
// its routes need (the rest may be nil).
type Deps struct {
	ServiceKeys       *servicekey.ServiceKeys
	AuditLog          *appadmin.AuditLog
	Overview          *appadmin.Dashboard
	OAuthClients      *oidc.OAuthClients
	SigningKeys       *oidc.SigningKeys
	Domains           *hostdomain.Domains
	Factors           *mfa.Factors
	IdentityProviders *federation.Providers
	Federation        *federation.SignIns
	LinkedAccounts    *federation.Accounts
	Webhooks          *webhook.Webhooks
}

// AuditCode is the code the audit log publishes for an entry recorded with
// code by an actor of type actor. The log stores neutral codes; each entry
// reads in the vocabulary of the contract its actor called (routes.go
// composes it from the trusted API's and the framework's).
type AuditCode func(actor domain.ActorType, code string) string

// New returns the admin routes on k, calling the use cases d names;
// routes.go registers each group.
func New(k *edge.Kit, d Deps, auditCode AuditCode) *API {
	if auditCode == nil {
		panic("admin: nil dependency")
	}
	return &API{Kit: k, Deps: d, routes: routes(k), auditCode: auditCode}
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
