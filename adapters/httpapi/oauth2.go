package httpapi

// GROUNDWORK STUB (H3a replaces this file).
func (s *Server) addOAuthRoutes() {}
