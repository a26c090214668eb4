package httpapi

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// addRoutes lists every route. API operations go through register, which puts
// them in their contracts; the few routes outside any contract are the
// documents themselves and the explorer.
func (s *Server) addRoutes() {
	q := s.app.Queries

	register(s, ContractFramework, withRate(huma.Operation{
		OperationID: "ok", Method: http.MethodGet, Path: frameworkBase + "/ok",
		Summary: "Liveness", Tags: []string{"Health"},
		Description: "Answers 200 while the process serves requests. It never touches the database or any other dependency.",
	}, rateNone), ok, ContractAuth)

	register(s, ContractAuth, withRate(huma.Operation{
		OperationID: "ready", Method: http.MethodGet, Path: "/api/health/ready",
		Summary: "Readiness", Tags: []string{"Health"},
		Description: "Answers 200 when the database answers, 503 when it does not.",
		Responses: map[string]*huma.Response{
			"503": {Description: "A dependency is down; the body says which."},
		},
	}, rateNone), ready(q.Readiness), ContractBackend)

	s.addFrameworkRoutes()
	s.addOrganizationRoutes()
	s.addAdminRoutes()
	s.addBackendUserRoutes()
	s.addBackendOrganizationRoutes()
	s.addDomainRoutes()
	s.addTokenRoutes()
	s.addOAuthClientRoutes()
	s.addOAuthRoutes()
	s.addDiscoveryRoutes()
	s.addHostedPages()

	// Outside the contracts: the documents and the explorer.
	s.handle(http.MethodGet, frameworkSpecPath, ratePublic, s.serveSpec(ContractFramework))
	s.handle(http.MethodGet, authSpecPath, ratePublic, s.serveSpec(ContractAuth))
	s.handle(http.MethodGet, backendSpecPath, ratePublic, s.serveSpec(ContractBackend))
	s.addExplorer()
}
