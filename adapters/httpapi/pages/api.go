// Package pages serves the hosted pages (sign-in, sign-up, password reset,
// consent, sign-out, the account and home pages) and turns their HTML form
// posts to the framework's routes into redirects (FormRedirect). The forms
// are declared on the routes they post to (edge.SignInForm, …); the pages
// show errors by the framework's codes, handed in by routes.go.
package pages

import (
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/oidc"
)

// Deps are the use cases the hosted pages call.
type Deps struct {
	OAuthProvider     *oidc.OAuthProvider   // the authorization request a page serves
	IdentityProviders *federation.Providers // the sign-in page's provider buttons
	Federation        *federation.SignIns   // their authorization endpoints (form-action)
}

// API holds the hosted pages' handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	errorCode     func(error) string
	oauthProvider *oidc.OAuthProvider
	providers     *federation.Providers
	signIns       *federation.SignIns
}

// New returns the hosted pages on k, calling d. errorCode names an error
// in the framework's vocabulary, the codes the pages' messages are keyed by
// (the forms post to the framework's routes). The server builds the pages
// for their form-post middleware before any route, so d's use cases are
// not checked here: a server without the pages' routes (the edge's own
// tests) has none.
func New(k *edge.Kit, errorCode func(error) string, d Deps) *API {
	if k == nil || errorCode == nil {
		panic("pages: nil dependency")
	}
	return &API{Kit: k, errorCode: errorCode, oauthProvider: d.OAuthProvider,
		providers: d.IdentityProviders, signIns: d.Federation}
}
