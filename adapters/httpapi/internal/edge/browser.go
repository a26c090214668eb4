package edge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// RequestInfo is what framework handlers need from the raw request: its
// cookies and headers, and the client address resolved through trusted
// proxies. Huma hands handlers only a context, so a middleware puts it there.
type RequestInfo struct {
	Request  *http.Request
	ClientIP string
}

const requestInfoKey ctxKey = 100

func RequestInfoFrom(ctx context.Context) *RequestInfo {
	if ri, ok := ctx.Value(requestInfoKey).(*RequestInfo); ok {
		return ri
	}
	return &RequestInfo{Request: &http.Request{Header: http.Header{}}}
}

func (ri *RequestInfo) Client() usecase.Client {
	return usecase.Client{IPAddress: ri.ClientIP, UserAgent: ri.Request.UserAgent()}
}

// FrameworkContext stores the request info for the handlers.
func FrameworkContext() gin.HandlerFunc {
	return func(c *gin.Context) {
		ri := &RequestInfo{Request: c.Request, ClientIP: c.ClientIP()}
		c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), requestInfoKey, ri))
		c.Next()
	}
}

// AbortWithError renders err for a middleware, with Retry-After headers on
// 429s and 503s.
func (s *Kit) AbortWithError(c *gin.Context, err error) {
	ctx := c.Request.Context()
	SetRetryHeaders(err, c.Header)
	WriteGinError(c, RenderError(ctx, LoggerFrom(ctx), err))
}

// Origin and CSRF errors (better-auth-wire §3).
var (
	errMissingOrigin   = domain.NewError(domain.KindForbidden, "MISSING_OR_NULL_ORIGIN", "Missing or null Origin")
	errInvalidOrigin   = domain.NewError(domain.KindForbidden, "INVALID_ORIGIN", "Invalid origin")
	errCrossSiteLogin  = domain.NewError(domain.KindForbidden, "CROSS_SITE_NAVIGATION_LOGIN_BLOCKED", "Cross-site navigation login blocked")
	ErrInvalidCallback = domain.NewError(domain.KindForbidden, "INVALID_CALLBACK_URL", "Invalid callbackURL")
	ErrInvalidRedirect = domain.NewError(domain.KindForbidden, "INVALID_REDIRECT_URL", "Invalid redirectURL")
)

// OriginCheck applies Better Auth's origin rules to every state-changing
// request to a route whose declared security is the session cookie, wherever
// its path is (Policy.OriginChecked): with a cookie, the Origin (or
// Referer) must be trusted; without one, sign-in and sign-up still refuse
// cross-site form posts and untrusted browser origins (login CSRF). Calls
// with neither cookies nor browser headers (servers, curl) pass: they carry
// no ambient authority.
func (s *Kit) OriginCheck() gin.HandlerFunc {
	return func(c *gin.Context) {
		r := c.Request
		p := PolicyFrom(r.Context())
		if !p.OriginChecked(r.Method) {
			c.Next()
			return
		}
		if err := s.CheckOrigin(r, p); err != nil {
			s.AbortWithError(c, err)
			return
		}
		c.Next()
	}
}

func (s *Kit) CheckOrigin(r *http.Request, p *Policy) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		if ref, err := url.Parse(r.Header.Get("Referer")); err == nil && ref.Scheme != "" && ref.Host != "" {
			origin = ref.Scheme + "://" + ref.Host
		}
	}
	if origin == "null" && r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		origin = s.Config.BaseURL
	}
	if r.Header.Get("Cookie") != "" {
		switch {
		case origin == "" || origin == "null":
			return errMissingOrigin
		case !s.Origins.trusted(origin):
			return errInvalidOrigin
		}
		return nil
	}
	if !p.Login {
		return nil
	}
	site, mode, dest := r.Header.Get("Sec-Fetch-Site"), r.Header.Get("Sec-Fetch-Mode"), r.Header.Get("Sec-Fetch-Dest")
	if site != "" || mode != "" || dest != "" {
		if site == "cross-site" && mode == "navigate" {
			return errCrossSiteLogin
		}
		if origin == "" || origin == "null" {
			return errMissingOrigin
		}
	}
	if origin != "" && !s.Origins.trusted(origin) {
		return errInvalidOrigin
	}
	return nil
}

