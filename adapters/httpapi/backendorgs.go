package httpapi

// addBackendOrganizationRoutes registers the trusted organization routes (/api/organizations).
func (s *Server) addBackendOrganizationRoutes() {}
