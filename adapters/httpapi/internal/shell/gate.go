package shell

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
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// Visit is a request that went through a gate: the signed-in user (or,
// while an administrator impersonates someone, the impersonated user) and
// what the page needs to mint its form tokens.
type Visit struct {
	// P is who is signed in.
	P usecase.Principal
	// Req is P as an administrator's request (with the request's id and
	// address), for the use cases that audit.
	Req usecase.AdminRequest
	// Now is the time of the visit.
	Now time.Time
	// Administrator reports whether P is a platform administrator (the
	// console's gate asks it; the account pages link to the console).
	Administrator bool

	s   *Shell
	c   *gin.Context
	tag string // the session's tag, which the form tokens carry
}

// Impersonating reports whether the session is an impersonation.
func (v *Visit) Impersonating() bool { return v.P.Session.ImpersonatedBy() != "" }

// OrgRequest is P as an organization member's request.
func (v *Visit) OrgRequest() usecase.OrgRequest {
	return usecase.OrgRequest{Principal: v.P, RequestID: v.Req.RequestID, IPAddress: v.Req.IPAddress}
}

// Gate decides who may enter a section's pages and forms. It reports false
// when it answered (a redirect to sign in, a refusal page).
type Gate func(c *gin.Context) (*Visit, bool)

// SignedIn is the gate of the account pages, and the first step of the
// console's: signed out, it sends the browser to sign in and come back; a
// store failure is a refusal page. An impersonation session enters (every
// page shows the banner); its forms are refused after their token
// (Section.Post), so an administrator looks but changes nothing.
func (s *Shell) SignedIn(c *gin.Context) (*Visit, bool) {
	ctx := c.Request.Context()
	// The gate lets an impersonation in, so it reads the request's session
	// rather than Kit.Principal (whose answer applies the route's policy):
	// whether an impersonation may post is the form's question, asked once
	// its token held (Section.Post, Kit.CheckImpersonation). The pages note
	// it for the audit log and the banner.
	sess, err := s.kit.Session(ctx)
	if err != nil {
		if edge.IsUnauthenticated(err) {
			s.ToSignIn(c)
			return nil, false
		}
		s.Refuse(c, err)
		return nil, false
	}
	p := sess.Auth.Principal
	usecase.NoteImpersonation(ctx, p.Session)
	return &Visit{s: s, c: c, P: p, Now: s.forms.Now(), tag: sessionTag(p.Session.ID()), Administrator: s.admins.IsAdmin(p.User),
		Req: usecase.AdminRequest{Principal: p, RequestID: edge.RequestIDFrom(ctx), IPAddress: edge.RequestInfoFrom(ctx).ClientIP}}, true
}

// Administrator is the console's gate, in one place for every page and
// form:
//   - signed out: 302 to the hosted sign-in, which brings the browser back;
//   - an impersonation session: in (every page shows the banner; only
//     stopping is allowed);
//   - not a platform administrator: 403 refusal page;
//   - an administrator the multi-factor rules refuse (the admin API's
//     check, Administration.RequireSecondFactor: they have no second
//     factor): a 403 page that says where to set one up;
//   - idle past the timeout: 302 to sign in again, the session untouched.
func (s *Shell) Administrator() Gate {
	return func(c *gin.Context) (*Visit, bool) {
		v, ok := s.SignedIn(c)
		if !ok {
			return nil, false
		}
		if v.Impersonating() {
			return v, true
		}
		if !v.Administrator {
			s.Refusal(c, http.StatusForbidden, "Not an administrator",
				"The console is for platform administrators. You are signed in as "+string(v.P.User.Email())+", who is not one.")
			return nil, false
		}
		if err := s.admins.RequireSecondFactor(c.Request.Context(), v.P); err != nil {
			if errors.Is(err, admin.ErrAdminMFARequired) {
				s.Refusal(c, http.StatusForbidden, "Set up a second factor first",
					"Platform administrators must have a second factor (an authenticator app or a passkey) to use the console. Set one up under "+
						AccountHome+"/security, then come back.")
				return nil, false
			}
			s.Refuse(c, err)
			return nil, false
		}
		if s.idle(c, v) {
			s.ToSignIn(c)
			return nil, false
		}
		return v, true
	}
}

// comeBack is where the sign-in brings the browser back to: the page asked
// for, or for a form post, the home of its section's area.
func comeBack(c *gin.Context) string {
	if c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead {
		return areaHome(c)
	}
	return c.Request.URL.RequestURI()
}

// homeKey holds, in the request's context, the home of the area whose
// section registered the route (Section).
const homeKey = "shell.home"

// areaHome is the home of the request's area: the console's unless its
// section said otherwise.
func areaHome(c *gin.Context) string {
	if home := c.GetString(homeKey); home != "" {
		return home
	}
	return ConsoleHome
}

// ToSignIn sends the browser to the hosted sign-in, which validates
// callbackURL and comes back.
func (s *Shell) ToSignIn(c *gin.Context) {
	edge.Redirect(c, http.StatusFound, edge.PageURL("/sign-in", url.Values{"callbackURL": {comeBack(c)}}))
}

// sessionTag names a session in the console's cookie and form tokens
// without revealing its id.
func sessionTag(id domain.SessionID) string {
	sum := sha256.Sum256([]byte("gatehouse-console:" + string(id)))
	return hex.EncodeToString(sum[:16])
}

// idleTimeout is the configured idle timeout.
func (s *Shell) idleTimeout() time.Duration {
	if d := s.kit.Config.ConsoleIdleTimeout; d > 0 {
		return d
	}
	return edge.DefaultConsoleIdleTimeout
}

// idle reports whether the visit comes after the idle timeout, and else
// records it. The last visit is a signed cookie bound to the session, so
// every replica reads the same answer and nothing is stored: a session
// without it (another session's, or none) counts from its sign-in. Going
// back to sign in ends nothing: the new sign-in's session starts afresh.
func (s *Shell) idle(c *gin.Context, v *Visit) bool {
	ck := s.kit.Cookies
	last := v.P.Session.CreatedAt()
	if seen, err := c.Request.Cookie(ck.ConsoleSeen); err == nil {
		if payload, ok := ck.Signer.Verify(seen.Value); ok {
			tag, at, _ := strings.Cut(payload, "|")
			if unix, err := strconv.ParseInt(at, 10, 64); err == nil && subtle.ConstantTimeCompare([]byte(tag), []byte(v.tag)) == 1 {
				last = time.UnixMilli(unix)
			}
		}
	}
	if v.Now.Sub(last) > s.idleTimeout() {
		return true
	}
	seen := ck.Cookie(ck.ConsoleSeen, ck.Signer.Sign(v.tag+"|"+strconv.FormatInt(v.Now.UnixMilli(), 10)), 0)
	http.SetCookie(c.Writer, &seen)
	return false
}

// StepUpURL is the page where a user proves their second factor again,
// coming back to path.
func StepUpURL(path string) string {
	return edge.PageURL(edge.TwoFactorPath, url.Values{"callbackURL": {path}})
}

// IsStepUp reports whether err asks the user to prove their second factor
// again first.
func IsStepUp(err error) bool { return errors.Is(err, usecase.ErrStepUpRequired) }

// KeyRequest is the visit as the request of a key's or a provider's use
// case (the administrator as the actor).
func (v *Visit) KeyRequest() usecase.KeyRequest {
	return usecase.KeyRequest{Principal: &v.Req.Principal, Actor: v.Req.Actor()}
}
