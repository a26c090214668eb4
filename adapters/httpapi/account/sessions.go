package account

import (
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/domain"
)

// The account's sessions page (/account/sessions): the user's live
// sessions (account.Sessions.ListSessions, what /api/auth/list-sessions answers)
// with their device, address, start and last use, this browser's marked;
// one ended (Sessions.RevokeOwnSession: what revoke-session calls, on one
// of those sessions only), or every other (RevokeOtherSessions, what
// revoke-other-sessions calls).

const (
	sessionsPath      = AccountBase + "/sessions"
	revokePath        = sessionsPath + "/revoke"
	revokeOthersPath  = sessionsPath + "/revoke-others"
	sessionsPageTitle = "Sessions"
)

// sessionsView is the sessions page.
type sessionsView struct {
	Rows   []accountSession
	Others int
}

// sessionsViewOf is the sessions page of list, the user's live sessions,
// current being this browser's: it comes first, then the most recently
// used.
func sessionsViewOf(list []*domain.Session, current domain.SessionID) *sessionsView {
	sv := &sessionsView{}
	for _, ss := range list {
		row := accountSession{ID: string(ss.ID()), Device: device(ss.UserAgent()), IP: ss.IPAddress(), Agent: ss.UserAgent(),
			Created: ss.CreatedAt(), LastUsed: ss.UpdatedAt(), Expires: ss.ExpiresAt(),
			Current: ss.ID() == current, Impersonation: ss.ImpersonatedBy() != ""}
		if !row.Current {
			sv.Others++
		}
		sv.Rows = append(sv.Rows, row)
	}
	sort.SliceStable(sv.Rows, func(i, j int) bool {
		a, b := sv.Rows[i], sv.Rows[j]
		if a.Current != b.Current {
			return a.Current
		}
		return a.LastUsed.After(b.LastUsed)
	})
	return sv
}

// accountSession is one of the user's sessions.
type accountSession struct {
	ID, Device, IP, Agent string
	Created, LastUsed     time.Time
	Expires               time.Time
	Current               bool
	Impersonation         bool
}

// SessionsDeps are the sessions page's use cases (sessions.go).
type SessionsDeps struct {
	Sessions *account.Sessions // the sessions and their sign-outs
}

// sessionsSection is the sessions page and its forms.
type sessionsSection struct {
	*base
	sessions *account.Sessions
}

// addSessionRoutes registers the sessions page and its forms.
func (s *sessionsSection) addSessionRoutes(r shell.Section) {
	r.Get(sessionsPath, s.sessionsPage)
	r.Post(revokePath, s.revokeOwnSession)
	r.Post(revokeOthersPath, s.revokeOtherSessions)
}

var sessionNotices = shell.Notices{
	"revoked": "The session has ended: that device is signed out.",
	"others":  "Every other session has ended: only this browser is still signed in.",
}

// sessionsPage lists the user's live sessions, this browser's first, then
// the most recently used.
func (s *sessionsSection) sessionsPage(c *gin.Context) {
	v, ok := s.enter(c)
	if !ok {
		return
	}
	list, err := s.sessions.ListSessions(c.Request.Context(), v.P.User.ID())
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	p := accountPage(v, sessionsPageTitle, "sessions")
	p.Notice = sessionNotices.Of(c)
	s.pages.sessions.Render(c, http.StatusOK, p, sessionsViewOf(list, v.P.Session.ID()))
}

// sessionForm names the session to end (a session handle).
type sessionForm struct {
	Session string `form:"session" validate:"required,maxbytes=256"`
}

// revokeOwnSession ends one of the user's sessions through
// Sessions.RevokeOwnSession. Someone else's, or one that ended already, is
// a 404 page and changes nothing; this browser's own signs it out.
func (s *sessionsSection) revokeOwnSession(c *gin.Context, v *shell.Visit) {
	var sf sessionForm
	if _, invalid := shell.BindForm(c, &sf).First(); invalid {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "Say which session to end. Nothing was changed.",
			edge.FieldError{Location: "body.session", Message: "is missing or too long"})
		return
	}
	current, err := s.sessions.RevokeOwnSession(c.Request.Context(), account.RevokeOwnSession{Principal: v.P, ID: domain.SessionID(sf.Session)})
	if errors.Is(err, account.ErrNotOwnSession) {
		s.shell.Refusal(c, http.StatusNotFound, "No such session", "You have no live session with this id: it may have ended already. Nothing was changed.",
			edge.FieldError{Location: "body.session", Message: "is not one of your live sessions"})
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	if current {
		s.signedOut(c)
		return
	}
	shell.Done(c, sessionsPath, "revoked")
}

// revokeOtherSessions ends every session of the user but this browser's.
func (s *sessionsSection) revokeOtherSessions(c *gin.Context, v *shell.Visit) {
	if err := s.sessions.RevokeOtherSessions(c.Request.Context(), v.P); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, sessionsPath, "others")
}
