package httpapi

// GROUNDWORK STUB (H1 replaces this file).
func (s *Server) addTokenRoutes() {}
