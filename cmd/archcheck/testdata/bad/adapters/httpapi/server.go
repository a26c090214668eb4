// Package httpapi tests a path through its own constant.
package httpapi

import "strings"

// Base is the admin base path.
const Base = prefix + "/admin"

const prefix = "/api"

// IsAdmin guesses the contract from the path.
func IsAdmin(p string) bool {
	_, ok := strings.CutPrefix(p, Base)                                            // want rule 3
	return ok || strings.HasSuffix(p, "/jwks") || strings.HasPrefix(p, "https://") // want rule 3
}
