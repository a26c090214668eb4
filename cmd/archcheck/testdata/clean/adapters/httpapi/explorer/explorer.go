// Package explorer imports the shared edge and the inner layers only.
package explorer

import (
	"strings"

	"example.com/app/adapters/httpapi/internal/edge"
	"example.com/app/application"
	"example.com/app/domain"
	"example.com/app/ports"
)

// File trims URL syntax, not a route.
func File(p string) string {
	_ = application.Err
	_ = ports.Page{}
	return strings.TrimPrefix(p, "/") + domain.Field + edge.AuthBase
}
