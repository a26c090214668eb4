package shell

import (
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-playground/validator/v10"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// The one binder of the surfaces' input. A page or a form declares what it
// reads as a struct: each field a string (or a *int, nil when absent; a
// []string, every value sent under the name: checkboxes sharing it; a
// bool, a checkbox: true when sent as "on", what a browser sends for a
// checkbox without a value), named by a `query:"name"` or a
// `form:"name"` tag (`query:"name,trim"`: its value without the spaces
// around it) and checked by validator/v10 `validate:"…"` tags (as the
// APIs' inputs are by their Huma schemas), and by the binder's own:
// maxbytes (a bound in bytes) and instant (a time, as Instant reads it). Binding fills the struct and
// names each malformed part as the APIs' validation errors do: its
// location and name ("query.limit", "form.name"), in the order of the
// struct's fields, so a page shows the first.

// Violation is one malformed part of the input.
type Violation struct {
	edge.FieldError        // Location ("query.limit") and the rule it broke
	Name            string // the bare name ("limit"): the field the page marks
}

// Violations are a bound input's malformed parts, in its fields' order.
type Violations []Violation

// First is the first violation, and whether there is one.
func (vs Violations) First() (Violation, bool) {
	if len(vs) == 0 {
		return Violation{}, false
	}
	return vs[0], true
}

var (
	validateOnce sync.Once
	validate     *validator.Validate
)

// validatorOf is the one validator of the surfaces: it names a field by its
// query or form tag, and knows maxbytes (a bound in bytes, where the
// APIs' bounds are in bytes; max counts characters).
func validatorOf() *validator.Validate {
	validateOnce.Do(func() {
		validate = validator.New(validator.WithRequiredStructEnabled())
		validate.RegisterTagNameFunc(func(f reflect.StructField) string {
			for _, tag := range []string{"query", "form"} {
				if name, ok := f.Tag.Lookup(tag); ok {
					name, _, _ = strings.Cut(name, ",")
					return tag + "." + name
				}
			}
			return f.Name
		})
		_ = validate.RegisterValidation("maxbytes", func(fl validator.FieldLevel) bool {
			n, ok := atoi(fl.Param())
			return ok && len(fl.Field().String()) <= n
		})
		_ = validate.RegisterValidation("instant", func(fl validator.FieldLevel) bool {
			_, ok := Instant(fl.Field().String())
			return ok
		})
	})
	return validate
}

// InstantLocal is how a datetime-local input writes a time.
const InstantLocal = "2006-01-02T15:04:05"

// Instant reads a time a page's input sends: RFC 3339, or what a
// datetime-local or a date input sends (taken as UTC); "" is the zero time.
func Instant(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, true
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", InstantLocal, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// atoi reads a small non-negative decimal.
func atoi(s string) (int, bool) {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' || n > 1<<20 {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, s != ""
}

// BindQuery fills dst (a pointer to a struct of fields tagged
// `query:"name"`) from the request's query and validates it.
func BindQuery(c *gin.Context, dst any) Violations {
	return bind(c.Request.URL.Query(), "query", dst)
}

// BindQueryValues is BindQuery on q, a page's query kept while a form's
// answer renders the page again.
func BindQueryValues(q url.Values, dst any) Violations { return bind(q, "query", dst) }

// BindForm fills dst (a pointer to a struct of fields tagged
// `form:"name"`) from the posted form and validates it.
func BindForm(c *gin.Context, dst any) Violations {
	return bind(c.Request.PostForm, "form", dst)
}

func bind(values url.Values, tag string, dst any) Violations {
	rv := reflect.ValueOf(dst).Elem()
	rt := rv.Type()
	order := map[string]int{}   // a location's field index
	parsed := map[string]bool{} // the locations whose value did not parse
	var vs Violations
	for i := range rt.NumField() {
		name, ok := rt.Field(i).Tag.Lookup(tag)
		if !ok {
			continue
		}
		name, opt, _ := strings.Cut(name, ",")
		loc, raw, f := tag+"."+name, values.Get(name), rv.Field(i)
		if opt == "trim" {
			raw = strings.TrimSpace(raw)
		}
		order[loc] = i
		switch {
		case f.Kind() == reflect.String:
			f.SetString(raw)
		case f.Kind() == reflect.Bool:
			f.SetBool(raw == "on")
		case f.Type() == reflect.TypeFor[[]string]():
			f.Set(reflect.ValueOf(slices.Clone(values[name])))
		case f.Type() == reflect.TypeFor[*int]() && raw != "":
			n, err := strconv.Atoi(raw)
			if err != nil {
				parsed[loc] = true
				vs = append(vs, Violation{FieldError: edge.FieldError{Location: loc, Message: "expected integer"}, Name: name})
				continue
			}
			f.Set(reflect.ValueOf(&n))
		}
	}
	if err := validatorOf().Struct(dst); err != nil {
		verrs, ok := err.(validator.ValidationErrors)
		if !ok {
			panic("shell: bind: " + err.Error()) // a struct the binder cannot read: a build mistake
		}
		for _, fe := range verrs {
			loc := fe.Field()
			if parsed[loc] {
				continue
			}
			_, bare, _ := strings.Cut(loc, ".")
			vs = append(vs, Violation{FieldError: edge.FieldError{Location: loc, Message: rule(fe)}, Name: bare})
		}
	}
	slices.SortStableFunc(vs, func(a, b Violation) int { return order[a.Location] - order[b.Location] })
	return vs
}

// rule says which rule a value broke, in the words of the APIs' schema
// errors.
func rule(fe validator.FieldError) string {
	switch fe.Tag() {
	case "maxbytes":
		return "expected length <= " + fe.Param()
	case "max":
		if fe.Kind() == reflect.Slice {
			return "expected array length <= " + fe.Param()
		}
		if fe.Kind() == reflect.Int {
			return "expected number <= " + fe.Param()
		}
		return "expected length <= " + fe.Param()
	case "min":
		if fe.Kind() == reflect.Slice {
			return "expected array length >= " + fe.Param()
		}
		return "expected number >= " + fe.Param()
	case "oneof":
		return "expected value to be one of \"" + strings.ReplaceAll(fe.Param(), " ", ", ") + "\""
	case "required":
		return "expected a value"
	case "instant":
		return "expected a date-time"
	}
	return "is not valid (" + fe.Tag() + ")"
}
