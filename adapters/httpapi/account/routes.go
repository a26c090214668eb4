package account

import (
	"embed"

	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/organization"

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

// Deps are the use cases the account pages call: the framework's own.
type Deps struct {
	Profile           *account.Profile            // the profile, the address change and the account's deletion
	Passwords         *account.Passwords          // the password change
	TwoFactor         *mfa.TwoFactor              // the security page's authenticator app and backup codes
	Passkeys          *mfa.Passkeys               // its passkeys
	Sessions          *account.Sessions           // the sessions page and its sign-outs
	Organizations     *organization.Organizations // the organizations page and invitations
	LinkedAccounts    *federation.Accounts        // the linked accounts
	Federation        *federation.SignIns         // linking one more
	IdentityProviders *federation.Providers       // the providers one may link
}

// API holds the account pages' handlers, on the edge's shared pieces and
// the shell, with the use cases they call.
type API struct {
	*edge.Kit
	shell   *shell.Shell
	views   *shell.Views
	pages   pages // views, each page typed by its view
	passkey *shell.Asset

	profile       *account.Profile
	passwords     *account.Passwords
	twoFactor     *mfa.TwoFactor
	passkeys      *mfa.Passkeys
	sessions      *account.Sessions
	organizations *organization.Organizations
	linked        *federation.Accounts
	signIns       *federation.SignIns
	providers     *federation.Providers
}

// New returns the account pages on k and sh, calling d.
func New(k *edge.Kit, sh *shell.Shell, d Deps) *API {
	// d's use cases are not checked: routes.go builds every surface, on
	// applications (the edge's own tests) that have none of them.
	if k == nil || sh == nil {
		panic("account: nil dependency")
	}
	a := &API{Kit: k, shell: sh, views: sh.NewViews(files, nil),
		passkey: shell.NewAsset(files, "assets/passkey.js", passkeyScriptPath, shell.JavaScript),
		profile: d.Profile, passwords: d.Passwords,
		twoFactor: d.TwoFactor, passkeys: d.Passkeys, sessions: d.Sessions,
		organizations: d.Organizations, linked: d.LinkedAccounts, signIns: d.Federation, providers: d.IdentityProviders}
	a.pages = newPages(a.views)
	return a
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

// accountPage starts an account page of section for v.
func accountPage(v *shell.Visit, title, section string) *shell.Page {
	p := v.Page(title)
	p.Area, p.Section = "account", section
	return p
}
