// Package application reaches the framework through lib, and through the
// domain, which is reported at the domain's own import.
package application

import (
	"example.com/app/domain"
	"example.com/app/lib" // want rule 1
)

// H is lib's handler.
var H = lib.Handler

// E is the domain's error.
var E = domain.ErrNotFound
