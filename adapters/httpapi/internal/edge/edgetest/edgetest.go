// Package edgetest builds an edge.Kit on a gin engine with the middleware
// its handlers rely on (the route's policy, the request's caller, its id
// and information, recovery, input checks), so that a contract package's
// own tests can register its routes with the use cases they call and serve
// requests, without the rest of the server or the application.
package edgetest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// BaseURL is the test server's public origin.
const BaseURL = "https://id.example.com"

// Server is a Kit and the engine serving its routes.
type Server struct {
	Kit    *edge.Kit
	engine *gin.Engine
}

// New returns a Kit on a fresh engine, finding callers with deps. A nil
// dependency is replaced by one that finds nobody: no session, no service
// key; and that refuses no administrator and counts no request.
func New(deps edge.Deps) *Server {
	if deps.Sessions == nil {
		deps.Sessions = noSessions{}
	}
	if deps.ServiceKeys == nil {
		deps.ServiceKeys = noKeys{}
	}
	if deps.Admins == nil {
		deps.Admins = openGate{}
	}
	if deps.Throttle == nil {
		deps.Throttle = noThrottle{}
	}
	edge.InstallHumaErrors()
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.ContextWithFallback = true
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	kit := edge.NewKit(engine, edge.Config{BaseURL: BaseURL, MaxBodyBytes: 1 << 20, SessionCookieName: "gatehouse.session_token",
		Secrets: []string{"edgetest-secret-edgetest-secret-0"}}, deps, logger)
	engine.Use(kit.RoutePolicy(), kit.Callers(), edge.RequestContext(logger), edge.Recovery(logger), kit.InputCheck(), edge.FrameworkContext())
	engine.NoRoute(kit.NotFound)
	return &Server{Kit: kit, engine: engine}
}

// Do serves a request with method, path and body (JSON when not empty) and
// the headers given as name, value pairs.
func (s *Server) Do(method, path, body string, header ...string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, BaseURL+path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	s.engine.ServeHTTP(w, req)
	return w
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

type noSessions struct{}

func (noSessions) Authenticate(context.Context, account.Authenticate) (*account.AuthenticateResult, error) {
	return nil, usecase.ErrUnauthorized
}

func (noSessions) Refresh(context.Context, *account.AuthenticateResult) error { return nil }

type noKeys struct{}

func (noKeys) Authenticate(context.Context, string) (*domain.ServiceKey, error) {
	return nil, domain.NewError(domain.KindUnauthenticated, "auth.invalid_service_key", "The service key is missing, unknown, revoked or expired")
}

type openGate struct{}

func (openGate) RequireSecondFactor(context.Context, usecase.Principal) error { return nil }

func (openGate) RefuseImpersonation(context.Context, usecase.Principal, string, usecase.Origin) error {
	return domain.NewError(domain.KindForbidden, "admin.impersonation_read_only", "An impersonation may not do this")
}

type noThrottle struct{}

func (noThrottle) Throttle(context.Context, account.Throttle) error { return nil }
