// Package backend tests a path through edge's constant.
package backend

import (
	s "strings"

	"example.com/app/adapters/httpapi" // want rule 2
	"example.com/app/adapters/httpapi/internal/edge"
	"example.com/app/domain"
)

// Name is the package's name.
const Name = "backend"

// IsFramework guesses the contract from the path.
func IsFramework(p string) bool {
	_ = httpapi.Base
	_ = domain.Field
	return s.HasPrefix(p, edge.AuthBase) // want rule 3
}

// Relative tests URL syntax: allowed.
func Relative(p string) bool { return s.HasPrefix(p, "/") && !s.HasPrefix(p, "//") }
