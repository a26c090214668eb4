package harness

import (
	"strings"
)

// ContractDocs maps each contract to where it is published.
var ContractDocs = map[string]string{
	"auth":      "/api/auth-openapi.json",
	"framework": "/api/auth/open-api/generate-schema",
	"backend":   "/api/backend-openapi.json",
}

// ConsoleRoute reports whether path is one of the admin console's or the
// account pages' (pages, form posts and assets): surfaces, not contracts.
// TestConsole_every_route_is_guarded checks each of them.
func ConsoleRoute(path string) bool {
	return path == "/console" || strings.HasPrefix(path, "/console/") || path == "/account" || strings.HasPrefix(path, "/account/")
}
