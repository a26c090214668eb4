package pages

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/domain"
)

// The home page says what is running and where its doors are. The account
// page, where a browser lands after signing in (edge.AccountPath), is the
// console's self-service account pages (adapters/httpapi/console).

// toSignIn sends a browser without a session to the sign-in page, which
// brings it back to callback.
func (s *API) toSignIn(c *gin.Context, callback string) {
	edge.Redirect(c, http.StatusFound, s.Origins.Absolute(withCallback("/sign-in", callback)))
}

// signedInUser is the user of the request's session, or nil: without a
// session, and also when it cannot be read, since the pages that ask only
// adapt a link to it.
func (s *API) signedInUser(c *gin.Context) *domain.User {
	sess, err := s.Session(c.Request.Context())
	if err != nil {
		return nil
	}
	return sess.Auth.User
}

// homePage answers / (GET and HEAD): a redirect to the configured home URL,
// or a page naming the service, its version (the contracts publish it too)
// and its public doors. It shows nothing of the configuration or the data.
func (s *API) homePage(c *gin.Context, p *pages) {
	if s.Config.HomeURL != "" {
		edge.Redirect(c, http.StatusFound, s.Config.HomeURL)
		return
	}
	s.render(c, p, http.StatusOK, "home", pageData{Title: "Gatehouse", Version: s.Config.Version,
		Issuer: s.Issuer(), SignedIn: s.signedInUser(c) != nil})
}
