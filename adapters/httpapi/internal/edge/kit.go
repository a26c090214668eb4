package edge

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// Config is what the HTTP edge needs to know about its deployment.
type Config struct {
	// BaseURL is the public origin, such as https://id.example.com, without a trailing slash.
	BaseURL string
	// HomeURL is where / redirects; "" shows Gatehouse's own home page.
	HomeURL string
	// Version is reported in the contracts and on the home page.
	Version string
	// MaxBodyBytes is the largest request body accepted; larger ones get 413.
	MaxBodyBytes int64
	// SessionCookieName is the session cookie's name, documented in the contracts.
	SessionCookieName string
	// Secrets sign cookies: the first signs, all verify.
	Secrets []string
	// CookiePrefix starts every cookie name ("better-auth" keeps a Better
	// Auth deployment's users signed in).
	CookiePrefix string
	// TrustedOrigins may call the framework from browsers, besides BaseURL's.
	TrustedOrigins []string
	// TrustedProxies (addresses or CIDRs) may set X-Forwarded-For; nobody
	// else's is believed, and X-Real-IP is never believed.
	TrustedProxies []string
	// HostCookies names the cookies __Host- instead of __Secure- on https
	// (no Domain, Path=/): a sibling subdomain cannot plant one. Better
	// Auth's server helpers look for __Secure- names, so it is opt-in.
	HostCookies bool
	// RateLimit turns the rate limits on (see ratelimit.go).
	RateLimit bool
	// ServiceKeyLimit requests per ServiceKeyWindow are allowed to each
	// service key on the trusted routes (default 6000 per minute).
	ServiceKeyLimit  int
	ServiceKeyWindow time.Duration
	// Observer counts requests and rate-limit refusals for the metrics;
	// nil counts nothing (and adds no middleware).
	Observer ports.Observer
	// Tracer traces each request (Trace); nil traces nothing.
	Tracer trace.TracerProvider
	// ConsoleIdleTimeout sends a console visitor idle that long back to
	// sign in (0: DefaultConsoleIdleTimeout).
	ConsoleIdleTimeout time.Duration
}

// DefaultConsoleIdleTimeout is the console's idle timeout when the
// configuration names none.
const DefaultConsoleIdleTimeout = 30 * time.Minute

// The default budget of each service key on the trusted routes: far above
// what a backend normally sends.
const (
	DefaultServiceKeyLimit  = 6000
	DefaultServiceKeyWindow = time.Minute
)

// Kit is what every contract's handlers share: the deployment's settings,
// the logger, the session cookies and the origins, the request's caller
// (Session, Principal, ServiceKey, resolved from what Deps names), and the
// engine, contracts and policy table that registration writes to. It holds
// no use case of a contract's: each package names its own.
type Kit struct {
	Config    Config
	deps      Deps
	Logger    *slog.Logger
	engine    *gin.Engine
	contracts map[Contract]*contract
	Cookies   *SessionCookies
	Origins   *Origins
	policies  *Table // each route's policy, by "METHOD template"
}

