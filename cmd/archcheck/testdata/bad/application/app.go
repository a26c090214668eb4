// Package application reaches the framework through lib.
package application

import (
	"example.com/app/lib" // want rule 1
)

// H is lib's handler.
var H = lib.Handler
