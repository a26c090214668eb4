package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
)

// The home page says what is running and where its doors are; the account
// page is where a browser lands after signing in. Both are hosted pages
// (pages.go): no script, nothing from elsewhere.

// page registers a page at path and, for the same path with a trailing
// slash, a permanent redirect to it (the engine does not redirect slashes
// itself, since Better Auth's routes answer 404 there).
func (s *Server) page(path string, p edge.Policy, h gin.HandlerFunc) {
	s.Handle(http.MethodGet, path, p, h)
	s.Handle(http.MethodGet, path+"/", edge.Policy{Rate: edge.RatePublic}, func(c *gin.Context) {
		target := path
		if q := c.Request.URL.RawQuery; q != "" {
			target += "?" + q
		}
		redirect(c, http.StatusMovedPermanently, s.Origins.Absolute(target))
	})
}

// router hands the surface packages (explorer) the Server's registration:
// each plain route with its policy.
type router struct{ s *Server }

func (r router) Handle(method, path string, p edge.Policy, h gin.HandlerFunc) {
	r.s.Handle(method, path, p, h)
}
func (r router) Page(path string, p edge.Policy, h gin.HandlerFunc) { r.s.page(path, p, h) }
func (r router) NotFound(c *gin.Context)                            { r.s.NotFound(c) }

// redirect answers with status and Location, and no body.
func redirect(c *gin.Context, status int, location string) {
	c.Header("Location", location)
	c.Status(status)
	c.Writer.WriteHeaderNow()
}

// toSignIn sends a browser without a session to the sign-in page, which
// brings it back to callback.
func (s *Server) toSignIn(c *gin.Context, callback string) {
	redirect(c, http.StatusFound, s.Origins.Absolute(withCallback("/sign-in", callback)))
}

// signedInUser is the user of the request's session, or nil: without a
// session, and also when it cannot be read, since the pages that ask only
// adapt a link to it.
func (s *Server) signedInUser(c *gin.Context) *domain.User {
	token, _ := s.Cookies.Token(c.Request)
	if token == "" {
		return nil
	}
	auth, err := s.App.Commands.Authenticate.Handle(c.Request.Context(), command.Authenticate{Token: token})
	if err != nil {
		return nil
	}
	return auth.User
}

// homePage answers / (GET and HEAD): a redirect to the configured home URL,
// or a page naming the service, its version (the contracts publish it too)
// and its public doors. It shows nothing of the configuration or the data.
func (s *Server) homePage(c *gin.Context, p *pages) {
	if s.Config.HomeURL != "" {
		redirect(c, http.StatusFound, s.Config.HomeURL)
		return
	}
	s.render(c, p, http.StatusOK, "home", pageData{Title: "Gatehouse", Version: s.Config.Version,
		Issuer: s.Issuer(), SignedIn: s.signedInUser(c) != nil})
}

// accountPage shows who is signed in and lets them sign out through the
// end-session form (the hosted sign-out flow, under the origin check).
// Without a session it sends the browser to sign in and back.
func (s *Server) accountPage(c *gin.Context, p *pages) {
	token, _ := s.Cookies.Token(c.Request)
	auth, err := s.App.Commands.Authenticate.Handle(c.Request.Context(), command.Authenticate{Token: token})
	if err != nil {
		if !edge.IsUnauthenticated(err) {
			s.render(c, p, edge.StatusOfErr(err), "account", pageData{Title: "Your account", Error: errorMessage(ErrorCode(err))})
			return
		}
		s.toSignIn(c, edge.AccountPath)
		return
	}
	u := auth.User
	s.render(c, p, http.StatusOK, "account", pageData{Title: "Your account", ShowForm: true,
		UserName: u.Name(), UserEmail: string(u.Email()), Verified: u.EmailVerified()})
}
