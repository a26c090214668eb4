// Package account is a bounded context: the adapters import it for its types.
package account

import "example.com/app/domain"

// Err is the domain's error.
var Err = domain.ErrNotFound
