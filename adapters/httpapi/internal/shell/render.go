package shell

import (
	"bytes"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// Views are a surface's parsed pages: each of its templates/*.html inside
// the shell's layout, named after its file. A page renders only through its
// Template, which names the type of its view.
type Views struct {
	s     *Shell
	pages map[string]*template.Template
	typed map[string]bool // the pages a Template was made for
}

// funcs are the functions every page may call.
var funcs = template.FuncMap{
	// datetime is the machine-readable instant of a <time> element.
	"datetime": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	// when is its text without the script: the instant in UTC.
	"when":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"never": func(t time.Time) bool { return t.IsZero() },
}

// NewViews parses every templates/*.html of fsys (but the layout) inside
// the shell's layout, with the shell's functions and more. A template
// that does not parse is a build mistake and panics.
func (s *Shell) NewViews(fsys fs.FS, more template.FuncMap) *Views {
	v := &Views{s: s, pages: map[string]*template.Template{}, typed: map[string]bool{}}
	names, err := fs.Glob(fsys, "templates/*.html")
	if err != nil {
		panic("shell: templates: " + err.Error())
	}
	for _, file := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t := template.Must(template.New("layout.html").Funcs(funcs).Funcs(more).ParseFS(files, "templates/layout.html"))
		v.pages[name] = template.Must(t.ParseFS(fsys, file))
	}
	return v
}

// Template is the page name of a surface's Views, typed by its view V: it
// renders that page with a V and nothing else, so a template cannot be
// handed another page's data.
type Template[V any] struct {
	views *Views
	name  string
}

// NewTemplate is the page name of views, whose view is a V. A name views
// has no page of, or one already typed, is a build mistake and panics.
func NewTemplate[V any](views *Views, name string) *Template[V] {
	if views.pages[name] == nil || views.typed[name] {
		panic("shell: template " + name + ": no such page, or typed twice")
	}
	views.typed[name] = true
	return &Template[V]{views: views, name: name}
}

// MustBeTyped panics unless each page of views has its Template: a page
// without one is a build mistake (a template no view type names).
func (v *Views) MustBeTyped() {
	for name := range v.pages {
		if !v.typed[name] {
			panic("shell: template " + name + " has no view type")
		}
	}
}

// Render writes the page with view with the shell's headers.
func (t *Template[V]) Render(c *gin.Context, status int, p *Page, view V) {
	t.views.s.render(c, status, t.views.pages[t.name], t.name, p, &Rendered[V]{Page: p, View: view})
}

// Rendered is what a page's template executes on: the shell's parts (the
// Page) and the page's own view, of its own type.
type Rendered[V any] struct {
	*Page
	View V
}

// Page is what the layout renders around a page's view: the shell's parts.
type Page struct {
	*Visit
	Title      string
	Section    string
	Stylesheet string
	Script     string
	Notice     string
	// Error and Field say what a refused form got wrong, and which field.
	Error string
	Field string
	// Area is the layout's navigation: "console" (the administrator's
	// sections) or "account" (a user's own pages).
	Area   string
	Acting string // impersonating: the user's address
	// FormTargets are origins a form's redirect may end at, added to
	// form-action (browsers check it on a form post's redirects): an
	// identity provider's authorization endpoint.
	FormTargets []string
}

// Page starts a console page titled title for v (nil: a refusal before
// anyone entered).
func (v *Visit) Page(title string) *Page {
	p := &Page{Visit: v, Title: title, Area: "console"}
	if v != nil && v.Impersonating() {
		p.Acting = string(v.P.User.Email())
	}
	return p
}

// Admin is the signed-in user's address, for the layout.
func (p *Page) Admin() string {
	if p.Visit == nil {
		return ""
	}
	return string(p.P.User.Email())
}

// ConsoleLink reports whether the signed-in user administers the
// platform, for the layout's link to the console.
func (p *Page) ConsoleLink() bool { return p.Visit != nil && p.Visit.Administrator }

// Impersonating reports whether the banner shows.
func (p *Page) Impersonating() bool { return p.Visit != nil && p.Visit.Impersonating() }

// render writes page (named name), executed on data (a Rendered around p),
// with the shell's headers.
func (s *Shell) render(c *gin.Context, status int, page *template.Template, name string, p *Page, data any) {
	p.Stylesheet, p.Script = s.css.URL(), s.js.URL()
	var buf bytes.Buffer
	if err := page.ExecuteTemplate(&buf, "layout", data); err != nil {
		edge.LoggerFrom(c.Request.Context()).ErrorContext(c.Request.Context(), "console page", "page", name, "error", err.Error())
		buf.Reset()
		status = http.StatusInternalServerError
		buf.WriteString("<!doctype html><title>Error</title><p>The page could not be shown.</p>")
	}
	SetHeaders(c.Writer.Header(), withFormTargets(CSP, p.FormTargets))
	c.Data(status, "text/html; charset=utf-8", edge.NeutralizeBidi(buf.Bytes()))
}

// refusalView is a refusal page's message.
type refusalView struct {
	Status  int
	Message string
	Fields  []edge.FieldError
}

// Refusal answers with a refusal page: status, a title and a message.
func (s *Shell) Refusal(c *gin.Context, status int, title, message string, fields ...edge.FieldError) {
	s.refusal.Render(c, status, &Page{Title: title}, &refusalView{Status: status, Message: message, Fields: fields})
	c.Abort()
}

// Refuse answers err, from a use case, as a refusal page with the status
// the edge gives its kind; an internal error says no more than that.
//
// One refusal is a detour instead: an action the step-up rules refuse
// (usecase.ErrStepUpRequired: the user has a second factor and has not
// proven it lately) sends the browser to the hosted step-up page, which
// brings it back to the page the form was on, to send it again.
func (s *Shell) Refuse(c *gin.Context, err error) {
	if IsStepUp(err) {
		back := c.GetString(backKey)
		if c.Request.Method == http.MethodGet || back == "" {
			back = comeBack(c)
		}
		edge.Redirect(c, http.StatusSeeOther, StepUpURL(back))
		c.Abort()
		return
	}
	pr := edge.RenderError(c.Request.Context(), edge.LoggerFrom(c.Request.Context()), err)
	if p, ok := pr.(*edge.Problem); ok {
		s.ProblemPage(c, p)
		return
	}
	s.Refusal(c, pr.GetStatus(), http.StatusText(pr.GetStatus()), "The request was refused.")
}

// ProblemPage renders a problem as a refusal page: the edge's own
// refusals (hostile input, the origin check, rate limits, sizes) on the
// surfaces' routes (Policy.ErrorPage), and the use cases' errors.
func (s *Shell) ProblemPage(c *gin.Context, p *edge.Problem) {
	msg := p.Detail
	if p.Status == http.StatusForbidden && strings.Contains(strings.ToLower(p.Code), "origin") {
		msg = "This form was sent from another site, or without saying where from. Nothing was changed."
	}
	if p.Status >= 500 {
		msg = "Something went wrong on our side. Nothing was shown; try again. Request " + p.RequestID + "."
	}
	s.Refusal(c, p.Status, http.StatusText(p.Status), msg, p.Errors...)
}