// routePolicy puts the policy of the request's route (Table.Lookup) in
// its context, with room for the impersonation its session may turn out to
// be (usecase.WithImpersonationSlot, filled by CheckImpersonation).
func (s *Kit) routePolicy() gin.HandlerFunc {
	return func(c *gin.Context) {
		p := s.policies.Lookup(c.Request.Method, c.FullPath(), c.Request.URL.Path)
		ctx := usecase.WithImpersonationSlot(ContextWithPolicy(c.Request.Context(), p))
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// NotFound answers unknown routes: an empty 404 under /api/auth, as Better
// Auth does, and a problem elsewhere.
func (s *Kit) NotFound(c *gin.Context) {
	if Unmatched(c.Request.URL.Path).Shape.Framework() {
		EmptyNotFound(c)
		return
	}
	WriteGinError(c, RenderStatus(c.Request.Context(), http.StatusNotFound, "", "No route matches this path.", nil))
}

// MethodNotAllowed answers a known path with the wrong method: like an unknown
// route under /api/auth (Better Auth does not send 405), a 405 problem elsewhere.
func (s *Kit) MethodNotAllowed(c *gin.Context) {
	if Unmatched(c.Request.URL.Path).Shape.Framework() {
		c.Writer.Header().Del("Allow")
		EmptyNotFound(c)
		return
	}
	WriteGinError(c, RenderStatus(c.Request.Context(), http.StatusMethodNotAllowed, "", "This path does not accept this method.", nil))
}

// EmptyNotFound writes a 404 with no body. Writing the header now stops gin
// from adding its own "404 page not found" text.
func EmptyNotFound(c *gin.Context) {
	c.Status(http.StatusNotFound)
	c.Writer.WriteHeaderNow()
	c.Abort()
}

// ProtectedResourcePath is the trusted API's metadata (RFC 9728 §3: the
// resource is the base URL, whose path is empty).
const ProtectedResourcePath = "/.well-known/oauth-protected-resource"

// ResourceMetadataURL is the trusted API's metadata URL, named by the
// WWW-Authenticate challenge of its 401s (RFC 9728 §5.1).
func (s *Kit) ResourceMetadataURL() string { return s.Config.BaseURL + ProtectedResourcePath }

// Issuer is the OpenID Issuer: the base URL with the framework's path,
// exactly, as every document, page and token names it.
func (s *Kit) Issuer() string { return s.Config.BaseURL + frameworkBase }

// NewKit returns the shared pieces of the edge on engine: the session
// cookies, the origins, the policy table and the three contracts, finding
// callers and counting requests with deps.
func NewKit(engine *gin.Engine, cfg Config, deps Deps, logger *slog.Logger) *Kit {
	if deps.Sessions == nil || deps.ServiceKeys == nil || deps.Admins == nil || deps.Throttle == nil || logger == nil {
		panic("edge: nil dependency")
	}
	return &Kit{Config: cfg, deps: deps, Logger: logger, engine: engine,
		Cookies: newSessionCookies(cfg, deps.SessionLifetime), Origins: newOrigins(cfg.BaseURL, cfg.TrustedOrigins),
		policies: NewTable(), contracts: newContracts(engine, cfg)}
}

// RoutePolicy puts the policy of the request's route (Table.Lookup) in its
// context. It is the first middleware: every one after it, and the error
// renderers, read the route's policy.
func (s *Kit) RoutePolicy() gin.HandlerFunc { return s.routePolicy() }

// Policies is the table of every registered route's policy.
func (s *Kit) Policies() *Table { return s.policies }

// Documents lists the OpenAPI document of each contract, and of each
// contract's document-only API (they share one value), for the operations
// that finish what registration documents.
func (s *Kit) Documents() []*huma.OpenAPI {
	var out []*huma.OpenAPI
	for _, c := range s.contracts {
		out = append(out, c.routed.OpenAPI())
	}
	return out
}

// Document returns contract c's document, for what only a contract's own
// package adds to it (the trusted contract's webhooks section).
func (s *Kit) Document(c Contract) *huma.OpenAPI { return s.contracts[c].routed.OpenAPI() }

// Page registers a page at path and, for the same path with a trailing
// slash, a permanent redirect to it (the engine does not redirect slashes
// itself, since Better Auth's routes answer 404 there).
func (s *Kit) Page(path string, p Policy, h gin.HandlerFunc) {
	s.Handle(http.MethodGet, path, p, h)
	s.Handle(http.MethodGet, path+"/", Policy{Rate: RatePublic}, func(c *gin.Context) {
		// The path asked for, less its slash: a page's path may have
		// parameters (/console/users/:id), which the request fills.
		target := strings.TrimSuffix(c.Request.URL.EscapedPath(), "/")
		if q := c.Request.URL.RawQuery; q != "" {
			target += "?" + q
		}
		Redirect(c, http.StatusMovedPermanently, s.Origins.Absolute(target))
	})
}

// Redirect answers with status and Location, and no body.
func Redirect(c *gin.Context, status int, location string) {
	c.Header("Location", location)
	c.Status(status)
	c.Writer.WriteHeaderNow()
}