// FormBodies lets HTML forms post to the routes that declare a form page
// (Policy.Form: sign-in, sign-up, password reset, consent, end-session;
// progressive enhancement, as Better Auth allows): the form is turned into
// the JSON body the operation validates, so both encodings meet the same
// schema. The form's declared checkboxes and buttons become booleans (the
// last value wins, so a hidden "false" before a checkbox is the unchecked
// state); its empty optional fields are left out.
func (s *Kit) FormBodies() gin.HandlerFunc {
	return func(c *gin.Context) {
		ct, _, _ := strings.Cut(c.GetHeader("Content-Type"), ";")
		hasBody := c.Request.ContentLength > 0 || c.Request.ContentLength < 0 && c.Request.Body != nil && c.Request.Body != http.NoBody
		p := PolicyFrom(c.Request.Context())
		if c.Request.Method == http.MethodPost && p.Shape.Framework() && hasBody && strings.TrimSpace(ct) == "" {
			// Like Better Auth: a body must say what it is.
			WriteGinError(c, RenderStatus(c.Request.Context(), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
				"Content-Type is required. Allowed types: application/json", nil))
			return
		}
		form, ok := FormPost(c.Request)
		if !ok {
			c.Next()
			return
		}
		raw, err := io.ReadAll(c.Request.Body)
		if err != nil {
			WriteGinError(c, RenderStatus(c.Request.Context(), http.StatusRequestEntityTooLarge, "", "The request body is too large.", nil))
			return
		}
		values, err := url.ParseQuery(string(raw))
		if err != nil {
			WriteGinError(c, RenderStatus(c.Request.Context(), http.StatusBadRequest, "BAD_REQUEST", "Invalid form body", nil))
			return
		}
		body := map[string]any{}
		for k, v := range values {
			if len(v) == 0 || slices.Contains(form.PageOnly, k) {
				continue
			}
			switch last := v[len(v)-1]; {
			case slices.Contains(form.Bools, k):
				body[k] = last == "true" || last == "on" || last == "1"
			case v[0] == "" && slices.Contains(form.Optional, k):
			default:
				body[k] = v[0]
			}
		}
		js, _ := json.Marshal(body)
		c.Request.Body = io.NopCloser(strings.NewReader(string(js)))
		c.Request.ContentLength = int64(len(js))
		c.Request.Header.Set("Content-Type", "application/json")
		c.Next()
	}
}

// CORS answers browsers by the route's declared CORS: open routes to any
// origin without credentials (openCORS); the framework's to another trusted
// origin, with credentials for exactly that origin, never for "*".
func (s *Kit) CORS() gin.HandlerFunc {
	return func(c *gin.Context) {
		p := PolicyFrom(c.Request.Context())
		if p.CORS == CORSOpen {
			if !OpenCORS(c) {
				c.Next()
			}
			return
		}
		origin := c.GetHeader("Origin")
		if origin == "" || p.CORS != CORSTrusted || !s.Origins.trusted(origin) {
			if c.Request.Method == http.MethodOptions && p.CORS == CORSTrusted {
				EmptyNotFound(c)
				return
			}
			c.Next()
			return
		}
		h := c.Writer.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "set-auth-token")
		if c.Request.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST")
			h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
			h.Set("Access-Control-Max-Age", "600")
			c.AbortWithStatus(http.StatusNoContent)
			return
		}
		c.Next()
	}
}

// OpenCORS answers a request to an open OAuth path from any origin, without
// credentials, and ends preflights here. It reports whether it answered.
func OpenCORS(c *gin.Context) bool {
	if c.GetHeader("Origin") == "" {
		return false
	}
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "WWW-Authenticate")
	if c.Request.Method != http.MethodOptions {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
	h.Set("Access-Control-Max-Age", "600")
	c.AbortWithStatus(http.StatusNoContent)
	return true
}

// FormPage declares the form page of a route (WithPolicy).
func FormPage(f *Form) func(*Policy) { return func(p *Policy) { p.Form = f } }

// FormPost returns the form page of a request, when it is an HTML form post
// to a route that declares one.
func FormPost(r *http.Request) (*Form, bool) {
	f := PolicyFrom(r.Context()).Form
	if r.Method != http.MethodPost || f == nil || !IsFormBody(r) {
		return nil, false
	}
	return f, true
}

func IsFormBody(r *http.Request) bool {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), "application/x-www-form-urlencoded")
}
