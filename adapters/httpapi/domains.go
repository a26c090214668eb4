package httpapi

// addDomainRoutes registers the domain routes (/api/domains, and PATCH /api/admin/domains/{id}).
func (s *Server) addDomainRoutes() {}
