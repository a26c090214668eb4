package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/framework"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/pages"
	"github.com/gatehouse/gatehouse/application"
)

// Config is what the HTTP edge needs to know about its deployment.
type Config = edge.Config

// The default budget of each service key on the trusted routes.
const (
	DefaultServiceKeyLimit  = edge.DefaultServiceKeyLimit
	DefaultServiceKeyWindow = edge.DefaultServiceKeyWindow
)

// Server is Gatehouse's HTTP handler: the engine, and the shared pieces of
// the edge (edge.Kit) every contract registers its routes with.
type Server struct {
	*edge.Kit
	app    *application.Application // the use cases, which addRoutes hands to each package
	engine *gin.Engine
	pages  *pages.API // the hosted pages: their routes and the form-post middleware
}

// Route is one routed method and path, with parameters written {name} as in
// the contracts.
type Route struct {
	Method string
	Path   string
}

// NewServer builds the gin engine, its middleware, the three contracts and
// every route.
func NewServer(cfg edge.Config, app *application.Application, logger *slog.Logger) *Server {
	if app == nil || logger == nil {
		panic("httpapi: nil dependency")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.ServiceKeyLimit <= 0 || cfg.ServiceKeyWindow <= 0 {
		cfg.ServiceKeyLimit, cfg.ServiceKeyWindow = edge.DefaultServiceKeyLimit, edge.DefaultServiceKeyWindow
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	edge.InstallHumaErrors()
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
	// Every line logged with a request's context names the request (and
	// its trace), whichever logger writes it.
	logger = slog.New(edge.LogHandler(logger.Handler()))
	kit := edge.NewKit(engine, cfg, edge.Deps{Sessions: app.Account.Sessions, ServiceKeys: app.ServiceKeys,
		Admins: app.Admin.Administration, Throttle: app.Account.SignIns, SessionLifetime: app.Settings.Sessions.Lifetime}, logger)
	s := &Server{Kit: kit, app: app, engine: engine, pages: pages.New(kit, framework.ErrorCode, pages.Deps{
		OAuthProvider:     app.OIDC.OAuthProvider,
		IdentityProviders: app.Federation.Providers, Federation: app.Federation.SignIns})}

	engine.Use(
		s.RoutePolicy(), // first: every middleware after it, and the error renderers, read the route's policy
		s.Callers(),     // the request's caller, resolved when a handler first asks
		edge.RequestContext(logger),
	)
	if cfg.Tracer != nil {
		engine.Use(edge.Trace(cfg.Tracer)) // after the request id, which the span carries
	}
	if cfg.Observer != nil {
		engine.Use(edge.Observe(cfg.Observer)) // before Recovery: a panic counts as its 500
	}
	engine.Use(
		edge.Recovery(logger),
		edge.AccessLog(logger),
		edge.SecurityHeaders(strings.HasPrefix(cfg.BaseURL, "https://")),
		edge.RequestSize(),
		edge.BodyLimit(cfg.MaxBodyBytes),
		s.CORS(),
		s.InputCheck(), // before frameworkContext, which keeps the request (and the body it restores)
		edge.FrameworkContext(),
		s.pages.FormRedirect(),
		s.RateLimiter(),
		s.OriginCheck(),
		s.FormBodies(),
	)
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

// LogHandler wraps h so that each line logged with a request's context
// carries its request_id, and its trace_id and span_id when tracing is on.
func LogHandler(h slog.Handler) slog.Handler { return edge.LogHandler(h) }

// RequestIDFrom returns the id of the request whose context ctx is, or "".
func RequestIDFrom(ctx context.Context) string { return edge.RequestIDFrom(ctx) }

// WithRequestID returns ctx carrying the request id id (work done later for
// a request, such as its mail, logs with it).
func WithRequestID(ctx context.Context, id string) context.Context {
	return edge.WithRequestID(ctx, id)
}

// RequestIDAttribute is the attribute that carries the request id on spans.
const RequestIDAttribute = edge.RequestIDAttribute
