package shell

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// Section registers a group of pages and forms of one area (the console's
// or the account pages'), all behind one gate and one policy: every page
// and form reads the session cookie (edge.SecuritySession: the origin
// check guards each form post), and the edge's refusals render as pages.
type Section struct {
	s      *Shell
	home   string
	enter  Gate
	policy edge.Policy
}

// Section returns the routes of an area whose home is home, behind enter.
func (s *Shell) Section(home string, enter Gate) Section {
	return Section{s: s, home: home, enter: enter,
		policy: edge.Policy{Rate: edge.RateGeneral, Security: edge.SecuritySession, ErrorPage: s.ProblemPage}}
}

// Enter runs the section's gate: the first line of each of its pages.
func (r Section) Enter(c *gin.Context) (*Visit, bool) { return r.enter(c) }

// AllowedWhileImpersonating is r whose forms an impersonation session may
// post (edge.ImpersonationAllowed): stopping the impersonation.
func (r Section) AllowedWhileImpersonating() Section {
	r.policy.WhileImpersonating = edge.ImpersonationAllowed
	return r
}

// Get registers a page.
func (r Section) Get(path string, h gin.HandlerFunc) {
	r.s.kit.Page(path, r.policy, func(c *gin.Context) { c.Set(homeKey, r.home); h(c) })
}

// Post registers a form post: h runs once the visitor entered, the form's
// token held and the impersonation rule let it through.
func (r Section) Post(path string, h func(c *gin.Context, v *Visit)) {
	r.s.kit.Handle(http.MethodPost, path, r.policy, func(c *gin.Context) { c.Set(homeKey, r.home); r.s.form(c, r.enter, h) })
}

// Notices are what a section's forms did, by the word their redirect
// carries (?done=), declared beside the section's routes: the one way a
// form finishes is Done, and the page it lands on shows Notices.Of.
type Notices map[string]string

// doneParam carries what a form did, on the page its redirect lands on.
const doneParam = "done"

// Of is the notice the request's page shows: what the form it came from
// did, or "".
func (n Notices) Of(c *gin.Context) string { return n[c.Query(doneParam)] }

// Done finishes a form (Post/Redirect/Get): it sends the browser to path,
// saying what was done (a word of the landing section's Notices).
func Done(c *gin.Context, path, what string) {
	edge.Redirect(c, http.StatusSeeOther, DoneURL(path, what))
}

// Redirect finishes a form that has nothing to say: 303 to path.
func Redirect(c *gin.Context, path string) { edge.Redirect(c, http.StatusSeeOther, path) }

// DoneURL is the page path saying what was done: the callback of a form
// that finishes elsewhere first (an identity provider, a mailed link, the
// step-up page).
func DoneURL(path, what string) string { return edge.PageURL(path, url.Values{doneParam: {what}}) }
