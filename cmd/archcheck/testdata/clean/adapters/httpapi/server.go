// Package httpapi mounts the contracts.
package httpapi

import (
	"strings"

	"example.com/app/adapters/httpapi/explorer"
)

// Relative tests URL syntax, not a route.
func Relative(p string) bool {
	_ = explorer.File
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "https://")
}
