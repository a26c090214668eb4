// Package pages serves the hosted pages (sign-in, sign-up, password reset,
// consent, sign-out, the account and home pages) and turns their HTML form
// posts to the framework's routes into redirects (FormRedirect). The forms
// are declared on the routes they post to (edge.SignInForm, …); the pages
// show errors by the framework's codes, handed in by routes.go.
package pages

import (
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application"
)

// API holds the hosted pages' handlers, on the edge's shared pieces.
type API struct {
	*edge.Kit
	App       *application.Application
	errorCode func(error) string
}

// New returns the hosted pages on k, calling app's use cases. errorCode
// names an error in the framework's vocabulary, the codes the pages'
// messages are keyed by (the forms post to the framework's routes).
func New(k *edge.Kit, app *application.Application, errorCode func(error) string) *API {
	if app == nil || errorCode == nil {
		panic("pages: nil dependency")
	}
	return &API{Kit: k, App: app, errorCode: errorCode}
}
