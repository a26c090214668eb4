// Package account is a bounded context: the adapters import it for its types.
package account

import (
	"example.com/app/application/usecase"
	"example.com/app/domain"
)

// Err is the domain's error.
var Err = domain.ErrNotFound

// ResetLink mails a reset link to the caller.
func ResetLink(c usecase.Caller) string { return "link for " + string(c) }
