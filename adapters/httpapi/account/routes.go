package account

import (
	"embed"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/domain"
)

// AccountBase is the path of the account pages.
const AccountBase = shell.AccountHome

// The account's pages (templates/*.html, each inside the shell's layout)
// and its one script (assets/passkey.js).
//
//go:embed templates/*.html assets/*.js
var files embed.FS

// Deps are the use cases the account pages call, the framework's own, one
// struct per section (beside the section's type): a section holds only
// what its struct names (New sets them), so it cannot reach another
// section's use cases, and routes.go (adapters/httpapi), which fills them
// in, reads as the map of what each section calls.
type Deps struct {
	Profile       ProfileDeps
	Sessions      SessionsDeps
	Organizations OrganizationsDeps
	Security      SecurityDeps
	Linked        LinkedDeps
}

// base is what every account section shares: the edge's pieces, the
// shell, and the account's pages, each typed by its view.
type base struct {
	*edge.Kit
	shell *shell.Shell
	views *shell.Views
	pages pages
}

// enter runs the account pages' gate (Shell.SignedIn).
func (b *base) enter(c *gin.Context) (*shell.Visit, bool) { return b.shell.SignedIn(c) }

// issueSession gives this browser the cookies of its new session (token,
// sess): one that replaced the signed-in one.
func (b *base) issueSession(c *gin.Context, token string, sess *domain.Session) {
	for _, ck := range b.Cookies.Issue(token, sess) {
		http.SetCookie(c.Writer, &ck)
	}
}

// signedOut clears this browser's session cookies, its session having
// ended, and sends it to the signed-out page.
func (b *base) signedOut(c *gin.Context) {
	for _, ck := range b.Cookies.Clear() {
		http.SetCookie(c.Writer, &ck)
	}
	shell.Redirect(c, "/sign-out?done=1")
}

// API is the account pages: one section per page, each a type of its own
// holding the use cases its handlers call, on the base they share.
type API struct {
	*base
	profile       *profileSection
	sessions      *sessionsSection
	organizations *orgsSection
	security      *securitySection
	linked        *linkedSection
}

// New returns the account pages on k and sh, each section calling its
// own of d.
func New(k *edge.Kit, sh *shell.Shell, d Deps) *API {
	// d's use cases are not checked: routes.go builds every surface, on
	// applications (the edge's own tests) that have none of them.
	if k == nil || sh == nil {
		panic("account: nil dependency")
	}
	b := &base{Kit: k, shell: sh, views: sh.NewViews(files, nil)}
	b.pages = newPages(b.views)
	return &API{base: b,
		profile:       &profileSection{base: b, profile: d.Profile.Profile, passwords: d.Profile.Passwords},
		sessions:      &sessionsSection{base: b, sessions: d.Sessions.Sessions},
		organizations: &orgsSection{base: b, organizations: d.Organizations.Organizations},
		security: &securitySection{base: b, twoFactor: d.Security.TwoFactor, passkeys: d.Security.Passkeys,
			passkey: shell.NewAsset(files, "assets/passkey.js", passkeyScriptPath, shell.JavaScript)},
		linked: &linkedSection{base: b, linked: d.Linked.LinkedAccounts, signIns: d.Linked.Federation,
			providers: d.Linked.IdentityProviders},
	}
}

// AddAccountRoutes registers the account pages: any signed-in user enters
// (Shell.SignedIn).
func (s *API) AddAccountRoutes() {
	r := s.shell.Section(AccountBase, s.shell.SignedIn)
	s.profile.addProfileRoutes(r)
	s.sessions.addSessionRoutes(r)
	s.organizations.addAccountOrganizationRoutes(r)
	s.security.addSecurityRoutes(r)
	s.linked.addLinkedRoutes(r)
}

// accountPage starts an account page of section for v.
func accountPage(v *shell.Visit, title, section string) *shell.Page {
	p := v.Page(title)
	p.Area, p.Section = "account", section
	return p
}
