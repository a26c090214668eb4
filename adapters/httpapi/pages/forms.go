package pages

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// The hosted pages work without JavaScript: their forms post
// (application/x-www-form-urlencoded) to the framework routes, and the
// browser must land on a page afterwards, not on JSON. formRedirect turns
// the answer to such a post into a 303 See Other: a success to its Location
// or to the page that follows, an error back to the form's page with
// ?error=CODE and the form's non-secret fields. JSON callers are untouched.

// maxBufferedAnswer bounds what formRedirect holds of an answer; the
// framework's answers to form routes are far smaller. A larger one is sent
// as it is.
const maxBufferedAnswer = 64 << 10

// FormRedirect answers HTML form posts to the framework with 303 See Other.
// It runs before the rate limit, so a throttled sign-in returns to its page
// too; a post the origin check refuses is answered as usual (403 JSON),
// never redirected.
func (s *API) FormRedirect() gin.HandlerFunc {
	return func(c *gin.Context) {
		fr, ok := edge.FormPost(c.Request)
		if !ok || s.CheckOrigin(c.Request, edge.PolicyFrom(c.Request.Context())) != nil {
			c.Next()
			return
		}
		raw, err := io.ReadAll(c.Request.Body)
		c.Request.Body = io.NopCloser(bytes.NewReader(raw))
		if err != nil {
			c.Next() // the body is over the limit: answered as usual
			return
		}
		form, _ := url.ParseQuery(string(raw))

		real := c.Writer
		buf := &bufferedWriter{ResponseWriter: real, status: http.StatusOK}
		c.Writer = buf
		defer func() { c.Writer = real }() // a panic's 500 reaches the client
		c.Next()
		c.Writer = real
		if buf.passthrough {
			return
		}
		target := s.formTarget(fr, form, buf)
		if target == "" {
			buf.flush()
			return
		}
		h := real.Header()
		for _, k := range []string{"Content-Type", "Content-Length", "set-auth-token"} {
			h.Del(k)
		}
		h.Set("Location", s.Origins.Absolute(target))
		real.WriteHeader(http.StatusSeeOther)
		real.WriteHeaderNow()
	}
}

// formTarget is where the browser goes after a form post answered with
// buf's status and body, or "" to send the answer unchanged.
func (s *API) formTarget(fr *edge.Form, form url.Values, buf *bufferedWriter) string {
	status, loc := buf.status, buf.Header().Get("Location")
	switch {
	case status >= 200 && status < 400 && loc != "":
		return loc
	case status >= 200 && status < 300:
		if fr.Done == nil {
			return ""
		}
		var body struct {
			Token *string `json:"token"`
		}
		_ = json.Unmarshal(buf.buf.Bytes(), &body)
		target := fr.Done(form, body.Token != nil && *body.Token != "")
		if !s.Origins.SafeTarget(target) {
			return ""
		}
		return target
	case status >= 400:
		var body struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(buf.buf.Bytes(), &body)
		code := body.Code
		if !edge.ErrorCodePattern.MatchString(code) {
			code = edge.FrameworkCodeFor(status)
		}
		q := url.Values{}
		if fr.Page == "/consent" {
			// The consent page's own query is the authorization request.
			q, _ = url.ParseQuery(form.Get("oauth_query"))
		}
		for _, k := range fr.Keep {
			q.Set(k, form.Get(k))
		}
		if cb := q.Get("callbackURL"); cb != "" && !s.Origins.SafeTarget(cb) {
			q.Del("callbackURL")
		}
		q.Set("error", code)
		return edge.PageURL(fr.Page, q)
	}
	return ""
}

// bufferedWriter holds an answer (status, body) so that formRedirect can
// replace it; headers go straight to the real writer's map. Past
// maxBufferedAnswer bytes it gives up and writes everything through.
type bufferedWriter struct {
	gin.ResponseWriter
	status      int
	written     bool
	buf         bytes.Buffer
	passthrough bool
}

func (w *bufferedWriter) WriteHeader(code int) {
	if w.passthrough {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if code > 0 && !w.written {
		w.status = code
	}
}

func (w *bufferedWriter) WriteHeaderNow() {
	if w.passthrough {
		w.ResponseWriter.WriteHeaderNow()
		return
	}
	w.written = true
}

func (w *bufferedWriter) Write(b []byte) (int, error) {
	if w.passthrough {
		return w.ResponseWriter.Write(b)
	}
	w.written = true
	w.buf.Write(b)
	if w.buf.Len() > maxBufferedAnswer {
		w.flush()
	}
	return len(b), nil
}

func (w *bufferedWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

func (w *bufferedWriter) Status() int {
	if w.passthrough {
		return w.ResponseWriter.Status()
	}
	return w.status
}

func (w *bufferedWriter) Size() int {
	if w.passthrough {
		return w.ResponseWriter.Size()
	}
	if !w.written {
		return -1
	}
	return w.buf.Len()
}

func (w *bufferedWriter) Written() bool {
	if w.passthrough {
		return w.ResponseWriter.Written()
	}
	return w.written
}

func (w *bufferedWriter) Flush() {
	if w.passthrough {
		w.ResponseWriter.Flush()
	}
}

// flush sends what was held and writes through from now on.
func (w *bufferedWriter) flush() {
	if w.passthrough {
		return
	}
	w.passthrough = true
	w.ResponseWriter.WriteHeader(w.status)
	if w.buf.Len() > 0 {
		_, _ = w.ResponseWriter.Write(w.buf.Bytes())
	} else {
		w.ResponseWriter.WriteHeaderNow()
	}
	w.buf.Reset()
}
