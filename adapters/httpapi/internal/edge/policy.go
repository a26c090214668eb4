package edge

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// Shape is the error vocabulary a route answers in.
type Shape int

const (
	// ShapeProblem is RFC 9457 application/problem+json: the service, admin
	// and trusted routes, and everything outside the framework.
	ShapeProblem Shape = iota
	// ShapeFramework is Better Auth's {message, code}.
	ShapeFramework
	// ShapeOAuth is an OAuth endpoint of the framework whose errors, the
	// edge's input checks included, follow RFC 6749 §5.2. Errors raised
	// before its handler runs for other reasons (rate limits, sizes) keep
	// the framework's shape.
	ShapeOAuth
)

// Framework reports whether s is Better Auth's wire: the framework's routes,
// its OAuth endpoints included.
func (s Shape) Framework() bool { return s == ShapeFramework || s == ShapeOAuth }

// Security is the credential a route reads.
type Security int

const (
	// SecurityNone reads no credential.
	SecurityNone Security = iota
	// SecuritySession reads (or sets) the session cookie: browsers send it
	// on their own, so the origin/CSRF check guards every state-changing
	// request of the route, wherever its path is.
	SecuritySession
	// SecurityServiceKey reads a service key.
	SecurityServiceKey
	// SecurityAccessToken reads an OAuth access token or client
	// credentials, never the cookie.
	SecurityAccessToken
)

// CORS is which browser origins may call a route.
type CORS int

const (
	// CORSNone answers no cross-origin request.
	CORSNone CORS = iota
	// CORSTrusted allows the trusted origins, with credentials (Better
	// Auth's rule); a preflight from anyone else is an empty 404.
	CORSTrusted
	// CORSOpen allows any origin, without credentials: endpoints called
	// with their own credentials (token, revoke, introspect, userinfo) and
	// public documents (the key set, discovery).
	CORSOpen
)

// Rate is a route's limit: at most Limit requests per Window. A rule without
// a limit is never counted. PerRoute rules count each route template on its
// own (Better Auth keys on the path); other rules share one budget over every
// route that declares them.
type Rate struct {
	Name     string
	Limit    int
	Window   time.Duration
	PerRoute bool
	// ByServiceKey rules are counted per service key once the key is
	// authenticated, not per address.
	ByServiceKey bool
}

// The rules. Better Auth's defaults (better-auth-wire §4) for the framework,
// and Gatehouse's own for the rest.
var (
	// RateNone is for liveness and readiness: orchestrators poll them, and a
	// limit would turn a healthy process unhealthy.
	RateNone = Rate{Name: "none"}
	// RateCredentials is for sign-in, sign-up and credential changes.
	RateCredentials = Rate{Name: "credentials", Limit: 3, Window: 10 * time.Second, PerRoute: true}
	// RateMail is for the routes that send mail.
	RateMail = Rate{Name: "mail", Limit: 3, Window: 60 * time.Second, PerRoute: true}
	// RateOAuthToken is the OAuth token endpoint's.
	RateOAuthToken = Rate{Name: "oauth-token", Limit: 30, Window: 10 * time.Second, PerRoute: true}
	// RateGeneral is every other route's: the framework, the admin API and
	// the hosted pages.
	RateGeneral = Rate{Name: "general", Limit: 100, Window: 10 * time.Second, PerRoute: true}
	// RatePublic is for public documents: discovery, the key set, the
	// contracts, the explorer and the pages' assets. Relying parties and
	// browsers behind one address share it.
	RatePublic = Rate{Name: "public", Limit: 600, Window: time.Minute}
	// RateUnmatched is shared by every request no route matches, so a
	// client cannot create keys by inventing paths.
	RateUnmatched = Rate{Name: "unmatched", Limit: 100, Window: 10 * time.Second}
	// RateRefusedKey counts requests whose service key was refused, per
	// address; the budget of valid keys is configured apart.
	RateRefusedKey = Rate{Name: "refused-service-key", Limit: 100, Window: 10 * time.Second}
	// RateServiceKey marks trusted routes: they are limited per key.
	RateServiceKey = Rate{Name: "service-key", ByServiceKey: true}
)

