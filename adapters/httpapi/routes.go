package httpapi

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/explorer"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// addRoutes lists every route: each group below is called from here and
// nowhere else, so if this function does not reach a route, it is not served.
// API operations go through register, which puts them in their contracts;
// plain gin routes go through handle (the hosted pages and the documents), or
// through an edge.Router for the surfaces in their own package (explorer/).
// Each route declares its policy where it is registered (rate
// rule, error shape, CORS, security, form page: internal/edge.Policy), and
// NewServer panics if one does not.
func (s *Server) addRoutes() {
	q := s.App.Queries

	register(s, edge.ContractFramework, edge.WithRate(huma.Operation{
		OperationID: "ok", Method: http.MethodGet, Path: edge.FrameworkBase + "/ok",
		Summary: "Liveness", Tags: []string{"Health"},
		Description: "Answers 200 while the process serves requests. It never touches the database or any other dependency.",
	}, edge.RateNone), ok, edge.ContractAuth)

	register(s, edge.ContractAuth, edge.WithRate(huma.Operation{
		OperationID: "ready", Method: http.MethodGet, Path: "/api/health/ready",
		Summary: "Readiness", Tags: []string{"Health"},
		Description: "Answers 200 when the database answers, 503 when it does not.",
		Responses: map[string]*huma.Response{
			"503": {Description: "A dependency is down; the body says which."},
		},
	}, edge.RateNone), ready(q.Readiness), edge.ContractBackend)

	s.addFrameworkRoutes()
	s.addOrganizationRoutes()
	s.addAdminRoutes()
	s.addServiceRoutes()
	s.addBackendUserRoutes()
	s.addBackendOrganizationRoutes()
	s.addBackendMemberRoutes()
	s.addDomainRoutes()
	s.addTokenRoutes()
	s.addOAuthClientRoutes()
	s.addOAuthRoutes()
	s.addOAuthConsentRoutes()
	s.addDiscoveryRoutes()
	s.addHostedPages() // the pages, their stylesheet, the icon and the home page

	// Outside the contracts: the documents and the explorer. The framework's
	// document sits in the framework: Better Auth's error shape and CORS,
	// like its other routes.
	s.Handle(http.MethodGet, edge.FrameworkSpecPath, edge.Policy{Shape: edge.ShapeFramework, CORS: edge.CORSTrusted, Rate: edge.RatePublic},
		s.ServeSpec(edge.ContractFramework))
	s.Handle(http.MethodGet, edge.AuthSpecPath, edge.Policy{Rate: edge.RatePublic}, s.ServeSpec(edge.ContractAuth))
	s.Handle(http.MethodGet, edge.BackendSpecPath, edge.Policy{Rate: edge.RatePublic}, s.ServeSpec(edge.ContractBackend))
	explorer.Routes(router{s})
}
