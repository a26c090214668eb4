package httpapi

// addBackendUserRoutes registers the trusted user routes (/api/users).
func (s *Server) addBackendUserRoutes() {}
