// Package backend serves the trusted API (/api/users, /api/organizations,
// /api/domains): a consumer's backend calls it server to server with a
// service key. Each operation is registered with registerTrusted, which
// names its scope, documents the key schemes and answers in codes.go's
// vocabulary (the trusted API's area.reason codes, over edge.ProblemWords).
// The shared use cases decide what a service key may do; trustedRequest
// refuses a key without the route's scope first, before the body is read.
//
// The handlers call the use cases named in Deps (embedded in API), which
// routes.go fills once with New(kit, Deps{…}); a test builds the API with
// the use cases of the routes it serves (api_test.go).
package backend

import (
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/webhook"
)

// API holds the backend routes' handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	Deps
	routes edge.Group // in this package's vocabulary
}

// Deps are the use cases the trusted handlers call, named by routes.go. A
// group's handlers call only some of them: a test builds the API with those
// its routes need (the rest may be nil).
type Deps struct {
	Administration    *admin.Administration
	Factors           *mfa.Factors
	Organizations     *organization.Organizations
	Domains           *hostdomain.Domains
	IdentityProviders *federation.Providers
	Federation        *federation.SignIns
	LinkedAccounts    *federation.Accounts
	Webhooks          *webhook.Webhooks
}

// New returns the trusted routes on k, calling the use cases d names;
// routes.go registers each group.
func New(k *edge.Kit, d Deps) *API {
	return &API{Kit: k, Deps: d, routes: edge.Group{Kit: k, Words: edge.Speaks(backendWords)}}
}
