package edge

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestTable_lookup_returns_the_declared_policy_of_the_matched_route(t *testing.T) {
	tb := NewTable()
	form := &Form{Page: "/sign-in"}
	tb.Set(http.MethodPost, "/api/auth/sign-in/email", Policy{Shape: ShapeFramework, Rate: RateCredentials, Security: SecuritySession, CORS: CORSTrusted, Login: true, Form: form})
	tb.Set(http.MethodGet, "/api/users/:id", Policy{Rate: RateServiceKey, Security: SecurityServiceKey})

	p := tb.Lookup(http.MethodPost, "/api/auth/sign-in/email", "/api/auth/sign-in/email")
	if p.Rate != RateCredentials || p.Form != form || !p.Login || p.Shape != ShapeFramework {
		t.Fatalf("sign-in: %+v", p)
	}
	if p := tb.Lookup(http.MethodGet, "/api/users/:id", "/api/users/u1"); p.Security != SecurityServiceKey || p.Rate != RateServiceKey {
		t.Fatalf("by template: %+v", p)
	}
	if got, ok := tb.Route(http.MethodGet, "/api/users/:id"); !ok || got.Security != SecurityServiceKey {
		t.Fatalf("Route: %+v %v", got, ok)
	}
	if _, ok := tb.Route(http.MethodDelete, "/api/users/:id"); ok {
		t.Fatal("Route found a method nobody declared")
	}
}

func TestTable_unmatched_request_on_a_served_path_inherits_shape_CORS_and_login_but_not_rate_or_form(t *testing.T) {
	tb := NewTable()
	tb.Set(http.MethodPost, "/api/auth/sign-in/email", Policy{Shape: ShapeFramework, Rate: RateCredentials, Security: SecuritySession, CORS: CORSTrusted, Login: true, Form: &Form{}})
	tb.Set(http.MethodPost, "/api/auth/oauth2/token", Policy{Shape: ShapeOAuth, Rate: RateOAuthToken, Security: SecurityAccessToken, CORS: CORSOpen})
	tb.Set(http.MethodGet, "/elsewhere", Policy{Rate: RateGeneral, Security: SecuritySession})

	// A preflight: gin matched no route (FullPath is "").
	p := tb.Lookup(http.MethodOptions, "", "/api/auth/sign-in/email")
	if p.Shape != ShapeFramework || p.CORS != CORSTrusted || !p.Login || p.Rate != RateUnmatched || p.Form != nil || p.Security != SecuritySession {
		t.Fatalf("preflight on sign-in: %+v", p)
	}
	// An open endpoint reads no cookie, so a wrong method on it is not origin-checked.
	p = tb.Lookup(http.MethodGet, "", "/api/auth/oauth2/token")
	if p.Shape != ShapeOAuth || p.CORS != CORSOpen || p.Security != SecurityNone || p.Rate != RateUnmatched {
		t.Fatalf("wrong method on the token endpoint: %+v", p)
	}
	// Security of an unmatched request follows the prefix fallback, not the path's routes.
	if p := tb.Lookup(http.MethodPost, "", "/elsewhere"); p.Security != SecurityNone || p.Shape != ShapeProblem {
		t.Fatalf("wrong method on /elsewhere: %+v", p)
	}
	// A template some other method declared is not a match.
	if p := tb.Lookup(http.MethodPut, "/api/auth/sign-in/email", "/api/auth/sign-in/email"); p.Rate != RateUnmatched {
		t.Fatalf("undeclared method: %+v", p)
	}
}

func TestUnmatched_falls_back_on_the_path_prefix(t *testing.T) {
	for _, tc := range []struct {
		path     string
		shape    Shape
		security Security
		cors     CORS
	}{
		{"/api/auth", ShapeFramework, SecuritySession, CORSTrusted},
		{"/api/auth/no-such-route", ShapeFramework, SecuritySession, CORSTrusted},
		{"/api/authx", ShapeProblem, SecurityNone, CORSNone},
		{"/api/admin/nothing", ShapeProblem, SecuritySession, CORSNone},
		{"/api/admin", ShapeProblem, SecurityNone, CORSNone},
		{"/api/backend/users", ShapeProblem, SecurityNone, CORSNone},
		{"/", ShapeProblem, SecurityNone, CORSNone},
	} {
		p := Unmatched(tc.path)
		if p.Shape != tc.shape || p.Security != tc.security || p.CORS != tc.cors || p.Rate != RateUnmatched || p.Form != nil {
			t.Errorf("Unmatched(%q) = %+v", tc.path, p)
		}
	}
	tb := NewTable()
	if p := tb.Lookup(http.MethodGet, "", "/api/auth/x"); p.Shape != ShapeFramework {
		t.Fatalf("Lookup of an unserved path does not fall back: %+v", p)
	}
}

