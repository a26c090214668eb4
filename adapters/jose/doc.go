// Package jose signs, verifies and seals with JSON Web Keys (go-jose).
package jose

import _ "github.com/go-jose/go-jose/v4" // GROUNDWORK: the signing-key helper fills this package.
