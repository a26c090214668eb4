package httpapi

// GROUNDWORK STUB (H3b replaces this file).
func (s *Server) addHostedPages() {}
