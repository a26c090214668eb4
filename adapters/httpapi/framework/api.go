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
//
// The handlers call the use cases named in Deps (embedded in API), which
// routes.go fills once with New(kit, Deps{…}), and find their caller with
// the Kit (Principal, OrgRequest, AdminRequest; get-session reads Session);
// a test builds the API with the use cases of the routes it serves
// (framework_test.go).
package framework

import (
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/usecase"
)

// API holds the framework routes' handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	Deps
	routes edge.Group // in this package's vocabulary
}

// Deps are the use cases the framework's handlers call, named by
// routes.go. A group's handlers call only some of them: a test builds the
// API with those its routes need (the rest may be nil).
type Deps struct {
	Registration   *account.Registration
	SignIns        *account.SignIns
	Sessions       *account.Sessions
	Profile        *account.Profile
	Passwords      *account.Passwords
	TwoFactor      *mfa.TwoFactor
	Passkeys       *mfa.Passkeys
	Organizations  *organization.Organizations
	Administration *admin.Administration
	SigningKeys    *oidc.SigningKeys
	Federation     *federation.SignIns
	LinkedAccounts *federation.Accounts
	// Settings are the framework's rules (its URLs).
	Settings usecase.AuthSettings
}

// New returns the framework routes on k, calling the use cases d names;
// routes.go registers each group.
func New(k *edge.Kit, d Deps) *API {
	return &API{Kit: k, Deps: d, routes: edge.Group{Kit: k, Words: edge.Speaks(Words)}}
}
