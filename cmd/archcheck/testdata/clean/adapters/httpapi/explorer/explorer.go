// Package explorer imports the shared edge and the inner layers only: a
// bounded context of the application, not its root package.
package explorer

import (
	"strings"

	"example.com/app/adapters/httpapi/internal/edge"
	"example.com/app/application/account"
	"example.com/app/domain"
	"example.com/app/ports"
)

// File trims URL syntax, not a route.
func File(p string) string {
	_ = account.Err
	_ = ports.Page{}
	return strings.TrimPrefix(p, "/") + domain.Field + edge.AuthBase
}
