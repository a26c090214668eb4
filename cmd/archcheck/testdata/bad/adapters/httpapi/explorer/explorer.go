// Package explorer imports another contract package.
package explorer

import (
	"strings"

	"example.com/app/adapters/httpapi/backend" // want rule 2
	"example.com/app/adapters/httpapi/internal/edge"
)

// File trims URL syntax, not a route: allowed.
func File(p string) string { return strings.TrimPrefix(p, "/") + backend.Name + edge.AuthBase }
