// Package httpapi mounts the contracts: the composition root, which alone
// imports the application root package.
package httpapi

import (
	"strings"

	"example.com/app/adapters/httpapi/explorer"
	"example.com/app/application"
)

// App is the whole application, which only the root may hold.
var App = application.Err

// Relative tests URL syntax, not a route.
func Relative(p string) bool {
	_ = explorer.File
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "https://")
}
