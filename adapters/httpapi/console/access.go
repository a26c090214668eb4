package console

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// visit is a request that entered the console: the administrator (or,
// while they impersonate someone, the impersonated user) and what the
// page needs to mint its form tokens.
type visit struct {
	s   *API
	c   *gin.Context
	p   usecase.Principal
	req usecase.AdminRequest
	tag string // the session's tag, which the form tokens carry
	now time.Time
}

// impersonating reports whether the session is an impersonation.
func (v *visit) impersonating() bool { return v.p.Session.ImpersonatedBy() != "" }

// enter decides who may see the console, in one place for every page and
// form:
//   - signed out: 302 to the hosted sign-in, which brings the browser back;
//   - an impersonation session: in (every page shows the banner; only
//     stopping is allowed);
//   - not a platform administrator: 403 refusal page;
//   - an administrator the multi-factor rules refuse (the admin API's
//     check, Administration.RequireSecondFactor: they have no second
//     factor): a 403 page that says where to set one up;
//   - idle past the timeout: 302 to sign in again, the session untouched.
//
// It reports false when it answered.
func (s *API) enter(c *gin.Context) (*visit, bool) {
	ctx := c.Request.Context()
	v, ok := s.signedIn(c)
	if !ok {
		return nil, false
	}
	p := v.p
	if v.impersonating() {
		return v, true
	}
	if !s.App.Commands.Administration.IsAdmin(p.User) {
		s.refusal(c, http.StatusForbidden, "Not an administrator",
			"The console is for platform administrators. You are signed in as "+string(p.User.Email())+", who is not one.")
		return nil, false
	}
	if err := s.App.Commands.Administration.RequireSecondFactor(ctx, p); err != nil {
		if errors.Is(err, admin.ErrAdminMFARequired) {
			s.refusal(c, http.StatusForbidden, "Set up a second factor first",
				"Platform administrators must have a second factor (an authenticator app or a passkey) to use the console. Set one up under "+
					AccountBase+"/security, then come back.")
			return nil, false
		}
		s.refuse(c, err)
		return nil, false
	}
	if s.idle(c, v) {
		s.toSignIn(c)
		return nil, false
	}
	return v, true
}

// signedIn checks the session cookie, the first step of both gates:
// signed out, it sends the browser to sign in and come back; a store
// failure is a refusal page. It reports false when it answered.
func (s *API) signedIn(c *gin.Context) (*visit, bool) {
	ctx := c.Request.Context()
	token, _ := s.Cookies.Token(c.Request)
	res, err := s.App.Commands.Authenticate.Handle(ctx, account.Authenticate{Token: token})
	if err != nil {
		if edge.IsUnauthenticated(err) {
			s.toSignIn(c)
			return nil, false
		}
		s.refuse(c, err)
		return nil, false
	}
	p := res.Principal
	return &visit{s: s, c: c, p: p, now: s.App.Commands.ConsoleForms.Now(), tag: sessionTag(p.Session.ID()),
		req: usecase.AdminRequest{Principal: p, RequestID: edge.RequestIDFrom(ctx), IPAddress: edge.RequestInfoFrom(ctx).ClientIP}}, true
}

// comeBack is where the sign-in brings the browser back to: the page asked
// for, or for a form post, the home of its area (the console or the account
// pages).
func (s *API) comeBack(c *gin.Context) string {
	if c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead {
		return areaHome(c)
	}
	return c.Request.URL.RequestURI()
}

// homeKey holds, in the request's context, the home of the area whose gate
// the request entered (the console's, or the account pages'), set by the
// route's registration (routes, accountRoutes).
const homeKey = "console.home"

// areaHome is the home of the request's area: Base unless its route was
// registered as an account page.
func areaHome(c *gin.Context) string {
	if home := c.GetString(homeKey); home != "" {
		return home
	}
	return Base
}

// toSignIn sends the browser to the hosted sign-in, which validates
// callbackURL and comes back to the console.
func (s *API) toSignIn(c *gin.Context) {
	edge.Redirect(c, http.StatusFound, edge.PageURL("/sign-in", url.Values{"callbackURL": {s.comeBack(c)}}))
}

// sessionTag names a session in the console's cookie and form tokens
// without revealing its id.
func sessionTag(id domain.SessionID) string {
	sum := sha256.Sum256([]byte("gatehouse-console:" + string(id)))
	return hex.EncodeToString(sum[:16])
}

// idleTimeout is the configured idle timeout.
func (s *API) idleTimeout() time.Duration {
	if d := s.Config.ConsoleIdleTimeout; d > 0 {
		return d
	}
	return edge.DefaultConsoleIdleTimeout
}

// idle reports whether the visit comes after the idle timeout, and else
// records it. The last visit is a signed cookie bound to the session, so
// every replica reads the same answer and nothing is stored: a session
// without it (another session's, or none) counts from its sign-in. Going
// back to sign in ends nothing: the new sign-in's session starts afresh.
func (s *API) idle(c *gin.Context, v *visit) bool {
	last := v.p.Session.CreatedAt()
	if ck, err := c.Request.Cookie(s.Cookies.ConsoleSeen); err == nil {
		if payload, ok := s.Cookies.Signer.Verify(ck.Value); ok {
			tag, at, _ := strings.Cut(payload, "|")
			if unix, err := strconv.ParseInt(at, 10, 64); err == nil && subtle.ConstantTimeCompare([]byte(tag), []byte(v.tag)) == 1 {
				last = time.UnixMilli(unix)
			}
		}
	}
	if v.now.Sub(last) > s.idleTimeout() {
		return true
	}
	ck := s.Cookies.Cookie(s.Cookies.ConsoleSeen, s.Cookies.Signer.Sign(v.tag+"|"+strconv.FormatInt(v.now.UnixMilli(), 10)), 0)
	http.SetCookie(c.Writer, &ck)
	return false
}
