// Package console reaches into an API contract package.
package console

import (
	"example.com/app/adapters/httpapi/backend" // want rule 6
	"example.com/app/adapters/httpapi/internal/edge"
)

// Names uses both.
var Names = []string{backend.Name, edge.AuthBase}