// Form is the hosted page an HTML form posts to a route from. The form is
// turned into the JSON body the operation validates, and the answer into a
// 303 back to the page (an error) or onwards (a success).
type Form struct {
	// Page is the form's page, where errors go back to.
	Page string
	// Keep are the fields carried back to Page with an error (never a
	// password).
	Keep []string
	// Done is where a success without a Location goes; nil sends the
	// answer unchanged.
	Done func(form url.Values, signedIn bool) string
	// Bools are checkboxes and buttons: they become booleans, the last
	// value winning (a hidden "false" before a checkbox is its unchecked
	// state).
	Bools []string
	// Optional fields are left out when empty.
	Optional []string
	// PageOnly fields serve the page (where to go afterwards) and are no
	// part of the operation's body: they are left out of it.
	PageOnly []string
}

// Policy is everything the middleware decides per request, declared once
// where the route is registered.
type Policy struct {
	Shape Shape
	// Words is the route's contract vocabulary (nil: the Shape's status
	// mapping only, for requests no route matched).
	Words    Words
	Rate     Rate
	Security Security
	CORS     CORS
	// Login marks sign-in and sign-up: without a cookie they still refuse
	// cross-site form posts and untrusted browser origins (login CSRF).
	Login bool
	// Form is set on the routes the hosted pages post forms to.
	Form *Form
	// Administers marks the routes that administer the platform (the admin
	// plugin, /api/admin): while administrators must have a second factor,
	// Kit.Principal refuses one without (403 admin.mfa_required). The
	// routes that enrol a factor and sign out are not marked.
	Administers bool
	// WhileImpersonating is what a session an administrator impersonates
	// may do on the route: by default read (GET, HEAD) and nothing else.
	// Kit.Principal (and the console's gate) enforce it; see Impersonation.
	WhileImpersonating Impersonation
	// ErrorPage renders the problems the middleware raises before the
	// route's handler runs (hostile input, the origin check, the rate
	// limit, sizes) as a page, for routes that browsers navigate (the
	// console): nil writes the problem as JSON.
	ErrorPage func(c *gin.Context, p *Problem)
	// Inputs names where each of the operation's parameters comes from
	// ("query", "path" or "header"), by its wire name; every other field
	// is the body's. The renderers locate a domain FieldViolation's bare
	// field with it (Locate).
	Inputs map[string]string
}

// Locate renders the location of field, a bare name as the inner layers
// report it ("email", "verify.reason", "redirectUris[0]"; "" for the input
// as a whole): its first segment's declared input (Inputs), else the body.
// A field the edge located itself ("body.email", "query.limit", "header.x",
// "body") is already a location and is kept.
func (p Policy) Locate(field string) string {
	head := field
	if i := strings.IndexAny(head, ".["); i >= 0 {
		head = head[:i]
	}
	switch head {
	case "body", "query", "path", "header":
		return field
	case "":
		return "body"
	}
	if in, ok := p.Inputs[head]; ok {
		return in + "." + field
	}
	return "body." + field
}

// Administration declares that a route administers the platform (Policy.Administers).
func Administration(p *Policy) { p.Administers = true }

// AdministrationNote ends the description of every route that administers
// the platform, in the vocabulary of its contract.
func AdministrationNote(code string) string {
	return " While GATEHOUSE_ADMIN_REQUIRE_MFA is on (the default in production), a platform administrator without a second factor " +
		"(two-factor or a passkey) gets 403 " + code + " until they enrol one; the two-factor and passkey routes stay open to them."
}

// Complete reports whether p declares what every route must: a rate rule.
func (p Policy) Complete() bool { return p.Rate.Name != "" }

// OriginChecked reports whether a request with method to a route of policy
// p goes through the origin/CSRF check: every state-changing request to a
// route secured by the session cookie.
func (p Policy) OriginChecked(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return p.Security == SecuritySession
}

type policyKey struct{}

// ContextWithPolicy returns ctx carrying the policy of its request's route.
func ContextWithPolicy(ctx context.Context, p *Policy) context.Context {
	return context.WithValue(ctx, policyKey{}, p)
}

// PolicyFrom returns the policy stored in ctx, or the zero policy (problem
// shape, no security) when there is none.
func PolicyFrom(ctx context.Context) *Policy {
	if p, ok := ctx.Value(policyKey{}).(*Policy); ok {
		return p
	}
	return &zero
}

var zero Policy
