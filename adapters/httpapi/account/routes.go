// Package account serves the self-service account pages under /account:
// every signed-in user's own profile, security (two-factor and passkeys),
// sessions, linked accounts and organizations, on the shell the console
// uses (internal/shell: strict headers, single-use form tokens, the origin
// check, the session gate), through the framework's own use cases (what
// /api/auth/* calls). An impersonation session sees the pages under the
// banner; its forms are refused, so an administrator looks but changes
// nothing in someone else's name.
package account

import (
	"embed"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
)

// AccountBase is the path of the account pages.
const AccountBase = shell.AccountHome

// The account's pages (templates/*.html, each inside the shell's layout)
// and its one script (assets/passkey.js).
//
//go:embed templates/*.html assets/*.js
var files embed.FS

// maxID bounds an id a form names: the admin API's own bound.
const maxID = 128

// API holds the account pages' handlers, on the edge's shared pieces and
// the shell.
type API struct {
	*edge.Kit
	shell   *shell.Shell
	views   *shell.Views
	passkey *shell.Asset
}

// New returns the account pages on k and sh.
func New(k *edge.Kit, sh *shell.Shell) *API {
	if k == nil || sh == nil {
		panic("account: nil dependency")
	}
	return &API{Kit: k, shell: sh, views: sh.NewViews(files, nil),
		passkey: shell.NewAsset(files, "assets/passkey.js", passkeyScriptPath, shell.JavaScript)}
}

// AddAccountRoutes registers the account pages: any signed-in user enters
// (Shell.SignedIn).
func (s *API) AddAccountRoutes() {
	r := s.shell.Section(AccountBase, s.shell.SignedIn)
	s.addProfileRoutes(r)
	s.addSessionRoutes(r)
	s.addAccountOrganizationRoutes(r)
	s.addSecurityRoutes(r)
	s.addLinkedRoutes(r)
}

// enter runs the account pages' gate (Shell.SignedIn).
func (s *API) enter(c *gin.Context) (*shell.Visit, bool) { return s.shell.SignedIn(c) }

// render writes the account page name: the layout's account area, in
// section (the navigation's current item).
func (s *API) render(c *gin.Context, status int, name string, p *shell.Page) {
	s.shell.Render(c, status, s.views, name, p)
}

// accountPage starts an account page of section for v.
func accountPage(v *shell.Visit, title, section string) *shell.Page {
	p := v.Page(title)
	p.Area, p.Section = "account", section
	return p
}
