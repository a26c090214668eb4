package httpapi

import (
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application"
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
}

// The default budget of each service key on the trusted routes: far above
// what a backend normally sends.
const (
	DefaultServiceKeyLimit  = 6000
	DefaultServiceKeyWindow = time.Minute
)

// Server is Gatehouse's HTTP handler.
type Server struct {
	*Kit
}

// Kit is what every contract's handlers share: the deployment's settings,
// the use cases, the logger, the session cookies and the origins, and the
// engine, contracts and policy table that registration writes to.
type Kit struct {
	Config    Config
	App       *application.Application
	Logger    *slog.Logger
	engine    *gin.Engine
	contracts map[Contract]*contract
	Cookies   *SessionCookies
	Origins   *Origins
	policies  *edge.Table // each route's policy, by "METHOD template"
}

// Route is one routed method and path, with parameters written {name} as in
// the contracts.
type Route struct {
	Method string
	Path   string
}

// NewServer builds the gin engine, its middleware, the three contracts and
// every route.
func NewServer(cfg Config, app *application.Application, logger *slog.Logger) *Server {
	if app == nil || logger == nil {
		panic("httpapi: nil dependency")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.ServiceKeyLimit <= 0 || cfg.ServiceKeyWindow <= 0 {
		cfg.ServiceKeyLimit, cfg.ServiceKeyWindow = DefaultServiceKeyLimit, DefaultServiceKeyWindow
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	InstallHumaErrors()
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.RedirectTrailingSlash = false // Better Auth answers 404, not a redirect
	engine.RedirectFixedPath = false
	engine.HandleMethodNotAllowed = true
	engine.ContextWithFallback = true
	// Forwarding headers are believed only from configured proxies, and
	// only X-Forwarded-For, walked from the right past trusted proxies to
	// the first untrusted hop. gin would fall back to X-Real-IP, a single
	// value that no proxy checks against the hops it saw: a client behind
	// a proxy that passes the header through would choose its own address.
	engine.RemoteIPHeaders = []string{"X-Forwarded-For"}
	if err := engine.SetTrustedProxies(cfg.TrustedProxies); err != nil {
		panic("httpapi: trusted proxies: " + err.Error())
	}
	s := &Server{&Kit{Config: cfg, App: app, Logger: logger, engine: engine,
		Cookies: newSessionCookies(cfg, app.Settings.Sessions.Lifetime), Origins: newOrigins(cfg.BaseURL, cfg.TrustedOrigins),
		policies: edge.NewTable()}}

	engine.Use(
		s.routePolicy(), // first: every middleware after it, and the error renderers, read the route's policy
		RequestContext(logger),
		Recovery(logger),
		AccessLog(logger),
		SecurityHeaders(strings.HasPrefix(cfg.BaseURL, "https://")),
		RequestSize(),
		BodyLimit(cfg.MaxBodyBytes),
		s.CORS(),
		s.InputCheck(), // before frameworkContext, which keeps the request (and the body it restores)
		FrameworkContext(),
		s.formRedirect(),
		s.RateLimiter(),
		s.OriginCheck(),
		s.FormBodies(),
	)
	s.contracts = newContracts(engine, cfg)
	s.addRoutes()
	s.CheckPolicies()
	s.Freeze()
	engine.NoRoute(s.NotFound)
	engine.NoMethod(s.MethodNotAllowed)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

// Routes lists every routed method and path, sorted.
func (s *Server) Routes() []Route {
	var out []Route
	for _, r := range s.engine.Routes() {
		segs := strings.Split(r.Path, "/")
		for i, seg := range segs {
			if strings.HasPrefix(seg, ":") || strings.HasPrefix(seg, "*") {
				segs[i] = "{" + seg[1:] + "}"
			}
		}
		out = append(out, Route{Method: r.Method, Path: strings.Join(segs, "/")})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// routePolicy puts the policy of the request's route (edge.Table.Lookup) in
// its context.
func (s *Kit) routePolicy() gin.HandlerFunc {
	return func(c *gin.Context) {
		p := s.policies.Lookup(c.Request.Method, c.FullPath(), c.Request.URL.Path)
		c.Request = c.Request.WithContext(edge.WithPolicy(c.Request.Context(), p))
		c.Next()
	}
}

// NotFound answers unknown routes: an empty 404 under /api/auth, as Better
// Auth does, and a problem elsewhere.
func (s *Kit) NotFound(c *gin.Context) {
	if edge.Unmatched(c.Request.URL.Path).Shape.Framework() {
		EmptyNotFound(c)
		return
	}
	WriteGinError(c, RenderStatus(c.Request.Context(), http.StatusNotFound, "", "No route matches this path.", nil))
}

// MethodNotAllowed answers a known path with the wrong method: like an unknown
// route under /api/auth (Better Auth does not send 405), a 405 problem elsewhere.
func (s *Kit) MethodNotAllowed(c *gin.Context) {
	if edge.Unmatched(c.Request.URL.Path).Shape.Framework() {
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

// protectedResourcePath is the trusted API's metadata (RFC 9728 §3: the
// resource is the base URL, whose path is empty).
const protectedResourcePath = "/.well-known/oauth-protected-resource"

// ResourceMetadataURL is the trusted API's metadata URL, named by the
// WWW-Authenticate challenge of its 401s (RFC 9728 §5.1).
func (s *Kit) ResourceMetadataURL() string { return s.Config.BaseURL + protectedResourcePath }

// Issuer is the OpenID Issuer: the base URL with the framework's path,
// exactly, as every document, page and token names it.
func (s *Kit) Issuer() string { return s.Config.BaseURL + frameworkBase }