func TestTable_check_panics_on_a_route_without_a_complete_policy(t *testing.T) {
	mustPanic := func(name, want string, f func()) {
		t.Helper()
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(r.(string), want) {
				t.Fatalf("%s: recovered %v, want a panic naming %q", name, r, want)
			}
		}()
		f()
	}
	tb := NewTable()
	tb.Set(http.MethodGet, "/declared", Policy{Rate: RateGeneral})
	tb.Check([]RouteInfo{{http.MethodGet, "/declared"}}) // complete: no panic

	mustPanic("undeclared", "GET /forgotten", func() {
		tb.Check([]RouteInfo{{http.MethodGet, "/declared"}, {http.MethodGet, "/forgotten"}})
	})
	tb.Set(http.MethodPost, "/no-rate", Policy{Security: SecuritySession})
	mustPanic("no rate rule", "POST /no-rate", func() { tb.Check([]RouteInfo{{http.MethodPost, "/no-rate"}}) })

	tb.Set(http.MethodGet, "/shared", Policy{Rate: RatePublic, CORS: CORSOpen})
	tb.Set(http.MethodPost, "/shared", Policy{Rate: RateGeneral})
	mustPanic("disagreeing routes on one path", "/shared", func() {
		tb.Check([]RouteInfo{{http.MethodGet, "/shared"}, {http.MethodPost, "/shared"}})
	})
}

func TestPolicy_origin_check_follows_the_declared_session_security_wherever_the_path_is(t *testing.T) {
	tb := NewTable()
	// A cookie route outside /api/auth and /api/admin.
	tb.Set(http.MethodPost, "/somewhere/else", Policy{Rate: RateGeneral, Security: SecuritySession})
	// Framework routes that read no cookie.
	tb.Set(http.MethodPost, "/api/auth/oauth2/token", Policy{Shape: ShapeOAuth, Rate: RateOAuthToken, Security: SecurityAccessToken, CORS: CORSOpen})
	tb.Set(http.MethodGet, "/api/auth/jwks", Policy{Shape: ShapeFramework, Rate: RatePublic, CORS: CORSOpen})
	tb.Set(http.MethodPost, "/api/users", Policy{Rate: RateServiceKey, Security: SecurityServiceKey})

	for _, tc := range []struct {
		method, template string
		want             bool
	}{
		{http.MethodPost, "/somewhere/else", true},
		{http.MethodPost, "/api/auth/oauth2/token", false},
		{http.MethodPost, "/api/users", false},
	} {
		if got := tb.Lookup(tc.method, tc.template, tc.template).OriginChecked(tc.method); got != tc.want {
			t.Errorf("%s %s: origin checked %v, want %v", tc.method, tc.template, got, tc.want)
		}
	}
	session := Policy{Security: SecuritySession}
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodOptions} {
		if session.OriginChecked(m) {
			t.Errorf("%s is checked: it changes nothing", m)
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if !session.OriginChecked(m) {
			t.Errorf("%s on a session route is not checked", m)
		}
	}
}

func TestPolicyFrom_context(t *testing.T) {
	if p := PolicyFrom(context.Background()); p.Shape != ShapeProblem || p.Security != SecurityNone {
		t.Fatalf("no policy: %+v", p)
	}
	want := &Policy{Shape: ShapeFramework}
	if got := PolicyFrom(ContextWithPolicy(context.Background(), want)); got != want {
		t.Fatalf("got %+v", got)
	}
	if !ShapeOAuth.Framework() || !ShapeFramework.Framework() || ShapeProblem.Framework() {
		t.Fatal("Shape.Framework")
	}
}
