// Package edge may test paths, but holds the whole application.
package edge

import (
	"strings"

	"example.com/app/application" // want rule 8
)

// AuthBase is the framework's base path.
const AuthBase = "/api/auth"

// IsFramework is the one allowed path test.
func IsFramework(p string) bool { return strings.HasPrefix(p, AuthBase) }

// App is the whole application, reached from the edge: what rule 8 forbids.
var App = application.H
