// Package account reaches into another HTML surface.
package account

import (
	"example.com/app/adapters/httpapi/console" // want rule 6
)

// Names uses it.
var Names = console.Names
