package account

import "github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"

// pages are the account pages, each typed by its view: a page renders with
// its own view and no other (shell.Template), in the layout's account area
// (accountPage).
type pages struct {
	profile       *shell.Template[*profileView]
	sessions      *shell.Template[*sessionsView]
	organizations *shell.Template[*orgsView]
	security      *shell.Template[*securityView]
	linked        *shell.Template[*linkedView]
}

// newPages types each of views' pages; a page left untyped panics.
func newPages(views *shell.Views) pages {
	p := pages{
		profile:       shell.NewTemplate[*profileView](views, "profile"),
		sessions:      shell.NewTemplate[*sessionsView](views, "sessions"),
		organizations: shell.NewTemplate[*orgsView](views, "organizations"),
		security:      shell.NewTemplate[*securityView](views, "security"),
		linked:        shell.NewTemplate[*linkedView](views, "linked"),
	}
	views.MustBeTyped()
	return p
}
