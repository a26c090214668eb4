package httpapi

// GROUNDWORK STUB (H2 replaces this file).
func (s *Server) addOAuthClientRoutes() {}
