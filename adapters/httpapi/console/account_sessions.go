package console

import (
	"net/http"
	"sort"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/account"
)

// The account's sessions page (/account/sessions): the user's live
// sessions (Queries.ListSessions, what /api/auth/list-sessions answers)
// with their device, address, start and last use, this browser's marked;
// one ended, or every other (RevokeSessions.One and Others, what
// revoke-session and revoke-other-sessions call).

const (
	sessionsPath      = AccountBase + "/sessions"
	revokePath        = sessionsPath + "/revoke"
	revokeOthersPath  = sessionsPath + "/revoke-others"
	maxSessionHandle  = 256
	sessionsPageTitle = "Sessions"
)

// sessionsView is the sessions page.
type sessionsView struct {
	Rows   []accountSession
	Others int
}

// accountSession is one of the user's sessions.
type accountSession struct {
	ID, Device, IP, Agent string
	Created, LastUsed     time.Time
	Expires               time.Time
	Current               bool
	Impersonation         bool
}

// addSessionRoutes registers the sessions page and its forms.
func (s *API) addSessionRoutes(r accountRoutes) {
	r.get(sessionsPath, s.sessionsPage)
	r.post(revokePath, s.revokeOwnSession)
	r.post(revokeOthersPath, s.revokeOtherSessions)
}

var sessionNotices = map[string]string{
	"revoked": "The session has ended: that device is signed out.",
	"others":  "Every other session has ended: only this browser is still signed in.",
}

// sessionsPage lists the user's live sessions, this browser's first, then
// the most recently used.
func (s *API) sessionsPage(c *gin.Context) {
	v, ok := s.enterAccount(c)
	if !ok {
		return
	}
	list, err := s.App.Queries.ListSessions.Handle(c.Request.Context(), v.p.User.ID())
	if err != nil {
		s.refuse(c, err)
		return
	}
	sv := &sessionsView{}
	for _, ss := range list {
		row := accountSession{ID: string(ss.ID()), Device: device(ss.UserAgent()), IP: ss.IPAddress(), Agent: ss.UserAgent(),
			Created: ss.CreatedAt(), LastUsed: ss.UpdatedAt(), Expires: ss.ExpiresAt(),
			Current: ss.ID() == v.p.Session.ID(), Impersonation: ss.ImpersonatedBy() != ""}
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
	p := v.accountPage(sessionsPageTitle, "sessions")
	p.View = sv
	p.Notice = sessionNotices[c.Query("done")]
	s.render(c, http.StatusOK, "account-sessions", p)
}

// revokeOwnSession ends one of the user's sessions. Someone else's, or one
// that ended already, is a 404 page and changes nothing; this browser's
// own signs it out.
func (s *API) revokeOwnSession(c *gin.Context, v *visit) {
	ctx := c.Request.Context()
	handle := c.Request.PostForm.Get("session")
	if handle == "" || len(handle) > maxSessionHandle {
		s.refusal(c, http.StatusBadRequest, "Bad request", "Say which session to end. Nothing was changed.",
			edge.FieldError{Location: "body.session", Message: "is missing or too long"})
		return
	}
	list, err := s.App.Queries.ListSessions.Handle(ctx, v.p.User.ID())
	if err != nil {
		s.refuse(c, err)
		return
	}
	found := false
	for _, ss := range list {
		found = found || string(ss.ID()) == handle
	}
	if !found {
		s.refusal(c, http.StatusNotFound, "No such session", "You have no live session with this id: it may have ended already. Nothing was changed.",
			edge.FieldError{Location: "body.session", Message: "is not one of your live sessions"})
		return
	}
	current, err := s.App.Commands.RevokeSessions.One(ctx, account.RevokeSession{Principal: v.p, Handle: handle})
	if err != nil {
		s.refuse(c, err)
		return
	}
	if current {
		for _, ck := range s.Cookies.Clear() {
			http.SetCookie(c.Writer, &ck)
		}
		edge.Redirect(c, http.StatusSeeOther, "/sign-out?done=1")
		return
	}
	accountDone(c, sessionsPath, "revoked")
}

// revokeOtherSessions ends every session of the user but this browser's.
func (s *API) revokeOtherSessions(c *gin.Context, v *visit) {
	if err := s.App.Commands.RevokeSessions.Others(c.Request.Context(), v.p); err != nil {
		s.refuse(c, err)
		return
	}
	accountDone(c, sessionsPath, "others")
}
