package console

import (
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/domain"
)

// The pieces the sections share: the secret shown once (Service keys,
// OAuth clients), paging over a use case's full list (those and Signing
// keys), a deletion's confirmation and notice, a use case's field
// violations as the form's error, and a refused value kept or not.

// secretView is the page that shows a new secret, the one time it exists
// outside the hash storage keeps. It is the answer to the form post that
// made it (never a redirect: the secret must not be in a URL, and the
// next GET must not show it); the page is no-store, the form's token is
// spent, so reloading re-posts a spent token and is refused, and
// console.js blanks it when the browser hides the page, so going back or
// forward does not show it either.
type secretView struct {
	What     string // "service key", "client secret"
	Name     string
	ClientID string
	Secret   string
	Note     string
	Back     string // the page of what the secret belongs to
}

// showSecret renders the secret page.
func (s *base) showSecret(c *gin.Context, v *shell.Visit, section, title string, sv *secretView) {
	p := v.Page(title)
	p.Section = section
	s.pages.secret.Render(c, http.StatusOK, p, sv)
}

// Lists: the use cases return every row (there are few keys and clients);
// the console shows them limit at a time, the cursor being the id of the
// last row shown, all in the URL.
const defaultLimit = 25

// confirmForm is a deletion's form: the confirmation typed (the name of
// what is deleted), without the spaces around it.
type confirmForm struct {
	Confirm string `form:"confirm,trim"`
}

// confirmation binds a deletion's form and is its confirmation: a wrong
// one is the page's own refusal, in its own words.
func confirmation(c *gin.Context) string {
	var f confirmForm
	shell.BindForm(c, &f) // no rule to break
	return f.Confirm
}

// deletedQuery is the query of a list a deletion lands on: what was
// deleted, for its notice.
type deletedQuery struct {
	Deleted string `query:"deleted"`
}

// deletedNotice is notice when q, a list's state, says a deletion landed
// on it, else "".
func deletedNotice(q url.Values, notice string) string {
	var dq deletedQuery
	shell.BindQueryValues(q, &dq) // no rule to break
	if dq.Deleted == "" {
		return ""
	}
	return notice
}

// listQuery is a list page's paging, read from the URL.
type listQuery struct {
	Cursor string
	Limit  int
}

// listParams is a list page's paging as the URL says it.
type listParams struct {
	Cursor string `query:"cursor" validate:"maxbytes=128"`
	Limit  *int   `query:"limit" validate:"omitempty,min=1,max=100"`
}

// listErrors say what a malformed paging part should be.
var listErrors = map[string]string{
	"cursor": "The page link is not valid: start from the first page.",
	"limit":  "The page size is a whole number from 1 to 100.",
}

// readListQuery binds cursor and limit, naming the first bad field and
// what it should be.
func readListQuery(q url.Values) (listQuery, string, string) {
	var lp listParams
	bad, invalid := shell.BindQueryValues(q, &lp).First()
	lq := listQuery{Cursor: lp.Cursor, Limit: defaultLimit}
	if invalid {
		return lq, listErrors[bad.Name], bad.Name
	}
	if lp.Limit != nil {
		lq.Limit = *lp.Limit
	}
	return lq, "", ""
}

// pageAfter returns the rows after the one whose id is the cursor (from
// the first when there is none), at most the limit, and the next page's
// cursor; ok is false when the cursor names no row.
func pageAfter[T any](rows []T, id func(T) string, lq listQuery) (page []T, next string, ok bool) {
	start := 0
	if lq.Cursor != "" {
		i := slices.IndexFunc(rows, func(r T) bool { return id(r) == lq.Cursor })
		if i < 0 {
			return nil, "", false
		}
		start = i + 1
	}
	end := min(start+lq.Limit, len(rows))
	if end < len(rows) {
		next = id(rows[end-1])
	}
	return rows[start:end], next, true
}

// pager is a list's links: the first page (when not on it) and the next.
type pager struct{ First, Next string }

// links returns the pager of a list at path whose state is link.
func links(path string, link url.Values, lq listQuery, next string) pager {
	var pg pager
	if lq.Limit != defaultLimit {
		link.Set("limit", strconv.Itoa(lq.Limit))
	}
	if lq.Cursor != "" {
		pg.First = edge.PageURL(path, link)
	}
	if next != "" {
		link.Set("cursor", next)
		pg.Next = edge.PageURL(path, link)
	}
	return pg
}

// invalidField returns a use case's Invalid error as a form error: its
// first field violation's message and field (the bare name, without an
// index), or ok false for any other error.
func invalidField(err error, label map[string]string) (msg, field string, ok bool) {
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid {
		return "", "", false
	}
	msg = de.Message + "."
	if len(de.Fields) > 0 {
		f := de.Fields[0]
		field, _, _ = strings.Cut(f.Field, "[")
		name := label[field]
		if name == "" {
			name = field
		}
		msg = name + " " + f.Message + "."
		if field != f.Field {
			msg = name + " (line " + lineOf(f.Field) + ") " + f.Message + "."
		}
	}
	return msg, field, true
}

// lineOf is the 1-based line of a field such as redirectUris[2].
func lineOf(field string) string {
	_, idx, _ := strings.Cut(field, "[")
	n, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
	if err != nil {
		return idx
	}
	return strconv.Itoa(n + 1)
}

// keep returns s when it is short enough to show again in a form, else "".
func keep(s string, max int) string {
	if len(s) > max {
		return ""
	}
	return s
}

// blank empties the string field of form (a pointer to a struct the
// binder filled) that name is the form's name of: a value refused for its
// length is not worth showing again.
func blank(form any, name string) {
	rv := reflect.ValueOf(form).Elem()
	for i := range rv.NumField() {
		if n, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("form"), ","); n == name && rv.Field(i).Kind() == reflect.String {
			rv.Field(i).SetString("")
		}
	}
}

// keyNotices say what a form of these sections did, after its redirect (?done=).
var keyNotices = shell.Notices{
	"revoked": "The key is revoked: requests made with it are refused now.",
	"updated": "The client is saved.", "registered": "The client is registered. It is public, so it has no secret.",
	"rotated": "New signing keys are made.",
}
