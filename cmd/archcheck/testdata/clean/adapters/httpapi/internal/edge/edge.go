// Package edge may test paths.
package edge

import "strings"

// AuthBase is the framework's base path.
const AuthBase = "/api/auth"

// IsFramework is the one allowed path test.
func IsFramework(p string) bool { return strings.HasPrefix(p, AuthBase) }
