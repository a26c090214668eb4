package shell

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/application/admin"
)

// Every form of the surfaces carries a token (field tokenField) on top of
// the origin check the session cookie's routes get: signed with the cookie
// secret, bound to the session and to the form's action, expiring after
// formTokenTTL, and single use: the first post spends it in the store
// (Forms, by hash), so a replay is refused on every replica. A missing,
// forged, expired, reused or misdirected token is a 403 page, and nothing
// changes. The token also carries the page the form was on, so a form the
// step-up rules refuse can bring the browser back there once a second
// factor is proven (Shell.Refuse).

const (
	tokenField   = "_token"
	formTokenTTL = 2 * time.Hour
	tokenVersion = "cf2"
	// maxTokenLen bounds a posted token: its page is at most maxBackLen.
	maxTokenLen = 4096
	maxBackLen  = 1024
	// backKey holds, in the request's context, the page a form was on.
	backKey = "shell.back"
)

// Token mints a form token for action, the path the form posts to.
func (v *Visit) Token(action string) string {
	var nonce [18]byte
	_, _ = rand.Read(nonce[:])
	exp := v.Now.Add(formTokenTTL).Unix()
	payload := strings.Join([]string{tokenVersion, v.tag, action, strconv.FormatInt(exp, 10),
		base64.RawURLEncoding.EncodeToString(nonce[:]), v.back()}, "|")
	return v.s.kit.Cookies.Signer.Sign(base64.RawURLEncoding.EncodeToString([]byte(payload)))
}

// checkToken reports whether the request carries a good token for its own
// path, and spends it.
func (s *Shell) checkToken(c *gin.Context, v *Visit) bool {
	raw := c.Request.PostForm.Get(tokenField)
	if raw == "" || len(raw) > maxTokenLen {
		return false
	}
	encoded, ok := s.kit.Cookies.Signer.Verify(raw)
	if !ok {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil {
		return false
	}
	parts := strings.SplitN(string(b), "|", 6)
	if len(parts) != 6 || parts[0] != tokenVersion {
		return false
	}
	sameSession := subtle.ConstantTimeCompare([]byte(parts[1]), []byte(v.tag)) == 1
	sameAction := subtle.ConstantTimeCompare([]byte(parts[2]), []byte(c.Request.URL.Path)) == 1
	exp, err := strconv.ParseInt(parts[3], 10, 64)
	if !sameSession || !sameAction || err != nil || !v.Now.Before(time.Unix(exp, 0)) {
		return false
	}
	if s.forms.Spend(c.Request.Context(), parts[4], time.Unix(exp, 0)) != nil {
		return false
	}
	c.Set(backKey, parts[5])
	return true
}

// back is the page a form rendered now is on, for its token: the page
// asked for, or for a page rendered in answer to a form (a refused
// input), the page that form was on; the area's home when it is too long.
func (v *Visit) back() string {
	back := v.c.Request.URL.RequestURI()
	if v.c.Request.Method != http.MethodGet && v.c.Request.Method != http.MethodHead {
		back = v.c.GetString(backKey)
	}
	if back == "" || len(back) > maxBackLen || !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") {
		return areaHome(v.c)
	}
	return back
}

// form runs a form post whose visitor enters through enter: the token must
// hold, and an impersonation may post only where the route's policy says
// so, before h runs. The body was checked by the edge already (size, NUL
// bytes, UTF-8).
func (s *Shell) form(c *gin.Context, enter Gate, h func(c *gin.Context, v *Visit)) {
	if err := c.Request.ParseForm(); err != nil {
		s.Refusal(c, http.StatusBadRequest, "Bad request", "The form could not be read.")
		return
	}
	v, ok := enter(c)
	if !ok {
		return
	}
	if !s.checkToken(c, v) {
		s.Refusal(c, http.StatusForbidden, "Form refused",
			"This form is not valid any more: it was sent already, has expired, or belongs to another session. Go back, reload the page and try again. Nothing was changed.")
		return
	}
	// The one rule of every contract: the route's policy says whether an
	// impersonation session may post (edge.Impersonation); the refusal is
	// audited with the user and the administrator.
	if err := s.kit.CheckImpersonation(c.Request.Context(), v.P); err != nil {
		if !errors.Is(err, admin.ErrImpersonationReadOnly) {
			s.Refuse(c, err)
			return
		}
		s.Refusal(c, http.StatusForbidden, "Impersonating",
			"You are impersonating a user. Stop impersonating to use the console again. Nothing was changed.")
		return
	}
	h(c, v)
}
