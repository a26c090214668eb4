package edge

import (
	"sort"
	"strings"
)

// Table holds each route's policy by "METHOD template", the template being
// the one gin reports for a matched request (c.FullPath()).
type Table struct {
	routes map[routeKey]*Policy
	// static are the policies of each path some route matches literally
	// (no parameter), for requests on that path that match no route: a
	// preflight or a wrong method.
	static map[string]*Policy
}

// routeKey is a route's method and gin template. A struct key, unlike a
// joined string, costs the per-request lookup no allocation.
type routeKey struct{ method, template string }

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{routes: map[routeKey]*Policy{}, static: map[string]*Policy{}}
}

// Set declares the policy of the route method and gin template.
func (t *Table) Set(method, template string, p Policy) {
	stored := p
	t.routes[routeKey{method, template}] = &stored
	if !strings.ContainsAny(template, ":*") {
		if _, ok := t.static[template]; !ok {
			t.static[template] = &stored
		}
	}
}

// Route returns the policy declared for method and template.
func (t *Table) Route(method, template string) (Policy, bool) {
	p, ok := t.routes[routeKey{method, template}]
	if !ok {
		return Policy{}, false
	}
	return *p, true
}

// Lookup returns the policy of a request: its route's when gin matched one
// (template is c.FullPath()), else Unmatched(path). An unmatched request on
// a path some route serves literally (a preflight, a wrong method) takes
// those routes' shape, CORS and login rule, and no security when they are open to every
// origin (no cookie authenticates them); it is still counted under
// RateUnmatched and has no form.
func (t *Table) Lookup(method, template, path string) *Policy {
	if template != "" {
		if p, ok := t.routes[routeKey{method, template}]; ok {
			return p
		}
	}
	if p, ok := t.static[path]; ok {
		u := &Policy{Shape: p.Shape, Rate: RateUnmatched, Security: Unmatched(path).Security, CORS: p.CORS, Login: p.Login}
		if p.CORS == CORSOpen {
			u.Security = SecurityNone
		}
		return u
	}
	return Unmatched(path)
}

// Each calls f for every declared route, sorted by template then method.
func (t *Table) Each(f func(method, template string, p Policy)) {
	keys := make([]routeKey, 0, len(t.routes))
	for k := range t.routes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].template != keys[j].template {
			return keys[i].template < keys[j].template
		}
		return keys[i].method < keys[j].method
	})
	for _, k := range keys {
		f(k.method, k.template, *t.routes[k])
	}
}

// RouteInfo is one served route, as gin lists it.
type RouteInfo struct{ Method, Path string }

// Check panics unless every route in served declared a complete policy, and
// the routes sharing a literal path agree on what an unmatched request on
// that path inherits (shape, CORS, login), so a route added without its
// policy fails at start-up rather than going unguarded.
func (t *Table) Check(served []RouteInfo) {
	for _, r := range served {
		p, ok := t.routes[routeKey{r.Method, r.Path}]
		if !ok || !p.Complete() {
			panic("httpapi: route " + r.Method + " " + r.Path + " declares no complete policy")
		}
		if s, ok := t.static[r.Path]; ok && (s.Shape != p.Shape || s.CORS != p.CORS || s.Login != p.Login) {
			panic("httpapi: the routes on " + r.Path + " disagree on their shape, CORS or login rule")
		}
	}
}
