package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

//go:embed *.html console.css console.js
var files embed.FS

const (
	stylesheetPath = Base + "/assets/console.css"
	scriptPath     = Base + "/assets/console.js"
)

// consoleCSP is every console page's policy: its own stylesheet and
// script, images from here (and data: for icons), forms that post here,
// and no framing.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// views are the parsed templates and the assets, with their versioned URLs.
type views struct {
	pages         map[string]*template.Template
	css, js       []byte
	cssURL, jsURL string
}

var funcs = template.FuncMap{
	// datetime is the machine-readable instant of a <time> element.
	"datetime": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	// when is its text without the script: the instant in UTC.
	"when":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"never": func(t time.Time) bool { return t.IsZero() },
}

func newViews() *views {
	v := &views{pages: map[string]*template.Template{}}
	var err error
	if v.css, err = files.ReadFile("console.css"); err != nil {
		panic("console: stylesheet missing: " + err.Error())
	}
	if v.js, err = files.ReadFile("console.js"); err != nil {
		panic("console: script missing: " + err.Error())
	}
	cs, js := sha256.Sum256(v.css), sha256.Sum256(v.js)
	v.cssURL = stylesheetPath + "?v=" + hex.EncodeToString(cs[:6])
	v.jsURL = scriptPath + "?v=" + hex.EncodeToString(js[:6])
	// Every template but the shell is a page, named after its file.
	names, err := fs.Glob(files, "*.html")
	if err != nil {
		panic("console: templates: " + err.Error())
	}
	for _, file := range names {
		if file == "layout.html" {
			continue
		}
		name := strings.TrimSuffix(file, ".html")
		v.pages[name] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "layout.html", file))
	}
	return v
}

func (v *views) serveCSS(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=31536000, immutable")
	c.Data(http.StatusOK, "text/css; charset=utf-8", v.css)
}

func (v *views) serveJS(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=31536000, immutable")
	c.Data(http.StatusOK, "text/javascript; charset=utf-8", v.js)
}

// page is what a template renders: the shell's parts and one section's.
type page struct {
	*visit
	Title      string
	Section    string
	Stylesheet string
	Script     string
	Notice     string
	// Error and Field say what a refused form got wrong, and which field.
	Error string
	Field string

	// Area is the shell's navigation: "console" (the administrator's
	// sections) or "account" (a user's own pages).
	Area string

	Refusal *refusalView
	Users   *usersView
	User    *userView
	// View is the data of a section that has no field of its own here.
	View   any
	Acting string // impersonating: the user's address
	// FormTargets are origins a form's redirect may end at, added to
	// form-action (browsers check it on a form post's redirects): an
	// identity provider's authorization endpoint.
	FormTargets []string
}

// refusalView is a refusal page's message.
type refusalView struct {
	Status  int
	Message string
	Fields  []edge.FieldError
}

func (v *visit) page(title string) *page {
	p := &page{visit: v, Title: title, Area: "console"}
	if v != nil && v.impersonating() {
		p.Acting = string(v.p.User.Email())
	}
	return p
}

// Admin is the signed-in administrator's address, for the shell.
func (p *page) Admin() string {
	if p.visit == nil {
		return ""
	}
	return string(p.p.User.Email())
}

// Impersonating reports whether the banner shows.
func (p *page) Impersonating() bool { return p.visit != nil && p.impersonating() }

// render writes a page with the console's headers.
func (s *API) render(c *gin.Context, status int, name string, p *page) {
	p.Stylesheet, p.Script = s.views.cssURL, s.views.jsURL
	var buf bytes.Buffer
	if err := s.views.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		edge.LoggerFrom(c.Request.Context()).ErrorContext(c.Request.Context(), "console page", "page", name, "error", err.Error())
		buf.Reset()
		status = http.StatusInternalServerError
		buf.WriteString("<!doctype html><title>Error</title><p>The page could not be shown.</p>")
	}
	setHeaders(c.Writer.Header())
	if len(p.FormTargets) > 0 {
		c.Header("Content-Security-Policy", strings.Replace(consoleCSP, "form-action 'self'", "form-action 'self' "+strings.Join(p.FormTargets, " "), 1))
	}
	c.Data(status, "text/html; charset=utf-8", edge.NeutralizeBidi(buf.Bytes()))
}

// setHeaders sets the headers of every console answer: its CSP, no
// caching, no referrer, no framing.
func setHeaders(h http.Header) {
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
}

// refusal answers with a refusal page: status, a title and a message.
func (s *API) refusal(c *gin.Context, status int, title, message string, fields ...edge.FieldError) {
	p := &page{Title: title, Refusal: &refusalView{Status: status, Message: message, Fields: fields}}
	s.render(c, status, "refusal", p)
	c.Abort()
}

// refuse answers err, from a use case, as a refusal page with the status
// the edge gives its kind; an internal error says no more than that.
//
// One refusal is a detour instead: an action the step-up rules refuse
// (usecase.ErrStepUpRequired: the user has a second factor and has not
// proven it lately) sends the browser to the hosted step-up page, which
// brings it back to the page the form was on, to send it again.
func (s *API) refuse(c *gin.Context, err error) {
	if isStepUp(err) {
		back := c.GetString(backKey)
		if c.Request.Method == http.MethodGet || back == "" {
			back = s.comeBack(c)
		}
		edge.Redirect(c, http.StatusSeeOther, stepUpURL(back))
		c.Abort()
		return
	}
	pr := edge.RenderError(c.Request.Context(), edge.LoggerFrom(c.Request.Context()), err)
	if p, ok := pr.(*edge.Problem); ok {
		s.problemPage(c, p)
		return
	}
	s.refusal(c, pr.GetStatus(), http.StatusText(pr.GetStatus()), "The request was refused.")
}

// problemPage renders a problem as a refusal page: the edge's own
// refusals (hostile input, the origin check, rate limits, sizes) on
// console routes, and the use cases' errors.
func (s *API) problemPage(c *gin.Context, p *edge.Problem) {
	msg := p.Detail
	if p.Status == http.StatusForbidden && strings.Contains(strings.ToLower(p.Code), "origin") {
		msg = "This form was sent from another site, or without saying where from. Nothing was changed."
	}
	if p.Status >= 500 {
		msg = "Something went wrong on our side. Nothing was shown; try again. Request " + p.RequestID + "."
	}
	s.refusal(c, p.Status, http.StatusText(p.Status), msg, p.Errors...)
}
